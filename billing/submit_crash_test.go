package billing

import (
	"bytes"
	"context"
	"fmt"
	"github.com/dtekit/dtekit/store/backendtest"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/sii/siitest"
	"github.com/dtekit/dtekit/store/sqlite"
)

// submitCrashEnv carries the submission crash child's orders: the
// database path and the fake SII's base URL.
const submitCrashEnv = "DTEKIT_SUBMIT_CRASH_CHILD"

// submitCrashConfig is the submission setting of the crash test: the fake
// on loopback, no pauses, and a short window for interrupted uploads.
func submitCrashConfig(fakeURL string) *SubmitConfig {
	return &SubmitConfig{Endpoints: func(sii.Environment) sii.Endpoints { return sii.SingleHost(fakeURL) },
		UploadBackoff: []time.Duration{0}, PollBackoff: []time.Duration{0}, Timeout: 2 * time.Second,
		ReconcileWindow: 3 * time.Second, BoletaCheckDelay: 2 * time.Second, BoletaSafetyDelay: 2 * time.Second}
}

// TestSubmitCrashChild is the process TestSubmitKill9 kills: it runs the
// submission jobs of the database it is given until killed.
func TestSubmitCrashChild(t *testing.T) {
	orders := os.Getenv(submitCrashEnv)
	if orders == "" {
		t.Skip("run by TestSubmitKill9")
	}
	path, url, _ := strings.Cut(orders, "|")
	runJobsChild(path, Config{Submission: submitCrashConfig(url)})
}

// crashScript is the fake's review of a factura in TestSubmitKill9 and
// the state and event it leads to: accepted, accepted with reparos, or
// rejected, by folio. Boletas are all accepted: after a crash lost a
// boleta's track id only its own status can settle it, which knows
// nothing of reparos, and reads a rejected boleta as not received (see
// submission's boletaArrival).
func crashScript(folio int64) (siitest.Outcome, string, string) {
	switch folio % 3 {
	case 1:
		return siitest.Outcome{Result: siitest.Reparo, Detail: "REF-2-750"}, string(dte.EstadoConReparos), "dte.repaired"
	case 2:
		return siitest.Outcome{Result: siitest.Rejected, Detail: "CAF-3-517"}, string(dte.EstadoRechazado), "dte.rejected"
	}
	return siitest.Outcome{}, string(dte.EstadoAceptado), "dte.accepted"
}

// TestSubmitKill9: a process submitting 30 facturas and boletas to the
// fake SII is killed with SIGKILL at random moments, again and again;
// after the restarts every document is in its scripted state (facturas
// accepted, with reparos or rejected; boletas accepted) with one event,
// and the fake received each document in exactly one envelope: no
// envelope that got a track id was uploaded a second time. Every factura
// carries the track id of that envelope, recovered through getEstDteAv
// when a kill lost it; a boleta whose track id was lost is settled through
// its own status (the arrival check) without one (counted and logged).
func TestSubmitKill9(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("kills child processes for up to a minute; skipped with -short")
	}
	ctx := context.Background()
	c := creds(t)
	fake := siitest.New(siitest.Options{StepEvery: 100 * time.Millisecond}).Start()
	defer fake.Close()
	fake.Register(dtetest.SignerRUT, dtetest.EmisorRUT)
	for f := int64(1); f <= 30; f++ {
		o, _, _ := crashScript(f)
		fake.Script(dtetest.EmisorRUT, 33, f, o)
	}
	url := fake.Endpoints().Classic

	path := backendtest.SQLitePath(t)
	s, err := openService("sqlite", path, Config{TrustedKeys: c.Keys, Submission: submitCrashConfig(url)})
	if err != nil {
		t.Fatal(err)
	}
	emp := setupEmpresa(t, s, true)
	if _, err := s.CAFs.Register(ctx, emp.ID, api.CAFInput{TipoDTE: 39, CAFXML: string(c.CAFFiles[39])}); err != nil {
		t.Fatal(err)
	}
	const n = 30
	var ids []string
	for i := range n {
		tipo := 33
		if i%3 == 2 {
			tipo = 39
		}
		ids = append(ids, emitOK(t, s, emp.ID, submitBody(tipo, true)).ID)
	}
	s.st.Close()

	final := func() (left int, states map[string]string) {
		st, err := sqlite.Open(ctx, path, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		states = map[string]string{}
		for _, id := range ids {
			d, err := st.GetDTE(ctx, emp.ID, id)
			if err != nil {
				t.Fatal(err)
			}
			states[id] = d.Estado
			if !dte.Estado(d.Estado).Final() {
				left++
			}
		}
		return left, states
	}
	dump := func() {
		st, _ := sqlite.Open(ctx, path, nil)
		defer st.Close()
		for _, id := range ids {
			d, _ := st.GetDTE(ctx, emp.ID, id)
			if !dte.Estado(d.Estado).Final() {
				t.Logf("DTE %s tipo %d folio %d: %s tracking %s", id, d.TipoDTE, d.Folio, d.Estado, d.Tracking)
			}
		}
	}
	child := func() (*exec.Cmd, *bytes.Buffer) {
		cmd, stderr := crashChildCmd("TestSubmitCrashChild", submitCrashEnv, path+"|"+url)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, stderr
	}
	// Eight processes killed at random moments...
	kills := 0
	for ; kills < 8; kills++ {
		if left, _ := final(); left == 0 {
			break
		}
		cmd, stderr := child()
		time.Sleep(time.Duration(200+rand.IntN(600)) * time.Millisecond)
		killCrashChild(t, cmd, stderr)
	}
	// ...then one left to finish: it rescues the jobs the kills left
	// running once it leads the runner.
	cmd, stderr := child()
	deadline := time.Now().Add(2 * time.Minute)
	for left, _ := final(); left > 0; left, _ = final() {
		if time.Now().After(deadline) {
			cmd.Process.Signal(syscall.SIGKILL)
			cmd.Wait()
			dump()
			t.Fatalf("%d documents not final 2 minutes after %d kills (child: %s)", left, kills, stderr.String())
		}
		time.Sleep(500 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	_, states := final()
	s, err = openService("sqlite", path, Config{TrustedKeys: c.Keys})
	if err != nil {
		t.Fatal(err)
	}
	defer s.st.Close()
	r := &submitRig{s: s, emp: emp, fake: fake}
	perDoc := map[string][]string{}
	for _, e := range fake.Envelopes() {
		for _, d := range e.Docs {
			k := fmt.Sprintf("%d/%d", d.Tipo, d.Folio)
			perDoc[k] = append(perDoc[k], e.TrackID)
		}
	}
	for doc, tracks := range perDoc {
		if len(tracks) != 1 {
			t.Errorf("document %s reached the fake in %d envelopes %v, want 1", doc, len(tracks), tracks)
		}
	}
	viaEstDte := 0
	for _, id := range ids {
		d, err := s.Documents.Get(ctx, emp.ID, id, api.DTEGetParams{})
		if err != nil {
			t.Fatal(err)
		}
		estado, event := string(dte.EstadoAceptado), "dte.accepted"
		if d.TipoDTE == 33 {
			_, estado, event = crashScript(d.Folio)
		}
		track := ""
		if d.Tracking != nil {
			track = deref(d.Tracking.TrackID)
		}
		switch {
		case track == "" && d.TipoDTE == 39:
			viaEstDte++ // the boleta exception: settled through its own status after a lost track id
			t.Logf("boleta folio %d settled through its own status without a track id", d.Folio)
		case len(perDoc[fmt.Sprintf("%d/%d", d.TipoDTE, d.Folio)]) == 0 ||
			strings.TrimLeft(track, "0") != strings.TrimLeft(perDoc[fmt.Sprintf("%d/%d", d.TipoDTE, d.Folio)][0], "0"):
			t.Errorf("tipo %d folio %d: track id %q, want the envelope's %v", d.TipoDTE, d.Folio, track, perDoc[fmt.Sprintf("%d/%d", d.TipoDTE, d.Folio)])
		}
		if states[id] != estado {
			t.Errorf("tipo %d folio %d is %s, want %s", d.TipoDTE, d.Folio, states[id], estado)
		}
		if ev := strings.Join(r.events(t, id), ","); ev != "dte.created,"+event {
			t.Errorf("tipo %d folio %d events %s, want dte.created,%s", d.TipoDTE, d.Folio, ev, event)
		}
	}
	if len(perDoc) != n {
		t.Errorf("the fake received %d documents, want %d", len(perDoc), n)
	}
	recovered := 0
	for _, q := range fake.Requests(siitest.EstDteAv) {
		if strings.HasPrefix(q.Result, "RECIBIDO SI") {
			recovered++
		}
	}
	t.Logf("%d kills; %d uploads recorded by the fake for %d documents; %d getEstDteAv queries, %d of them gave a lost track id back; exception: %d boletas settled through their own status without a track id",
		kills, len(fake.Requests(siitest.Upload))+len(fake.Requests(siitest.BoletaUpload)), n, len(fake.Requests(siitest.EstDteAv)), recovered, viaEstDte)
}
