package api

import "slices"

// table is a state machine's transition table: every state, and the
// states it may move to (staying in the same state is not a transition;
// a final state maps to none). Each typed state's Valid, Next and
// CanBecome read its table through these three.
type table[S ~string] map[S][]S

// valid reports whether s is one of the machine's states.
func (t table[S]) valid(s S) bool {
	_, ok := t[s]
	return ok
}

// next returns the states s may move to, in a new slice.
func (t table[S]) next(s S) []S { return slices.Clone(t[s]) }

// can reports whether s may move to next.
func (t table[S]) can(s, next S) bool { return slices.Contains(t[s], next) }
