package cesiones

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dtekit/dtekit/internal/chile"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/webhook"
)

// jobKind names the cesión job.
const jobKind = "cesion.rtc"

// Steps of the job.
const (
	stepUpload = "upload"
	stepPoll   = "poll"
)

// Codes the room writes itself (store.Cesion.Codigo) when the registry
// gives none.
const (
	// CodeNoUpload: the uploads ran out (MaxUploads) without the
	// registry taking the file, and the registry shows no cesión of the
	// document.
	CodeNoUpload = "SIN_ENVIO"
	// CodeAdopted: an upload whose answer was lost turned out recorded:
	// the registry shows the document held by the cesionario.
	CodeAdopted = "CEDIDO"
	// CodeNotSent: the registry's client refused the upload before
	// sending it (ErrNotSent): the same file would be refused again.
	CodeNotSent = "NO_ENVIADO"
	// CodeNoReview: the upload's review never settled within MaxPolls
	// queries, and the registry shows no cesión of the document to the
	// cesionario.
	CodeNoReview = "SIN_REVISION"
)

// ErrNotSent marks an error of RTC.Upload that refused the request before
// it left (a field the registry would refuse): final, not retried.
var ErrNotSent = errors.New("the upload was refused before it was sent")

// jobArgs is one step of a cesión's journey. N counts the earlier runs of
// the step and picks the pause before the next: waiting for the registry
// is a new job, never a retry.
type jobArgs struct {
	EmpresaID string `json:"empresa_id"`
	CesionID  string `json:"cesion_id"`
	Step      string `json:"step"`
	N         int    `json:"n"`
}

// Kind names the job.
func (jobArgs) Kind() string { return jobKind }

// JobOpts: every step waits in the room's queue.
func (jobArgs) JobOpts() store.JobOpts { return store.JobOpts{Queue: Queue} }

// stepTimeout bounds one step: two exchanges with the registry (the
// query of an earlier upload, the upload or the poll) and room for the
// store, never more than the store's default rescue delay, so that a step
// a crash left running is taken up again soon (a token, when one must be
// fetched, may take the step over its bound). A step cut short is safe to
// run again: its upload was counted before it left, so the next run asks
// the registry first.
func (r *Room) stepTimeout() time.Duration {
	return min(2*r.cfg.Timeout+2*time.Second, store.DefaultRescueAfter)
}

// Register declares the queue with its budget and registers the worker.
func (r *Room) Register(j store.Jobs) error {
	if err := Declare(j, r.cfg.Workers); err != nil {
		return err
	}
	err := j.Register(store.Worker{
		Kind: jobKind,
		Work: func(ctx context.Context, job *store.Job) error {
			a, err := store.DecodeArgs[jobArgs](job)
			if err != nil {
				return err
			}
			switch a.Step {
			case stepUpload:
				return r.upload(ctx, a)
			case stepPoll:
				return r.poll(ctx, a)
			}
			return fmt.Errorf("billing: cesion job %d: unknown step %q", job.ID, a.Step)
		},
		// Failures here are the store's (the registry's are scheduled as
		// the next step): retry briskly, then every minute.
		Retry:   []time.Duration{2 * time.Second, 15 * time.Second, 30 * time.Second, time.Minute},
		Timeout: r.stepTimeout(),
	})
	if err != nil {
		return fmt.Errorf("billing: registering %s: %w", jobKind, err)
	}
	return nil
}

// next completes the running step and queues step (its run n) after its
// pause, in tx.
func (r *Room) next(ctx context.Context, tx store.Tx, a jobArgs, step string, n int) error {
	if err := tx.CompleteJob(ctx); err != nil {
		return err
	}
	schedule := r.cfg.PollBackoff
	if step == stepUpload {
		schedule = r.cfg.UploadBackoff
	}
	var opts store.JobOpts
	if d := store.Pause(schedule, n); d > 0 {
		opts.ScheduledAt = r.now().Add(d)
	}
	_, err := tx.Enqueue(ctx, jobArgs{EmpresaID: a.EmpresaID, CesionID: a.CesionID, Step: step, N: n}, &opts)
	return err
}

// retryLater queues step again after its pause, logging why.
func (r *Room) retryLater(ctx context.Context, a jobArgs, step string, why error) error {
	r.log.Warn("billing: cesion step failed; will try again", "empresa_id", a.EmpresaID, "cesion_id", a.CesionID,
		"step", step, "error", why.Error())
	return r.st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return r.next(ctx, tx, a, step, a.N+1) })
}

// registry returns the registry of the cesión's environment.
func (r *Room) registry(ctx context.Context, c *store.Cesion) (RTC, error) {
	if r.cfg.Registry == nil {
		return nil, errors.New("this process has no client of the SII's registry")
	}
	return r.cfg.Registry.Registry(ctx, c.EmpresaID, c.Ambiente)
}

// ours asks the registry whether the cesión's document is ceded to its
// cesionario. The registry tells the emisor whether a document is ceded,
// and names the holder only to who holds the cesión's key: a ceded
// document whose holder is not named is taken as ceded by this cesión,
// since the first cedente must be the emisor and the service makes one
// cesión at a time per document (a cesión made outside the service of a
// document being ceded through it is the one case this adopts wrongly).
func (r *Room) ours(ctx context.Context, rtc RTC, c *store.Cesion) (bool, error) {
	d, err := r.st.GetDTE(ctx, c.EmpresaID, c.DTEID)
	if err != nil {
		return false, err
	}
	req, err := requestOf(c)
	if err != nil {
		return false, err
	}
	h, err := rtc.Ceded(ctx, Query{RutEmisor: req.RutEmisor, TipoDTE: d.TipoDTE, Folio: d.Folio})
	if err != nil {
		return false, err
	}
	return h.Ceded && (h.Holder == "" || chile.SameRUT(h.Holder, c.RutCesionario)), nil
}

// upload runs the upload step: an earlier upload that may have arrived is
// looked for first (adopted when the registry shows the document held by
// the cesionario); then the attempt is counted and committed, the file
// sent, and its answer recorded with the next step.
func (r *Room) upload(ctx context.Context, a jobArgs) error {
	c, err := r.st.GetCesion(ctx, a.EmpresaID, a.CesionID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if c.Estado != store.CesionPendiente {
		return nil
	}
	rtc, err := r.registry(ctx, c)
	if err != nil {
		return r.retryLater(ctx, a, stepUpload, err)
	}
	if c.Attempts > 0 {
		ok, err := r.ours(ctx, rtc, c)
		if err != nil {
			return r.retryLater(ctx, a, stepUpload, err)
		}
		if ok {
			return r.settle(ctx, a, Outcome{Kind: Accepted, Code: CodeAdopted,
				Message: "the registry shows the document held by the cesionario: an earlier upload was recorded"})
		}
		if c.Attempts >= r.cfg.MaxUploads {
			return r.settle(ctx, a, Outcome{Kind: Rejected, Code: CodeNoUpload,
				Message: fmt.Sprintf("%d uploads failed, and the registry shows no cesión of the document", c.Attempts)})
		}
	}
	req, err := requestOf(c)
	if err != nil {
		return err
	}
	// Counted before the request leaves: a crash from here on leaves a
	// cesión whose next upload looks for this one first.
	err = r.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		cur, err := tx.GetCesionForUpdate(ctx, a.EmpresaID, a.CesionID)
		if err != nil {
			return err
		}
		if cur.Estado != store.CesionPendiente || cur.Attempts != c.Attempts {
			return errMoved
		}
		cur.Attempts++
		c = cur
		return tx.UpdateCesion(ctx, cur)
	})
	if errors.Is(err, errMoved) {
		return nil
	}
	if err != nil {
		return err
	}
	o, err := rtc.Upload(ctx, req.RutEmisor, req.EmailNotificacion, c.AEC)
	if errors.Is(err, ErrNotSent) {
		return r.settle(ctx, a, Outcome{Kind: Rejected, Code: CodeNotSent, Message: err.Error()})
	}
	if err != nil {
		return r.retryLater(ctx, a, stepUpload, err)
	}
	switch o.Kind {
	case Pending:
		if o.TrackID == "" {
			return r.retryLater(ctx, a, stepUpload, errors.New("the registry took the upload without a track id"))
		}
		return r.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			cur, err := tx.GetCesionForUpdate(ctx, a.EmpresaID, a.CesionID)
			if err != nil {
				return err
			}
			if cur.Estado != store.CesionPendiente {
				return tx.CompleteJob(ctx)
			}
			cur.Estado, cur.TrackID, cur.Codigo, cur.Glosa, cur.Response = store.CesionEnviada, o.TrackID, o.Code, o.Message, o.Raw
			if err := tx.UpdateCesion(ctx, cur); err != nil {
				return err
			}
			return r.next(ctx, tx, jobArgs{EmpresaID: a.EmpresaID, CesionID: a.CesionID}, stepPoll, 0)
		})
	case Rejected, Accepted:
		return r.settle(ctx, a, o)
	}
	// Failure: the registry did not take it; try again later.
	return r.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		cur, err := tx.GetCesionForUpdate(ctx, a.EmpresaID, a.CesionID)
		if err != nil {
			return err
		}
		cur.Codigo, cur.Glosa, cur.Response = o.Code, o.Message, o.Raw
		if err := tx.UpdateCesion(ctx, cur); err != nil {
			return err
		}
		return r.next(ctx, tx, a, stepUpload, a.N+1)
	})
}

// errMoved reports a cesión another run moved on meanwhile.
var errMoved = errors.New("cesion: moved on by another run")

// poll runs the status step: the upload's review, settled when final.
func (r *Room) poll(ctx context.Context, a jobArgs) error {
	c, err := r.st.GetCesion(ctx, a.EmpresaID, a.CesionID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if c.Estado != store.CesionEnviada {
		return nil
	}
	rtc, err := r.registry(ctx, c)
	if err != nil {
		return r.retryLater(ctx, a, stepPoll, err)
	}
	if a.N >= r.cfg.MaxPolls {
		// The review never settled (an answer the client cannot read, a
		// registry that keeps failing): the registry's holder decides,
		// so that the document is not held active for ever.
		ok, err := r.ours(ctx, rtc, c)
		if err != nil {
			if a.N >= 2*r.cfg.MaxPolls {
				return r.settle(ctx, a, Outcome{Kind: Rejected, Code: CodeNoReview,
					Message: fmt.Sprintf("the upload's review did not settle in %d queries, nor did the registry say whether the document is ceded: %v", a.N, err)})
			}
			return r.retryLater(ctx, a, stepPoll, err)
		}
		if ok {
			return r.settle(ctx, a, Outcome{Kind: Accepted, Code: CodeAdopted,
				Message: "the upload's review did not settle, but the registry shows the document held by the cesionario"})
		}
		return r.settle(ctx, a, Outcome{Kind: Rejected, Code: CodeNoReview,
			Message: fmt.Sprintf("the upload's review did not settle in %d queries, and the registry shows no cesión of the document to the cesionario", a.N)})
	}
	o, err := rtc.Status(ctx, c.TrackID)
	if err != nil {
		return r.retryLater(ctx, a, stepPoll, err)
	}
	switch o.Kind {
	case Accepted:
		return r.settle(ctx, a, o)
	case Rejected:
		if c.Attempts > 1 {
			// A cesión uploaded more than once: the registry refuses the
			// second copy of one it recorded from the first.
			ok, err := r.ours(ctx, rtc, c)
			if err != nil {
				return r.retryLater(ctx, a, stepPoll, err)
			}
			if ok {
				return r.settle(ctx, a, Outcome{Kind: Accepted, Code: CodeAdopted,
					Message: "the registry shows the document held by the cesionario: an earlier upload was recorded", Raw: o.Raw})
			}
		}
		return r.settle(ctx, a, o)
	}
	// Pending, or the registry could not answer: ask again later.
	return r.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		cur, err := tx.GetCesionForUpdate(ctx, a.EmpresaID, a.CesionID)
		if err != nil {
			return err
		}
		if cur.Estado != store.CesionEnviada {
			return tx.CompleteJob(ctx)
		}
		if o.Code != "" && (o.Code != cur.Codigo || o.Message != cur.Glosa) {
			cur.Codigo, cur.Glosa, cur.Response = o.Code, o.Message, o.Raw
			if err := tx.UpdateCesion(ctx, cur); err != nil {
				return err
			}
		}
		return r.next(ctx, tx, a, stepPoll, a.N+1)
	})
}

// settle records a final answer (Accepted or Rejected) with its event, and
// completes the step, in one transaction.
func (r *Room) settle(ctx context.Context, a jobArgs, o Outcome) error {
	return r.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		cur, err := tx.GetCesionForUpdate(ctx, a.EmpresaID, a.CesionID)
		if err != nil {
			return err
		}
		if cur.Estado == store.CesionAceptada || cur.Estado == store.CesionRechazada {
			return tx.CompleteJob(ctx)
		}
		typ := webhook.EventDTECedido
		cur.Estado = store.CesionAceptada
		if o.Kind == Rejected {
			typ, cur.Estado = webhook.EventDTECesionRechazada, store.CesionRechazada
		}
		cur.Codigo, cur.Glosa = o.Code, o.Message
		if o.Raw != nil {
			cur.Response = o.Raw
		}
		if err := tx.UpdateCesion(ctx, cur); err != nil {
			return err
		}
		d, err := tx.GetDTE(ctx, cur.EmpresaID, cur.DTEID)
		if err != nil {
			return err
		}
		data := webhook.CesionData{ID: cur.ID, Estado: cur.Estado, RutCesionario: cur.RutCesionario, Monto: cur.Monto,
			Codigo: cur.Codigo, Glosa: cur.Glosa}
		if cur.TrackID != "" {
			data.TrackID = &cur.TrackID
		}
		if err := r.cfg.Outbox.PublishCesion(ctx, tx, d, typ, data); err != nil {
			return err
		}
		return tx.CompleteJob(ctx)
	})
}
