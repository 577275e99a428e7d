// Package cesiones cedes the company's documents to factoring companies
// through the SII's registry of credit transfers (RTC) and follows each
// cesión until the registry has recorded or refused it.
//
// Prepare checks a document and a request (a cedible type, accepted by
// the SII, not ceded nor being ceded through the service, the amount
// within the total) and builds the AEC with package cesion, signed with
// the company's certificate: its holder is the authorized person, the
// company the cedente. It signs outside any transaction. Insert records
// the cesión pendiente with its AEC and queues its job, in the caller's
// transaction; the store's unique rule (store.ConstraintCesionActiva)
// keeps one cesión not rechazada per document, whatever crashes or
// double requests happen.
//
// The job walks a cesión pendiente → enviada (the registry took the
// upload and gave a track id; uploads retried with UploadBackoff, at most
// MaxUploads) → aceptada (EOK: the event dte.cedido) or rechazada (the
// event dte.cesion_rechazada, with the registry's code and text), polling
// the upload's state with PollBackoff, at most MaxPolls times (then the
// registry's holder settles it: aceptada CEDIDO or rechazada
// SIN_REVISION). An upload the client refuses before sending it
// (ErrNotSent) is rechazada NO_ENVIADO at once. Every upload is counted in the
// transaction before it leaves, so a process killed while the request is
// on its way leaves a cesión pendiente whose attempts say an upload may
// have arrived: before uploading again, the job asks the registry whether
// the document is ceded to the cesionario already and adopts that
// cesión (aceptada) if so. A rejection of a cesión uploaded more than once
// is checked the same way, since the registry refuses the second copy of
// a cesión it recorded from the first.
//
// The room needs a store, the outbox, a clock and the face behind three
// small interfaces: Tenants (the company's signing certificate),
// Documents (a stored document's issuer) and Registry (a client of the
// SII's registry in one environment). It knows nothing of
// billing.Service nor of package sii's types.
package cesiones

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/billing/internal/outbox"
	"github.com/dtekit/dtekit/cesion"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/chile"
	"github.com/dtekit/dtekit/signer"
	"github.com/dtekit/dtekit/store"
)

// Config is what the room needs. Every field is required unless it says
// otherwise.
type Config struct {
	Store  store.Store
	Outbox *outbox.Outbox
	Now    func() time.Time
	// Logger receives operational messages; nil discards them.
	Logger    *slog.Logger
	Tenants   Tenants
	Documents Documents
	// Registry builds the registry's clients; nil leaves every cesión
	// pendiente, its job retrying until one is given (a process that does
	// not talk to the SII).
	Registry Registry
	// Workers is the queue's budget in this process (0: none).
	Workers int
	// UploadBackoff are the pauses before each new upload after a
	// failure, PollBackoff those before each query of an upload's state
	// (the last one repeats; zero queues the step at once). Empty means
	// the defaults (DefaultUploadBackoff, DefaultPollBackoff).
	UploadBackoff, PollBackoff []time.Duration
	// Timeout is the registry client's bound on one exchange; it sets
	// the bound of one step (stepTimeout). Zero means DefaultTimeout.
	Timeout time.Duration
	// MaxUploads bounds the uploads of one cesión that fail without the
	// registry's review (transport failures, its internal errors); 0
	// means DefaultMaxUploads. The cesión is then rechazada (codigo
	// SIN_ENVIO), once the registry shows it did not record it.
	MaxUploads int
	// MaxPolls bounds the queries of one upload's review; 0 means
	// DefaultMaxPolls. When they run out (the registry kept answering
	// something other than a final review), the job asks whether the
	// document is ceded to the cesionario: aceptada (codigo CEDIDO) if
	// so, else rechazada (codigo SIN_REVISION). When that question keeps
	// failing too, the cesión is rechazada SIN_REVISION after as many
	// queries again.
	MaxPolls int
}

// Defaults of Config.
const (
	DefaultMaxUploads = 8
	// DefaultMaxPolls is Config.MaxPolls' default: with
	// DefaultPollBackoff, about 2 days of a review that does not settle.
	DefaultMaxPolls = 100
	// DefaultTimeout is Config.Timeout's default, the sii package's.
	DefaultTimeout = 30 * time.Second
	// DefaultWorkers is the queue's budget by default.
	DefaultWorkers = 2
)

// DefaultUploadBackoff and DefaultPollBackoff are the schedules of Config
// by default: the registry reviews an AEC in minutes.
var (
	DefaultUploadBackoff = []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 30 * time.Minute}
	DefaultPollBackoff   = []time.Duration{15 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 30 * time.Minute}
)

// Tenants is what the room asks the face about a company.
type Tenants interface {
	// SigningCert returns the company's opened signing certificate: it
	// signs the AEC's three levels and authenticates to the registry.
	SigningCert(ctx context.Context, empresaID string) (*signer.Certificate, error)
}

// Documents reads what the face recorded of a stored document.
type Documents interface {
	// Emisor returns the issuer the document was emitted with.
	Emisor(d *store.DTE) (dte.Emisor, error)
}

// Registry gives the SII's registry of credit transfers of one company in
// one environment ("certificacion" or "produccion").
type Registry interface {
	Registry(ctx context.Context, empresaID, ambiente string) (RTC, error)
}

// RTC is the registry of credit transfers as the room uses it.
type RTC interface {
	// Upload sends an AEC for the cedente (RTCAnotEnvio); emailNotif is
	// where the registry mails its result. An error is a transport
	// failure (nobody knows whether the file arrived), unless it wraps
	// ErrNotSent: the client refused the request before sending it.
	Upload(ctx context.Context, rutCedente, emailNotif string, aec []byte) (Outcome, error)
	// Status asks for an upload's review (getEstEnvio).
	Status(ctx context.Context, trackID string) (Outcome, error)
	// Ceded asks whether the registry records a cesión of a document
	// (getEstCesion): Holding.Ceded, with the holder's RUT when the
	// answer names it.
	Ceded(ctx context.Context, q Query) (Holding, error)
}

// Holding is what the registry says of a document's cesión.
type Holding struct {
	// Ceded reports that the registry records a cesión of the document.
	Ceded bool
	// Holder is the current holder's RUT, "" when the answer does not
	// name it (the registry names it only to who holds the cesión's key).
	Holder string
}

// Query names a document in the registry.
type Query struct {
	RutEmisor string
	TipoDTE   int
	Folio     int64
}

// Kind classifies an answer of the registry.
type Kind int

// The kinds of Outcome.
const (
	// Pending: the registry has the file and reviews it (an upload's
	// STATUS 0 with its track id, or a state in progress).
	Pending Kind = iota
	// Accepted: the cesión is recorded (EOK).
	Accepted
	// Rejected: the registry refused the file or the upload for good.
	Rejected
	// Failure: the registry could not answer (internal errors, an
	// unknown code); ask again later.
	Failure
)

// Outcome is one answer of the registry.
type Outcome struct {
	Kind Kind
	// TrackID is the upload's track id (an upload's Pending answer).
	TrackID string
	// Code and Message are the registry's code (STATUS, ESTADO_ENVIO)
	// and its text; Raw the answer as received.
	Code, Message string
	Raw           []byte
}

// Queue is the queue the cesión jobs wait in.
const Queue = "cesion"

// Declare declares the queue on j with its budget (0: other processes
// work it).
func Declare(j store.Jobs, workers int) error { return j.DeclareQueue(Queue, workers) }

// Room prepares, records and follows the cesiones. Build it with New.
type Room struct {
	cfg Config
	st  store.Store
	now func() time.Time
	log *slog.Logger
}

// New builds the room from cfg, its zero fields resolved to defaults.
// Register its worker before the runner starts.
func New(cfg Config) *Room {
	if len(cfg.UploadBackoff) == 0 {
		cfg.UploadBackoff = DefaultUploadBackoff
	}
	if len(cfg.PollBackoff) == 0 {
		cfg.PollBackoff = DefaultPollBackoff
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxUploads <= 0 {
		cfg.MaxUploads = DefaultMaxUploads
	}
	if cfg.MaxPolls <= 0 {
		cfg.MaxPolls = DefaultMaxPolls
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Room{cfg: cfg, st: cfg.Store, now: cfg.Now, log: log}
}

// request is what a cesión's row keeps of its request (store.Cesion.Request),
// the defaults resolved.
type request struct {
	Cesionario        api.Cesionario `json:"cesionario"`
	Monto             int64          `json:"monto"`
	UltimoVencimiento string         `json:"ultimo_vencimiento"`
	EmailNotificacion string         `json:"email_notificacion"`
	RutEmisor         string         `json:"rut_emisor"`
}

// Cedible reports the refusal of a cesión of d, or nil: a cedible type,
// accepted by the SII (aceptado or con_reparos), signed.
func Cedible(d *store.DTE) error {
	if !cesion.Cedible(dte.TipoDTE(d.TipoDTE)) {
		return fault.Invalid("tipo_dte", fault.DetailNotCedible,
			fmt.Sprintf("a document of type %d cannot be ceded: only 33, 34, 43 and 46 can", d.TipoDTE))
	}
	if e := dte.Estado(d.Estado); e != dte.EstadoAceptado && e != dte.EstadoConReparos || len(d.XML) == 0 {
		msg := fmt.Sprintf("the document is %s; only a document the SII accepted (aceptado or con_reparos) can be ceded", d.Estado)
		return &fault.Error{Kind: fault.KindConflict, Code: fault.InvalidState, Message: msg,
			Details: []dte.FieldError{{Field: "estado", Code: fault.DetailNotAccepted, Message: msg}}}
	}
	return nil
}

// alreadyCeded is the refusal of a cesión of a document that has one not
// rechazada.
func alreadyCeded(c *store.Cesion) error {
	what := "is being ceded"
	if c.Estado == store.CesionAceptada {
		what = "is ceded"
	}
	return &fault.Error{Kind: fault.KindConflict, Code: fault.AlreadyCeded,
		Message: fmt.Sprintf("the document %s already (cesión %s, %s to %s)", what, c.ID, c.Estado, c.RutCesionario)}
}

// Prepare checks that d (one of empresaID's documents) may be ceded as p
// asks, builds the AEC signed with the company's certificate, and returns
// the cesión to record (Insert). p's own fields are checked by the
// caller; Prepare checks them against the document: the type, the SII's
// acceptance, no cesión of it in flight or recorded, the cesionario not
// the emisor, the amount within the total and the due date not before the
// document's. It signs: call it outside any transaction.
func (r *Room) Prepare(ctx context.Context, empresaID string, d *store.DTE, p api.CesionParams) (*store.Cesion, error) {
	if err := Cedible(d); err != nil {
		return nil, err
	}
	if c, err := r.st.ActiveCesion(ctx, empresaID, d.ID); err == nil {
		return nil, alreadyCeded(c)
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	em, err := r.cfg.Documents.Emisor(d)
	if err != nil {
		return nil, fault.Failed("reading the document's emisor", err)
	}
	if chile.SameRUT(p.Cesionario.Rut, em.Rut) {
		return nil, fault.Invalid("cesionario.rut", fault.DetailSameParty,
			fmt.Sprintf("the cesionario %s is the document's emisor: a document is ceded to another company", p.Cesionario.Rut))
	}
	monto := p.Monto
	if monto == 0 {
		monto = d.MontoTotal
	}
	if monto > d.MontoTotal {
		return nil, fault.Invalid("monto", dte.CodeOutOfRange,
			fmt.Sprintf("monto %d is more than the document's total %d", monto, d.MontoTotal))
	}
	venc := p.UltimoVencimiento
	if venc != "" && d.FechaEmision != "" && venc < d.FechaEmision {
		return nil, fault.Invalid("ultimo_vencimiento", dte.CodeOutOfRange,
			fmt.Sprintf("ultimo_vencimiento %s is before the document's date %s", venc, d.FechaEmision))
	}
	cert, err := r.cfg.Tenants.SigningCert(ctx, empresaID)
	if err != nil {
		return nil, err
	}
	at := r.now()
	cp := api.Cesionario{Rut: strings.ToUpper(p.Cesionario.Rut), RazonSocial: p.Cesionario.RazonSocial,
		Direccion: p.Cesionario.Direccion, Email: p.Cesionario.Email}
	aec, err := cesion.Ceder(cesion.Cedido{DTE: d.XML, Firmante: cert},
		cesion.Cesion{
			Cedente:           cesion.Parte{Email: p.EmailNotificacion},
			Cesionario:        cesion.Parte{RUT: cp.Rut, RazonSocial: cp.RazonSocial, Direccion: cp.Direccion, Email: cp.Email},
			Firmantes:         []*signer.Certificate{cert},
			Monto:             monto,
			UltimoVencimiento: venc,
		},
		cesion.Options{At: at})
	if err != nil {
		var ve *dte.ValidationError
		if errors.As(err, &ve) {
			// The cedente's e-mail is the request's email_notificacion;
			// the sworn declaration, which the request does not write,
			// only repeats a name's problem.
			var ds []dte.FieldError
			for _, d := range ve.Details {
				switch d.Field {
				case "cedente.email":
					d.Field = "email_notificacion"
				case "declaracion_jurada":
					if len(ve.Details) > 1 {
						continue
					}
				}
				ds = append(ds, d)
			}
			return nil, fault.FromValidation(&dte.ValidationError{Details: ds})
		}
		return nil, fault.Failed("building the AEC", err)
	}
	if venc == "" {
		venc = defaultVencimiento(d.FechaEmision)
	}
	req, err := json.Marshal(request{Cesionario: cp, Monto: monto, UltimoVencimiento: venc,
		EmailNotificacion: p.EmailNotificacion, RutEmisor: em.Rut})
	if err != nil {
		return nil, err
	}
	return &store.Cesion{EmpresaID: empresaID, DTEID: d.ID, Ambiente: d.Ambiente, Estado: store.CesionPendiente,
		RutCesionario: cp.Rut, Monto: monto, Request: req, AEC: aec}, nil
}

// defaultVencimiento is package cesion's default due date: the document's
// date plus 30 days.
func defaultVencimiento(fecha string) string {
	t, err := time.Parse(time.DateOnly, fecha)
	if err != nil {
		return ""
	}
	return t.AddDate(0, 0, 30).Format(time.DateOnly)
}

// Insert records c (from Prepare) and queues its upload, in tx. A
// document with a cesión not rechazada is refused (fault.AlreadyCeded),
// whoever inserted it first.
func (r *Room) Insert(ctx context.Context, tx store.Tx, c *store.Cesion) error {
	if c.Ambiente == "" {
		emp, err := tx.GetEmpresa(ctx, c.EmpresaID)
		if err != nil {
			return err
		}
		c.Ambiente = emp.Ambiente
	}
	if err := tx.InsertCesion(ctx, c); err != nil {
		if store.ConflictOn(err) == store.ConstraintCesionActiva {
			if cur, err := tx.ActiveCesion(ctx, c.EmpresaID, c.DTEID); err == nil {
				return alreadyCeded(cur)
			}
			return &fault.Error{Kind: fault.KindConflict, Code: fault.AlreadyCeded, Message: "the document is ceded, or being ceded, already"}
		}
		return err
	}
	_, err := tx.Enqueue(ctx, jobArgs{EmpresaID: c.EmpresaID, CesionID: c.ID, Step: stepUpload}, nil)
	return err
}

// FromStore is a cesión as the API shows it.
func FromStore(c *store.Cesion) (api.Cesion, error) {
	var req request
	if len(c.Request) > 0 {
		if err := json.Unmarshal(c.Request, &req); err != nil {
			return api.Cesion{}, fmt.Errorf("%w: cesion %s: request: %v", store.ErrUnreadable, c.ID, err)
		}
	}
	out := api.Cesion{ID: c.ID, DTEID: c.DTEID, Ambiente: c.Ambiente, Estado: api.EstadoCesion(c.Estado), Cesionario: req.Cesionario,
		Monto: c.Monto, UltimoVencimiento: req.UltimoVencimiento, EmailNotificacion: req.EmailNotificacion, Intentos: c.Attempts,
		CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
	if c.TrackID != "" {
		out.TrackID = &c.TrackID
	}
	if c.Codigo != "" {
		out.CodigoSII, out.GlosaSII = &c.Codigo, &c.Glosa
	}
	return out, nil
}

// RequestOf returns the request a cesión was made with.
func requestOf(c *store.Cesion) (request, error) {
	var req request
	err := json.Unmarshal(c.Request, &req)
	return req, err
}
