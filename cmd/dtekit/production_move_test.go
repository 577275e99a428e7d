package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/dtekit/dtekit/caf/caftest"
	"github.com/dtekit/dtekit/internal/oracle"
	"github.com/dtekit/dtekit/internal/pgtest"
	"github.com/dtekit/dtekit/signer/signertest"
	"github.com/dtekit/dtekit/sii/siitest"
)

// The company of the move test is the README's (its commands name it);
// its signer's check digit is hand-checked in production_e2e_test.go.
const (
	moveRUT    = "76543210-3"
	moveSigner = "13567890-2"
	// moveProdFolios is the production CAF's range, 1 to moveProdFolios;
	// moveCertFolios the certificación CAF's, of the same type.
	moveProdFolios = 200
	moveCertFolios = 100000
	// moveCertDocs is how many documents the company emits in
	// certificación before it moves.
	moveCertDocs = 3
)

// moveBody is the README's factura, held (auto_send false) so that the
// test measures folios, not submissions.
var moveBody = strings.Replace(demoFactura, `"tipo_dte":33,`, `"tipo_dte":33,"auto_send":false,`, 1)

// moveRig is a company in certificación, taken to production while
// "dtekit serve" runs over its database.
type moveRig struct {
	dir, data string   // working directory (the README's commands run there); data directory
	env       []string // environment of every command
	bin       string
	serveArgs []string
	serve     *serveProc
	api, key  string
	trustProd string // "300=…pem", the production authority as --trust takes it
	prodAuth  *caftest.Authority
	hc        *http.Client
}

// admin runs "dtekit admin args… --data DIR" and fails the test unless it
// exits 0.
func (r *moveRig) admin(t *testing.T, args ...string) string {
	t.Helper()
	res := runBin(t, r.dir, r.env, append(append([]string{"admin"}, args...), "--data", r.data)...)
	if res.code != exitOK {
		t.Fatalf("dtekit admin %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), res.code, res.stdout, res.stderr)
	}
	return res.stdout
}

func (r *moveRig) write(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(r.dir, name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// emit posts an emission with an Idempotency-Key; a transport error (the
// server killed) is returned, not fatal.
func (r *moveRig) emit(key, body string) (int, []byte, http.Header, error) {
	req, err := http.NewRequest("POST", r.api+"/dte", strings.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("X-Api-Key", r.key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	res, err := r.hc.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, res.Header, err
}

// moveDoc is what the test reads of a listed document.
type moveDoc struct {
	ID, Ambiente, Estado string
	Folio                int64
}

// list reads every document of the list ?query (all pages).
func (r *moveRig) list(t *testing.T, query string) (docs []moveDoc, total int64) {
	t.Helper()
	cursor := ""
	for {
		u := r.api + "/dte?limit=100&" + query
		if cursor != "" {
			u += "&cursor=" + url.QueryEscape(cursor)
		}
		st, b := call(t, r.hc, "GET", u, r.key, nil)
		var page struct {
			Items      []moveDoc
			NextCursor *string `json:"next_cursor"`
			TotalCount int64   `json:"total_count"`
		}
		if st != http.StatusOK || json.Unmarshal(b, &page) != nil {
			t.Fatalf("GET %s: %d %s", u, st, b)
		}
		docs, total = append(docs, page.Items...), page.TotalCount
		if page.NextCursor == nil {
			return docs, total
		}
		cursor = *page.NextCursor
	}
}

// moveCAF is what the test reads of a listed CAF.
type moveCAF struct {
	ID, Ambiente      string
	FolioDesde        int64 `json:"folio_desde"`
	FolioHasta        int64 `json:"folio_hasta"`
	FoliosDisponibles int64 `json:"folios_disponibles"`
}

func (r *moveRig) cafs(t *testing.T, query string) []moveCAF {
	t.Helper()
	st, b := call(t, r.hc, "GET", r.api+"/caf?"+query, r.key, nil)
	var page struct{ Data []moveCAF }
	if st != http.StatusOK || json.Unmarshal(b, &page) != nil {
		t.Fatalf("GET /caf?%s: %d %s", query, st, b)
	}
	return page.Data
}

func (r *moveRig) start(t *testing.T) {
	t.Helper()
	r.serve = startServeArgs(t, r.bin, r.serveArgs, r.env...)
	r.api = r.serve.base + "/api/v1/billing"
}

// TestProductionMove takes a company from certificación to producción on
// SQLite while "dtekit serve" runs (see productionMove).
func TestProductionMove(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary, killing it once; skipped with -short")
	}
	t.Parallel()
	productionMove(t, "")
}

// TestProductionMovePostgres is TestProductionMove on PostgreSQL.
func TestProductionMovePostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary on PostgreSQL, killing it once; skipped with -short")
	}
	t.Parallel()
	productionMove(t, pgtest.URL(t))
}

// productionMove: a company emits in certificación from a CAF of folios 1
// to 100000 of tipo 33, then moves to producción with the commands of the
// README's "Moving a company to production", run as written while the
// server runs: the emission before any production CAF answers 409 "no
// production CAF of tipo 33 is registered", the production CAF of folios
// 1 to 200 is registered beside the certificación one, and the next
// emission takes production folio 1. An Idempotency-Key used in
// certificación is a new key in producción, and a reference by dte_id to
// a certificación document is refused. Then clients emit at once and the
// server is killed with SIGKILL during these first production emissions;
// restarted, it finishes what the kill left half-way, and emissions go on
// until the production CAF is used up (409 NO_FOLIOS_AVAILABLE, not
// CAF_NOT_REGISTERED). In the end producción holds folios 1 to 200 once
// each, every acknowledged document among them with the folio it was
// answered; certificación still holds its folios 1 to 3, and its CAF has
// lost no folio.
func productionMove(t *testing.T, dbURL string) {
	for _, tool := range []string{"curl", "python3", "sh"} {
		oracle.Tool(t, tool)
	}
	r := &moveRig{dir: t.TempDir(), bin: builtBinary(t), hc: &http.Client{Timeout: 30 * time.Second}}
	r.data = filepath.Join(r.dir, "dtekit-data") // the default --data of the README's commands
	if err := os.Mkdir(r.data, 0o700); err != nil {
		t.Fatal(err)
	}
	fake := siitest.New(siitest.Options{}).Start()
	t.Cleanup(fake.Close)
	fake.Register(moveSigner, moveRUT)
	if dbURL == "" {
		r.env = []string{"DTEKIT_KEK=", "DTEKIT_DATABASE_URL="}
	} else {
		r.env = []string{"DTEKIT_DATABASE_URL=" + dbURL, "DTEKIT_KEK=" + hex.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))}
	}
	r.env = append(r.env, siiURLEnv+"="+fake.Endpoints().Classic, rescueAfterEnv+"=30s")

	// The company in certificación: its certificate, its certificación
	// CAF 1–100000 of tipo 33 (a test authority with IDK 100, trusted),
	// a write API key.
	r.admin(t, "empresa", "create", "--rut", moveRUT, "--razon-social", "Mi Empresa SpA", "--giro", "Comercio",
		"--direccion", "Calle 1", "--comuna", "Santiago", "--ciudad", "Santiago", "--fecha-resolucion", "2024-01-01", "--acteco", "620200")
	cert, err := signertest.NewCertificate(nil, signertest.CertOptions{RUT: moveSigner})
	if err != nil {
		t.Fatal(err)
	}
	p12, err := signertest.EncodePKCS12(cert, "s3cret", signertest.Modern)
	if err != nil {
		t.Fatal(err)
	}
	r.admin(t, "certificado", "upload", "--empresa", moveRUT, "--cert", r.write(t, "firma.p12", p12),
		"--rut-firmante", moveSigner, "--cert-password-file", r.write(t, "pw", []byte("s3cret\n")))
	issue := func(a *caftest.Authority, desde, hasta int64) []byte {
		b, err := a.Issue(caftest.IssueRequest{RutEmisor: moveRUT, RazonSocial: "Mi Empresa SpA", Tipo: 33,
			Desde: desde, Hasta: hasta, FechaAutorizacion: time.Now().AddDate(0, 0, -1)})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	pemOf := func(a *caftest.Authority, name string) string {
		pub, err := a.PublicKeyPEM()
		if err != nil {
			t.Fatal(err)
		}
		return r.write(t, name, pub)
	}
	certAuth, err := caftest.NewAuthority(nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	if r.prodAuth, err = caftest.NewAuthority(nil, 300); err != nil {
		t.Fatal(err)
	}
	trustCert := pemOf(certAuth, "certificacion-authority.pub.pem")
	r.trustProd = "300=" + pemOf(r.prodAuth, "production-authority.pub.pem")
	r.admin(t, "caf", "upload", "--empresa", moveRUT, "--trust", trustCert, r.write(t, "CAF33-certificacion.xml", issue(certAuth, 1, moveCertFolios)))
	var k struct{ Key string }
	if out := r.admin(t, "apikey", "create", "--empresa", moveRUT, "--write"); json.Unmarshal([]byte(out), &k) != nil || k.Key == "" {
		t.Fatalf("apikey create: %s", out)
	}
	r.key = k.Key
	r.serveArgs = []string{"--data", r.data, "--trust", trustCert, "--trust", r.trustProd}
	r.start(t)

	// Certificación: folios 1 to 3. The first key is used again after the
	// move.
	firstKey := uuid.NewString()
	certIDs := map[int64]string{}
	for i := range moveCertDocs {
		key := firstKey
		if i > 0 {
			key = uuid.NewString()
		}
		st, b, _, err := r.emit(key, moveBody)
		var em struct {
			ID    string
			Folio int64
		}
		if err != nil || st != http.StatusCreated || json.Unmarshal(b, &em) != nil || em.Folio != int64(i+1) {
			t.Fatalf("certificación emission %d: %d %s %v", i+1, st, b, err)
		}
		certIDs[em.Folio] = em.ID
	}

	// The move, with the README's commands as written (the production
	// CAF's file where the README names it; --trust for the test
	// authority, which stands in for the SII's production key).
	r.write(t, "CAF33-produccion.xml", issue(r.prodAuth, 1, moveProdFolios))
	blocks := readmeBlocks(t, "#### Moving a company to production")
	if len(blocks) != 2 {
		t.Fatalf("the README's move has %d blocks, want 2: %q", len(blocks), blocks)
	}
	out := r.runREADME(t, blocks[0])
	for _, want := range []string{`"code":"NO_FOLIOS_AVAILABLE"`, "no production CAF of tipo 33 is registered", `"code":"CAF_NOT_REGISTERED"`,
		`"folio_desde": 1`, fmt.Sprintf(`"folio_hasta": %d`, moveProdFolios), `"ambiente": "produccion"`} {
		if !strings.Contains(out, want) {
			t.Errorf("the README's move does not answer %s:\n%s", want, out)
		}
	}
	out = r.runREADME(t, blocks[1])
	dec := json.NewDecoder(strings.NewReader(out))
	var first struct {
		ID       string
		Folio    int64
		Ambiente string
	}
	var prodList, certList struct {
		Items      []moveDoc
		TotalCount int64 `json:"total_count"`
	}
	var cafsAll struct{ Data []moveCAF }
	for _, v := range []any{&first, &prodList, &certList, &cafsAll} {
		if err := dec.Decode(v); err != nil {
			t.Fatalf("the README's second block: %v\n%s", err, out)
		}
	}
	if first.Folio != 1 {
		t.Errorf("the first production emission took folio %d, want 1", first.Folio)
	}
	if prodList.TotalCount != 1 || len(prodList.Items) != 1 || prodList.Items[0].ID != first.ID || prodList.Items[0].Ambiente != "produccion" {
		t.Errorf("the default list after the move: %+v; want the one production document", prodList)
	}
	if certList.TotalCount != moveCertDocs {
		t.Errorf("ambiente=certificacion lists %d documents, want %d", certList.TotalCount, moveCertDocs)
	}
	for _, d := range certList.Items {
		if d.Ambiente != "certificacion" || certIDs[d.Folio] != d.ID {
			t.Errorf("certificación document after the move: %+v", d)
		}
	}
	if len(cafsAll.Data) != 2 {
		t.Errorf("ambiente=todos lists %d CAFs, want 2: %+v", len(cafsAll.Data), cafsAll.Data)
	}
	acked := map[string]int64{first.ID: 1}

	// The key of certificación folio 1 names nothing in producción: the
	// same request with it is a new production document, not a replay.
	st, b, h, err := r.emit(firstKey, moveBody)
	var again struct {
		ID    string
		Folio int64
	}
	if err != nil || st != http.StatusCreated || json.Unmarshal(b, &again) != nil || again.Folio != 2 || again.ID == certIDs[1] ||
		h.Get("X-Idempotency-Replay") != "" {
		t.Fatalf("the certificación key in producción: %d %s (replay %q), want production folio 2", st, b, h.Get("X-Idempotency-Replay"))
	}
	acked[again.ID] = again.Folio
	// A reference by dte_id to a certificación document is refused.
	ref := strings.Replace(moveBody, `"detalle":`, `"referencias":[{"dte_id":"`+certIDs[1]+`","razon_ref":"Corrige"}],"detalle":`, 1)
	st, b, _, err = r.emit(uuid.NewString(), ref)
	if err != nil || st != http.StatusBadRequest || !strings.Contains(string(b), `"field":"referencias[0].dte_id","code":"AMBIENTE_MISMATCH"`) {
		t.Errorf("a production reference to a certificación document: %d %s %v", st, b, err)
	}

	// The first production emissions, several at once; SIGKILL once a few
	// are answered.
	var mu sync.Mutex
	answered := 0
	killed := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				st, b, _, err := r.emit(uuid.NewString(), moveBody)
				if err != nil {
					return // killed
				}
				if st != http.StatusCreated {
					t.Errorf("a production emission before the kill: %d %s", st, b)
					return
				}
				var em struct {
					ID    string
					Folio int64
				}
				json.Unmarshal(b, &em)
				mu.Lock()
				acked[em.ID] = em.Folio
				answered++
				n := answered
				mu.Unlock()
				if n == 40 {
					close(killed)
				}
			}
		}()
	}
	select {
	case <-killed:
	case <-time.After(60 * time.Second):
		t.Fatal("40 production emissions were not answered within 60 s")
	}
	r.serve.kill(t)
	wg.Wait()
	killedAt := len(acked)
	r.start(t)

	// After the restart, emit until the production CAF is used up.
	exhausted := false
	for range moveProdFolios + 10 {
		st, b, _, err := r.emit(uuid.NewString(), moveBody)
		if err != nil {
			t.Fatal(err)
		}
		if st == http.StatusConflict {
			if !strings.Contains(string(b), `"code":"NO_FOLIOS_AVAILABLE"`) || strings.Contains(string(b), "CAF_NOT_REGISTERED") ||
				!strings.Contains(string(b), "no registered production CAF of tipo 33 has folios left") {
				t.Errorf("the used-up production CAF: %s", b)
			}
			exhausted = true
			break
		}
		var em struct {
			ID    string
			Folio int64
		}
		if st != http.StatusCreated || json.Unmarshal(b, &em) != nil {
			t.Fatalf("a production emission after the restart: %d %s", st, b)
		}
		acked[em.ID] = em.Folio
	}
	if !exhausted {
		t.Fatalf("%d folios of a CAF of %d were handed out", moveProdFolios+10, moveProdFolios)
	}

	// The emissions the kill left half-way are finished by the recovery
	// job (30 s after they began).
	deadline := time.Now().Add(150 * time.Second)
	var prod []moveDoc
	for {
		prod, _ = r.list(t, "tipo_dte=33")
		pending := 0
		for _, d := range prod {
			if d.Estado == "borrador" {
				pending++
			}
		}
		if pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d production documents still borrador 150 s after the kill", pending)
		}
		time.Sleep(2 * time.Second)
	}

	// No folio lost or given twice, in either environment.
	all, total := r.list(t, "ambiente=todos")
	folios := map[string][]int64{}
	byID := map[string]moveDoc{}
	for _, d := range all {
		folios[d.Ambiente] = append(folios[d.Ambiente], d.Folio)
		byID[d.ID] = d
	}
	if total != moveProdFolios+moveCertDocs || len(all) != int(total) {
		t.Errorf("ambiente=todos: %d documents listed, total %d; want %d", len(all), total, moveProdFolios+moveCertDocs)
	}
	for amb, n := range map[string]int{"produccion": moveProdFolios, "certificacion": moveCertDocs} {
		f := folios[amb]
		sort.Slice(f, func(i, j int) bool { return f[i] < f[j] })
		if len(f) != n {
			t.Errorf("%s holds %d documents, want %d", amb, len(f), n)
		}
		for i, v := range f {
			if v != int64(i+1) {
				t.Errorf("%s folios are not 1..%d once each: position %d holds %d", amb, n, i, v)
				break
			}
		}
	}
	if len(prod) != moveProdFolios {
		t.Errorf("the default list holds %d documents, want the %d of producción", len(prod), moveProdFolios)
	}
	for id, folio := range acked {
		if d, ok := byID[id]; !ok || d.Folio != folio || d.Ambiente != "produccion" || !signedOrLater[d.Estado] {
			t.Errorf("acknowledged production document %s (folio %d): %+v", id, folio, d)
		}
	}
	for folio, id := range certIDs {
		if d := byID[id]; d.Folio != folio || d.Ambiente != "certificacion" {
			t.Errorf("certificación document %s (folio %d): %+v", id, folio, d)
		}
	}
	certCAFs := r.cafs(t, "ambiente=certificacion")
	if len(certCAFs) != 1 || certCAFs[0].FoliosDisponibles != moveCertFolios-moveCertDocs {
		t.Errorf("the certificación CAF after the move: %+v; want %d folios left", certCAFs, moveCertFolios-moveCertDocs)
	}
	prodCAFs := r.cafs(t, "")
	if len(prodCAFs) != 1 || prodCAFs[0].Ambiente != "produccion" || prodCAFs[0].FolioDesde != 1 || prodCAFs[0].FoliosDisponibles != 0 {
		t.Errorf("the production CAFs: %+v; want 1–%d, used up", prodCAFs, moveProdFolios)
	}
	t.Logf("killed with %d production documents answered; %d answered in all, %d finished by the recovery; producción folios 1..%d and certificación 1..%d once each",
		killedAt, len(acked), moveProdFolios-len(acked), moveProdFolios, moveCertDocs)
	r.serve.stop(t)
}

// runREADME runs a block of the README's move with sh, as written but
// for the binary (dtekit is the one built) and the production CAF's
// authority (--trust, which the SII's real key does not need).
func (r *moveRig) runREADME(t *testing.T, block string) string {
	t.Helper()
	script := strings.ReplaceAll(block, "dtekit admin caf upload", `"$DTEKIT" admin caf upload --trust "$TRUST"`)
	script = strings.ReplaceAll(script, "dtekit admin", `"$DTEKIT" admin`)
	cmd := exec.Command("sh", "-e", "-c", script)
	cmd.Dir = r.dir
	cmd.Env = append(append(os.Environ(), r.env...), "DTEKIT="+r.bin, "TRUST="+r.trustProd, "API="+r.api, "KEY="+r.key)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s\n%v\nstdout: %s\nstderr: %s", script, err, out.String(), errb.String())
	}
	return out.String()
}
