package store

import (
	"context"
	"time"
)

// The SII's public list of the companies authorized to issue electronic
// documents, with each one's intercambio address (the file "dtekit admin
// contribuyentes import" loads). It belongs to no company: every company
// of the database reads the same list, which is public data, so its
// methods take no company id (the exception the package's tenancy rule
// names).
//
// An import is written as a new list in many short transactions
// (BeginContribuyentes, AddContribuyentes), so that loading the SII's
// 1.7 million rows never holds the database's write lock for long, and
// becomes the current list in one more (CompleteContribuyentes); readers
// see the previous list until then. PurgeContribuyentes then deletes the
// older lists a batch at a time.

// Contribuyente is one company of the SII's list.
type Contribuyente struct {
	// Rut is canonical ("76543210-3").
	Rut         string
	RazonSocial string
	// NumeroResolucion and FechaResolucion (YYYY-MM-DD) are the
	// resolution that authorized it (0 and "" when the file had none
	// readable).
	NumeroResolucion int64
	FechaResolucion  string
	// Correo is its intercambio address ("" when the list has none).
	Correo string
	URL    string
}

// ContribuyentesLista is one import of the list.
type ContribuyentesLista struct {
	ID int64
	// Origen says where the list came from (the file's name).
	Origen string
	// Filas is the number of companies it holds, once complete.
	Filas       int64
	Completa    bool
	CreatedAt   time.Time
	CompletedAt time.Time
}

// MaxContribuyentesBatch bounds the rows of one AddContribuyentes call.
const MaxContribuyentesBatch = 1000

// ContribuyentesReader reads the current list (part of Reader).
type ContribuyentesReader interface {
	// GetContribuyente returns the company with this canonical RUT on the
	// current list (the last complete import), or ErrNotFound when it is
	// not there or no list was ever imported.
	GetContribuyente(ctx context.Context, rut string) (*Contribuyente, error)
	// GetContribuyentesLista returns the current list's record, or
	// ErrNotFound when no list was ever imported.
	GetContribuyentesLista(ctx context.Context) (*ContribuyentesLista, error)
}

// ContribuyentesWriter writes a new list (part of Tx).
type ContribuyentesWriter interface {
	// BeginContribuyentes starts a new, incomplete list and returns its
	// record.
	BeginContribuyentes(ctx context.Context, origen string) (*ContribuyentesLista, error)
	// AddContribuyentes adds up to MaxContribuyentesBatch rows to an
	// incomplete list and returns the indexes of the rows it did not add
	// because their RUT is on the list already (earlier in rows, or added
	// before). ErrNotFound when no incomplete list has this id.
	AddContribuyentes(ctx context.Context, listaID int64, rows []Contribuyente) (repeated []int, err error)
	// CompleteContribuyentes makes an incomplete list the current one,
	// recording how many rows it holds. ErrNotFound when no incomplete
	// list has this id.
	CompleteContribuyentes(ctx context.Context, listaID int64) (*ContribuyentesLista, error)
	// PurgeContribuyentes deletes up to limit rows of the lists older than
	// the current one (complete or abandoned), and their records once
	// they hold none; it returns how many rows it deleted (fewer than
	// limit: nothing older is left).
	PurgeContribuyentes(ctx context.Context, limit int) (int64, error)
}
