package main

import (
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/email/emailtest"
	"github.com/dtekit/dtekit/internal/pgtest"
	"github.com/dtekit/dtekit/signer"
	"github.com/dtekit/dtekit/sii/siitest"
	"github.com/dtekit/dtekit/webhook"
)

// Settings of TestThreeInstancesKill9 that decide how soon a job the
// killed process held is run again. River's rescuer runs on the elected
// leader every 30 s (not configurable), and takes a running job for
// abandoned once both DTEKIT_JOBS_RESCUE_AFTER and the kind's own timeout
// have passed; a killed leader is replaced once its lease (15 s) runs out.
const (
	instancesRescueAfter = 10 * time.Second
	// instancesSIITimeout bounds an exchange with the SII: a submission
	// step's timeout is eight of them plus 10 s (26 s).
	instancesSIITimeout   = 2 * time.Second
	instancesHookTimeout  = 2 * time.Second // a delivery's timeout is twice it plus 5 s
	riverRescuerInterval  = 30 * time.Second
	riverLeaderLease      = 16 * time.Second // River's elect interval (5 s, jitter 1 s) plus its 10 s padding
	instancesMailPoll     = 5 * time.Second
	instancesSettleWithin = 120 * time.Second // from the kill until every held job is finished (typically under 60 s)
)

// heldJobTimeout is the timeout of a job kind as billing registers it
// with the settings above (the rescue waits for it), or RescueAfter for a
// kind without one.
func heldJobTimeout(kind string) time.Duration {
	switch kind {
	case "dte.sii":
		return 8*instancesSIITimeout + 10*time.Second
	case "webhook.deliver":
		return 2*instancesHookTimeout + 5*time.Second
	case "inbox.acuse", "mail.document":
		return 30 * time.Second
	case "mail.send":
		return 60 * time.Second
	case "mail.poll":
		return time.Minute
	case "mail.poll_company":
		return 2 * time.Minute
	case "dte.sweep", "webhook.sweep", "certificado.expiry_check", "inbox.refresh", "inbox.purge":
		return 10 * time.Minute
	}
	return instancesRescueAfter
}

// periodicKinds are billing's periodic jobs with their periods under the
// settings above; each must run at most once per period across the three
// processes.
var periodicKinds = map[string]time.Duration{
	"mail.poll":                instancesMailPoll,
	"dte.sweep":                5 * time.Minute,
	"idempotency.purge":        time.Hour,
	"certificado.expiry_check": 24 * time.Hour,
	"inbox.refresh":            time.Hour,
	"inbox.purge":              time.Hour,
	"webhook.sweep":            10 * time.Minute,
}

// dedupReceiver is an integrator's webhook endpoint on loopback: it acts
// once per webhook-id (later deliveries of the same id are acknowledged
// and ignored) and records, per effect (event type and the object it
// names), the ids that acted, so that one effect reached under two ids
// shows.
type dedupReceiver struct {
	srv *httptest.Server

	mu         sync.Mutex
	deliveries map[string]int      // webhook-id → deliveries
	effects    map[string][]string // "type object-id" → webhook-ids that acted
}

func newDedupReceiver(t *testing.T) *dedupReceiver {
	h := &dedupReceiver{deliveries: map[string]int{}, effects: map[string][]string{}}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		id := r.Header.Get("webhook-id")
		ev, perr := webhook.ParseEvent(body)
		var obj struct{ ID string }
		if err != nil || perr != nil || id == "" || json.Unmarshal(ev.Data, &obj) != nil || obj.ID == "" {
			t.Errorf("webhook delivery %q: %v %v: %s", id, err, perr, body)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		h.mu.Lock()
		h.deliveries[id]++
		if h.deliveries[id] == 1 {
			effect := string(ev.Type) + " " + obj.ID
			h.effects[effect] = append(h.effects[effect], id)
		}
		h.mu.Unlock()
		// A receiver that takes a moment keeps deliveries running, so
		// the killed process holds some.
		time.Sleep(50 * time.Millisecond)
		w.WriteHeader(http.StatusNoContent)
	}))
	return h
}

// acted returns the webhook-ids that acted for an effect.
func (h *dedupReceiver) acted(typ, id string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.effects[typ+" "+id])
}

// riverClients returns the ids of the job runners that worked jobs on the
// database, or lead it, oldest first: River names a runner by host and
// start time (microseconds), and the test starts the processes one after
// the other, so the order is theirs.
func riverClients(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query(`SELECT DISTINCT c FROM (SELECT unnest(attempted_by) AS c FROM river_job UNION SELECT leader_id FROM river_leader) x`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

func riverLeader(t *testing.T, db *sql.DB) string {
	t.Helper()
	var id string
	if err := db.QueryRow(`SELECT leader_id FROM river_leader`).Scan(&id); err != nil && err != sql.ErrNoRows {
		t.Fatal(err)
	}
	return id
}

// TestThreeInstancesKill9 runs three "dtekit serve" processes on one
// PostgreSQL database (one key-encryption key, one data directory with the
// demo's JWT key, ports of their own), spreads a load over them (facturas
// emitted and submitted to a fake SII, the supplier's facturas handed in
// as received files and mailed too, over SMTP and IMAP on loopback,
// webhook deliveries to a receiver on loopback) and kills the elected job
// leader with SIGKILL in the middle. The leader works no mail queue (an
// instance may choose its budgets): a mail job a killed instance held
// waits 60 s to 2 minutes for its rescue, past this test's bound, and
// TestMailKill9Postgres kills the one instance that sends and reads mail.
// Then:
//
//   - every document acknowledged with a 2xx is stored and reaches
//     aceptado; every received file acknowledged is stored with its
//     document;
//   - each type's folios are 1..n, none twice, and each reached the fake
//     SII in exactly one envelope;
//   - every job the killed process was running is finished by the others
//     within its rescue time: the new leader's election, then the
//     rescuer's next pass after DTEKIT_JOBS_RESCUE_AFTER and the kind's
//     timeout;
//   - billing's periodic jobs ran at most once per period (counted in
//     River's table), with the mailbox poll every 5 s both before and
//     after the leader changed;
//   - each mailed factura reached the demo company's mailbox once, was
//     read from it once and acknowledged to the supplier once;
//   - every event was delivered to the webhook at least once, and the
//     receiver, which acts once per webhook-id, acted once per event.
func TestThreeInstancesKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three servers on PostgreSQL for about a minute; skipped with -short")
	}
	t.Parallel()
	dbURL := pgtest.URL(t)
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	bin := buildDtekit(t)
	data := filepath.Join(t.TempDir(), "data")
	fake := siitest.New(siitest.Options{AnySigner: true, Steps: []string{"SOK"}, StepEvery: 500 * time.Millisecond}).Start()
	defer fake.Close()
	hooks := newDedupReceiver(t)
	defer hooks.srv.Close()
	// The two demo companies' mailboxes, on real SMTP and IMAP servers in
	// this process.
	userD := emailtest.User{Address: "dte@demo.cl", Username: "demo", Password: "demo-pw"}
	userS := emailtest.User{Address: "dte@proveedora.cl", Username: "prov", Password: "prov-pw"}
	mailSrv := emailtest.Start(t, userD, userS)
	env := []string{mailCAEnv + "=" + writeMailCA(t, mailSrv), mailLoopbackEnv + "=1", mailPortsEnv + "=any", mailRetryEnv + "=1s",
		"DTEKIT_DATABASE_URL=" + dbURL, "DTEKIT_KEK=" + hex.EncodeToString([]byte("0123456789abcdef0123456789abcdef")),
		siiURLEnv + "=" + fake.Endpoints().Classic, rescueAfterEnv + "=" + instancesRescueAfter.String(),
		siiTimeoutEnv + "=" + instancesSIITimeout.String(), mailPollEnv + "=" + instancesMailPoll.String(),
		"DTEKIT_UPLOAD_RATE_LIMIT=-1"}
	flags := []string{"--webhook-allow-loopback", "--webhook-timeout", instancesHookTimeout.String()}
	// The first alone: it provisions the demo and becomes the job
	// runners' leader; then the other two at once.
	begin := time.Now()
	procs := make([]*serveProc, 3)
	// The first works no mail queue (a job of those held by a killed
	// process waits 60 s to 2 minutes for its rescue, past this test's
	// bound): its mail is sent and read by the others.
	procs[0] = startServeFlags(t, bin, data, flags, append(slices.Clone(env), workersEnv+"=mail=0,mailbox=0")...)
	var startWG sync.WaitGroup
	for i := 1; i < 3; i++ {
		startWG.Go(func() { procs[i] = startServeFlags(t, bin, data, flags, env...) })
	}
	startWG.Wait()
	if t.Failed() {
		t.FailNow()
	}
	demo := readDemoFile(t, data)
	if demo.Proveedor == nil {
		t.Fatal("demo.json names no supplier")
	}
	sup := *demo.Proveedor
	hc := &http.Client{Timeout: 30 * time.Second}
	apiOf := func(p *serveProc) string { return p.base + "/api/v1/billing" }
	if st, body := call(t, hc, "POST", apiOf(procs[1])+"/webhooks", demo.APIKey,
		[]byte(`{"url":"`+hooks.srv.URL+`/hook","events":["dte.created","dte.accepted","recibido.created"]}`)); st != 201 {
		t.Fatalf("creating the webhook: %d %s", st, body)
	}
	// Both companies mail: the supplier mails each factura to the demo
	// company, whose mailbox is read every 5 s and answered with an acuse.
	for _, c := range []struct {
		token string
		u     emailtest.User
	}{{demo.AdminToken, userD}, {sup.AdminToken, userS}} {
		if st, body := call(t, hc, "PUT", apiOf(procs[2])+"/empresa/correo", "Bearer "+c.token, mailSettingsJSON(t, mailSrv, c.u)); st != 200 {
			t.Fatalf("PUT /empresa/correo: %d %s", st, body)
		}
	}
	demoEmisor := dtetest.DemoEmisor()
	cliente := fmt.Sprintf(`{"rut":%q,"razon_social":%q,"email":%q}`, demoEmisor.Rut, demoEmisor.RazonSocial, userD.Address)
	if st, body := call(t, hc, "POST", apiOf(procs[0])+"/clientes", sup.APIKey, []byte(cliente)); st != 201 {
		t.Fatalf("the supplier's cliente: %d %s", st, body)
	}
	// The supplier's envelopes are signed in this process with a test
	// certificate: with no --signer policy any valid signature is taken.
	creds, err := dtetest.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := signer.Load(creds.P12, creds.Password)
	if err != nil {
		t.Fatal(err)
	}
	supFactura := fmt.Sprintf(`{"tipo_dte":33,"receptor":{"rut":%q,"razon_social":%q,"giro":"Comercio","direccion":%q,"comuna":%q,"ciudad":%q},`+
		`"detalle":[{"nombre":"Resma papel carta","cantidad":3,"precio":4990}]}`,
		demoEmisor.Rut, demoEmisor.RazonSocial, demoEmisor.Direccion, demoEmisor.Comuna, demoEmisor.Ciudad)

	var mu sync.Mutex
	acked := map[string]bool{}        // the demo company's documents answered 201
	supAcked := map[string]bool{}     // the supplier's
	recepciones := map[string]int64{} // received files answered 2xx → the folio they carry
	stop := make(chan struct{})
	var wg sync.WaitGroup
	stopped := func() bool {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}
	// The mailbox poll (every 5 s, on the leader) has run before the
	// load.
	waitFor(t, 40*time.Second, "a mailbox poll", func() bool { return completedRuns(t, db, "mail.poll") >= 1 })
	loadAt := time.Now()
	for _, p := range procs {
		api := apiOf(p)
		// An emitter per process.
		for range 1 {
			wg.Go(func() {
				for !stopped() {
					status, b, err := postDemoFactura(hc, api, demo.APIKey)
					if err != nil {
						return // killed
					}
					var r struct{ ID string }
					if status != 201 || json.Unmarshal(b, &r) != nil || r.ID == "" {
						t.Errorf("emit through %s: %d %s", p.base, status, b)
						return
					}
					mu.Lock()
					acked[r.ID] = true
					mu.Unlock()
					time.Sleep(50 * time.Millisecond) // a steady load, not a flood
				}
			})
		}
		// One supplier: a factura emitted to the demo company, then its
		// exchange copy handed in to the demo company's inbox.
		wg.Go(func() {
			for !stopped() {
				status, b, err := postRaw(hc, api+"/dte", sup.APIKey, "application/json", []byte(supFactura))
				if err != nil {
					return
				}
				var d struct {
					ID    string
					Folio int64
				}
				if status != 201 || json.Unmarshal(b, &d) != nil {
					t.Errorf("the supplier's factura through %s: %d %s", p.base, status, b)
					return
				}
				mu.Lock()
				supAcked[d.ID] = true
				mu.Unlock()
				req, _ := http.NewRequest("GET", api+"/dte/"+d.ID+"/xml", nil)
				req.Header.Set("X-Api-Key", sup.APIKey)
				res, err := hc.Do(req)
				if err != nil {
					return
				}
				x, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode != 200 {
					t.Errorf("the supplier's XML: %d %s", res.StatusCode, x)
					return
				}
				envio, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: dte.Emisor{Rut: demoSupplierRut, FechaResolucion: demoEmisor.FechaResolucion,
					NumeroResolucion: demoEmisor.NumeroResolucion}, RutReceptor: demoEmisor.Rut}, cert, x)
				if err != nil {
					t.Errorf("packing the supplier's factura: %v", err)
					return
				}
				status, b, err = postRaw(hc, api+"/recibidos", demo.APIKey, "application/xml", envio)
				if err != nil {
					return
				}
				var rec struct {
					ID        string
					Estado    string
					Recibidos []string
				}
				if status/100 != 2 || json.Unmarshal(b, &rec) != nil || rec.Estado != "conforme" || len(rec.Recibidos) != 1 {
					t.Errorf("handing in the supplier's factura through %s: %d %s", p.base, status, b)
					return
				}
				mu.Lock()
				recepciones[rec.ID] = d.Folio
				mu.Unlock()
				time.Sleep(200 * time.Millisecond) // a mail each, read by IMAP: fewer
			}
		})
	}
	// Kill the leader, once the load has run for a few seconds, at a
	// moment it runs jobs. River names a runner by host and start time
	// (microseconds): the first process's runner, started seconds before
	// the others, has the first name, and leads.
	var clients []string
	waitFor(t, 40*time.Second, "the three runners working", func() bool {
		clients = riverClients(t, db)
		return len(clients) >= 3
	})
	if len(clients) != 3 {
		t.Fatalf("runners on the database: %v, want three", clients)
	}
	time.Sleep(3 * time.Second)
	leader := riverLeader(t, db)
	dead := -1
	if leader == clients[0] {
		dead = 0
	} else {
		// A runner named otherwise (by process id, say): find it so.
		for i, p := range procs {
			if slices.Contains(strings.FieldsFunc(leader, func(r rune) bool { return r < '0' || r > '9' }), strconv.Itoa(p.cmd.Process.Pid)) {
				dead = i
			}
		}
	}
	if dead < 0 {
		t.Fatalf("the leader %q is none of the processes (runners %v)", leader, clients)
	}
	// The jobs the leader runs.
	held := func() map[int64]string {
		rows, err := db.Query(`SELECT id, kind FROM river_job WHERE state = 'running' AND attempted_by[array_length(attempted_by, 1)] = $1`, leader)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[int64]string{}
		for rows.Next() {
			var id int64
			var kind string
			if err := rows.Scan(&id, &kind); err != nil {
				t.Fatal(err)
			}
			out[id] = kind
		}
		return out
	}
	within(10*time.Second, func() bool { return len(held()) > 0 })
	procs[dead].kill(t)
	killedAt := time.Now()
	heldJobs := held() // still running once it is dead: held
	if len(heldJobs) == 0 {
		t.Log("the killed leader held no running job")
	}
	mu.Lock()
	ackedAtKill := len(acked)
	mu.Unlock()
	// The survivors keep taking the load a little longer.
	time.Sleep(2 * time.Second)
	close(stop)
	wg.Wait()
	live := slices.Delete(slices.Clone(procs), dead, dead+1)
	t.Logf("killed process %d (the leader, %s) after %d acknowledged emissions; it held %d running jobs: %v",
		dead+1, leader, ackedAtKill, len(heldJobs), heldJobs)

	// Every held job is taken up by a survivor within its rescue time
	// (rescued and run again, or finished by the next step's
	// transaction), and then finished.
	taken := map[int64]time.Duration{}
	finished := map[int64]time.Duration{}
	last := map[int64]string{}
	for len(finished) < len(heldJobs) {
		for id, kind := range heldJobs {
			if _, ok := finished[id]; ok {
				continue
			}
			var state, by string
			if err := db.QueryRow(`SELECT state, attempted_by[array_length(attempted_by, 1)] FROM river_job WHERE id = $1`, id).Scan(&state, &by); err != nil {
				t.Fatal(err)
			}
			last[id] = state + " by " + by
			if _, ok := taken[id]; !ok && (state != "running" || by != leader) {
				taken[id] = time.Since(killedAt)
			}
			switch state {
			case "completed":
				finished[id] = time.Since(killedAt)
			case "discarded", "cancelled":
				t.Fatalf("job %d (%s) held by the killed process ended %s", id, kind, state)
			}
		}
		if time.Since(killedAt) > instancesSettleWithin {
			for id, kind := range heldJobs {
				if _, ok := finished[id]; !ok {
					t.Errorf("job %d (%s) held by the killed process is %s %s after the kill", id, kind, last[id], instancesSettleWithin)
				}
			}
			t.FailNow()
		}
		time.Sleep(200 * time.Millisecond)
	}
	for id, took := range taken {
		kind := heldJobs[id]
		bound := riverLeaderLease + max(instancesRescueAfter, heldJobTimeout(kind)) + riverRescuerInterval + 5*time.Second
		if took > bound {
			t.Errorf("job %d (%s) held by the killed process taken up %s after the kill, over its rescue bound %s", id, kind, took.Round(time.Second), bound)
		}
	}

	// Every acknowledged document is stored and accepted; folios are
	// 1..n, and each reached the fake SII once.
	var rows, supRows []dteRow
	waitFor(t, instancesSettleWithin-time.Since(killedAt), "every document aceptado", func() bool {
		rows, supRows = listFacturas(t, live[0].base, demo.APIKey), listFacturas(t, live[0].base, sup.APIKey)
		for _, r := range append(slices.Clone(rows), supRows...) {
			if r.Estado != "aceptado" {
				return false
			}
		}
		time.Sleep(500 * time.Millisecond)
		return true
	})
	settled := time.Since(killedAt)
	perFolio := map[string]int{}
	for _, e := range fake.Envelopes() {
		for _, d := range e.Docs {
			perFolio[fmt.Sprintf("%s %d %d", d.RutEmisor, d.Tipo, d.Folio)]++
		}
	}
	for _, c := range []struct {
		rut   string
		rows  []dteRow
		acked map[string]bool
	}{{demoEmisor.Rut, rows, acked}, {demoSupplierRut, supRows, supAcked}} {
		stored := map[string]bool{}
		sort.Slice(c.rows, func(i, j int) bool { return c.rows[i].Folio < c.rows[j].Folio })
		for i, r := range c.rows {
			stored[r.ID] = true
			if r.Folio != int64(i+1) {
				t.Fatalf("%s: folios are not 1..%d without gaps or repeats: position %d holds folio %d", c.rut, len(c.rows), i, r.Folio)
			}
			if n := perFolio[fmt.Sprintf("%s 33 %d", c.rut, r.Folio)]; n != 1 {
				t.Errorf("%s: folio %d reached the fake SII in %d envelopes, want 1", c.rut, r.Folio, n)
			}
		}
		for id := range c.acked {
			if !stored[id] {
				t.Errorf("%s: acknowledged document %s is missing", c.rut, id)
			}
		}
	}

	// Every received file acknowledged is stored, with its document.
	for id, folio := range recepciones {
		status, body := call(t, hc, "GET", apiOf(live[1])+"/recepciones/"+id, demo.APIKey, nil)
		if status != 200 {
			t.Errorf("acknowledged received file %s (folio %d): %d %s", id, folio, status, body)
		}
	}
	if n := totalCount(t, apiOf(live[1])+"/recibidos?limit=1", demo.APIKey); n < demoSupplierDocs+len(recepciones) {
		t.Errorf("%d received documents, want at least %d", n, demoSupplierDocs+len(recepciones))
	}

	// Periodic jobs: at most one run per period, across the processes;
	// the mailbox poll runs again under the new leader.
	waitFor(t, instancesSettleWithin-time.Since(killedAt), "two mailbox polls after the kill", func() bool {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM river_job WHERE kind = 'mail.poll' AND state = 'completed' AND created_at > $1`, killedAt).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n >= 2
	})
	// A run is counted in the period it was enqueued in (the period of
	// its uniqueness): a run's job is then held, scheduled, to the
	// period's end.
	rowsP, err := db.Query(`SELECT kind, created_at, state FROM river_job WHERE kind = ANY($1) ORDER BY created_at`, periodicKindNames())
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string]map[time.Time]int{}
	var pollsBefore, pollsAfter int
	for rowsP.Next() {
		var kind, state string
		var at time.Time
		if err := rowsP.Scan(&kind, &at, &state); err != nil {
			t.Fatal(err)
		}
		if runs[kind] == nil {
			runs[kind] = map[time.Time]int{}
		}
		runs[kind][at.Truncate(periodicKinds[kind])]++
		if kind == "mail.poll" && state == "completed" {
			if at.Before(killedAt) {
				pollsBefore++
			} else {
				pollsAfter++
			}
		}
	}
	rowsP.Close()
	for kind, per := range runs {
		for period, n := range per {
			if n > 1 {
				t.Errorf("periodic job %s ran %d times in the period from %s (every %s)", kind, n, period.Format(time.TimeOnly), periodicKinds[kind])
			}
		}
	}
	if pollsBefore == 0 || pollsAfter == 0 {
		t.Errorf("the mailbox poll ran %d times before the leader's kill and %d after, want both", pollsBefore, pollsAfter)
	}

	// Mail, sent and read by the two survivors: each of the supplier's
	// facturas reached the demo company's mailbox once, each message was
	// read once, and each file read so was acknowledged to the supplier
	// once.
	var mailed map[string]int
	waitFor(t, time.Minute, "every supplier factura mailed", func() bool {
		mailed = messageIDs(t, mailSrv.Messages(userD))
		return len(mailed) >= len(supAcked)
	})
	onceEach(t, "factura mailed to the demo company", mailed)
	var mensajes int
	waitFor(t, time.Minute, "every mail read", func() bool {
		mensajes = totalCount(t, apiOf(live[0])+"/empresa/correo/mensajes?limit=1", demo.APIKey)
		return mensajes >= len(mailed)
	})
	if mensajes != len(mailed) {
		t.Errorf("the demo company read %d mails, want the %d its mailbox holds", mensajes, len(mailed))
	}
	var acuses map[string]int
	waitFor(t, time.Minute, "an acuse of every mail read", func() bool {
		acuses = messageIDs(t, mailSrv.Messages(userS))
		return len(acuses) >= len(mailed)
	})
	onceEach(t, "acuse to the supplier", acuses)

	// Webhooks: every event delivered, each acted on once.
	ev := func(typ, id string) {
		var ids []string
		ok := within(time.Minute, func() bool { ids = hooks.acted(typ, id); return len(ids) > 0 })
		if !ok {
			t.Errorf("no %s delivered for %s", typ, id)
		} else if len(ids) > 1 {
			t.Errorf("%s of %s delivered under %d webhook-ids %v: the receiver acted twice", typ, id, len(ids), ids)
		}
	}
	for _, r := range rows {
		ev("dte.created", r.ID)
		ev("dte.accepted", r.ID)
	}
	hooks.mu.Lock()
	received := 0
	for e := range hooks.effects {
		if strings.HasPrefix(e, "recibido.created ") {
			received++
		}
	}
	redelivered := 0
	for _, n := range hooks.deliveries {
		redelivered += n - 1
	}
	hooks.mu.Unlock()
	if received < len(recepciones) {
		t.Errorf("%d recibido.created events acted on, want at least %d", received, len(recepciones))
	}
	t.Logf("three processes up in %s, load for %s before the kill, checks done %s after it",
		loadAt.Sub(begin).Round(time.Second), killedAt.Sub(loadAt).Round(time.Second), time.Since(killedAt).Round(time.Second))
	t.Logf("mail: %d facturas mailed to the demo company, read once each, %d acuses back", len(mailed), len(acuses))
	t.Logf("%d facturas acknowledged (%d stored) and %d supplier facturas received through three processes, one killed; held jobs taken up %v and finished %v after the kill; all aceptado %s after it; periodic runs %v (mail.poll %d before the kill, %d after); %d webhook deliveries repeated",
		len(acked), len(rows), len(recepciones), finishedTimes(taken), finishedTimes(finished), settled.Round(time.Second), periodicCounts(runs), pollsBefore, pollsAfter, redelivered)
	var stops sync.WaitGroup
	for _, p := range live {
		stops.Go(func() { p.stop(t) })
	}
	stops.Wait()
}

// onceEach fails for every Message-ID seen more than once.
func onceEach(t *testing.T, what string, ids map[string]int) {
	t.Helper()
	for id, n := range ids {
		if n != 1 {
			t.Errorf("%s %s arrived %d times", what, id, n)
		}
	}
}

// completedRuns counts the finished jobs of a kind.
func completedRuns(t *testing.T, db *sql.DB, kind string) int {
	t.Helper()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM river_job WHERE kind = $1 AND state = 'completed'`, kind).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func periodicKindNames() []string {
	var out []string
	for k := range periodicKinds {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func periodicCounts(runs map[string]map[time.Time]int) map[string]int {
	out := map[string]int{}
	for k, per := range runs {
		for _, n := range per {
			out[k] += n
		}
	}
	return out
}

func finishedTimes(f map[int64]time.Duration) []string {
	var out []string
	for _, d := range f {
		out = append(out, d.Round(time.Second).String())
	}
	sort.Strings(out)
	return out
}
