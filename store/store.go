// Package store holds the records of the dtekit service and the interfaces
// through which the service reads and writes them durably.
//
// The package has no database code. Two implementations exist, proven by
// the same conformance suite (store/storetest):
//
//   - store/sqlite: an embedded SQLite file (modernc.org/sqlite, pure Go)
//     in WAL mode with synchronous=FULL, one writer connection and
//     immediate transactions; the default, for one process.
//   - store/postgres: PostgreSQL through pgx/v5, for several processes.
//
// # Tenancy
//
// Every record belongs to one company (Empresa) and every method that
// reads or changes a record takes the company's id and is scoped by it: a
// record of another company is reported as ErrNotFound, never read or
// changed. The only exceptions, named as such in their documentation, are
// the administrative and maintenance methods that by nature cross
// companies: FindAPIKey, which finds the company of a credential;
// GetEmpresaByRut and ListEmpresas, for administration; PurgeIdempotency,
// run by a periodic job; and ListSealed, ReplaceSealed, Setting and
// PutSetting, which keep the sealed secrets of every company under one
// key-encryption key (settings belong to the database, not to a company);
// and the SII's public list of contribuyentes (ContribuyentesReader,
// ContribuyentesWriter), which is the same for every company.
//
// # Transactions
//
// Reads run outside transactions through the Reader methods of Store. All
// writes run inside Store.Write, which runs a function in one transaction
// and commits it when the function returns nil (and rolls it back
// otherwise). Background jobs enqueued through Tx.Enqueue commit or roll
// back with the same transaction as the data they follow.
//
// Keep the function passed to Write short: on SQLite it holds the single
// write lock of the database for its whole duration, so nothing slow
// (signing, network calls) may run inside it.
package store

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"
)

// ErrNotFound reports that no record matched the given id within the given
// company.
var ErrNotFound = errors.New("store: not found")

// ErrNoFolios reports that TakeFolio found no active CAF with folios left
// for the requested document type (while CAFs of the type are registered
// in the company's environment: see ErrNoCAF).
var ErrNoFolios = errors.New("store: no folios left")

// ErrNoCAF reports that TakeFolio found no CAF of the requested document
// type registered in the company's current environment at all (a company
// just moved to produccion, whose CAFs are all of certificacion).
var ErrNoCAF = errors.New("store: no CAF registered")

// Environments (Empresa.Ambiente, CAF.Ambiente, DTE.Ambiente): the SII
// numbers folios from 1 in each, so a folio, a CAF's range and an
// Idempotency-Key are unique only within one.
const (
	AmbienteCertificacion = "certificacion"
	AmbienteProduccion    = "produccion"
)

// ErrInvalidCursor reports a page cursor that this store did not produce
// (or that belongs to another listing).
var ErrInvalidCursor = errors.New("store: invalid cursor")

// ErrUnreadable is matched (errors.Is) by the error of a read that found
// a stored value it cannot convert (a time that does not parse, text in a
// number's column): the record is damaged, and reading it again will not
// help. The error names the column.
var ErrUnreadable = errors.New("store: a stored value cannot be read")

// ErrStorageFull is matched (errors.Is) by the error of a write the
// database refused because its storage is full (SQLite's SQLITE_FULL, a
// write failing with ENOSPC, PostgreSQL's disk_full). Nothing of the
// write was kept; the same write may succeed once space is freed.
//
// Its StorageFull method lets a package that does not import store (such
// as billing/fault) recognize it: errors.As(err, &x) with x an
// interface{ StorageFull() bool }.
var ErrStorageFull error = storageFull{}

// storageFull is the type of ErrStorageFull.
type storageFull struct{}

func (storageFull) Error() string { return "store: storage full" }

// StorageFull reports true: the write failed for want of space.
func (storageFull) StorageFull() bool { return true }

// Constraint names reported by ConflictError.
const (
	ConstraintEmpresaID      = "empresa_id"      // an Empresa with this id exists
	ConstraintEmpresaRut     = "empresa_rut"     // an Empresa with this RUT exists
	ConstraintCAFRange       = "caf_range"       // the folio range overlaps a registered CAF of the type and ambiente
	ConstraintDTEFolio       = "dte_folio"       // a DTE with this ambiente, tipo and folio exists
	ConstraintClienteRut     = "cliente_rut"     // a cliente with this rut exists
	ConstraintProductoCodigo = "producto_codigo" // a producto with this codigo exists
	ConstraintIdempotency    = "idempotency_key" // the Idempotency-Key was already recorded
	ConstraintAPIKeyHash     = "api_key_hash"    // an API key with this hash exists
	ConstraintPrimaryKey     = "primary_key"     // a record with this id exists
	ConstraintDelivery       = "delivery_event"  // this event already has a delivery to this webhook
	ConstraintCertificado    = "certificado"     // reserved
)

// ErrConflict is matched (errors.Is) by every ConflictError.
var ErrConflict = errors.New("store: conflict")

// ConflictError reports a write refused by a uniqueness rule. Constraint
// names the rule (one of the Constraint constants).
type ConflictError struct {
	Constraint string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("store: conflict on %s", e.Constraint)
}

// Is makes errors.Is(err, ErrConflict) true for every ConflictError.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// ConflictOn returns the constraint name of a ConflictError in err's chain,
// or "" when err is not a conflict.
func ConflictOn(err error) string {
	var ce *ConflictError
	if errors.As(err, &ce) {
		return ce.Constraint
	}
	return ""
}

// Page is one page of a keyset-paginated listing. NextCursor is empty on
// the last page. TotalCount is the number of records matching the filter
// (all pages), counted in the same snapshot as Items where the backend
// allows it. A page may hold fewer items than its limit while more follow
// (see MaxPageBytes): only NextCursor tells whether it is the last.
type Page[T any] struct {
	Items      []T
	NextCursor string
	TotalCount int64
}

// Page size bounds applied by every listing: a Limit of 0 means
// DefaultLimit, and a Limit above MaxLimit is reduced to MaxLimit.
const (
	DefaultLimit = 20
	MaxLimit     = 100
)

// MaxPageBytes bounds what one page of a listing reads, as DynamoDB bounds
// a query's page to 1 MB: a page ends with the record that brings the text
// and blob columns it has read to MaxPageBytes or more, even before Limit
// records, and its NextCursor continues after that record. A page always
// holds at least one record, so it reads at most MaxPageBytes plus one
// record, however large the records are.
const MaxPageBytes = 1 << 20

// DTEFilter selects documents for ListDTEs. Zero fields do not filter
// (an empty Ambiente lists both environments).
// Pages run from the most recently created document to the oldest;
// cursors are stable under concurrent inserts (a document created after
// the first page was read never appears on a later page, and no document
// is repeated or skipped).
type DTEFilter struct {
	Ambiente    string
	TipoDTE     int
	Estado      string
	FechaDesde  string // YYYY-MM-DD, inclusive
	FechaHasta  string // YYYY-MM-DD, inclusive
	RutReceptor string
	// Folio, when not 0, keeps the documents with that folio (one per
	// type and environment).
	Folio int64
	// Cedido, when true, keeps the documents a cesión of which the
	// registry recorded (DTE.Cedido).
	Cedido bool
	Cursor string
	Limit  int
}

// CAFFilter selects CAFs for ListCAFPage: of one type, or of every type
// when TipoDTE is 0; of one environment, or of both when Ambiente is "".
// Pages run from the first CAF registered to the last.
type CAFFilter struct {
	Ambiente string
	TipoDTE  int
	Cursor   string
	Limit    int
}

// CatalogFilter selects clientes or productos. Query, when not empty,
// matches any part of the name (razon_social / nombre) or of the rut /
// codigo, regardless of case and accents ("nunoa" finds "ÑUÑOA"). Deleted records never appear. Pages run from the
// oldest record to the newest.
type CatalogFilter struct {
	Query  string
	Cursor string
	Limit  int
}

// EnvioFilter selects envelopes for ListEnvios: of one environment, or of
// every one when Ambiente is "" (envelopes written before their
// environment was kept, and never given one, have "" and appear only
// then). Pages run from the newest envelope to the oldest.
type EnvioFilter struct {
	Ambiente string
	Cursor   string
	Limit    int
}

// ListFilter is a plain cursor page request, newest first.
type ListFilter struct {
	Cursor string
	Limit  int
}

// Store is a durable store of the service's records.
type Store interface {
	Reader

	// Write runs fn in one write transaction and commits it when fn
	// returns nil; it rolls back and returns fn's error otherwise. On
	// SQLite the transaction holds the database's write lock from its
	// start (BEGIN IMMEDIATE), so concurrent Writes run one after the
	// other (and may share one commit, each in its own savepoint, with the
	// same outcome as separate transactions). Write may run fn again when
	// the backend reports a serialization failure, so fn must not have
	// effects outside tx. Calling Write or Jobs().Enqueue from inside fn
	// is an error (use tx).
	Write(ctx context.Context, fn func(ctx context.Context, tx Tx) error) error

	// Ping checks that the database answers, for readiness: one cheap
	// read (of at most one row) on the connections that serve reads,
	// bounded by ctx. It returns nil when the read succeeds, whether or
	// not any company exists; ctx's error when ctx ends first; and
	// another error when the database cannot be reached or the store is
	// closed.
	Ping(ctx context.Context) error

	// Writable reports whether writes succeed, for readiness. It returns
	// nil until a write fails with ErrStorageFull; from then on it runs a
	// small probe write (at most about once a second; in between it
	// answers the last probe's outcome) and returns an error matching
	// ErrStorageFull until a probe or any other write succeeds.
	Writable(ctx context.Context) error

	// Jobs returns the background job runner bound to this store.
	Jobs() Jobs

	// Close stops the job runner if running and releases the database.
	Close() error
}

// Reader holds the read methods, available both outside a transaction
// (on Store) and inside one (on Tx, where they see the transaction's own
// writes). It is composed of one reader per kind of record, named for the
// room or part of the service that owns them (DTEReader, InboxReader,
// MailReader…), so that a room can name the narrow interface it needs;
// storetest's Coverage table names the conformance tests of each.
type Reader interface {
	ContribuyentesReader
	EmpresaReader
	CAFReader
	DTEReader
	CatalogReader
	KeyReader
	IdempotencyReader
	EventReader
	DeliveryReader
	EnvioReader
	AlertReader
	InboxReader
	MailReader
	CesionReader
	ConsoleSessionReader
	AdminReader
}

// Scrubber is implemented by a Store whose files may still hold, after a
// write commits, the bytes the write replaced or deleted (SQLite's
// write-ahead log). Scrub makes the files hold only what the records hold
// now, so that a copy of them reveals nothing replaced: the caller runs
// it after moving secrets out of clear text or re-sealing them.
type Scrubber interface {
	// Scrub removes replaced and deleted bytes from the database's files.
	Scrub(ctx context.Context) error
}

// SerialWriter is implemented by a Store whose Writes never run at the
// same time (SQLite's single writer, which gathers concurrent Writes into
// shared commits). A caller that batches its own writes gains nothing
// there from keeping several batches in flight; on a store without it
// (PostgreSQL) concurrent Writes proceed in parallel.
type SerialWriter interface {
	// SerialWrites reports whether Writes run one at a time.
	SerialWrites() bool
}

// Tx is one write transaction. Its read methods see its own writes.
// Methods that create a record fill an empty ID with a new UUID and zero
// CreatedAt/UpdatedAt with the current time, and write them back into the
// record given. Methods that update a record match it by EmpresaID and ID
// and return ErrNotFound when no record of that company has that id.
// Like Reader, it is composed of one writer per kind of record (DTEWriter,
// InboxWriter, MailWriter…), and JobWriter for the jobs queued in it.
type Tx interface {
	Reader
	ContribuyentesWriter
	EmpresaWriter
	CAFWriter
	DTEWriter
	CatalogWriter
	KeyWriter
	IdempotencyWriter
	EventWriter
	DeliveryWriter
	EnvioWriter
	AlertWriter
	InboxWriter
	MailWriter
	CesionWriter
	ConsoleSessionWriter
	AdminWriter
	JobWriter
}

// EmpresaReader reads companies and their certificates (the face:
// companies, the certificate, the command line); part of Reader.
type EmpresaReader interface {
	// GetEmpresa returns the company with this id.
	GetEmpresa(ctx context.Context, empresaID string) (*Empresa, error)
	// GetEmpresaByRut returns the company with this RUT in this
	// environment (Empresa.Ambiente), or ErrNotFound when there is none.
	// A RUT and an environment name at most one company
	// (ConstraintEmpresaRut), while one RUT may have a company in each
	// environment. Both are matched exactly as stored, with no
	// normalization (billing stores the RUT's canonical form, such as
	// "76192083-9", so "76.192.083-9" finds nothing). Like FindAPIKey, it
	// crosses companies by nature: it is how the command line finds a
	// company.
	GetEmpresaByRut(ctx context.Context, rut, ambiente string) (*Empresa, error)
	// GetEmpresaLogo returns the company's logo; ErrNotFound when it has
	// none (or the company does not exist).
	GetEmpresaLogo(ctx context.Context, empresaID string) (*Logo, error)
	// ListEmpresas returns every company, oldest first (administration;
	// crosses companies by nature).
	ListEmpresas(ctx context.Context, f ListFilter) (*Page[Empresa], error)
	// GetCertificado returns the company's certificate, or ErrNotFound
	// when none was uploaded.
	GetCertificado(ctx context.Context, empresaID string) (*Certificado, error)
}

// EmpresaWriter writes companies and their certificates; part of Tx.
type EmpresaWriter interface {
	// InsertEmpresa records a company; a second company with the same
	// Rut and Ambiente is refused on ConstraintEmpresaRut, a used ID on
	// ConstraintPrimaryKey.
	InsertEmpresa(ctx context.Context, e *Empresa) error
	// UpdateEmpresa replaces every field but ID and CreatedAt.
	UpdateEmpresa(ctx context.Context, e *Empresa) error
	// SetEmpresaLogo records or replaces the company's logo; ErrNotFound
	// when the company does not exist.
	SetEmpresaLogo(ctx context.Context, empresaID string, l *Logo) error
	// DeleteEmpresaLogo removes the company's logo; ErrNotFound when it
	// has none.
	DeleteEmpresaLogo(ctx context.Context, empresaID string) error
	// PutCertificado stores the company's certificate, replacing the
	// previous one.
	PutCertificado(ctx context.Context, c *Certificado) error
}

// CAFReader reads the folio authorizations (the face's emission and CAF
// intake, alerts); part of Reader.
type CAFReader interface {
	// GetCAF returns the company's CAF with this id, XML included, or
	// ErrNotFound.
	GetCAF(ctx context.Context, empresaID, id string) (*CAF, error)
	// ListCAFs returns the company's CAFs of one type (or of every type
	// when tipoDTE is 0), ordered by type then FolioDesde.
	ListCAFs(ctx context.Context, empresaID string, tipoDTE int) ([]CAF, error)
	// ListCAFPage returns a page of the company's CAFs (CAFFilter),
	// without XML.
	ListCAFPage(ctx context.Context, empresaID string, f CAFFilter) (*Page[CAF], error)
	// CAFsInUse returns, for each type, the id of the CAF TakeFolio takes
	// the next folio from: the active CAF with folios left and the lowest
	// FolioDesde. A type without one has no entry.
	CAFsInUse(ctx context.Context, empresaID string) (map[int]string, error)
}

// CAFWriter registers folio authorizations and hands out their folios;
// part of Tx.
type CAFWriter interface {
	// InsertCAF registers a folio range; a range that overlaps one of the
	// company's CAFs of the same type and Ambiente is refused with a
	// ConflictError on ConstraintCAFRange (a produccion range may repeat a
	// certificacion one: the SII numbers each environment from 1). A zero
	// NextFolio is set to FolioDesde.
	InsertCAF(ctx context.Context, c *CAF) error
	// SealCAF replaces XML and SealedKey of one CAF, changing nothing
	// else: how the caller moves a private key out of a CAF's document.
	SealCAF(ctx context.Context, c *CAF) error
	// SetCAFActive changes IsActive of one CAF.
	SetCAFActive(ctx context.Context, empresaID, id string, active bool) error
	// TakeFolio hands out the next folio of the company's active CAF of
	// this type: the active CAF of the company's current ambiente (CAFs
	// are per environment: a company moved to produccion no longer draws
	// from its certificacion CAFs) with folios left and the lowest
	// FolioDesde. Each folio is handed out once, even across concurrent
	// transactions and processes; the caller must record the folio in the
	// same transaction (a rolled-back transaction gives the folio back).
	// The CAF returned is the record as the take left it but for XML,
	// which is nil: the document of a CAF never changes, so a caller
	// reads it once (GetCAF) rather than with every folio.
	// It returns ErrNoCAF when the company has no CAF of the type in its
	// current ambiente, and ErrNoFolios when it has some but no active one
	// has folios left.
	TakeFolio(ctx context.Context, empresaID string, tipoDTE int) (caf *CAF, folio int64, err error)
}

// DTEReader reads the company's own documents (the face, submission, inbox
// for the answers about them); part of Reader.
type DTEReader interface {
	// GetDTE returns the document with every field, XML included.
	GetDTE(ctx context.Context, empresaID, id string) (*DTE, error)
	// GetDTEByFolio returns the company's document of this environment,
	// type and folio, XML included, or ErrNotFound (folios restart in each
	// environment, so a type and folio may name one document in each).
	GetDTEByFolio(ctx context.Context, empresaID, ambiente string, tipoDTE int, folio int64) (*DTE, error)
	// ListDTEs returns a page of documents, newest first, without XML.
	ListDTEs(ctx context.Context, empresaID string, f DTEFilter) (*Page[DTE], error)
}

// DTEWriter writes the company's own documents; part of Tx.
type DTEWriter interface {
	// InsertDTE records a document; a second document with the same
	// Ambiente, type and folio in the company is refused on
	// ConstraintDTEFolio. An empty Ambiente is set to the company's
	// current one (and written back into d); Ambiente never changes
	// afterwards.
	InsertDTE(ctx context.Context, d *DTE) error
	// UpdateDTE replaces Estado, MontoTotal, XML, Totals, Tracking,
	// SIIStatus, Metadata and UpdatedAt (set to now when zero).
	UpdateDTE(ctx context.Context, d *DTE) error
	// UpdateDTEIf is UpdateDTE on condition that the stored Estado is
	// fromEstado, checked and written in one statement (so it needs no
	// GetDTEForUpdate first): it reports false, changing nothing, when the
	// document is in another state.
	UpdateDTEIf(ctx context.Context, d *DTE, fromEstado string) (bool, error)
	// GetDTEForUpdate reads a document and locks it until the transaction
	// ends (PostgreSQL: SELECT … FOR UPDATE; SQLite: already serialized).
	GetDTEForUpdate(ctx context.Context, empresaID, id string) (*DTE, error)
	// SetDTEIntercambio replaces the Intercambio of one document (what
	// its receptor answered), changing nothing else (UpdatedAt included);
	// ErrNotFound when the company has no such document.
	SetDTEIntercambio(ctx context.Context, empresaID, id string, data []byte) error
}

// CatalogReader reads the customer and product catalogs; part of Reader.
type CatalogReader interface {
	// GetCliente returns a cliente that is not deleted.
	GetCliente(ctx context.Context, empresaID, id string) (*Cliente, error)
	// GetClienteByRut returns the company's cliente with this rut (as
	// stored) that is not deleted, or ErrNotFound.
	GetClienteByRut(ctx context.Context, empresaID, rut string) (*Cliente, error)
	// ListClientes returns a page of the company's clientes that are not
	// deleted (CatalogFilter).
	ListClientes(ctx context.Context, empresaID string, f CatalogFilter) (*Page[Cliente], error)
	// GetProducto returns a producto that is not deleted.
	GetProducto(ctx context.Context, empresaID, id string) (*Producto, error)
	// ListProductos returns a page of the company's productos that are
	// not deleted (CatalogFilter).
	ListProductos(ctx context.Context, empresaID string, f CatalogFilter) (*Page[Producto], error)
}

// CatalogWriter writes the customer and product catalogs; part of Tx.
type CatalogWriter interface {
	// InsertCliente refuses a rut already used by a cliente of the company
	// that is not deleted (ConstraintClienteRut).
	InsertCliente(ctx context.Context, c *Cliente) error
	// UpdateCliente replaces every field but ID, Rut and CreatedAt.
	UpdateCliente(ctx context.Context, c *Cliente) error
	// DeleteCliente marks a cliente deleted (soft delete).
	DeleteCliente(ctx context.Context, empresaID, id string) error
	// InsertProducto refuses a non-empty codigo already used by a producto
	// of the company that is not deleted (ConstraintProductoCodigo).
	InsertProducto(ctx context.Context, p *Producto) error
	// UpdateProducto replaces every field but ID and CreatedAt (codigo
	// included, with the same uniqueness rule as InsertProducto).
	UpdateProducto(ctx context.Context, p *Producto) error
	// DeleteProducto marks a producto deleted (soft delete).
	DeleteProducto(ctx context.Context, empresaID, id string) error
}

// KeyReader reads API keys; part of Reader.
type KeyReader interface {
	// FindAPIKey returns the API key with this hash, revoked or not. It
	// crosses companies by nature: it is how a credential finds its
	// company.
	FindAPIKey(ctx context.Context, hash []byte) (*APIKey, error)
	// ListAPIKeys returns the company's API keys, revoked ones included,
	// oldest first; an empty list when it has none.
	ListAPIKeys(ctx context.Context, empresaID string) ([]APIKey, error)
}

// KeyWriter writes API keys; part of Tx.
type KeyWriter interface {
	// InsertAPIKey refuses a hash already stored (ConstraintAPIKeyHash).
	InsertAPIKey(ctx context.Context, k *APIKey) error
	// RevokeAPIKey sets RevokedAt (now when at is zero).
	RevokeAPIKey(ctx context.Context, empresaID, id string, at time.Time) error
}

// IdempotencyReader reads Idempotency-Keys (the face's emission); part of
// Reader.
type IdempotencyReader interface {
	// GetIdempotency returns the Idempotency-Key the company recorded in
	// this environment, or ErrNotFound (also once PurgeIdempotency deleted
	// it).
	GetIdempotency(ctx context.Context, empresaID, ambiente, key string) (*Idempotency, error)
}

// IdempotencyWriter writes Idempotency-Keys; part of Tx.
type IdempotencyWriter interface {
	// InsertIdempotency records a key in its Ambiente; a key the company
	// already recorded in that environment is refused with a ConflictError on ConstraintIdempotency, without
	// aborting the transaction, so the caller can read the existing record
	// in the same transaction.
	InsertIdempotency(ctx context.Context, r *Idempotency) error
	// UpdateIdempotency replaces State, DTEID, ResponseStatus,
	// ResponseBody and UpdatedAt of the record of EmpresaID, Ambiente and
	// Key.
	UpdateIdempotency(ctx context.Context, r *Idempotency) error
	// PurgeIdempotency deletes every key (of every company) created
	// before the given time and reports how many it deleted.
	PurgeIdempotency(ctx context.Context, before time.Time) (int64, error)
}

// EventReader reads the outbox's events; part of Reader.
type EventReader interface {
	// GetEvent returns the company's event with this id, or ErrNotFound.
	GetEvent(ctx context.Context, empresaID, id string) (*Event, error)
	// ListEvents returns the company's events, newest first.
	ListEvents(ctx context.Context, empresaID string, f ListFilter) (*Page[Event], error)
}

// EventWriter records the outbox's events; part of Tx.
type EventWriter interface {
	// InsertEvent records an outbox event.
	InsertEvent(ctx context.Context, e *Event) error
}

// DeliveryReader reads webhooks, their deliveries and the attempt log (the
// delivery room; the outbox reads the webhooks it fans out to); part of
// Reader.
type DeliveryReader interface {
	// GetWebhook returns a webhook that is not deleted.
	GetWebhook(ctx context.Context, empresaID, id string) (*Webhook, error)
	// ListWebhooks returns the company's webhooks that are not deleted,
	// oldest first.
	ListWebhooks(ctx context.Context, empresaID string) ([]Webhook, error)
	// GetDelivery returns the company's delivery with this id (its
	// webhook deleted or not), or ErrNotFound.
	GetDelivery(ctx context.Context, empresaID, id string) (*Delivery, error)
	// ListDeliveries returns the deliveries of one webhook, newest first.
	ListDeliveries(ctx context.Context, empresaID, webhookID string, f ListFilter) (*Page[Delivery], error)
	// ListDeliveryAttempts returns the attempt log of a delivery of the
	// company, oldest first: at most MaxLimit attempts, the latest ones.
	// A delivery with no attempts, or one that does not exist in the
	// company, gives an empty list and no error.
	ListDeliveryAttempts(ctx context.Context, empresaID, deliveryID string) ([]DeliveryAttempt, error)
	// WebhookFailingSince returns when the webhook's current run of
	// failures began: the time of its first failed attempt after its last
	// successful one. It returns the zero time, and no error, when the
	// webhook's latest attempt succeeded, when it has no attempts, and
	// when the company has no such webhook.
	WebhookFailingSince(ctx context.Context, empresaID, webhookID string) (time.Time, error)
}

// DeliveryWriter writes webhooks, their deliveries and the attempt log;
// part of Tx.
type DeliveryWriter interface {
	// InsertWebhook records a webhook; ErrNotFound when its company does
	// not exist.
	InsertWebhook(ctx context.Context, w *Webhook) error
	// UpdateWebhook replaces URL, Events, Secret, IsActive and UpdatedAt.
	UpdateWebhook(ctx context.Context, w *Webhook) error
	// DeleteWebhook marks a webhook deleted and erases its secret; it
	// disappears from reads at once, while its deliveries stay readable.
	DeleteWebhook(ctx context.Context, empresaID, id string) error
	// InsertDelivery refuses a second delivery of the same event to the
	// same webhook (ConstraintDelivery).
	InsertDelivery(ctx context.Context, d *Delivery) error
	// UpdateDelivery replaces State, Attempts, LastStatusCode, LastError,
	// NextAttemptAt and UpdatedAt.
	UpdateDelivery(ctx context.Context, d *Delivery) error
	// InsertDeliveryAttempt appends an attempt to its delivery's attempt
	// log. It fills an empty ID with a new UUID and a zero AttemptedAt
	// with the current time, and cuts a Response longer than
	// MaxAttemptResponse bytes to that length (in a too). It returns
	// ErrNotFound unless a.DeliveryID is a delivery of a.EmpresaID to the
	// webhook a.WebhookID; an attempt whose ID is taken is refused with a
	// ConflictError on ConstraintPrimaryKey.
	InsertDeliveryAttempt(ctx context.Context, a *DeliveryAttempt) error
}

// EnvioReader reads the envelopes sent to the SII (the submission room);
// part of Reader.
type EnvioReader interface {
	// GetEnvio returns the company's envelope with this id, or
	// ErrNotFound.
	GetEnvio(ctx context.Context, empresaID, id string) (*Envio, error)
	// ListEnvios returns a page of the company's envelopes (EnvioFilter),
	// newest first, without XML and Response.
	ListEnvios(ctx context.Context, empresaID string, f EnvioFilter) (*Page[Envio], error)
}

// EnvioWriter writes the envelopes sent to the SII; part of Tx.
type EnvioWriter interface {
	// InsertEnvio records an envelope sent (or to send) to the SII;
	// ErrNotFound when its company does not exist.
	InsertEnvio(ctx context.Context, e *Envio) error
	// UpdateEnvio replaces TrackID, Estado, Attempts, XML, Response,
	// Results and UpdatedAt (DTEIDs and Ambiente never change).
	UpdateEnvio(ctx context.Context, e *Envio) error
	// GetEnvioForUpdate reads an envelope and locks it until the
	// transaction ends (PostgreSQL: SELECT … FOR UPDATE; SQLite: already
	// serialized), or returns ErrNotFound.
	GetEnvioForUpdate(ctx context.Context, empresaID, id string) (*Envio, error)
}

// AlertReader reads the alerts' settings (the alerts room); part of
// Reader.
type AlertReader interface {
	// LowStockThreshold returns the caf.low_stock threshold the company
	// set (SetLowStockThreshold). It reports ok false, with n 0 and no
	// error, when the company never set one or does not exist.
	LowStockThreshold(ctx context.Context, empresaID string) (n int64, ok bool, err error)
}

// AlertWriter writes the alerts' settings; part of Tx.
type AlertWriter interface {
	// SetLowStockThreshold records the company's caf.low_stock threshold,
	// replacing the one it had; ErrNotFound when the company does not
	// exist. The store does not bound n (the service does).
	SetLowStockThreshold(ctx context.Context, empresaID string, n int64) error
}

// InboxReader reads what the company received: files, documents, its quota
// and usage (the inbox room); part of Reader.
type InboxReader interface {
	// GetRecepcion returns the company's received file with this id, XML
	// included, or ErrNotFound.
	GetRecepcion(ctx context.Context, empresaID, id string) (*Recepcion, error)
	// GetRecepcionByDigest returns the company's received file with this
	// digest, XML included, or ErrNotFound.
	GetRecepcionByDigest(ctx context.Context, empresaID, digest string) (*Recepcion, error)
	// ListRecepciones returns a page of the company's received files,
	// newest first, without XML.
	ListRecepciones(ctx context.Context, empresaID string, f RecepcionFilter) (*Page[Recepcion], error)
	// GetRecibido returns the company's received document with this id,
	// XML included, or ErrNotFound.
	GetRecibido(ctx context.Context, empresaID, id string) (*Recibido, error)
	// GetRecibidoByKey returns the company's received document with this
	// DedupeKey, XML included, or ErrNotFound.
	GetRecibidoByKey(ctx context.Context, empresaID, key string) (*Recibido, error)
	// ListRecibidos returns a page of the company's received documents
	// (RecibidoFilter), newest first, without XML.
	ListRecibidos(ctx context.Context, empresaID string, f RecibidoFilter) (*Page[Recibido], error)
	// GetInboxSettings returns the company's inbox quota and retention,
	// or ErrNotFound when it set none.
	GetInboxSettings(ctx context.Context, empresaID string) (*InboxSettings, error)
	// InboxUsage counts what the company's inbox holds: its received
	// files and their stored bytes (Recepcion.Stored), and the mails read
	// from its mailbox. It reads indexes only, never the files.
	InboxUsage(ctx context.Context, empresaID string) (*InboxUsage, error)
}

// InboxWriter writes what the company received, its quota and the
// retention's purge; part of Tx.
type InboxWriter interface {
	// InsertRecepcion records a received file and assigns its Numero; a
	// file whose Digest the company already has is refused with a
	// ConflictError on ConstraintRecepcion, without aborting the
	// transaction (the caller then reads the one recorded).
	InsertRecepcion(ctx context.Context, r *Recepcion) error
	// InsertRecibido records a received document; one whose DedupeKey the
	// company already has is refused with a ConflictError on
	// ConstraintRecibido, without aborting the transaction. Its
	// RecepcionID must be one of the company's received files, else
	// ErrNotFound.
	InsertRecibido(ctx context.Context, r *Recibido) error
	// UpdateRecibido replaces Estado, CorreoEmisor, Respuesta, RCV,
	// FechaRecepcionSII, PlazoVence, PlazoAvisadoAt and UpdatedAt (set to
	// now when zero).
	UpdateRecibido(ctx context.Context, r *Recibido) error
	// GetRecibidoForUpdate reads a received document and locks it until
	// the transaction ends (PostgreSQL: SELECT … FOR UPDATE; SQLite:
	// already serialized), or returns ErrNotFound.
	GetRecibidoForUpdate(ctx context.Context, empresaID, id string) (*Recibido, error)
	// PutInboxSettings records the company's inbox quota and retention,
	// replacing every field (nil: the service's default) and UpdatedAt
	// (set to now when zero). ErrNotFound when the company does not exist.
	PutInboxSettings(ctx context.Context, s *InboxSettings) error
	// PurgeInbox deletes, oldest first, at most limit of the company's
	// received files that are Descartado and were received before before
	// (with the documents read from them), except the company's
	// highest-numbered file, whose number the next file's follows; and at
	// most limit of the mails read from its mailbox before before. It
	// returns how many of each it deleted.
	PurgeInbox(ctx context.Context, empresaID string, before time.Time, limit int) (recepciones, mensajes int, err error)
}

// MailReader reads the company's mail: mails sent, mails read, mailbox
// settings and state (the mailer room); part of Reader.
type MailReader interface {
	// GetCorreo returns the company's mail with this id, Message
	// included, or ErrNotFound.
	GetCorreo(ctx context.Context, empresaID, id string) (*Correo, error)
	// ListCorreos returns a page of the company's mails (CorreoFilter),
	// newest first, without Message.
	ListCorreos(ctx context.Context, empresaID string, f CorreoFilter) (*Page[Correo], error)
	// FindMensaje returns the company's mail read before with this
	// digest, or ErrNotFound.
	FindMensaje(ctx context.Context, empresaID, digest string) (*Mensaje, error)
	// ListMensajes returns a page of the mails read from the company's
	// mailbox, newest first.
	ListMensajes(ctx context.Context, empresaID string, f ListFilter) (*Page[Mensaje], error)
	// GetCorreoConfig returns the company's mailbox settings, or
	// ErrNotFound when it has none.
	GetCorreoConfig(ctx context.Context, empresaID string) (*CorreoConfig, error)
	// GetBuzon returns what the reader knows of the company's mailbox, or
	// ErrNotFound when it was never read.
	GetBuzon(ctx context.Context, empresaID string) (*Buzon, error)
}

// MailWriter writes the company's mail, its mailbox settings and state;
// part of Tx.
type MailWriter interface {
	// InsertCorreo records a mail to send; ErrNotFound when its company
	// does not exist, or when the DTEID or RecibidoID it names (when not
	// empty) is not the company's.
	InsertCorreo(ctx context.Context, c *Correo) error
	// UpdateCorreo replaces Estado, Attempts, LastError, SentAt and
	// UpdatedAt (set to now when zero).
	UpdateCorreo(ctx context.Context, c *Correo) error
	// InsertMensaje records a mail read from the company's mailbox; one
	// with the same Digest as a mail the company recorded is refused with
	// a ConflictError on ConstraintMensaje, without aborting the
	// transaction (the same Message-ID alone is no conflict).
	InsertMensaje(ctx context.Context, m *Mensaje) error
	// PutCorreoConfig records the company's mailbox settings, replacing
	// Config, SealedIMAP, SealedSMTP and UpdatedAt (set to now when zero).
	// ErrNotFound when the company does not exist.
	PutCorreoConfig(ctx context.Context, c *CorreoConfig) error
	// PutBuzon records what the reader knows of the company's mailbox,
	// replacing every field (UpdatedAt set to now when zero); ErrNotFound
	// when the company does not exist.
	PutBuzon(ctx context.Context, b *Buzon) error
}

// AdminReader reads across companies for the operator: sealed secrets and
// the database's settings; part of Reader.
type AdminReader interface {
	// ListSealed returns up to limit sealed secrets of one kind (one of
	// SealedKinds), of every company, after the one named by afterEmpresa
	// and afterID (both "" for the first page), ordered by company and
	// id: certificados, CAF keys that were sealed (CAF.SealedKey not nil),
	// webhook secrets (a deleted webhook keeps none), mailbox passwords
	// and console session credentials. It crosses companies by nature: it
	// is how the caller checks and re-seals every secret under its
	// key-encryption key.
	ListSealed(ctx context.Context, kind, afterEmpresa, afterID string, limit int) ([]Sealed, error)
	// Setting returns the value of a setting of the database (one of the
	// Setting constants); ok is false, with no error, when it was never
	// set.
	Setting(ctx context.Context, name string) (value string, ok bool, err error)
}

// AdminWriter rewrites sealed secrets and the database's settings; part of
// Tx.
type AdminWriter interface {
	// ReplaceSealed replaces the sealed bytes of the secret s names
	// (Kind, EmpresaID, ID) with s.Data, changing nothing else of its
	// record (not even its update time); ErrNotFound when there is no
	// such secret.
	ReplaceSealed(ctx context.Context, s *Sealed) error
	// PutSetting sets a setting of the database, replacing its value.
	PutSetting(ctx context.Context, name, value string) error
}

// JobWriter schedules background jobs in the transaction (every room that
// queues work); part of Tx.
type JobWriter interface {
	// Enqueue inserts a background job in this transaction: it becomes
	// visible to workers only if the transaction commits. Its queue must
	// be the default one or declared (Jobs.DeclareQueue), else it fails
	// with ErrUnknownQueue.
	Enqueue(ctx context.Context, args JobArgs, opts *JobOpts) (*JobResult, error)
	// CompleteJob marks the job that ctx belongs to (the context a
	// Worker's Work was given, or one derived from it) completed in this
	// transaction. Once the transaction commits the job is done, even if
	// the process dies before Work returns, so the runner does not rescue
	// and run it again: a job whose last transaction enqueues the next
	// step of a chain calls it there, lest a crash between that commit and
	// the job's own completion leave two runs carrying the chain on. Work
	// should return nil afterwards. Outside a job's Work it does nothing.
	CompleteJob(ctx context.Context) error
}

// Empresas yields every company r lists (ListEmpresas), page by page,
// oldest first. A failed page ends the iteration with its error and a nil
// company; breaking out of the loop stops the listing.
func Empresas(ctx context.Context, r EmpresaReader) iter.Seq2[*Empresa, error] {
	return func(yield func(*Empresa, error) bool) {
		f := ListFilter{Limit: MaxLimit}
		for {
			page, err := r.ListEmpresas(ctx, f)
			if err != nil {
				yield(nil, err)
				return
			}
			for i := range page.Items {
				if !yield(&page.Items[i], nil) {
					return
				}
			}
			if page.NextCursor == "" {
				return
			}
			f.Cursor = page.NextCursor
		}
	}
}
