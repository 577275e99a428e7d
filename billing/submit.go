package billing

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/dtekit/dtekit/billing/internal/submission"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/store"
)

// SubmitConfig configures the submission of documents to the SII
// (Config.Submission). The zero value talks to the SII's own servers with
// the default schedules.
//
// With submission on, every document emitted with auto_send goes to the
// SII right after it is signed, in an envelope of its own (an EnvioDTE,
// or an EnvioBOLETA for boletas); documents held firmado go when
// Envelopes.Submit or Envelopes.Create packs them, several to an
// envelope. Each envelope goes to the SII of its documents' environment.
// Each document walks firmado → enviando (uploading, retried with
// UploadBackoff) → procesando (polled with PollBackoff) → aceptado,
// con_reparos or rechazado (api.DTENext), each change with its tracking
// fields and its event (dte.accepted, dte.repaired, dte.rejected) written
// in one transaction together with the job of the next step. An upload
// left without an answer is not sent again blindly: the SII is asked
// whether it received the envelope first (see ReconcileWindow,
// BoletaCheckDelay).
type SubmitConfig struct {
	// Endpoints returns the addresses for a company's environment; nil
	// means the SII's own (sii.EndpointsFor). The demo points it at a fake.
	Endpoints func(env sii.Environment) sii.Endpoints
	// HTTPClient sends the requests (nil: the sii package's default).
	HTTPClient *http.Client
	// Timeout bounds each exchange with the SII (default sii.DefaultTimeout).
	Timeout time.Duration
	// UploadBackoff are the pauses before each new upload attempt after a
	// retryable failure (the last one repeats; default 30 s, 1, 2, 5, 10
	// and 30 min). A zero pause queues the next step at once (tests; the
	// runner may take seconds to release a job scheduled for later).
	UploadBackoff []time.Duration
	// PollBackoff are the pauses before each status query while the SII
	// processes an envelope (the last one repeats; default 15 s, 30 s, 1,
	// 2, 5, 10, 15 and 30 min).
	PollBackoff []time.Duration
	// ReconcileWindow is how long a rejection of a document that was
	// uploaded more than once waits for getEstDte to find the earlier copy
	// (which the SII may still be processing) before it is believed
	// (default DefaultReconcileWindow); a rejection as a repeat ("DTE
	// Repetido") is never believed, whatever the wait. It is also how long an upload
	// without an answer (cut short by a crash, or its answer lost; sent or
	// not, nobody knows) waits for getEstDteAv to show the SII got an
	// EnvioDTE before the envelope is sent again (EnvioBOLETA: see
	// BoletaCheckDelay).
	ReconcileWindow time.Duration
	// BoletaCheckDelay is how long after an EnvioBOLETA's upload that got
	// no answer each boleta's own status is first asked (default
	// DefaultBoletaCheckDelay: the SII suggests about ten minutes), and
	// BoletaSafetyDelay how long every boleta must then still read FAU
	// (not received) before the same envelope is sent again (default
	// DefaultBoletaSafetyDelay). A boleta the SII has is never sent again.
	BoletaCheckDelay, BoletaSafetyDelay time.Duration
}

// Defaults of SubmitConfig's boleta delays: the first check ten minutes
// after the lost answer, and a resend no sooner than twenty more, so
// within the hour of the upload.
const (
	DefaultBoletaCheckDelay  = 10 * time.Minute
	DefaultBoletaSafetyDelay = 20 * time.Minute
)

// DefaultReconcileWindow is SubmitConfig.ReconcileWindow's default.
const DefaultReconcileWindow = 2 * time.Hour

// Default schedules of SubmitConfig.
func defaultUploadBackoff() []time.Duration {
	return []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 30 * time.Minute}
}

func defaultPollBackoff() []time.Duration {
	return []time.Duration{15 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute,
		10 * time.Minute, 15 * time.Minute, 30 * time.Minute}
}

// newSubmitter builds the submission subsystem, cfg's zero fields
// resolved to their defaults.
func (s *Service) newSubmitter(cfg SubmitConfig) *submission.Submitter {
	sc := submission.Config{Store: s.st, Outbox: s.outbox, Now: s.now, Logger: s.log,
		Tenants: tenants{s}, Documents: issued{s}, Endpoints: cfg.Endpoints, HTTPClient: cfg.HTTPClient,
		Timeout: cfg.Timeout, UploadBackoff: cfg.UploadBackoff, PollBackoff: cfg.PollBackoff, ReconcileWindow: cfg.ReconcileWindow,
		Workers:  budget(s.cfg.Workers.Submission, DefaultSubmissionWorkers),
		Outcomes: siiReview{s}}
	if len(sc.UploadBackoff) == 0 {
		sc.UploadBackoff = defaultUploadBackoff()
	}
	if len(sc.PollBackoff) == 0 {
		sc.PollBackoff = defaultPollBackoff()
	}
	if sc.ReconcileWindow <= 0 {
		sc.ReconcileWindow = DefaultReconcileWindow
	}
	sc.BoletaCheckDelay, sc.BoletaSafetyDelay = cfg.BoletaCheckDelay, cfg.BoletaSafetyDelay
	if sc.BoletaCheckDelay <= 0 {
		sc.BoletaCheckDelay = DefaultBoletaCheckDelay
	}
	if sc.BoletaSafetyDelay <= 0 {
		sc.BoletaSafetyDelay = DefaultBoletaSafetyDelay
	}
	if sc.Timeout <= 0 {
		sc.Timeout = sii.DefaultTimeout
	}
	return submission.New(sc)
}

// issuerOf returns the issuer a stored document was emitted with, from
// the snapshot transaction 1 kept.
func issuerOf(d *store.DTE) (dte.Emisor, error) {
	var snap emission
	if err := json.Unmarshal(d.Emisor, &snap); err != nil {
		return dte.Emisor{}, err
	}
	return snap.Empresa.Emisor(), nil
}
