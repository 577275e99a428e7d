package sqlstore

import (
	"context"
	"fmt"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"
)

// JobDriver is a backend's River driver, whatever its transaction type:
// River's client is generic over it (*sql.Tx for riversqlite, pgx.Tx for
// riverpgxv5), and the store reaches it through a Tx's Native.
type JobDriver interface {
	newClient(cfg *river.Config) (jobClient, error)
	migrate(ctx context.Context) error
	// listens reports a driver whose runners are told of new jobs
	// (PostgreSQL's LISTEN/NOTIFY) rather than finding them by polling.
	listens() bool
}

// RiverDriver wraps a River driver whose transaction type is the Native
// of the backend's Tx.
func RiverDriver[TTx any](d riverdriver.Driver[TTx]) JobDriver { return riverDriver[TTx]{d} }

type riverDriver[TTx any] struct{ d riverdriver.Driver[TTx] }

func (rd riverDriver[TTx]) newClient(cfg *river.Config) (jobClient, error) {
	c, err := river.NewClient(rd.d, cfg)
	if err != nil {
		return nil, err
	}
	return riverClient[TTx]{c}, nil
}

func (rd riverDriver[TTx]) listens() bool {
	return rd.d.SupportsListener() && rd.d.SupportsListenNotify()
}

func (rd riverDriver[TTx]) migrate(ctx context.Context) error {
	m, err := rivermigrate.New(rd.d, nil)
	if err != nil {
		return err
	}
	_, err = m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	return err
}

// jobClient is what the store uses of a River client, with the
// transaction as the store's Tx.
type jobClient interface {
	Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
	InsertTx(ctx context.Context, tx Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
	CompleteTx(ctx context.Context, tx Tx, job *river.Job[rawArgs]) error
	JobGet(ctx context.Context, id int64) (*rivertype.JobRow, error)
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	StopAndCancel(ctx context.Context) error
	Stopped() <-chan struct{}
}

type riverClient[TTx any] struct{ *river.Client[TTx] }

func (c riverClient[TTx]) native(tx Tx) (TTx, error) {
	n, ok := tx.Native().(TTx)
	if !ok {
		var zero TTx
		return zero, fmt.Errorf("sqlstore: a %T transaction given to a River driver of %T", tx.Native(), zero)
	}
	return n, nil
}

func (c riverClient[TTx]) InsertTx(ctx context.Context, tx Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	n, err := c.native(tx)
	if err != nil {
		return nil, err
	}
	return c.Client.InsertTx(ctx, n, args, opts)
}

func (c riverClient[TTx]) CompleteTx(ctx context.Context, tx Tx, job *river.Job[rawArgs]) error {
	n, err := c.native(tx)
	if err != nil {
		return err
	}
	_, err = river.JobCompleteTx[riverdriver.Driver[TTx]](ctx, n, job)
	return err
}
