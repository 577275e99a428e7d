package submission

import (
	"context"
	"errors"
	"testing"

	"github.com/dtekit/dtekit/store"
)

// rerunStore runs a Write's function twice, as a store retrying a
// transaction does, and answers the second run's error.
type rerunStore struct{ store.Store }

func (rerunStore) Write(ctx context.Context, fn func(ctx context.Context, tx store.Tx) error) error {
	_ = fn(ctx, nil)
	return fn(ctx, nil)
}

// failStore runs a Write's function, then fails as a commit can.
type failStore struct{ store.Store }

func (failStore) Write(ctx context.Context, fn func(ctx context.Context, tx store.Tx) error) error {
	if err := fn(ctx, nil); err != nil {
		return err
	}
	return errors.New("commit failed")
}

// TestAfterCommit: what a Write's function hands afterCommit runs once
// the write has succeeded, once however often the store ran the
// function, and never when the function or the commit failed.
func TestAfterCommit(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		st    store.Store
		fnErr error
		want  int
	}{
		{"committed after a rerun", rerunStore{}, nil, 1},
		{"function failed", rerunStore{}, errors.New("no"), 0},
		{"commit failed", failStore{}, nil, 0},
	} {
		n := 0
		err := afterCommitStore{c.st}.Write(ctx, func(ctx context.Context, _ store.Tx) error {
			afterCommit(ctx, func() { n++ })
			return c.fnErr
		})
		if n != c.want || (c.want == 1) != (err == nil) {
			t.Errorf("%s: ran %d times (want %d), Write: %v", c.name, n, c.want, err)
		}
	}
}
