package sqlstore

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dtekit/dtekit/store"
)

// classify marks an error by which the database refused a write for want
// of space so that it matches store.ErrStorageFull; other errors (and
// nil) pass unchanged.
func (db *DB) classify(err error) error { return db.cfg.Dialect.classify(err) }

func (d *Dialect) classify(err error) error {
	if err == nil || errors.Is(err, store.ErrStorageFull) {
		return err
	}
	if f := d.IsStorageFull; f != nil && f(err) {
		return fmt.Errorf("%w: %w", store.ErrStorageFull, err)
	}
	return err
}

// probeEvery is the least time between two probe writes of Writable.
const probeEvery = time.Second

// probeSize is how many bytes a probe write stores (and deletes in the
// same transaction): more than one page of either database, so the probe
// needs room the way a small emission does.
const probeSize = 16 << 10

// writeHealth remembers whether the last write failed for want of space.
type writeHealth struct {
	full atomic.Bool

	mu        sync.Mutex // serializes probes
	probedAt  time.Time
	probeErr  error
	probeDone bool
}

// observe records the outcome of a write: a storage-full error sets the
// flag, a success clears it; other errors say nothing about space.
func (h *writeHealth) observe(err error) error {
	switch {
	case err == nil:
		h.full.Store(false)
	case errors.Is(err, store.ErrStorageFull):
		h.full.Store(true)
	}
	return err
}

// Writable implements store.Store: nil while no write has failed for want
// of space; otherwise the outcome of a probe write (run at most once per
// probeEvery).
func (db *DB) Writable(ctx context.Context) error {
	h := &db.health
	if !h.full.Load() {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.full.Load() {
		return nil
	}
	if h.probeDone && time.Since(h.probedAt) < probeEvery {
		return h.probeErr
	}
	err := db.Write(ctx, func(ctx context.Context, t store.Tx) error {
		return t.(*tx).probe(ctx)
	})
	if err != nil && !errors.Is(err, store.ErrStorageFull) && ctx.Err() == nil {
		// A probe that failed otherwise still did not write: the store
		// is not known to be writable.
		err = fmt.Errorf("%w: probe write: %w", store.ErrStorageFull, err)
	}
	h.probedAt, h.probeErr, h.probeDone = time.Now(), err, true
	return err
}

// probe writes probeSize random bytes in the storage_probe table and
// deletes them again, within the caller's transaction.
func (t *tx) probe(ctx context.Context) error {
	pad := make([]byte, probeSize)
	rand.Read(pad)
	if _, err := t.tx.ExecContext(ctx, "INSERT INTO storage_probe (id, pad) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET pad = excluded.pad", pad); err != nil {
		return t.errf(err, "writing the storage probe")
	}
	if _, err := t.tx.ExecContext(ctx, "DELETE FROM storage_probe WHERE id = 1"); err != nil {
		return t.errf(err, "deleting the storage probe")
	}
	return nil
}
