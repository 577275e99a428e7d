// Package delivery sends the billing service's events to webhooks and
// keeps the webhooks themselves.
//
// The outbox (billing/internal/outbox) records each event with its payload
// frozen and one pending delivery per subscribed webhook, with its first
// attempt enqueued. The delivery worker (Run) makes one attempt per job:
// it sends the frozen bytes signed with the webhook's active secrets
// (Standard Webhooks), logs the attempt, and in the same transaction
// schedules the next attempt per the retry policy, finishes the delivery,
// or disables a webhook that answered 410 Gone or has failed for too long.
// A periodic sweep re-enqueues attempts whose job was lost. Webhook
// secrets are kept sealed; a rotated-out secret keeps signing beside the
// new one for a grace period.
//
// A Deliverer needs a store, a clock, a logger and a Sealer of secrets;
// it knows nothing of billing.Service. Its seams with the face are the
// interfaces Sealer and Counter; Config.Now and Config.Rand stay function
// values (a clock and a source of jitter, which tests replace), not calls
// back into the face.
package delivery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/google/uuid"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/billing/internal/outbox"
	"github.com/dtekit/dtekit/billing/internal/periodic"
	"github.com/dtekit/dtekit/internal/ratelimit"
	"github.com/dtekit/dtekit/internal/ssrf"
	"github.com/dtekit/dtekit/internal/textclip"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/webhook"
)

// Config is what a Deliverer needs. Every field is required unless it
// says otherwise; billing.New fills the defaults of its DeliveryConfig in.
type Config struct {
	Store  store.Store
	Now    func() time.Time
	Logger *slog.Logger
	// Sealer seals webhook secrets for storage and opens them (billing's
	// Keyring).
	Sealer Sealer
	// AllowLoopback lets webhooks point at loopback addresses (tests and
	// local trials only).
	AllowLoopback bool
	// Client sends the deliveries; nil builds internal/ssrf's guarded
	// client from AllowLoopback, Resolver and Timeout.
	Client *http.Client
	// Resolver is the guarded client's DNS resolver; nil means the
	// system's.
	Resolver ssrf.Resolver
	// Policy is the retry schedule and the rule that disables a failing
	// webhook.
	Policy webhook.RetryPolicy
	// Rand returns uniform numbers in [0, 1) for the retry jitter.
	Rand func() float64
	// RotationGrace is how long a replaced secret keeps signing beside
	// the new one.
	RotationGrace time.Duration
	// Timeout bounds one attempt whole (name resolution, connect, TLS,
	// request, response headers and body), whatever Client does.
	Timeout time.Duration
	// Workers is the delivery queue's budget in this process (0: none,
	// other processes deliver).
	Workers int
	// MaxPerCompany and MaxPerEndpoint cap the attempts running at once
	// in this process for one company and for one webhook; an attempt
	// over a cap waits, without counting as an attempt, until a slot is
	// free. Zero means DefaultMaxPerCompany(Workers) and
	// DefaultMaxPerEndpoint; the endpoint's cap is never above the
	// company's.
	MaxPerCompany, MaxPerEndpoint int
	// Failed, when set, is told of every failed attempt once it is
	// recorded: the company and the attempt's public category
	// (PublicClass: dns, refused, private_address, timeout, tls,
	// http_status or request). billing counts them for /metrics.
	Failed Counter
}

// Sealer keeps webhook secrets sealed at rest: Seal encrypts plaintext
// bound to aad, and Open decrypts what Seal made with the same aad.
type Sealer interface {
	Seal(plaintext, aad []byte) ([]byte, error)
	Open(sealed, aad []byte) ([]byte, error)
}

// Counter counts outcomes by company and label (billing's counters
// behind /metrics).
type Counter interface {
	Add(empresaID, label string)
}

// userAgent identifies dtekit's deliveries to receivers.
const userAgent = "dtekit-webhooks/1"

// Deliverer delivers events to webhooks and manages the webhooks. Build
// it with New; it is safe for concurrent use.
type Deliverer struct {
	cfg    Config
	st     store.Store
	now    func() time.Time
	log    *slog.Logger
	sender *webhook.Sender
	// running counts the attempts under way against the caps.
	running *inFlight
	// pings holds each webhook's allowance of pings.
	pings *ratelimit.Buckets
	// ownClient is the client New built (nil when Config.Client was
	// given): its idle connections are the Deliverer's to close.
	ownClient *http.Client
}

// New builds a Deliverer from cfg. Register its jobs before the runner
// starts.
func New(cfg Config) *Deliverer {
	if cfg.MaxPerCompany <= 0 {
		cfg.MaxPerCompany = DefaultMaxPerCompany(cfg.Workers)
	}
	if cfg.MaxPerEndpoint <= 0 {
		cfg.MaxPerEndpoint = DefaultMaxPerEndpoint
	}
	cfg.MaxPerEndpoint = min(cfg.MaxPerEndpoint, cfg.MaxPerCompany)
	client, own := cfg.Client, (*http.Client)(nil)
	if client == nil {
		client = ssrf.NewClient(ssrf.Options{AllowLoopback: cfg.AllowLoopback, Resolver: cfg.Resolver,
			Timeout: cfg.Timeout, UserAgent: userAgent})
		own = client
	}
	return &Deliverer{cfg: cfg, st: cfg.Store, now: cfg.Now, log: cfg.Logger, ownClient: own,
		sender: &webhook.Sender{Client: client, Now: cfg.Now, MaxResponseBytes: store.MaxAttemptResponse, UserAgent: userAgent,
			Timeout: cfg.Timeout},
		running: newInFlight(cfg.MaxPerCompany, cfg.MaxPerEndpoint, cfg.Workers),
		pings:   ratelimit.New(PingsPerMinute/60.0, PingsPerMinute)}
}

// Close closes the idle connections of the client New built, whose
// goroutines would otherwise outlive the service until the receivers
// hang up; a client given in Config is its owner's. Call it once the
// runner has stopped: an attempt after Close dials again.
func (d *Deliverer) Close() {
	if d.ownClient != nil {
		d.ownClient.CloseIdleConnections()
	}
}

// newID returns a new record id (a UUIDv7, so ids sort by creation).
func newID() string { return uuid.Must(uuid.NewV7()).String() }

// Delivery sweep: a backstop for delivery jobs lost to repeated store
// failures (discarded by the runner) while their delivery still waits.
const (
	// sweepInterval is how often the sweep runs.
	sweepInterval = 10 * time.Minute
	// sweepGrace is how late a scheduled attempt must be before the sweep
	// enqueues it again.
	sweepGrace = 15 * time.Minute
	// sweepWindow bounds how far back the sweep looks (the retry schedule
	// spans about 28 hours).
	sweepWindow = 3 * 24 * time.Hour
)

// sweepArgs is the periodic delivery sweep job.
type sweepArgs struct{}

// Kind names the delivery sweep job.
func (sweepArgs) Kind() string { return "webhook.sweep" }

// Register declares the delivery queue with its budget and registers
// the delivery worker and the delivery sweep (a maintenance job) on j.
func (d *Deliverer) Register(j store.Jobs) error {
	if err := Declare(j, d.cfg.Workers); err != nil {
		return err
	}
	if err := j.Register(store.Worker{
		Kind: outbox.DeliverKind,
		Work: func(ctx context.Context, job *store.Job) error {
			a, err := store.DecodeArgs[outbox.DeliverArgs](job)
			if err != nil {
				return err
			}
			return d.Run(ctx, a, job.Snoozes)
		},
		Retry: []time.Duration{10 * time.Second, time.Minute, 5 * time.Minute},
		// The attempt's own bound plus room for the store writes; the
		// store's RescueAfter must exceed it.
		Timeout: 2*d.cfg.Timeout + 5*time.Second,
	}); err != nil {
		return fmt.Errorf("billing: registering %s: %w", outbox.DeliverKind, err)
	}
	return periodic.Register(j, periodic.Job{Args: sweepArgs{}, Every: sweepInterval, Timeout: 10 * time.Minute,
		Run: func(ctx context.Context) error { _, err := d.Sweep(ctx); return err }})
}

// Sweep enqueues again the scheduled attempt of every pending delivery
// created in the last three days whose attempt is more than 15 minutes
// late, and reports how many it enqueued (duplicates of a job still alive
// are skipped by uniqueness). The periodic sweep job runs it.
func (d *Deliverer) Sweep(ctx context.Context) (int, error) {
	now := d.now()
	n := 0
	err := periodic.EachEmpresa(ctx, d.st, func(e *store.Empresa) error {
		hooks, err := d.st.ListWebhooks(ctx, e.ID)
		if err != nil {
			return fault.Failed("listing webhooks", err)
		}
		for _, h := range hooks {
			m, err := d.sweepWebhook(ctx, e.ID, h.ID, now)
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
func (d *Deliverer) sweepWebhook(ctx context.Context, empresaID, webhookID string, now time.Time) (int, error) {
	n := 0
	cursor := ""
	for {
		page, err := d.st.ListDeliveries(ctx, empresaID, webhookID, store.ListFilter{Cursor: cursor, Limit: store.MaxLimit})
		if err != nil {
			return n, fault.Failed("listing deliveries", err)
		}
		for _, dl := range page.Items {
			if dl.CreatedAt.Before(now.Add(-sweepWindow)) {
				return n, nil // newest first: the rest is older
			}
			if stateOf(&dl) != api.DeliveryPending || dl.NextAttemptAt.IsZero() || dl.NextAttemptAt.After(now.Add(-sweepGrace)) {
				continue
			}
			attempt, err := d.scheduledSlot(ctx, &dl)
			if err != nil {
				return n, err
			}
			res, err := d.st.Jobs().Enqueue(ctx, outbox.DeliverArgs{EmpresaID: empresaID, DeliveryID: dl.ID, Attempt: attempt, Due: dl.NextAttemptAt.UnixMilli()}, nil)
			if err != nil {
				return n, fault.Failed("re-enqueuing delivery "+dl.ID, err)
			}
			if !res.Duplicate {
				n++
				d.log.Warn("webhook delivery re-enqueued by the sweep", "empresa_id", empresaID, "delivery_id", dl.ID)
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
func (d *Deliverer) scheduledSlot(ctx context.Context, dl *store.Delivery) (int, error) {
	atts, err := d.st.ListDeliveryAttempts(ctx, dl.EmpresaID, dl.ID)
	if err != nil {
		return 0, fault.Failed("reading attempts of delivery "+dl.ID, err)
	}
	slot := 1
	for _, a := range atts {
		if a.Trigger == store.TriggerScheduled {
			slot++
		}
	}
	return slot, nil
}

// Run makes the attempt a delivery job stands for: it sends the event's
// frozen bytes signed with the webhook's active secrets, logs the
// attempt, and schedules the next one, finishes the delivery, or disables
// the webhook, in one transaction. Only store failures are returned (the
// job runner retries them); what the receiver did is the delivery's
// business. When its company or its webhook already has as many attempts
// under way as its cap allows, it makes none and returns store.Snooze: the
// job waits longer the more snoozes it has had, and its attempt is not
// counted.
func (d *Deliverer) Run(ctx context.Context, a outbox.DeliverArgs, snoozes int) error {
	dl, err := d.st.GetDelivery(ctx, a.EmpresaID, a.DeliveryID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if !a.Manual && (stateOf(dl) != api.DeliveryPending || dl.NextAttemptAt.UnixMilli() != a.Due) {
		return nil // stale: this slot was already attempted, or the delivery ended
	}
	// One company's slow endpoints may not take every worker: over a cap,
	// the job waits and asks again, its attempt not counted.
	if !d.running.acquire(a.EmpresaID, dl.WebhookID) {
		return store.Snooze(d.snoozeFor(snoozes))
	}
	defer d.running.release(a.EmpresaID, dl.WebhookID)
	wh, err := d.st.GetWebhook(ctx, a.EmpresaID, dl.WebhookID)
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
		return d.endDelivery(ctx, a, reason)
	}
	ev, err := d.st.GetEvent(ctx, a.EmpresaID, dl.EventID)
	if err != nil {
		return err
	}
	secrets, err := d.openSecrets(wh)
	if err != nil {
		return err
	}
	res, sendErr := d.sender.Send(ctx, wh.URL, webhook.Message{ID: ev.ID, Body: ev.Payload, Secrets: secrets.active(d.now())})
	if sendErr != nil { // the request could not even be built: count it as a failure
		res = webhook.Result{Time: d.now(), Class: webhook.ClassRequest, Err: sendErr}
	}
	if ctx.Err() != nil && res.Class == webhook.ClassTimeout && !res.OK() {
		// The job itself is being cancelled (shutdown): let the runner
		// retry it rather than count an attempt we cut short.
		return ctx.Err()
	}
	err = d.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		return d.recordAttempt(ctx, tx, a, res)
	})
	if err == nil && !res.OK() {
		d.attemptFailed(a, wh.ID, res)
	}
	return err
}

// attemptFailed logs a failed attempt and reports it to Config.Failed,
// once the attempt is recorded (the transaction may run more than once).
// The cause (addresses, resolver, network error) is the operator's,
// never the tenant's: it goes to the log only, without the URL.
func (d *Deliverer) attemptFailed(a outbox.DeliverArgs, webhookID string, res webhook.Result) {
	category := FailureCategory(res)
	attrs := []any{"empresa_id", a.EmpresaID, "webhook_id", webhookID, "delivery_id", a.DeliveryID, "class", category}
	if res.Status != 0 {
		attrs = append(attrs, "status", res.Status)
	}
	if res.Err != nil {
		attrs = append(attrs, "error", logCause(res.Err))
	}
	d.log.Warn("webhook delivery attempt failed", attrs...)
	if d.cfg.Failed != nil {
		d.cfg.Failed.Add(a.EmpresaID, category)
	}
}

// FailureCategories are the public categories of a failed attempt, in
// the order /metrics lists them.
func FailureCategories() []string {
	return []string{string(webhook.ClassDNS), string(webhook.ClassConnect), string(webhook.ClassBlocked),
		string(webhook.ClassTimeout), string(webhook.ClassTLS), string(webhook.ClassHTTP), string(webhook.ClassRequest)}
}

// FailureCategory is the public category of a failed attempt: its class
// by its current name, http_status for an answer outside 2xx.
func FailureCategory(res webhook.Result) string {
	if c := PublicClass(string(res.Class)); c != "" {
		return c
	}
	return string(webhook.ClassHTTP)
}

// logCause is the text of a delivery's network error for the log,
// without the request's URL: a tenant's webhook URL may carry a token in
// its query, and logs carry no secrets.
func logCause(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Op + ": " + ue.Err.Error()
	}
	return err.Error()
}

// recordAttempt logs one attempt's result and moves the delivery on.
func (d *Deliverer) recordAttempt(ctx context.Context, tx store.Tx, a outbox.DeliverArgs, res webhook.Result) error {
	dl, err := tx.GetDelivery(ctx, a.EmpresaID, a.DeliveryID)
	if err != nil {
		return err
	}
	if !a.Manual && (stateOf(dl) != api.DeliveryPending || dl.NextAttemptAt.UnixMilli() != a.Due) {
		return nil // another run of this job got here first
	}
	trigger := store.TriggerScheduled
	if a.Manual {
		trigger = store.TriggerManual
	}
	dl.Attempts++
	at := &store.DeliveryAttempt{ID: newID(), EmpresaID: dl.EmpresaID, DeliveryID: dl.ID, WebhookID: dl.WebhookID,
		Attempt: dl.Attempts, Trigger: trigger, AttemptedAt: res.Time, StatusCode: res.Status,
		ErrorClass: string(res.Class), Duration: res.Duration, Response: res.Response, OK: res.OK()}
	if !res.OK() {
		at.Error = PublicError(string(res.Class), res.Status)
	}
	if err := tx.InsertDeliveryAttempt(ctx, at); err != nil {
		return err
	}
	dl.LastStatusCode, dl.LastError = res.Status, attemptSummary(res)
	now := d.now()
	disable := ""
	switch {
	case res.OK():
		dl.State, dl.NextAttemptAt = string(api.DeliverySucceeded), time.Time{}
	case res.Gone():
		disable = "the receiver answered 410 Gone"
		if !a.Manual {
			dl.State, dl.NextAttemptAt = string(api.DeliveryFailed), time.Time{}
		}
	case a.Manual:
		// A manual attempt leaves the schedule as it was; a delivery with
		// no schedule (a ping) ends with it.
		if stateOf(dl) == api.DeliveryPending && dl.NextAttemptAt.IsZero() {
			dl.State = string(api.DeliveryFailed)
		}
	default:
		if delay, ok := d.cfg.Policy.Next(a.Attempt, res, d.cfg.Rand()); ok {
			due := now.Add(delay).Truncate(time.Millisecond)
			dl.NextAttemptAt = due
			if _, err := tx.Enqueue(ctx, outbox.DeliverArgs{EmpresaID: dl.EmpresaID, DeliveryID: dl.ID, Attempt: a.Attempt + 1, Due: due.UnixMilli()},
				&store.JobOpts{ScheduledAt: due}); err != nil {
				return err
			}
		} else {
			dl.State, dl.NextAttemptAt = string(api.DeliveryFailed), time.Time{}
		}
	}
	if !res.OK() && disable == "" {
		since, err := tx.WebhookFailingSince(ctx, dl.EmpresaID, dl.WebhookID)
		if err != nil {
			return err
		}
		if d.cfg.Policy.ShouldDisable(since, now) {
			disable = fmt.Sprintf("failing since %s", since.UTC().Format(time.RFC3339))
		}
	}
	dl.UpdatedAt = time.Time{}
	if err := tx.UpdateDelivery(ctx, dl); err != nil {
		return err
	}
	if disable != "" {
		if err := d.disableWebhook(ctx, tx, dl.EmpresaID, dl.WebhookID, disable); err != nil {
			return err
		}
	}
	return nil
}

// endDelivery fails a pending delivery without an attempt (its webhook is
// gone or disabled), so its retries stop.
func (d *Deliverer) endDelivery(ctx context.Context, a outbox.DeliverArgs, reason string) error {
	return d.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		dl, err := tx.GetDelivery(ctx, a.EmpresaID, a.DeliveryID)
		if err != nil {
			return err
		}
		if stateOf(dl) != api.DeliveryPending || dl.NextAttemptAt.UnixMilli() != a.Due {
			return nil
		}
		dl.State, dl.NextAttemptAt, dl.LastError, dl.UpdatedAt = string(api.DeliveryFailed), time.Time{}, reason, time.Time{}
		return tx.UpdateDelivery(ctx, dl)
	})
}

// disableWebhook turns a webhook off; its pending deliveries stop at
// their next attempt.
func (d *Deliverer) disableWebhook(ctx context.Context, tx store.Tx, empresaID, id, why string) error {
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
	d.log.Warn("webhook disabled", "empresa_id", empresaID, "webhook_id", id, "reason", why)
	return nil
}

// attemptSummary is the one-line LastError of a delivery: what a tenant
// may see of a failed attempt (PublicError).
func attemptSummary(res webhook.Result) string {
	if res.OK() {
		return ""
	}
	return PublicError(string(res.Class), res.Status)
}

// stateOf is a stored delivery's state (the store keeps it as a string).
func stateOf(dl *store.Delivery) api.DeliveryState { return api.DeliveryState(dl.State) }

// Class names that attempts stored before the categories were renamed
// carry, and the category each is now.
var oldClasses = map[string]string{"http": "http_status", "connect": "refused", "blocked": "private_address"}

// PublicClass returns the category a tenant sees for a stored error
// class (webhook.ErrorClass; attempts of earlier versions carry older
// names).
func PublicClass(class string) string {
	if c, ok := oldClasses[class]; ok {
		return c
	}
	return class
}

// PublicError is the sentence a tenant sees for a failed attempt of the
// class (and HTTP status, for http_status). It names the category only:
// what a host resolved to, the resolver's address and the network error
// stay in the server's log, for the operator.
func PublicError(class string, status int) string {
	switch webhook.ErrorClass(PublicClass(class)) {
	case webhook.ClassNone:
		return ""
	case webhook.ClassHTTP:
		return fmt.Sprintf("http_status: the receiver answered %d", status)
	case webhook.ClassTimeout:
		return "timeout: the receiver did not answer in time"
	case webhook.ClassDNS:
		return "dns: the host name did not resolve"
	case webhook.ClassConnect:
		return "refused: the connection was refused or reset"
	case webhook.ClassTLS:
		return "tls: the TLS handshake or the certificate check failed"
	case webhook.ClassBlocked:
		return "private_address: the host resolves to an address webhooks may not reach"
	}
	return "request: the request could not be sent"
}

// clipText cuts s to at most n bytes on a UTF-8 boundary, marked "…"
// when cut.
func clipText(s string, n int) string { return textclip.ClipMark(s, n) }
