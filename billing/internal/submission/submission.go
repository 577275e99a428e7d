// Package submission sends the billing service's documents to the SII in
// envelopes and follows them until the SII has reviewed them.
//
// An envelope (store.Envio) carries one or more signed documents of one
// company and one environment: an EnvioBOLETA of boletas, or an EnvioDTE
// of the other types. A document emitted with auto_send goes in an
// envelope of its own right after it is signed (Signed queues the job that
// packs it); documents held firmado go when Create packs them (the API's
// POST /envios and POST /dte/{id}/enviar). Each envelope goes to the SII
// of its documents' environment (that of the CAF their folios came from),
// whatever the company's environment is by then.
//
// An envelope walks nuevo → enviando (uploading, retried with
// UploadBackoff after transport failures and retryable codes) → procesando
// (polled with PollBackoff) → procesado, and each of its documents firmado
// → enviando → procesando → aceptado, con_reparos or rechazado, per the
// mapping of the sii package, settled one by one from the envelope's
// review (and, where the review does not tell documents of one type
// apart, from each document's own status). The envelope's XML is built and
// signed once, stored before its first upload, and never signed again: a
// second upload sends the same bytes.
//
// An upload left without an answer (a crash, a timeout after the SII took
// it) is not sent again blindly. For an EnvioDTE, getEstDteAv gives back
// the track id of the envelope that carried its first document (see
// interrupted). For an EnvioBOLETA, which no query finds again, the rule of
// the protocol notes applies (see boletaArrival): once BoletaCheckDelay has
// passed each boleta's own status is the arrival check; a boleta the SII
// has is never sent again, and the same bytes go again only when every
// boleta still reads FAU after BoletaSafetyDelay. A rejection of an EPR
// review (a duplicate upload, typically) is checked with the document's own
// status first, and a received document wins; a rejection as "DTE
// Repetido" of an envelope sent more than once is never believed (it
// proves the first copy arrived), and the document waits for its own
// status instead.
//
// Each state change, the documents' tracking fields and their events
// (dte.accepted, dte.repaired, dte.rejected) are written in one
// transaction together with the job of the next step, which also completes
// the job of the step before; an envelope in nuevo, enviando or procesando
// always has its next step scheduled.
//
// A Submitter needs a store, the outbox, a clock, a logger, and the face
// behind three small interfaces: Tenants (a company's signing
// certificate), Documents (a stored document's issuer and environment,
// which the face's emission recorded) and Outcomes (told of what the SII
// settled); it knows nothing of billing.Service. Config.Now (the clock)
// and Config.Endpoints (the addresses of SubmitConfig) stay function
// values, not calls back into the face.
package submission

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/internal/outbox"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/signer"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/webhook"
)

// AmbienteFunc returns the environment of a stored document
// ("certificacion" or "produccion"): that of the CAF its folio came from,
// read through r.
type AmbienteFunc func(ctx context.Context, r store.Reader, d *store.DTE) (string, error)

// Config is what a Submitter needs. Every field is required unless it
// says otherwise; billing.New fills the defaults of its SubmitConfig in.
type Config struct {
	Store  store.Store
	Outbox *outbox.Outbox
	Now    func() time.Time
	Logger *slog.Logger
	// Tenants opens a company's signing certificate.
	Tenants Tenants
	// Documents reads what the face's emission recorded of a stored
	// document: its issuer and its environment.
	Documents Documents
	// Endpoints returns the addresses for an environment; nil means the
	// SII's own (sii.EndpointsFor).
	Endpoints func(env sii.Environment) sii.Endpoints
	// HTTPClient sends the requests; nil means the sii package's default.
	HTTPClient *http.Client
	// Timeout bounds each exchange with the SII.
	Timeout time.Duration
	// UploadBackoff are the pauses before each new upload attempt after a
	// retryable failure, and PollBackoff those before each status query
	// while the SII processes an envelope (the last one repeats; a zero
	// pause queues the next step at once). Neither may be empty.
	UploadBackoff, PollBackoff []time.Duration
	// ReconcileWindow is how long a rejection of a document that was
	// uploaded more than once waits for its own status to find the
	// earlier copy, and how long an EnvioDTE whose upload got no answer
	// waits for getEstDteAv to show the SII got it before it is sent
	// again.
	ReconcileWindow time.Duration
	// BoletaCheckDelay is how long after an EnvioBOLETA's upload that got
	// no answer the boletas' own status is first asked (the SII suggests
	// about ten minutes), and BoletaSafetyDelay how long every boleta
	// must then still read FAU before the same bytes are sent again.
	BoletaCheckDelay, BoletaSafetyDelay time.Duration
	// Workers is the submission queue's budget in this process (0: none,
	// other processes submit).
	Workers int
	// Outcomes, when set, is told of what the SII's review settled.
	Outcomes Outcomes
}

// Tenants is what a Submitter asks the face about a company.
type Tenants interface {
	// SigningCert returns the company's opened signing certificate, which
	// signs the envelopes and authenticates to the SII.
	SigningCert(ctx context.Context, empresaID string) (*signer.Certificate, error)
}

// Documents reads what the face recorded of a stored document when it
// emitted it.
type Documents interface {
	// Emisor returns the issuer the document was emitted with (its
	// snapshot, store.DTE.Emisor), the envelope's Caratula.
	Emisor(d *store.DTE) (dte.Emisor, error)
	// Ambiente returns the document's environment, which its envelope goes
	// to, read through r (an AmbienteFunc).
	Ambiente(ctx context.Context, r store.Reader, d *store.DTE) (string, error)
}

// Outcomes is told of the documents the SII's review settled.
type Outcomes interface {
	// Settled is told of each settled document once the transaction that
	// recorded it has committed.
	Settled(o Settled)
	// Accepted runs in the transaction that records the SII's acceptance
	// of a document (aceptado or con_reparos): what must follow it
	// durably, such as mailing the document to its receptor.
	Accepted(ctx context.Context, tx store.Tx, d *store.DTE) error
}

// Queue is the queue submission jobs wait in: they have their own
// workers, so no webhook delivery or maintenance job holds them up.
const Queue = "submission"

// DefaultWorkers is the submission queue's budget by default: each step
// spends most of its time waiting for the SII.
const DefaultWorkers = 8

// Declare declares the submission queue on j with its budget. A process
// that does not submit declares it with 0 workers, so it may still queue
// documents for the processes that do.
func Declare(j store.Jobs, workers int) error {
	return j.DeclareQueue(Queue, workers)
}

// Submitter runs the submission jobs. Build it with New; it is safe for
// concurrent use.
type Submitter struct {
	cfg    Config
	st     store.Store
	outbox *outbox.Outbox
	now    func() time.Time
	log    *slog.Logger
	tokens *sii.TokenCache
}

// New builds a Submitter from cfg. Register its worker before the runner
// starts.
func New(cfg Config) *Submitter {
	return &Submitter{cfg: cfg, st: afterCommitStore{cfg.Store}, outbox: cfg.Outbox, now: cfg.Now, log: cfg.Logger, tokens: sii.NewTokenCache()}
}

// submitKind names the submission job.
const submitKind = "dte.sii"

// Steps of a submission job.
const (
	stepUpload = "upload"
	stepPoll   = "poll"
)

// stepTimeout bounds one step. A step makes two or three exchanges with
// the SII, and at most eight (seed, token and a new seed after a timed-out
// one; the call and its repeat with a fresh token; the same for a status
// query), each bounded by Config.Timeout: the bound is eight of them and
// room for the store, but never more than the store's default rescue
// delay. The runner rescues a job a crashed process left running only
// once its timeout has passed too, so with the SII's default timeout
// (which would give 4 min 10 s) every step under way at a crash goes on
// within two minutes. A step cut short is safe to run again (an upload
// left without an answer is reconciled, see interrupted). The steps that
// ask about every document of an envelope ask a few at a time and stop
// at the first that tells nothing, so they fit the same bound.
func (sb *Submitter) stepTimeout() time.Duration {
	return min(8*sb.cfg.Timeout+10*time.Second, store.DefaultRescueAfter)
}

// submitArgs is one step of an envelope's submission. N counts the earlier
// runs of the same step and picks the pause before the next one: waiting
// for the SII is a new job, not a retry, so it never uses up attempts.
type submitArgs struct {
	EmpresaID string `json:"empresa_id"`
	// EnvioID is the envelope. Jobs queued by Signed, and by earlier
	// versions, name a document instead (DTEID): adopt packs it, or
	// carries on the envelope an earlier version made for it.
	EnvioID string `json:"envio_id,omitempty"`
	DTEID   string `json:"dte_id,omitempty"`
	Step    string `json:"step"`
	N       int    `json:"n"`
	// RejectedAt is when a poll first saw a rejection that the document's
	// own status could not yet overturn, for an envelope uploaded more
	// than once.
	RejectedAt *time.Time `json:"rejected_at,omitempty"`
	// FAUAt is when the arrival check of an EnvioBOLETA whose upload got
	// no answer first found every boleta FAU.
	FAUAt *time.Time `json:"fau_at,omitempty"`
	// VOF counts the polls in a row that found a boleta envelope VOF.
	VOF int `json:"vof,omitempty"`
}

// Kind names the submission job.
func (submitArgs) Kind() string { return submitKind }

// JobOpts: every step waits in the submission queue.
func (submitArgs) JobOpts() store.JobOpts { return store.JobOpts{Queue: Queue} }

// Register declares the submission queue with its budget and registers
// the submission worker on j.
func (sb *Submitter) Register(j store.Jobs) error {
	if err := Declare(j, sb.cfg.Workers); err != nil {
		return err
	}
	err := j.Register(store.Worker{
		Kind: submitKind,
		Work: func(ctx context.Context, job *store.Job) error {
			a, err := store.DecodeArgs[submitArgs](job)
			if err != nil {
				return err
			}
			if a.EnvioID == "" {
				return sb.adopt(ctx, a)
			}
			switch a.Step {
			case stepUpload:
				return sb.upload(ctx, a)
			case stepPoll:
				return sb.poll(ctx, a)
			}
			return fmt.Errorf("billing: submission job %d: unknown step %q", job.ID, a.Step)
		},
		// Failures here are the store's, or a crash's (the SII's are
		// handled by scheduling the next step); retry them briskly, and
		// forever at a minute.
		Retry:   []time.Duration{5 * time.Second, 15 * time.Second, 30 * time.Second, time.Minute},
		Timeout: sb.stepTimeout(),
	})
	if err != nil {
		return fmt.Errorf("billing: registering %s: %w", submitKind, err)
	}
	return nil
}

// Signed queues, in tx, the submission of a document just signed, when it
// was emitted with auto_send: a job that packs it in an envelope of its
// own (adopt). Emission calls it in its transaction 2.
func (sb *Submitter) Signed(ctx context.Context, tx store.Tx, d *store.DTE) error {
	if !d.AutoSend {
		return nil
	}
	_, err := tx.Enqueue(ctx, submitArgs{EmpresaID: d.EmpresaID, DTEID: d.ID, Step: stepUpload}, &store.JobOpts{UniqueByArgs: true})
	return err
}

// ParseStatus decodes the stored result of a document's last
// fine-grained status query, the JSON of store.DTE.SIIStatus (api.SIIStatus,
// which the document's read model shows); an empty one is the zero
// SIIStatus.
func ParseStatus(raw []byte) (api.SIIStatus, error) {
	var s api.SIIStatus
	if len(raw) == 0 {
		return s, nil
	}
	err := json.Unmarshal(raw, &s)
	return s, err
}

// next enqueues the following step of a's envelope in tx (RejectedAt,
// FAUAt and VOF carry over to the same step), and completes the running
// step's job in it (stepDone).
func (sb *Submitter) next(ctx context.Context, tx store.Tx, a submitArgs, step string, n int) error {
	schedule := sb.cfg.PollBackoff
	if step == stepUpload {
		schedule = sb.cfg.UploadBackoff
	}
	return sb.nextAt(ctx, tx, a, step, n, sb.now().Add(store.Pause(schedule, n)))
}

// nextAt is next at a chosen time (now or earlier: at once).
func (sb *Submitter) nextAt(ctx context.Context, tx store.Tx, a submitArgs, step string, n int, at time.Time) error {
	if err := stepDone(ctx, tx); err != nil {
		return err
	}
	var opts store.JobOpts
	if at.After(sb.now()) {
		opts.ScheduledAt = at
	}
	na := submitArgs{EmpresaID: a.EmpresaID, EnvioID: a.EnvioID, Step: step, N: n}
	if step == a.Step {
		na.RejectedAt, na.FAUAt, na.VOF = a.RejectedAt, a.FAUAt, a.VOF
	}
	_, err := tx.Enqueue(ctx, na, &opts)
	return err
}

// client builds the SII client of a company for an environment, with its
// certificate.
func (sb *Submitter) client(ctx context.Context, empresaID string, env sii.Environment) (*sii.Client, *store.Empresa, error) {
	emp, err := sb.st.GetEmpresa(ctx, empresaID)
	if err != nil {
		return nil, nil, err
	}
	cert, err := sb.cfg.Tenants.SigningCert(ctx, empresaID)
	if err != nil {
		return nil, nil, err
	}
	// No repeats inside the client: the job schedules its own next try.
	cfg := sii.Config{Environment: env, Certificate: cert, HTTPClient: sb.cfg.HTTPClient, Timeout: sb.cfg.Timeout,
		Tokens: sb.tokens, Clock: sb.now, Retries: -1}
	if sb.cfg.Endpoints != nil {
		cfg.Endpoints = sb.cfg.Endpoints(env)
	}
	c, err := sii.New(cfg)
	return c, emp, err
}

func ptr[T any](v T) *T { return &v }

// deref returns *p, or the zero value for nil.
func deref[T any](p *T) (v T) {
	if p != nil {
		v = *p
	}
	return v
}

// stepDone completes, in tx, the job of the step that runs: the
// transaction that schedules the next step (or settles the envelope) ends
// this one, so a crash right after it commits cannot make the runner
// rescue this step and run it beside the next (two uploads of one
// envelope, two chains of polls).
func stepDone(ctx context.Context, tx store.JobWriter) error { return tx.CompleteJob(ctx) }

// transition moves a locked document to a final state with its event.
// It is where every final SII outcome of a document is recorded.
func (sb *Submitter) transition(ctx context.Context, tx store.Tx, d *store.DTE, estado dte.Estado) error {
	d.Estado = string(estado)
	d.UpdatedAt = time.Time{}
	if err := tx.UpdateDTE(ctx, d); err != nil {
		return err
	}
	typ := map[dte.Estado]webhook.EventType{dte.EstadoAceptado: webhook.EventDTEAccepted,
		dte.EstadoConReparos: webhook.EventDTERepaired, dte.EstadoRechazado: webhook.EventDTERejected}[estado]
	if typ == "" {
		return nil
	}
	sb.settled(ctx, d, estado)
	if (estado == dte.EstadoAceptado || estado == dte.EstadoConReparos) && sb.cfg.Outcomes != nil {
		if err := sb.cfg.Outcomes.Accepted(ctx, tx, d); err != nil {
			return err
		}
	}
	return sb.outbox.PublishDTE(ctx, tx, d, typ)
}

// isBoleta reports whether a document is a boleta (39, 41): those travel
// in an EnvioBOLETA through the boleta API.
func isBoleta(d *store.DTE) bool { return dte.TipoDTE(d.TipoDTE).IsBoleta() }

// final reports whether a stored state is final.
func final(estado string) bool { return dte.Estado(estado).Final() }

// inFlight reports whether a document of envelope e still waits for the
// SII: not final, and still carried by e.
func inFlight(d *store.DTE, e *store.Envio) bool {
	return !final(d.Estado) && deref(outbox.TrackingOf(d).EnvioID) == e.ID
}

// sorted returns ids sorted: every transaction locks the documents of an
// envelope in this order, so two never wait for each other.
func sorted(ids []string) []string {
	out := slices.Clone(ids)
	slices.Sort(out)
	return out
}
