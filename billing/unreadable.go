package billing

import (
	"fmt"

	"github.com/dtekit/dtekit/billing/fault"
)

// unreadable is the answer to a read that found a stored value of the
// record what/id the service cannot read (store.ErrUnreadable, or a JSON
// column that does not decode): the record is damaged and reading it
// again will not help, so it is no internal failure to retry but a state
// of the record (409 INVALID_STATE), named, with the cause kept for the
// log.
func unreadable(what, id string, err error) *fault.Error {
	return &fault.Error{Kind: fault.KindConflict, Code: fault.InvalidState, Err: err,
		Message: fmt.Sprintf("%s %s holds a stored value the service cannot read: the record is damaged; the operator must restore it from a backup", what, id)}
}
