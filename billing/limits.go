package billing

import (
	"context"
	"fmt"

	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/store"
)

// Limits caps what one company may hold, so that no company fills the
// database the others share; one more answers a conflict with code
// LIMIT_EXCEEDED (as MaxWebhooks and MaxAPIKeys do) until the company
// deletes one. A zero field means its default.
//
// Each cap is checked in the transaction that adds the record. On
// PostgreSQL, additions of one company that run at the same moment may
// each see room for one and pass the cap by as many as ran together:
// the cap bounds storage, not an exact count.
type Limits struct {
	// Clientes caps the customers not deleted (DefaultMaxClientes).
	Clientes int
	// Productos caps the products not deleted (DefaultMaxProductos).
	Productos int
	// CAFs caps the CAFs registered, used up or not: a CAF is never
	// deleted (DefaultMaxCAFs).
	CAFs int
}

// Default caps of Limits.
const (
	// DefaultMaxClientes: a customer is a few hundred bytes; 100,000
	// covers a company selling to every company of a large region.
	DefaultMaxClientes = 100_000
	// DefaultMaxProductos: likewise for a large catalogue.
	DefaultMaxProductos = 100_000
	// DefaultMaxCAFs: a company that asks the SII for a CAF of each of
	// its types every working day reaches 10,000 only after years; the
	// SII itself hands folios out in far fewer files.
	DefaultMaxCAFs = 10_000
)

// limit returns n, or def when n is not positive.
func limit(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}

// checkRoom returns a LIMIT_EXCEEDED conflict when the company already
// holds max of what (named in the message, plural) by count.
func checkRoom(n int64, max int, what, remedy string) error {
	if n < int64(max) {
		return nil
	}
	return fault.Clash(fault.LimitExceeded, fmt.Sprintf("a company may hold at most %d %s; %s", max, what, remedy))
}

// roomForCliente checks, in tx, that the company may add a customer.
func (s *Service) roomForCliente(ctx context.Context, tx store.Tx, empresaID string) error {
	p, err := tx.ListClientes(ctx, empresaID, store.CatalogFilter{Limit: 1})
	if err != nil {
		return err
	}
	return checkRoom(p.TotalCount, limit(s.cfg.Limits.Clientes, DefaultMaxClientes), "clientes", "delete one first")
}

// roomForProducto checks, in tx, that the company may add a product.
func (s *Service) roomForProducto(ctx context.Context, tx store.Tx, empresaID string) error {
	p, err := tx.ListProductos(ctx, empresaID, store.CatalogFilter{Limit: 1})
	if err != nil {
		return err
	}
	return checkRoom(p.TotalCount, limit(s.cfg.Limits.Productos, DefaultMaxProductos), "productos", "delete one first")
}

// roomForCAF checks, in tx, that the company may register a CAF.
func (s *Service) roomForCAF(ctx context.Context, tx store.Tx, empresaID string) error {
	p, err := tx.ListCAFPage(ctx, empresaID, store.CAFFilter{Limit: 1})
	if err != nil {
		return err
	}
	return checkRoom(p.TotalCount, limit(s.cfg.Limits.CAFs, DefaultMaxCAFs), "CAFs", "ask the operator to raise the limit")
}
