// Package submission sends the billing service's documents to the SII
// and follows them until the SII has reviewed them.
//
// A document emitted with auto_send goes to the SII right after it is
// signed (Signed, run in emission's transaction 2), in an EnvioDTE of its
// own or an EnvioBOLETA for boletas; one emitted without it goes when
// Enqueue asks. Each document walks firmado → enviando (uploading,
// retried with UploadBackoff after transport failures and retryable
// codes) → procesando (polled with PollBackoff) → aceptado, con_reparos
// or rechazado, per the mapping of the sii package. An upload left
// without an answer (a crash, a timeout after the SII took it) is not
// sent again blindly: getEstDteAv gives back the track id of the envelope
// that carried the document (see interrupted; boletas, which have no such
// query, are reconciled through getEstDte). A rejection of an EPR review
// (a duplicate upload, typically) is checked with getEstDte first, and
// DOK wins. Each state change, its tracking fields and its event
// (dte.accepted, dte.repaired, dte.rejected) are written in one
// transaction together with the job of the next step, so a document in
// enviando or procesando always has its next step scheduled.
//
// A Submitter needs a store, the outbox, a clock, a logger, and functions
// that give a company's signing certificate and a document's issuer; it
// knows nothing of billing.Service.
package submission

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/billing/internal/outbox"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/signer"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/webhook"
)

// Config is what a Submitter needs. Every field is required unless it
// says otherwise; billing.New fills the defaults of its SubmitConfig in.
type Config struct {
	Store  store.Store
	Outbox *outbox.Outbox
	Now    func() time.Time
	Logger *slog.Logger
	// SigningCert returns the company's opened signing certificate, which
	// signs the envelopes and authenticates to the SII.
	SigningCert func(ctx context.Context, empresaID string) (*signer.Certificate, error)
	// Emisor returns the issuer a stored document was emitted with (its
	// snapshot, store.DTE.Emisor), the envelope's Caratula.
	Emisor func(d *store.DTE) (dte.Emisor, error)
	// Endpoints returns the addresses for a company's environment; nil
	// means the SII's own (sii.EndpointsFor).
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
	// uploaded more than once waits for getEstDte to find the earlier
	// copy, and how long an upload without an answer waits for
	// getEstDteAv (boletas: getEstDte) to show the SII got it before the
	// envelope is sent again.
	ReconcileWindow time.Duration
	// Workers is the submission queue's budget in this process (0: none,
	// other processes submit).
	Workers int
	// Settled, when set, is told of each document the SII's review
	// settled, once the transaction that recorded it has committed.
	Settled func(Settled)
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
// one; the call and its repeat with a fresh token; the same for
// getEstDte), each bounded by Config.Timeout: the bound is eight of them
// and room for the store, but never more than the store's default rescue
// delay. The runner rescues a job a crashed process left running only
// once its timeout has passed too, so with the SII's default timeout
// (which would give 4 min 10 s) every step under way at a crash goes on
// within two minutes. A step cut short is safe to run again (an upload
// left without an answer is reconciled, see interrupted).
func (sb *Submitter) stepTimeout() time.Duration {
	return min(8*sb.cfg.Timeout+10*time.Second, store.DefaultRescueAfter)
}

// submitArgs is one step of a document's submission. N counts the earlier
// runs of the same step and picks the pause before the next one: waiting
// for the SII is a new job, not a retry, so it never uses up attempts.
type submitArgs struct {
	EmpresaID string `json:"empresa_id"`
	DTEID     string `json:"dte_id"`
	Step      string `json:"step"`
	N         int    `json:"n"`
	// RejectedAt is when a poll first saw a rejection that getEstDte could
	// not yet overturn, for a document uploaded more than once.
	RejectedAt *time.Time `json:"rejected_at,omitempty"`
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
// was emitted with auto_send. Emission calls it in its transaction 2.
func (sb *Submitter) Signed(ctx context.Context, tx store.Tx, d *store.DTE) error {
	if !d.AutoSend {
		return nil
	}
	_, err := tx.Enqueue(ctx, submitArgs{EmpresaID: d.EmpresaID, DTEID: d.ID, Step: stepUpload}, &store.JobOpts{UniqueByArgs: true})
	return err
}

// Enqueue queues a firmado document of the company for submission (one
// emitted with auto_send false): a conflict fault.Error when the document
// is on its way or reviewed already, store.ErrNotFound when the company
// has no such document. A process whose Submitter is registered on st's
// job runner sends it.
func Enqueue(ctx context.Context, st store.Store, empresaID, id string) error {
	return st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		d, err := tx.GetDTEForUpdate(ctx, empresaID, id)
		if err != nil {
			return err
		}
		if d.Estado != string(dte.EstadoFirmado) {
			return fault.Clash(fault.InvalidState, fmt.Sprintf("the DTE is %s; only a firmado document can be submitted", d.Estado))
		}
		_, err = tx.Enqueue(ctx, submitArgs{EmpresaID: empresaID, DTEID: id, Step: stepUpload}, &store.JobOpts{UniqueByArgs: true})
		return err
	})
}

// Status is the stored result of the last fine-grained status query of a
// document: the JSON of store.DTE.SIIStatus, which billing's read model
// (billing.SIIStatus, with the same fields) shows.
type Status struct {
	Source      string     `json:"source,omitempty"`
	TrackID     *string    `json:"track_id,omitempty"`
	EstadoSII   *string    `json:"estado_sii,omitempty"`
	Glosa       *string    `json:"glosa,omitempty"`
	GlosaEstado *string    `json:"glosa_estado,omitempty"`
	ErrCode     *string    `json:"err_code,omitempty"`
	GlosaErr    *string    `json:"glosa_err,omitempty"`
	NumAtencion *string    `json:"num_atencion,omitempty"`
	CheckedAt   *time.Time `json:"checked_at,omitempty"`
	RawXML      *string    `json:"raw_xml,omitempty"`
}

// ParseStatus decodes a stored status; an empty one is the zero Status.
func ParseStatus(raw []byte) (Status, error) {
	var s Status
	if len(raw) == 0 {
		return s, nil
	}
	err := json.Unmarshal(raw, &s)
	return s, err
}

// after returns the pause before run n+1 of a step.
func after(schedule []time.Duration, n int) time.Duration {
	if n >= len(schedule) {
		n = len(schedule) - 1
	}
	return schedule[n]
}

// next enqueues the following step in tx (RejectedAt carries over to
// polls), and completes the running step's job in it (stepDone).
func (sb *Submitter) next(ctx context.Context, tx store.Tx, a submitArgs, step string, n int) error {
	if err := stepDone(ctx, tx); err != nil {
		return err
	}
	schedule := sb.cfg.PollBackoff
	if step == stepUpload {
		schedule = sb.cfg.UploadBackoff
	}
	var opts store.JobOpts
	if pause := after(schedule, n); pause > 0 {
		opts.ScheduledAt = sb.now().Add(pause)
	}
	na := submitArgs{EmpresaID: a.EmpresaID, DTEID: a.DTEID, Step: step, N: n}
	if step == stepPoll {
		na.RejectedAt = a.RejectedAt
	}
	_, err := tx.Enqueue(ctx, na, &opts)
	return err
}

// client builds the SII client of a company: its environment and its
// certificate.
func (sb *Submitter) client(ctx context.Context, empresaID string) (*sii.Client, *store.Empresa, error) {
	emp, err := sb.st.GetEmpresa(ctx, empresaID)
	if err != nil {
		return nil, nil, err
	}
	cert, err := sb.cfg.SigningCert(ctx, empresaID)
	if err != nil {
		return nil, nil, err
	}
	env := sii.Environment(emp.Ambiente)
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
// transaction that schedules the next step (or settles the document) ends
// this one, so a crash right after it commits cannot make the runner
// rescue this step and run it beside the next (two uploads of one
// envelope, two chains of polls).
func stepDone(ctx context.Context, tx store.Tx) error { return tx.CompleteJob(ctx) }

// transition moves a locked document to a final state with its event,
// and completes the running step's job in tx (stepDone).
func (sb *Submitter) transition(ctx context.Context, tx store.Tx, d *store.DTE, estado dte.Estado) error {
	if err := stepDone(ctx, tx); err != nil {
		return err
	}
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
	return sb.outbox.PublishDTE(ctx, tx, d, typ)
}

// upload runs the upload step: it packs the document in an envelope (or
// reuses the one an earlier attempt built), marks it enviando, uploads it,
// and records the answer with the next step.
func (sb *Submitter) upload(ctx context.Context, a submitArgs) error {
	d, err := sb.st.GetDTE(ctx, a.EmpresaID, a.DTEID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if d.Estado != string(dte.EstadoFirmado) && d.Estado != string(dte.EstadoEnviando) {
		return nil // already past this step (a duplicate job, or a rescued one)
	}
	client, emp, err := sb.client(ctx, a.EmpresaID)
	if err != nil {
		return sb.uploadFailed(ctx, a, "", err, false)
	}
	tr := outbox.TrackingOf(d)
	var envio *store.Envio
	if tr.EnvioID != nil {
		if envio, err = sb.st.GetEnvio(ctx, a.EmpresaID, *tr.EnvioID); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	if envio != nil && envio.Estado == envioSending {
		// The last attempt got no answer (a crash between marking it and
		// recording the answer, or an answer lost on the way back): the
		// SII may hold the envelope already.
		if done, err := sb.interrupted(ctx, a, client, d, emp, envio); done || err != nil {
			return err
		}
	}
	if envio == nil {
		emisor, err := sb.cfg.Emisor(d)
		if err != nil {
			return fmt.Errorf("billing: submit DTE %s: issuer snapshot: %w", d.ID, err)
		}
		cert, err := sb.cfg.SigningCert(ctx, a.EmpresaID)
		if err != nil {
			return sb.uploadFailed(ctx, a, "", err, false)
		}
		xml, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: emisor, At: sb.now()}, cert, d.XML)
		if err != nil {
			return fmt.Errorf("billing: submit DTE %s: building the envelope: %w", d.ID, err)
		}
		envio = &store.Envio{EmpresaID: a.EmpresaID, DTEIDs: []string{d.ID}, Estado: "nuevo", XML: xml}
	}
	// Transaction A: enviando, one more attempt, the envelope kept. The
	// function works on a copy of the envelope: the store may run it
	// again after a rollback, which must not count the attempt twice nor
	// update an envelope whose insert was rolled back.
	skip := false
	base := *envio
	err = sb.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		cur, err := tx.GetDTEForUpdate(ctx, a.EmpresaID, a.DTEID)
		if err != nil {
			return err
		}
		if skip = cur.Estado != string(dte.EstadoFirmado) && cur.Estado != string(dte.EstadoEnviando); skip {
			return nil
		}
		e := base
		e.Attempts++
		e.Estado = envioSending
		e.UpdatedAt = time.Time{}
		if e.ID == "" {
			err = tx.InsertEnvio(ctx, &e)
		} else {
			err = tx.UpdateEnvio(ctx, &e)
		}
		if err != nil {
			return err
		}
		t := outbox.TrackingOf(cur)
		t.EnvioID, t.Intentos = ptr(e.ID), ptr(e.Attempts)
		if err := outbox.SetTracking(cur, t); err != nil {
			return err
		}
		cur.Estado = string(dte.EstadoEnviando)
		cur.UpdatedAt = time.Time{}
		if err := tx.UpdateDTE(ctx, cur); err != nil {
			return err
		}
		envio = &e
		return nil
	})
	if err != nil || skip {
		return err
	}
	res, err := client.Upload(ctx, emp.Rut, envio.XML)
	if err != nil {
		// An answer lost on the way back leaves the attempt open, as a
		// crash does: the next run asks getEstDteAv before sending again.
		// (Boletas have no such query: theirs are sent again.)
		lost := !dte.TipoDTE(d.TipoDTE).IsBoleta() && sii.MayHaveArrived(err)
		return sb.uploadFailed(ctx, a, envio.ID, err, lost)
	}
	o := sii.UploadOutcome(res)
	if o.Reconcile {
		if ds, derr := sb.documentStatus(ctx, client, d, emp.Rut); derr == nil && sii.DocumentOutcome(ds).Estado == dte.EstadoAceptado {
			o = sii.Outcome{Estado: dte.EstadoAceptado, Code: ds.Estado, Glosa: ds.GlosaEstado}
		}
	}
	estadoEnvio := ""
	if res.Boleta {
		estadoEnvio = res.Estado
	}
	return sb.answered(ctx, a, envio, o, res.TrackID, estadoEnvio, res.Raw)
}

// answered records an upload's answer (or the track id getEstDteAv gave
// back after a lost one) with the next step, in one transaction
// ("transaction B"): procesando with the track id and a poll, enviando
// with another upload, or a final state with its event.
func (sb *Submitter) answered(ctx context.Context, a submitArgs, envio *store.Envio, o sii.Outcome, trackID, estadoEnvio string, raw []byte) error {
	return sb.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		cur, err := tx.GetDTEForUpdate(ctx, a.EmpresaID, a.DTEID)
		if err != nil {
			return err
		}
		if cur.Estado != string(dte.EstadoEnviando) {
			return nil
		}
		envio.Response, envio.UpdatedAt = raw, time.Time{}
		t := outbox.TrackingOf(cur)
		t.CodigoSII, t.GlosaSII = ptr(o.Code), ptr(o.Glosa)
		switch o.Estado {
		case dte.EstadoProcesando:
			envio.TrackID, envio.Estado = trackID, "procesando"
			t.TrackID = ptr(trackID)
			if estadoEnvio != "" {
				t.EstadoEnvio = ptr(estadoEnvio)
			}
		case dte.EstadoEnviando:
			envio.Estado = envioRetry
		default:
			envio.Estado = string(o.Estado)
		}
		if err := tx.UpdateEnvio(ctx, envio); err != nil {
			return err
		}
		if err := outbox.SetTracking(cur, t); err != nil {
			return err
		}
		switch o.Estado {
		case dte.EstadoProcesando:
			cur.Estado, cur.UpdatedAt = string(dte.EstadoProcesando), time.Time{}
			if err := tx.UpdateDTE(ctx, cur); err != nil {
				return err
			}
			return sb.next(ctx, tx, a, stepPoll, 0)
		case dte.EstadoEnviando:
			cur.UpdatedAt = time.Time{}
			if err := tx.UpdateDTE(ctx, cur); err != nil {
				return err
			}
			return sb.next(ctx, tx, a, stepUpload, a.N+1)
		}
		return sb.transition(ctx, tx, cur, o.Estado)
	})
}

// States of a store.Envio that the submission reads back.
const (
	envioSending = "enviando"   // an attempt is under way (or was cut short by a crash)
	envioRetry   = "reintentar" // the last attempt failed; send again
)

// interrupted handles an envelope whose last upload got no answer: a
// crash cut it short, or the answer was lost on the way back. It reports
// done when it settled the step (or scheduled the next one) without
// sending; done false means send the envelope again.
//
// For the classic protocol it asks getEstDteAv with the DTE's signature.
// When the SII received the document, the track id of the envelope that
// carried it is recorded as the upload's answer would have recorded it,
// and the document goes to procesando and its poll: the envelope's review
// decides aceptado, con_reparos or rechazado, and nothing is sent again.
// When the SII did not receive it (or the query fails), the upload step is
// tried again later without sending, until ReconcileWindow has passed
// since the attempt; then the envelope is sent again.
//
// Boletas have no such query: the boleta API answers for a track id, and
// per document only with getEstDte's codes, which know a boleta only once
// its envelope's review accepted it. So for them getEstDte DOK settles
// the document as aceptado (without a track id, and without telling a
// boleta accepted with reparos apart), and otherwise the envelope is sent
// again after ReconcileWindow: a boleta whose envelope or review rejected
// it is then uploaded a second time.
func (sb *Submitter) interrupted(ctx context.Context, a submitArgs, client *sii.Client, d *store.DTE, emp *store.Empresa, envio *store.Envio) (done bool, err error) {
	if !dte.TipoDTE(d.TipoDTE).IsBoleta() {
		if handled, done, err := sb.recoverTrack(ctx, a, client, d, emp, envio); handled {
			return done, err
		}
	}
	ds, derr := sb.documentStatus(ctx, client, d, emp.Rut)
	accepted := derr == nil && sii.DocumentOutcome(ds).Estado == dte.EstadoAceptado
	if !accepted && sb.now().Sub(envio.UpdatedAt) >= sb.cfg.ReconcileWindow {
		return false, nil
	}
	return true, sb.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		cur, err := tx.GetDTEForUpdate(ctx, a.EmpresaID, a.DTEID)
		if err != nil {
			return err
		}
		if cur.Estado != string(dte.EstadoEnviando) {
			return nil
		}
		if !accepted {
			return sb.next(ctx, tx, a, stepUpload, a.N+1)
		}
		e, err := tx.GetEnvio(ctx, a.EmpresaID, envio.ID)
		if err != nil {
			return err
		}
		e.Estado, e.UpdatedAt = string(dte.EstadoAceptado), time.Time{}
		if err := tx.UpdateEnvio(ctx, e); err != nil {
			return err
		}
		t := outbox.TrackingOf(cur)
		t.CodigoSII, t.GlosaSII = ptr(ds.Estado), ptr(ds.GlosaEstado)
		if err := outbox.SetTracking(cur, t); err != nil {
			return err
		}
		now := sb.now().UTC()
		if cur.SIIStatus, err = json.Marshal(Status{Source: "getEstDte", EstadoSII: ptr(ds.Estado),
			GlosaEstado: ptr(ds.GlosaEstado), ErrCode: ptr(ds.ErrCode), GlosaErr: ptr(ds.GlosaErr),
			NumAtencion: ptr(ds.NumAtencion), CheckedAt: &now, RawXML: ptr(string(ds.Raw))}); err != nil {
			return err
		}
		return sb.transition(ctx, tx, cur, dte.EstadoAceptado)
	})
}

// recoverTrack is interrupted's getEstDteAv check for the classic
// protocol, with interrupted's done. handled false means the check could
// not be made (the stored DTE's signature is unreadable) and interrupted
// falls back to getEstDte.
func (sb *Submitter) recoverTrack(ctx context.Context, a submitArgs, client *sii.Client, d *store.DTE, emp *store.Empresa, envio *store.Envio) (handled, done bool, err error) {
	doc, err := dte.ParseDTE(d.XML)
	if err != nil || doc.SignatureValue == "" {
		sb.log.Error("billing: the stored DTE's signature is unreadable; reconciling through getEstDte", "empresa_id", a.EmpresaID, "dte_id", a.DTEID, "error", fmt.Sprint(err))
		return false, false, nil
	}
	av, err := client.DocumentStatusAdvanced(ctx, documentQuery(d, emp.Rut), doc.SignatureValue)
	if err != nil {
		sb.log.Warn("billing: getEstDteAv failed; will ask again", "empresa_id", a.EmpresaID, "dte_id", a.DTEID, "error", err.Error())
	} else if track := av.Envelope(); track != "" {
		o := sii.Outcome{Estado: dte.EstadoProcesando, Code: av.Estado,
			Glosa: "getEstDteAv: received in the envelope with track id " + track + ": " + av.Glosa}
		return true, true, sb.answered(ctx, a, envio, o, track, "", av.Raw)
	}
	if sb.now().Sub(envio.UpdatedAt) >= sb.cfg.ReconcileWindow {
		return true, false, nil
	}
	return true, true, sb.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		cur, err := tx.GetDTEForUpdate(ctx, a.EmpresaID, a.DTEID)
		if err != nil || cur.Estado != string(dte.EstadoEnviando) {
			return err
		}
		return sb.next(ctx, tx, a, stepUpload, a.N+1)
	})
}

// uploadFailed records a failed attempt (no answer from the SII, or no
// client) and schedules the next one. lost keeps the attempt open (the
// envelope may be at the SII): the next run goes through interrupted.
func (sb *Submitter) uploadFailed(ctx context.Context, a submitArgs, envioID string, cause error, lost bool) error {
	sb.log.Warn("billing: SII upload failed; will retry", "empresa_id", a.EmpresaID, "dte_id", a.DTEID, "attempt", a.N+1, "answer_lost", lost, "error", cause.Error())
	return sb.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		cur, err := tx.GetDTEForUpdate(ctx, a.EmpresaID, a.DTEID)
		if err != nil {
			return err
		}
		if cur.Estado != string(dte.EstadoFirmado) && cur.Estado != string(dte.EstadoEnviando) {
			return nil
		}
		if envioID != "" {
			e, err := tx.GetEnvio(ctx, a.EmpresaID, envioID)
			if err != nil {
				return err
			}
			e.Estado, e.UpdatedAt = envioRetry, time.Time{}
			if lost {
				e.Estado = envioSending
			}
			if err := tx.UpdateEnvio(ctx, e); err != nil {
				return err
			}
		}
		t := outbox.TrackingOf(cur)
		t.GlosaSII = ptr(cause.Error())
		if err := outbox.SetTracking(cur, t); err != nil {
			return err
		}
		cur.UpdatedAt = time.Time{}
		if err := tx.UpdateDTE(ctx, cur); err != nil {
			return err
		}
		return sb.next(ctx, tx, a, stepUpload, a.N+1)
	})
}

// documentQuery identifies a stored document to the SII's per-document
// queries.
func documentQuery(d *store.DTE, rutEmisor string) sii.DocumentQuery {
	rec := d.RutReceptor
	if rec == "" {
		rec = "66666666-6"
	}
	return sii.DocumentQuery{RutEmisor: rutEmisor, RutReceptor: rec, Tipo: d.TipoDTE, Folio: d.Folio, FechaEmision: d.FechaEmision, Monto: d.MontoTotal}
}

// documentStatus asks the SII about one document (getEstDte, or the
// boleta API).
func (sb *Submitter) documentStatus(ctx context.Context, c *sii.Client, d *store.DTE, rutEmisor string) (*sii.DocumentStatus, error) {
	q := documentQuery(d, rutEmisor)
	if dte.TipoDTE(d.TipoDTE).IsBoleta() {
		return c.BoletaStatus(ctx, q)
	}
	return c.DocumentStatus(ctx, q)
}

// poll runs the status step: it asks for the envelope's state and records
// it, with the final state and its event, or with the next poll.
func (sb *Submitter) poll(ctx context.Context, a submitArgs) error {
	d, err := sb.st.GetDTE(ctx, a.EmpresaID, a.DTEID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	tr := outbox.TrackingOf(d)
	if d.Estado != string(dte.EstadoProcesando) || tr.TrackID == nil {
		return nil
	}
	client, emp, err := sb.client(ctx, a.EmpresaID)
	var st *sii.EnvelopeStatus
	if err == nil {
		if dte.TipoDTE(d.TipoDTE).IsBoleta() {
			st, err = client.BoletaEnvelopeStatus(ctx, emp.Rut, *tr.TrackID)
		} else {
			st, err = client.EnvelopeStatus(ctx, emp.Rut, *tr.TrackID)
		}
	}
	if err != nil {
		sb.log.Warn("billing: SII status query failed; will ask again", "empresa_id", a.EmpresaID, "dte_id", a.DTEID, "error", err.Error())
		return sb.st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return sb.next(ctx, tx, a, stepPoll, a.N+1) })
	}
	o := sii.EnvelopeOutcome(st, d.TipoDTE)
	source, raw := "getEstUp", st.Raw
	var docStatus *sii.DocumentStatus
	if o.Estado == dte.EstadoRechazado && o.Reconcile {
		ds, derr := sb.documentStatus(ctx, client, d, emp.Rut)
		if derr == nil {
			docStatus = ds
		}
		switch {
		case derr == nil && sii.DocumentOutcome(ds).Estado == dte.EstadoAceptado:
			o = sii.Outcome{Estado: dte.EstadoAceptado, Code: ds.Estado, Glosa: ds.GlosaEstado}
		case deref(tr.Intentos) > 1:
			// An earlier upload may have reached the SII and be in review
			// still: ask again for a while before believing the rejection.
			now := sb.now()
			if a.RejectedAt == nil {
				a.RejectedAt = &now
			}
			if now.Sub(*a.RejectedAt) < sb.cfg.ReconcileWindow {
				o = sii.Outcome{Estado: dte.EstadoProcesando, Code: o.Code, Glosa: o.Glosa}
			}
		}
	}
	if dte.TipoDTE(d.TipoDTE).IsBoleta() {
		source = "boleta.estado"
	}
	now := sb.now().UTC()
	status := Status{Source: source, TrackID: tr.TrackID, EstadoSII: ptr(st.Estado), Glosa: ptr(st.Glosa),
		NumAtencion: ptr(st.NumAtencion), CheckedAt: &now, RawXML: ptr(string(raw))}
	if st.ErrCode != "" {
		status.ErrCode = ptr(st.ErrCode)
	}
	if docStatus != nil {
		status = Status{Source: "getEstDte", TrackID: tr.TrackID, EstadoSII: ptr(docStatus.Estado),
			GlosaEstado: ptr(docStatus.GlosaEstado), ErrCode: ptr(docStatus.ErrCode), GlosaErr: ptr(docStatus.GlosaErr),
			NumAtencion: ptr(docStatus.NumAtencion), CheckedAt: &now, RawXML: ptr(string(docStatus.Raw))}
	}
	return sb.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		cur, err := tx.GetDTEForUpdate(ctx, a.EmpresaID, a.DTEID)
		if err != nil {
			return err
		}
		if cur.Estado != string(dte.EstadoProcesando) {
			return nil
		}
		t := outbox.TrackingOf(cur)
		t.EstadoEnvio, t.GlosaSII = ptr(st.Estado), ptr(st.Glosa)
		if c, ok := st.CountsFor(d.TipoDTE); ok {
			t.Informados, t.Aceptados, t.Rechazados, t.Reparos = ptr(c.Informados), ptr(c.Aceptados), ptr(c.Rechazados), ptr(c.Reparos)
		}
		if o.Final() {
			t.CodigoSII, t.GlosaSII = ptr(o.Code), ptr(o.Glosa)
		}
		if err := outbox.SetTracking(cur, t); err != nil {
			return err
		}
		if cur.SIIStatus, err = json.Marshal(status); err != nil {
			return err
		}
		if !o.Final() {
			cur.UpdatedAt = time.Time{}
			if err := tx.UpdateDTE(ctx, cur); err != nil {
				return err
			}
			return sb.next(ctx, tx, a, stepPoll, a.N+1)
		}
		return sb.transition(ctx, tx, cur, o.Estado)
	})
}
