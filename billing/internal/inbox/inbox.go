// Package inbox is the billing service's room for the documents a company
// receives from its suppliers (recibidos) and for the answers its own
// customers send back about the documents it emitted.
//
// Intake takes an EnvioDTE as it arrived (uploaded, or read from the
// company's mailbox), verifies it with intercambio.Receive and records, in
// one transaction, the file (store.Recepcion, kept even when it could not
// be read, with its report) and one store.Recibido per document it
// carries, deduplicated by emitter, type and folio: the same document
// received twice is one record. The acknowledgment (acuse de recibo) is
// built and mailed by a job queued in that transaction.
//
// Accept, Claim and Receipt register the company's decision in the SII's
// registry (RCV) first, then record it and mail the matching XML answer
// to the emitter. A periodic job asks the registry when the SII received
// each pending document (the 8-day window runs from then) and its events,
// and warns a day before the window closes (recibido.plazo_por_vencer).
//
// Reply reads the RespuestaDTE and EnvioRecibos that customers send about
// the company's documents, records each file (a store.Recepcion of
// TipoRespuesta, with what it did or why it was refused) and, when the
// answer comes from the document's receptor and describes the document,
// records what it says on the document (store.DTE.Intercambio) with an
// event: the first answer of each kind stands, later different ones are
// kept as history.
//
// The room knows nothing of billing.Service: the face is behind small
// interfaces the room declares, Tenants (a company's certificate, what
// verification trusts, whether it acknowledges at intake), Registry (the
// SII's registry client of a company in one environment), Outgoing (the
// mail an answer goes by) and Counter (the face's counts for /metrics).
// Config.Now stays a function value: the clock, which tests replace.
package inbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/billing/internal/outbox"
	"github.com/dtekit/dtekit/billing/internal/periodic"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/intercambio"
	"github.com/dtekit/dtekit/internal/textclip"
	"github.com/dtekit/dtekit/internal/xmltree"
	"github.com/dtekit/dtekit/signer"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/webhook"
)

// States of a received document (store.Recibido.Estado), as the store
// keeps them: api.EstadoRecibido's, whose doc and transition table say
// what each means and how a document moves between them.
const (
	Pendiente = string(api.RecibidoPendiente)
	Aceptado  = string(api.RecibidoAceptado)
	Reclamado = string(api.RecibidoReclamado)
	Rechazado = string(api.RecibidoRechazado)
)

// States of a received file (store.Recepcion.Estado).
const (
	RecepcionConforme  = "conforme"  // EstadoRecepEnv 0
	RecepcionRechazada = "rechazada" // any other EstadoRecepEnv
)

// Origins of a received file.
const (
	OrigenUpload = "upload"
	OrigenCorreo = "correo"
)

// MaxFileBytes bounds a received file (an EnvioDTE): what Intake accepts.
const MaxFileBytes = 16 << 20

// Lead is how long before the legal window closes the service warns
// (recibido.plazo_por_vencer).
const Lead = 24 * time.Hour

// Mail is an answer to mail: the room says what and to whom; the mail
// room composes, records and sends it.
type Mail struct {
	// ID is the mail's id, chosen by the caller so that queuing the same
	// answer twice records one mail.
	ID         string
	EmpresaID  string
	Tipo       string // "acuse", "resultado", "recibos"
	RecibidoID string
	To         string
	Subject    string
	Text       string
	// Filename and XML are the answer attached.
	Filename string
	XML      []byte
}

// Config builds an Inbox.
type Config struct {
	Store  store.Store
	Outbox *outbox.Outbox
	Now    func() time.Time
	Logger *slog.Logger
	// Tenants answers what the room asks about a company.
	Tenants Tenants
	// Registry gives the SII's registry client of a company in one
	// environment; nil means this service does not speak to the registry
	// (decisions are refused with SII_UNAVAILABLE and the periodic refresh
	// does nothing).
	Registry Registry
	// Outgoing queues the answers by mail; nil means answers are recorded
	// but not mailed (their CorreoEstado says so).
	Outgoing Outgoing
	// Counted, when set, is told once per answer recorded, after its
	// transaction commits: where its address came from, or why it was not
	// mailed (AnswerLabels).
	Counted Counter
	// Every is the period of the refresh job (default 1 hour).
	Every time.Duration
	// Limits are the operator's quota and retention of every company
	// (zero fields: DefaultLimits); a company may choose lower quotas and
	// its own retention (SetQuota).
	Limits Limits
	// PurgeEvery is the period of the retention job (default 1 hour).
	PurgeEvery time.Duration
}

// Tenants is what the inbox asks the face about a company.
type Tenants interface {
	// SigningCert opens the company's certificate, which signs the
	// answers and authenticates to the registry.
	SigningCert(ctx context.Context, empresaID string) (*signer.Certificate, error)
	// VerifyOptions returns what verification trusts for the company: the
	// CAF keys, and the signer policy that received envelopes (Intake) and
	// answers (Reply, AuthorizedSigners keyed by the answering receptor)
	// must pass.
	VerifyOptions(ctx context.Context, empresaID string) (dte.VerifyOptions, error)
	// AutoAcuse reports whether the company acknowledges every file at
	// intake.
	AutoAcuse(ctx context.Context, empresaID string) bool
}

// Registry gives the SII's registry (RCV) of a company.
type Registry interface {
	// Client returns the registry client of the company in one
	// environment (a received document is asked about and decided in its
	// own: store.Recibido.Ambiente; "" is the company's current one).
	Client(ctx context.Context, empresaID, ambiente string) (*sii.Client, error)
}

// Outgoing is the mail the answers go by.
type Outgoing interface {
	// QueueAnswer queues an answer by mail, in the caller's transaction,
	// leaving m.ID "" when the company sends no mail.
	QueueAnswer(ctx context.Context, tx store.Tx, m *Mail) error
}

// Counter counts outcomes by company and label (the face's counters
// behind /metrics).
type Counter interface {
	Add(empresaID, label string)
}

// Inbox is the room. Build it with New and register its jobs.
type Inbox struct {
	cfg Config
	st  store.Store
	now func() time.Time
	log *slog.Logger
}

// New builds an Inbox.
func New(cfg Config) *Inbox {
	if cfg.Every <= 0 {
		cfg.Every = time.Hour
	}
	if cfg.PurgeEvery <= 0 {
		cfg.PurgeEvery = time.Hour
	}
	return &Inbox{cfg: cfg, st: cfg.Store, now: cfg.Now, log: cfg.Logger}
}

// Source says where a file came from.
type Source struct {
	Origen    string // OrigenUpload or OrigenCorreo
	MensajeID string // the store.Mensaje it came in
	Remitente string // the sender's address
	Filename  string // the attachment's name
}

// Result is what Intake recorded.
type Result struct {
	Recepcion *store.Recepcion
	// Recibidos are the documents of the file, in file order: new ones,
	// and those received before (Repetido).
	Recibidos []store.Recibido
	// Repetido holds the ids of Recibidos that were already recorded.
	Repetido map[string]bool
	// Duplicate is true when this very file was received before.
	Duplicate bool
}

// digest is the lowercase hex SHA-256 of b.
func digest(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// docKey is a received document's DedupeKey: its emitter, type and folio
// when it was received conforme (or is a repeat of one), else the digest of its bytes (or of the
// file and its position when it has none): a forged copy never takes the
// place of the real document.
func docKey(d *intercambio.DocumentoRecibido, fileDigest string, i int) string {
	// A document received before (DTERepetido) verified as well: it is
	// the same record.
	if (d.Estado == intercambio.DTERecibidoOK || d.Estado == intercambio.DTERepetido) && d.RUTEmisor != "" && d.Folio > 0 {
		return fmt.Sprintf("dte:%s:%d:%d", d.RUTEmisor, d.Tipo, d.Folio)
	}
	if d.Documento != nil && len(d.Documento.Raw) > 0 {
		return "sha256:" + digest(d.Documento.Raw)
	}
	return fmt.Sprintf("file:%s:%d", fileDigest, i)
}

// Intake receives a file. The same file twice is one Recepcion (the
// second call reports Duplicate); a document received before in another
// file is not recorded again. A file that cannot be read is recorded as
// rechazada with its report, keeping only its first PrefixBytes
// (Descartado), and its documents keep their reports without their
// bytes. A file that would take the company over its quota is refused
// with LIMIT_EXCEEDED and not recorded.
func (ib *Inbox) Intake(ctx context.Context, empresaID string, data []byte, src Source) (*Result, error) {
	if len(data) > MaxFileBytes {
		return nil, fault.Invalid("xml", dte.CodeTooLarge, fmt.Sprintf("the file is %d bytes, more than the %d a received envelope may have", len(data), MaxFileBytes))
	}
	sum := digest(data)
	if r, err := ib.st.GetRecepcionByDigest(ctx, empresaID, sum); err == nil {
		return ib.existing(ctx, r)
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, fault.Failed("reading received files", err)
	}
	emp, err := ib.st.GetEmpresa(ctx, empresaID)
	if err != nil {
		return nil, fault.Failed("reading the company", err)
	}
	// A company over its quota is refused before the verification's
	// work; the transaction checks again with what the file keeps.
	if err := ib.checkQuota(ctx, ib.st, empresaID, 0); err != nil {
		return nil, err
	}
	vo, err := ib.cfg.Tenants.VerifyOptions(ctx, empresaID)
	if err != nil {
		return nil, err
	}
	at := ib.now().Truncate(time.Second)
	rec, err := intercambio.Receive(data, intercambio.Options{Empresa: emp.Rut, Verify: vo, NmbEnvio: nmbEnvio(src.Filename),
		CodEnvio: 1, At: at,
		DTERepetido: func(d *intercambio.DocumentoRecibido) bool { return ib.repeated(ctx, empresaID, emp.Ambiente, d) }})
	if err != nil {
		return nil, fault.Failed("reading the received file", err)
	}
	report, err := json.Marshal(rec)
	if err != nil {
		return nil, fault.Failed("recording the verification report", err)
	}
	r := &store.Recepcion{ID: newID(), EmpresaID: empresaID, Digest: sum, Tipo: TipoEnvio, Origen: src.Origen, MensajeID: src.MensajeID,
		Remitente: src.Remitente, Report: report, Size: int64(len(data)), CreatedAt: at}
	r.Estado = RecepcionRechazada
	if rec.Recibido() {
		r.Estado = RecepcionConforme
	}
	// A refused envelope received none of its documents (a document is
	// never received from a refused envelope): it did nothing, and keeps
	// only what shows what it was.
	r.Descartado = r.Estado == RecepcionRechazada
	r.XML = kept(data, r.Descartado)
	// The documents' records are built first: what the file keeps, for
	// its quota, is its own bytes and theirs.
	r.Stored = int64(len(r.XML) + len(r.Report))
	rows := make([]*store.Recibido, len(rec.Documentos))
	for i := range rec.Documentos {
		if rows[i], err = recibidoOf(&rec.Documentos[i], r, data, sum, i); err != nil {
			return nil, fault.Failed("recording the received file", err)
		}
		ib.place(rows[i], &rec.Documentos[i], emp.Ambiente)
		r.Stored += int64(len(rows[i].XML) + len(rows[i].Report))
	}
	out := &Result{Recepcion: r, Repetido: map[string]bool{}}
	// Read before the transaction: nothing but the writes runs under its
	// lock (SQLite's one writer).
	acuse := ib.cfg.Tenants.AutoAcuse(ctx, empresaID)
	r.Ambiente = fileAmbiente(rec, emp.Ambiente)
	err = ib.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		out.Recibidos, out.Duplicate = nil, false
		clear(out.Repetido)
		if err := tx.InsertRecepcion(ctx, r); err != nil {
			if store.ConflictOn(err) == store.ConstraintRecepcion {
				out.Duplicate = true
				return nil
			}
			return err
		}
		if err := ib.checkInserted(ctx, tx, r); err != nil {
			return err
		}
		for i := range rows {
			row := new(store.Recibido)
			*row = *rows[i]
			if err := tx.InsertRecibido(ctx, row); err != nil {
				if store.ConflictOn(err) != store.ConstraintRecibido {
					return err
				}
				prev, err := tx.GetRecibidoByKey(ctx, empresaID, row.DedupeKey)
				if err != nil {
					return err
				}
				prev.XML = nil
				out.Recibidos = append(out.Recibidos, *prev)
				out.Repetido[prev.ID] = true
				continue
			}
			if _, err := ib.cfg.Outbox.Publish(ctx, tx, empresaID, webhook.EventRecibidoCreated, EventData(row)); err != nil {
				return err
			}
			row.XML = nil
			out.Recibidos = append(out.Recibidos, *row)
		}
		if acuse {
			if _, err := tx.Enqueue(ctx, acuseArgs{EmpresaID: empresaID, RecepcionID: r.ID}, nil); err != nil {
				return err
			}
		}
		return nil
	})
	if IsLimit(err) {
		return nil, err
	}
	if err != nil {
		return nil, fault.Failed("recording the received file", err)
	}
	if out.Duplicate {
		prev, err := ib.st.GetRecepcionByDigest(ctx, empresaID, sum)
		if err != nil {
			return nil, fault.Failed("reading received files", err)
		}
		return ib.existing(ctx, prev)
	}
	ib.log.Info("billing: received a file", "empresa_id", empresaID, "recepcion_id", r.ID, "estado", r.Estado,
		"documentos", len(rec.Documentos), "origen", src.Origen)
	return out, nil
}

// existing is Intake's answer for a file received before.
func (ib *Inbox) existing(ctx context.Context, r *store.Recepcion) (*Result, error) {
	out := &Result{Recepcion: r, Duplicate: true, Repetido: map[string]bool{}}
	if r.Tipo == TipoRespuesta {
		// The same bytes came as an answer before: no envelope of ours.
		return out, nil
	}
	var rec intercambio.Recepcion
	if err := json.Unmarshal(r.Report, &rec); err != nil {
		return nil, fault.Failed("reading the report of file "+r.ID, err)
	}
	for i := range rec.Documentos {
		row, err := ib.recordOf(ctx, r, &rec.Documentos[i], i)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fault.Failed("reading received documents", err)
		}
		row.XML = nil
		out.Recibidos = append(out.Recibidos, *row)
		out.Repetido[row.ID] = true
	}
	return out, nil
}

// recibidoOf is the record of one document of a received file (data);
// a document of a refused file keeps no bytes.
func recibidoOf(d *intercambio.DocumentoRecibido, r *store.Recepcion, data []byte, fileDigest string, i int) (*store.Recibido, error) {
	report, err := json.Marshal(struct {
		Recepcion    *intercambio.DocumentoRecibido `json:"recepcion"`
		Verificacion dte.DocumentReport             `json:"verificacion"`
	}{d, d.Verificacion})
	if err != nil {
		return nil, err
	}
	row := &store.Recibido{ID: newID(), EmpresaID: r.EmpresaID, RecepcionID: r.ID, DedupeKey: docKey(d, fileDigest, i),
		RutEmisor: d.RUTEmisor, TipoDTE: int(d.Tipo), Folio: d.Folio, FechaEmision: d.FchEmis, MontoTotal: d.MntTotal,
		Report: report, CorreoEmisor: r.Remitente, CreatedAt: r.CreatedAt, UpdatedAt: r.CreatedAt}
	row.Estado = Rechazado
	if d.Estado == intercambio.DTERecibidoOK {
		row.Estado = Pendiente
	}
	if doc := d.Documento; doc != nil {
		if !r.Descartado {
			row.XML = standalone(data, doc.Raw)
		}
		row.RazonSocialEmisor = truncate(doc.Emisor.RazonSocial, 100)
	}
	return row, nil
}

// standalone makes the bytes of a document's element, cut from the file
// that carried it, a document of its own: the file's XML declaration,
// which names their encoding (ISO-8859-1 in the SII's exchange), then the
// element's bytes unchanged, so its signature still verifies. Without the
// declaration a reader takes ISO-8859-1 bytes for UTF-8 and fails.
func standalone(file, element []byte) []byte {
	file = bytes.TrimPrefix(file, []byte("\xef\xbb\xbf"))
	decl, err := xmltree.ParseDeclaration(file)
	if err != nil || !decl.Present {
		return element
	}
	out := make([]byte, 0, decl.Len+1+len(element))
	out = append(out, file[:decl.Len]...)
	out = append(out, '\n')
	return append(out, element...)
}

// truncate cuts s to at most n bytes of valid UTF-8.
func truncate(s string, n int) string { return textclip.Clip(s, n) }

// nmbEnvio is the file name an acuse reports: the attachment's, within
// the 80 characters the schema allows.
func nmbEnvio(name string) string {
	name = strings.TrimSpace(name)
	if name == "" {
		return intercambio.DefaultNmbEnvio
	}
	return truncate(name, 80)
}

// newID returns a new record id (a UUIDv7, so ids sort by creation).
func newID() string { return uuid.Must(uuid.NewV7()).String() }

// mailID is the id of the mail that answers kind about record id: the
// same answer queued twice is one mail.
func mailID(kind, id string) string {
	return uuid.NewSHA1(uuid.NameSpaceOID, []byte("dtekit/inbox/"+kind+"/"+id)).String()
}

// EventData is the payload of a recibido.* event.
func EventData(r *store.Recibido) webhook.RecibidoData {
	d := webhook.RecibidoData{ID: r.ID, RutEmisor: r.RutEmisor, RazonSocialEmisor: r.RazonSocialEmisor, TipoDTE: r.TipoDTE,
		Folio: r.Folio, FechaEmision: r.FechaEmision, MontoTotal: r.MontoTotal, Estado: r.Estado, Ambiente: r.Ambiente}
	if !r.PlazoVence.IsZero() {
		t := r.PlazoVence.UTC()
		d.PlazoVence = &t
	}
	return d
}

// Register registers the room's jobs: the acknowledgment of a file and
// the periodic refresh.
func (ib *Inbox) Register(j store.Jobs) error {
	if err := j.Register(store.Worker{Kind: acuseKind, Work: func(ctx context.Context, job *store.Job) error {
		a, err := store.DecodeArgs[acuseArgs](job)
		if err != nil {
			return err
		}
		return ib.acuse(ctx, a)
	}, Timeout: 30 * time.Second}); err != nil {
		return err
	}
	if err := periodic.Register(j, periodic.Job{Args: refreshArgs{}, Every: ib.cfg.Every, Timeout: 10 * time.Minute,
		Run: ib.refresh}); err != nil {
		return err
	}
	return periodic.Register(j, periodic.Job{Args: purgeArgs{}, Every: ib.cfg.PurgeEvery, Timeout: 10 * time.Minute,
		Run: ib.purge})
}
