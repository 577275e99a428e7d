package billing

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/billing/internal/outbox"
	"github.com/dtekit/dtekit/billing/internal/periodic"
	"github.com/dtekit/dtekit/internal/ssrf"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/webhook"
)

// DeliveryConfig configures webhook delivery (Config.Delivery). The zero
// value is the production setting.
type DeliveryConfig struct {
	// AllowLoopback lets webhooks point at loopback addresses, and accepts
	// http://127.0.0.1:PORT/… URLs then: tests and local trials only
	// (dtekit serve --webhook-allow-loopback). Never the default.
	AllowLoopback bool
	// Client replaces the guarded HTTP client that sends deliveries
	// (tests); nil builds internal/ssrf's client.
	Client *http.Client
	// Resolver replaces the DNS resolver of the guarded client (tests).
	Resolver ssrf.Resolver
	// Policy replaces webhook.DefaultRetryPolicy() (tests compress it).
	Policy *webhook.RetryPolicy
	// Rand returns uniform numbers in [0, 1) for the retry jitter; nil
	// means math/rand/v2.
	Rand func() float64
	// RotationGrace is how long a replaced secret keeps signing beside
	// the new one; zero means DefaultRotationGrace.
	RotationGrace time.Duration
	// Timeout bounds one attempt (connect, TLS, request, response);
	// zero means ssrf.DefaultTimeout (15 s).
	Timeout time.Duration
}

// DefaultRotationGrace is how long a rotated-out webhook secret keeps
// signing deliveries beside the new one.
const DefaultRotationGrace = 24 * time.Hour

// deliveryUserAgent identifies dtekit's deliveries to receivers.
const deliveryUserAgent = "dtekit-webhooks/1"

// deliverer holds what sending deliveries needs; built once by New.
type deliverer struct {
	cfg    DeliveryConfig
	sender *webhook.Sender
	policy webhook.RetryPolicy
	rand   func() float64
	grace  time.Duration
}

// newDeliverer builds the delivery machinery from cfg.
func newDeliverer(cfg DeliveryConfig, now func() time.Time) *deliverer {
	d := &deliverer{cfg: cfg, policy: webhook.DefaultRetryPolicy(), rand: cfg.Rand, grace: cfg.RotationGrace}
	if cfg.Policy != nil {
		d.policy = *cfg.Policy
	}
	if d.rand == nil {
		d.rand = rand.Float64
	}
	if d.grace <= 0 {
		d.grace = DefaultRotationGrace
	}
	client := cfg.Client
	if client == nil {
		client = ssrf.NewClient(ssrf.Options{AllowLoopback: cfg.AllowLoopback, Resolver: cfg.Resolver,
			Timeout: cfg.Timeout, UserAgent: deliveryUserAgent})
	}
	d.sender = &webhook.Sender{Client: client, Now: now, MaxResponseBytes: store.MaxAttemptResponse, UserAgent: deliveryUserAgent}
	return d
}

// Delivery sweep: a backstop for delivery jobs lost to repeated store
// failures (discarded by the runner) while their delivery still waits.
const (
	// DeliverySweepInterval is how often the sweep runs.
	DeliverySweepInterval = 10 * time.Minute
	// deliverySweepGrace is how late a scheduled attempt must be before
	// the sweep enqueues it again.
	deliverySweepGrace = 15 * time.Minute
	// deliverySweepWindow bounds how far back the sweep looks (the retry
	// schedule spans about 28 hours).
	deliverySweepWindow = 3 * 24 * time.Hour
)

// deliverySweepArgs is the periodic delivery sweep job.
type deliverySweepArgs struct{}

// Kind names the delivery sweep job.
func (deliverySweepArgs) Kind() string { return "webhook.sweep" }

// SweepDeliveries enqueues again the scheduled attempt of every pending
// delivery created in the last three days whose attempt is more than 15
// minutes late, and reports how many it enqueued (duplicates of a job
// still alive are skipped by uniqueness). The periodic sweep job calls it.
func (s *Service) SweepDeliveries(ctx context.Context) (int, error) {
	now := s.now()
	n := 0
	err := periodic.EachEmpresa(ctx, s.st, func(e *store.Empresa) error {
		hooks, err := s.st.ListWebhooks(ctx, e.ID)
		if err != nil {
			return fault.Failed("listing webhooks", err)
		}
		for _, h := range hooks {
			m, err := s.sweepWebhook(ctx, e.ID, h.ID, now)
			n += m
			if err != nil {
				return err
			}
		}
		return nil
	})
	return n, err
}

// sweepWebhook re-enqueues the late attempts of one webhook's deliveries.
func (s *Service) sweepWebhook(ctx context.Context, empresaID, webhookID string, now time.Time) (int, error) {
	n := 0
	cursor := ""
	for {
		page, err := s.st.ListDeliveries(ctx, empresaID, webhookID, store.ListFilter{Cursor: cursor, Limit: store.MaxLimit})
		if err != nil {
			return n, fault.Failed("listing deliveries", err)
		}
		for _, d := range page.Items {
			if d.CreatedAt.Before(now.Add(-deliverySweepWindow)) {
				return n, nil // newest first: the rest is older
			}
			if d.State != store.DeliveryPending || d.NextAttemptAt.IsZero() || d.NextAttemptAt.After(now.Add(-deliverySweepGrace)) {
				continue
			}
			attempt, err := s.scheduledSlot(ctx, &d)
			if err != nil {
				return n, err
			}
			res, err := s.st.Jobs().Enqueue(ctx, outbox.DeliverArgs{EmpresaID: empresaID, DeliveryID: d.ID, Attempt: attempt, Due: d.NextAttemptAt.UnixMilli()}, nil)
			if err != nil {
				return n, fault.Failed("re-enqueuing delivery "+d.ID, err)
			}
			if !res.Duplicate {
				n++
				s.log.Warn("webhook delivery re-enqueued by the sweep", "empresa_id", empresaID, "delivery_id", d.ID)
			}
		}
		if page.NextCursor == "" {
			return n, nil
		}
		cursor = page.NextCursor
	}
}

// scheduledSlot is the position in the retry schedule of a pending
// delivery's next attempt: one more than its scheduled attempts so far.
func (s *Service) scheduledSlot(ctx context.Context, d *store.Delivery) (int, error) {
	atts, err := s.st.ListDeliveryAttempts(ctx, d.EmpresaID, d.ID)
	if err != nil {
		return 0, fault.Failed("reading attempts of delivery "+d.ID, err)
	}
	slot := 1
	for _, a := range atts {
		if a.Trigger == store.TriggerScheduled {
			slot++
		}
	}
	return slot, nil
}

// registerDelivery registers the delivery worker, the delivery sweep and
// the certificate expiry check.
func (s *Service) registerDelivery() error {
	timeout := s.dlv.cfg.Timeout
	if timeout <= 0 {
		timeout = ssrf.DefaultTimeout
	}
	if err := s.st.Jobs().Register(store.Worker{
		Kind: outbox.DeliverKind,
		Work: func(ctx context.Context, job *store.Job) error {
			a, err := store.DecodeArgs[outbox.DeliverArgs](job)
			if err != nil {
				return err
			}
			return s.runDelivery(ctx, a)
		},
		Retry: []time.Duration{10 * time.Second, time.Minute, 5 * time.Minute},
		// The attempt's own bound plus room for the store writes; the
		// store's RescueAfter must exceed it.
		Timeout: 2*timeout + 5*time.Second,
	}); err != nil {
		return fmt.Errorf("billing: registering %s: %w", outbox.DeliverKind, err)
	}
	if err := periodic.Register(s.st.Jobs(), periodic.Job{Args: deliverySweepArgs{}, Every: DeliverySweepInterval, Timeout: 10 * time.Minute,
		Run: func(ctx context.Context) error { _, err := s.SweepDeliveries(ctx); return err }}); err != nil {
		return err
	}
	return s.registerCertExpiry()
}

// runDelivery makes the attempt a delivery job stands for: it sends the
// event's frozen bytes signed with the webhook's active secrets, logs the
// attempt, and schedules the next one, finishes the delivery, or disables
// the webhook, in one transaction. Only store failures are returned (the
// job runner retries them); what the receiver did is the delivery's
// business.
func (s *Service) runDelivery(ctx context.Context, a outbox.DeliverArgs) error {
	d, err := s.st.GetDelivery(ctx, a.EmpresaID, a.DeliveryID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if !a.Manual && (d.State != store.DeliveryPending || d.NextAttemptAt.UnixMilli() != a.Due) {
		return nil // stale: this slot was already attempted, or the delivery ended
	}
	wh, err := s.st.GetWebhook(ctx, a.EmpresaID, d.WebhookID)
	gone := errors.Is(err, store.ErrNotFound)
	if err != nil && !gone {
		return err
	}
	if gone || (!wh.IsActive && !a.Manual) {
		if a.Manual {
			return nil
		}
		reason := "webhook deleted"
		if !gone {
			reason = "webhook disabled"
		}
		return s.endDelivery(ctx, a, reason)
	}
	ev, err := s.st.GetEvent(ctx, a.EmpresaID, d.EventID)
	if err != nil {
		return err
	}
	secrets, err := s.openWebhookSecrets(wh)
	if err != nil {
		return err
	}
	res, sendErr := s.dlv.sender.Send(ctx, wh.URL, webhook.Message{ID: ev.ID, Body: ev.Payload, Secrets: secrets.active(s.now())})
	if sendErr != nil { // the request could not even be built: count it as a failure
		res = webhook.Result{Time: s.now(), Class: webhook.ClassRequest, Err: sendErr}
	}
	if ctx.Err() != nil && res.Class == webhook.ClassTimeout && !res.OK() {
		// The job itself is being cancelled (shutdown): let the runner
		// retry it rather than count an attempt we cut short.
		return ctx.Err()
	}
	return s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		return s.recordAttempt(ctx, tx, a, res)
	})
}

// recordAttempt logs one attempt's result and moves the delivery on.
func (s *Service) recordAttempt(ctx context.Context, tx store.Tx, a outbox.DeliverArgs, res webhook.Result) error {
	d, err := tx.GetDelivery(ctx, a.EmpresaID, a.DeliveryID)
	if err != nil {
		return err
	}
	if !a.Manual && (d.State != store.DeliveryPending || d.NextAttemptAt.UnixMilli() != a.Due) {
		return nil // another run of this job got here first
	}
	trigger := store.TriggerScheduled
	if a.Manual {
		trigger = store.TriggerManual
	}
	d.Attempts++
	at := &store.DeliveryAttempt{ID: newID(), EmpresaID: d.EmpresaID, DeliveryID: d.ID, WebhookID: d.WebhookID,
		Attempt: d.Attempts, Trigger: trigger, AttemptedAt: res.Time, StatusCode: res.Status,
		ErrorClass: string(res.Class), Duration: res.Duration, Response: res.Response, OK: res.OK()}
	if res.Err != nil {
		at.Error = clipText(res.Err.Error(), 300)
	}
	if err := tx.InsertDeliveryAttempt(ctx, at); err != nil {
		return err
	}
	d.LastStatusCode, d.LastError = res.Status, attemptSummary(res)
	now := s.now()
	disable := ""
	switch {
	case res.OK():
		d.State, d.NextAttemptAt = store.DeliverySucceeded, time.Time{}
	case res.Gone():
		disable = "the receiver answered 410 Gone"
		if !a.Manual {
			d.State, d.NextAttemptAt = store.DeliveryFailed, time.Time{}
		}
	case a.Manual:
		// A manual attempt leaves the schedule as it was; a delivery with
		// no schedule (a ping) ends with it.
		if d.State == store.DeliveryPending && d.NextAttemptAt.IsZero() {
			d.State = store.DeliveryFailed
		}
	default:
		if delay, ok := s.dlv.policy.Next(a.Attempt, res, s.dlv.rand()); ok {
			due := now.Add(delay).Truncate(time.Millisecond)
			d.NextAttemptAt = due
			if _, err := tx.Enqueue(ctx, outbox.DeliverArgs{EmpresaID: d.EmpresaID, DeliveryID: d.ID, Attempt: a.Attempt + 1, Due: due.UnixMilli()},
				&store.JobOpts{ScheduledAt: due}); err != nil {
				return err
			}
		} else {
			d.State, d.NextAttemptAt = store.DeliveryFailed, time.Time{}
		}
	}
	if !res.OK() && disable == "" {
		since, err := tx.WebhookFailingSince(ctx, d.EmpresaID, d.WebhookID)
		if err != nil {
			return err
		}
		if s.dlv.policy.ShouldDisable(since, now) {
			disable = fmt.Sprintf("failing since %s", since.UTC().Format(time.RFC3339))
		}
	}
	d.UpdatedAt = time.Time{}
	if err := tx.UpdateDelivery(ctx, d); err != nil {
		return err
	}
	if disable != "" {
		if err := s.disableWebhook(ctx, tx, d.EmpresaID, d.WebhookID, disable); err != nil {
			return err
		}
	}
	return nil
}

// endDelivery fails a pending delivery without an attempt (its webhook is
// gone or disabled), so its retries stop.
func (s *Service) endDelivery(ctx context.Context, a outbox.DeliverArgs, reason string) error {
	return s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		d, err := tx.GetDelivery(ctx, a.EmpresaID, a.DeliveryID)
		if err != nil {
			return err
		}
		if d.State != store.DeliveryPending || d.NextAttemptAt.UnixMilli() != a.Due {
			return nil
		}
		d.State, d.NextAttemptAt, d.LastError, d.UpdatedAt = store.DeliveryFailed, time.Time{}, reason, time.Time{}
		return tx.UpdateDelivery(ctx, d)
	})
}

// disableWebhook turns a webhook off; its pending deliveries stop at
// their next attempt.
func (s *Service) disableWebhook(ctx context.Context, tx store.Tx, empresaID, id, why string) error {
	wh, err := tx.GetWebhook(ctx, empresaID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if !wh.IsActive {
		return nil
	}
	wh.IsActive, wh.UpdatedAt = false, time.Time{}
	if err := tx.UpdateWebhook(ctx, wh); err != nil {
		return err
	}
	s.log.Warn("webhook disabled", "empresa_id", empresaID, "webhook_id", id, "reason", why)
	return nil
}

// attemptSummary is the one-line LastError of a delivery.
func attemptSummary(res webhook.Result) string {
	switch {
	case res.OK():
		return ""
	case res.Status != 0:
		return fmt.Sprintf("%s: status %d", res.Class, res.Status)
	case res.Err != nil:
		return clipText(string(res.Class)+": "+res.Err.Error(), 300)
	}
	return string(res.Class)
}

// clipText cuts s to at most n bytes on a UTF-8 boundary.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
