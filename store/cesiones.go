package store

import (
	"context"
	"time"
)

// States of a cesión (Cesion.Estado), as the API writes them.
const (
	// CesionPendiente: recorded with its AEC, not uploaded yet.
	CesionPendiente = "pendiente"
	// CesionEnviada: the registry took the upload and gave a track id;
	// it is reviewing it.
	CesionEnviada = "enviada"
	// CesionAceptada: the registry recorded the cesión (EOK).
	CesionAceptada = "aceptada"
	// CesionRechazada: the registry refused the AEC, or the upload could
	// not be done within its attempts.
	CesionRechazada = "rechazada"
)

// ConstraintCesionActiva is the rule that a document has at most one
// cesión that is not rechazada (in flight or recorded by the registry).
const ConstraintCesionActiva = "cesion_activa"

// Cesion is one cesión of a company's document (a factura) to a factoring
// company through the SII's registry of credit transfers (RTC), and what
// the registry has said about it so far.
type Cesion struct {
	ID        string
	EmpresaID string
	// DTEID is the ceded document, one of the company's.
	DTEID string
	// Ambiente is the environment of the document, whose registry the
	// cesión goes to.
	Ambiente      string
	Estado        string // one of the Cesion* states
	RutCesionario string
	Monto         int64
	// Request is the cesión as the caller asked it (JSON, opaque to the
	// store).
	Request []byte
	// AEC is the signed file, built once before the first upload; nil in
	// list results.
	AEC      []byte
	TrackID  string // the registry's track id, "" until uploaded
	Attempts int    // uploads tried
	// Codigo and Glosa are the registry's last answer (an upload STATUS
	// or an ESTADO_ENVIO, and its text).
	Codigo, Glosa string
	// Response is the registry's last answer as received; nil in list
	// results.
	Response  []byte
	CreatedAt time.Time
	UpdatedAt time.Time
}

// CesionReader reads the cesiones of the company's documents (the
// cesiones room); part of Reader.
type CesionReader interface {
	// GetCesion returns the company's cesión with this id, AEC and
	// Response included, or ErrNotFound.
	GetCesion(ctx context.Context, empresaID, id string) (*Cesion, error)
	// ListCesiones returns a page of the cesiones of one of the company's
	// documents, newest first, without AEC and Response. A document of
	// another company (or none) has an empty list.
	ListCesiones(ctx context.Context, empresaID, dteID string, f ListFilter) (*Page[Cesion], error)
	// ActiveCesion returns the document's cesión that is not rechazada
	// (there is at most one), AEC and Response included, or ErrNotFound.
	ActiveCesion(ctx context.Context, empresaID, dteID string) (*Cesion, error)
}

// CesionWriter writes the cesiones; part of Tx.
type CesionWriter interface {
	// InsertCesion records a cesión. Its DTEID must be one of the
	// company's documents, else ErrNotFound; a second cesión of a
	// document that has one not rechazada is refused with a
	// ConflictError on ConstraintCesionActiva, without aborting the
	// transaction; a used ID on ConstraintPrimaryKey.
	InsertCesion(ctx context.Context, c *Cesion) error
	// UpdateCesion replaces Estado, TrackID, Attempts, Codigo, Glosa,
	// Response and UpdatedAt (set to now); DTEID, Request and AEC never
	// change. Making a rechazada cesión active again while the document
	// has another active one is refused on ConstraintCesionActiva.
	UpdateCesion(ctx context.Context, c *Cesion) error
	// GetCesionForUpdate reads a cesión and locks it until the
	// transaction ends (PostgreSQL: SELECT … FOR UPDATE; SQLite: already
	// serialized), or returns ErrNotFound.
	GetCesionForUpdate(ctx context.Context, empresaID, id string) (*Cesion, error)
}
