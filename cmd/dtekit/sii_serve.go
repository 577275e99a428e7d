package main

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/dtekit/dtekit/billing"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/sii/siitest"
)

// siiURLEnv names the variable that sends "dtekit serve"'s submissions to a
// test server (such as "dtekit sii fake") instead of the SII.
const siiURLEnv = "DTEKIT_SII_URL"

// siiTimeoutEnv names the variable that bounds each exchange with the SII
// (billing.SubmitConfig.Timeout). A submission step may take eight
// exchanges, so it also sets how long a step held by a killed process
// waits before another process rescues it.
const siiTimeoutEnv = "DTEKIT_SII_TIMEOUT"

// siiSubmission gives the submission settings of "dtekit serve"
// (billing.Config.Submission): to the SII's servers of each company's
// ambiente; to $DTEKIT_SII_URL when set; or, with --demo, to a fake SII in
// the process, on loopback, that reviews quickly, so a demo document
// reaches aceptado within a minute; --demo with $DTEKIT_SII_URL keeps the
// demo's quick schedule against that test server. It also returns what
// stops the fake (a no-op otherwise); call it after the job runner has
// stopped. The demo's fake keeps what it learns in dataDir
// (demoSIIJournal), so that after a restart its track ids go on and its
// registry still knows the documents it accepted; with dataDir "" (a
// data directory several servers share, on PostgreSQL) each server's
// fake keeps it in memory only.
func siiSubmission(env *cmdEnv, demo bool, dataDir string) (cfg *billing.SubmitConfig, stop func(), err error) {
	stop = func() {}
	cfg = &billing.SubmitConfig{}
	base, timeout := "", ""
	if env.getenv != nil {
		base, timeout = env.getenv(siiURLEnv), env.getenv(siiTimeoutEnv)
	}
	var exchangeTimeout time.Duration
	if timeout != "" {
		d, err := time.ParseDuration(timeout)
		if err != nil || d < time.Second || d > 5*time.Minute {
			return nil, stop, fmt.Errorf("%s %q: want a duration from 1s to 5m, such as 10s", siiTimeoutEnv, timeout)
		}
		exchangeTimeout = d
	}
	switch {
	case base != "":
		cfg.Endpoints = func(sii.Environment) sii.Endpoints { return sii.SingleHost(base) }
	case demo:
		fake := siitest.New(siitest.Options{AnySigner: true, Steps: []string{"SOK", "FOK"}, StepEvery: 2 * time.Second})
		if dataDir != "" {
			if err := fake.Persist(filepath.Join(dataDir, demoSIIJournal)); err != nil {
				return nil, stop, fmt.Errorf("the demo's SII: %w", err)
			}
		}
		fake.Start()
		cfg.Endpoints = func(sii.Environment) sii.Endpoints { return fake.Endpoints() }
		stop = fake.Close
	}
	if demo {
		// Fakes answer at once: pause a second between steps, give up on
		// an exchange after five, and resend an envelope whose upload got
		// no answer once getEstDteAv has not seen it for ten; for an
		// EnvioBOLETA ask each boleta's status ten seconds after such an
		// upload (the demo's fake reviews an envelope in six), and resend
		// it only if every boleta still reads FAU five seconds later.
		cfg.UploadBackoff = []time.Duration{time.Second}
		cfg.PollBackoff = []time.Duration{time.Second}
		cfg.Timeout = 5 * time.Second
		cfg.ReconcileWindow = 10 * time.Second
		cfg.BoletaCheckDelay, cfg.BoletaSafetyDelay = 10*time.Second, 5*time.Second
	}
	if timeout != "" {
		cfg.Timeout = exchangeTimeout
	}
	return cfg, stop, nil
}

// demoSIIJournal is the file in the data directory where the demo's fake
// SII keeps its envelopes, track ids and registry events (siitest's
// Persist: a journal of JSON lines, appended and synced per fact).
const demoSIIJournal = "demo-sii.journal"
