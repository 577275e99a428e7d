package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/mail"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/email/emailtest"
	"github.com/dtekit/dtekit/internal/pgtest"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/postgres"
	"github.com/dtekit/dtekit/store/sqlite"
)

// writeMailCA writes the mail servers' self-signed certificate, read off
// a TLS handshake, as the PEM file DTEKIT_MAIL_CA names.
func writeMailCA(t *testing.T, srv *emailtest.Server) string {
	t.Helper()
	conn, err := tls.Dial("tcp", srv.IMAPSAddr, &tls.Config{InsecureSkipVerify: true}) // only to read the certificate
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var buf bytes.Buffer
	for _, c := range conn.ConnectionState().PeerCertificates {
		pem.Encode(&buf, &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
	}
	path := filepath.Join(t.TempDir(), "mail-ca.pem")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// mailSettingsJSON is PUT /empresa/correo's body for u on srv.
func mailSettingsJSON(t *testing.T, srv *emailtest.Server, u emailtest.User) []byte {
	t.Helper()
	hp := func(addr string) (string, int) {
		h, p, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := strconv.Atoi(p)
		return h, n
	}
	sh, sp := hp(srv.SMTPAddr)
	ih, ip := hp(srv.IMAPSAddr)
	return []byte(fmt.Sprintf(`{"direccion":%q,"enviar_dte":"firmado",`+
		`"smtp":{"host":%q,"port":%d,"seguridad":"starttls","usuario":%q,"password":%q},`+
		`"imap":{"host":%q,"port":%d,"seguridad":"tls","usuario":%q,"password":%q}}`,
		u.Address, sh, sp, u.Username, u.Password, ih, ip, u.Username, u.Password))
}

// messageIDs returns the distinct Message-IDs of a mailbox's messages and
// how many messages it holds.
func messageIDs(t *testing.T, msgs [][]byte) map[string]int {
	t.Helper()
	ids := map[string]int{}
	for _, raw := range msgs {
		m, err := mail.ReadMessage(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("a message in the mailbox cannot be read: %v", err)
		}
		ids[m.Header.Get("Message-Id")]++
	}
	return ids
}

func TestMailKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary, killing it twice; skipped with -short")
	}
	t.Parallel()
	mailKill9(t, "")
}

func TestMailKill9Postgres(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary on PostgreSQL, killing it twice; skipped with -short")
	}
	t.Parallel()
	mailKill9(t, pgtest.URL(t))
}

// mailKill9: the demo supplier mails facturas to the demo company through
// real SMTP and IMAP servers; the server is killed while it sends them and
// again while the demo company's read imports them. After the restarts no
// mail is lost, every factura is received once, every file is acknowledged,
// and nothing stays pending.
func mailKill9(t *testing.T, dbURL string) {
	const n = 12
	userD := emailtest.User{Address: "dte@demo.cl", Username: "demo", Password: "demo-pw"}
	userS := emailtest.User{Address: "dte@proveedora.cl", Username: "prov", Password: "prov-pw"}
	srv := emailtest.Start(t, userD, userS)
	// The mailboxes are read only when the test asks (POST
	// /empresa/correo/leer), so the second kill falls inside a read.
	// A job the kill left running is rescued after 15 s, or its own
	// bound when longer (30 s for the acknowledgment, 60 s for a send).
	env := []string{mailCAEnv + "=" + writeMailCA(t, srv), mailPollEnv + "=1h", mailRetryEnv + "=1s", rescueAfterEnv + "=15s",
		mailLoopbackEnv + "=1", mailPortsEnv + "=any"}
	if dbURL != "" {
		env = append(env, "DTEKIT_DATABASE_URL="+dbURL, "DTEKIT_KEK=3031323334353637383961626364656630313233343536373839616263646566")
	}
	bin := buildDtekit(t)
	data := filepath.Join(t.TempDir(), "data")
	p := startServe(t, bin, data, env...)
	demo := readDemoFile(t, data)
	if demo.Proveedor == nil {
		t.Fatal("demo.json names no supplier")
	}
	sup := *demo.Proveedor
	hc := &http.Client{Timeout: 30 * time.Second}
	api := func() string { return p.base + "/api/v1/billing" }
	for _, c := range []struct {
		token string
		u     emailtest.User
	}{{demo.AdminToken, userD}, {sup.AdminToken, userS}} {
		if st, body := call(t, hc, "PUT", api()+"/empresa/correo", "Bearer "+c.token, mailSettingsJSON(t, srv, c.u)); st != 200 {
			t.Fatalf("PUT /empresa/correo: %d %s", st, body)
		}
	}
	e := dtetest.DemoEmisor()
	cliente := fmt.Sprintf(`{"rut":%q,"razon_social":%q,"email":%q}`, e.Rut, e.RazonSocial, userD.Address)
	if st, body := call(t, hc, "POST", api()+"/clientes", sup.APIKey, []byte(cliente)); st != 201 {
		t.Fatalf("the supplier's cliente: %d %s", st, body)
	}
	factura := fmt.Sprintf(`{"tipo_dte":33,"receptor":{"rut":%q,"razon_social":%q,"giro":"Comercio","direccion":%q,"comuna":%q,"ciudad":%q},`+
		`"detalle":[{"nombre":"Resma papel carta","cantidad":3,"precio":4990}]}`, e.Rut, e.RazonSocial, e.Direccion, e.Comuna, e.Ciudad)
	for i := range n {
		if st, body := call(t, hc, "POST", api()+"/dte", sup.APIKey, []byte(factura)); st != 201 {
			t.Fatalf("factura %d: %d %s", i, st, body)
		}
	}
	// Kill while the mails go out.
	waitFor(t, 60*time.Second, "the first mails", func() bool { return srv.Count(userD) >= 1 })
	p.kill(t)
	sentAtKill := srv.Count(userD)
	p = startServe(t, bin, data, env...)
	waitFor(t, 150*time.Second, "every factura mailed", func() bool { return len(messageIDs(t, srv.Messages(userD))) >= n })
	if ids := messageIDs(t, srv.Messages(userD)); len(ids) != n {
		t.Fatalf("%d distinct messages reached the demo company, want %d (%d when killed)", len(ids), n, sentAtKill)
	}
	// Kill while the demo company's read imports them.
	go func(url, key string) {
		// A transport error is the kill's doing.
		req, _ := http.NewRequest("POST", url, strings.NewReader(`{}`))
		req.Header.Set("X-Api-Key", key)
		req.Header.Set("Content-Type", "application/json")
		if res, err := hc.Do(req); err == nil {
			res.Body.Close()
		}
	}(api()+"/empresa/correo/leer", demo.APIKey)
	// Kill as soon as the first of them is recorded.
	waitFor(t, 30*time.Second, "the read under way", func() bool {
		st, body := call(t, hc, "GET", api()+"/recibidos?limit=1", demo.APIKey, nil)
		var pg struct {
			TotalCount int `json:"total_count"`
		}
		json.Unmarshal(body, &pg)
		return st == 200 && pg.TotalCount > demoSupplierDocs
	})
	p.kill(t)
	before := countRecibidos(t, data, dbURL, demo.EmpresaID)
	p = startServe(t, bin, data, env...)
	type page struct {
		Data []struct {
			Folio     int64  `json:"folio"`
			RutEmisor string `json:"rut_emisor"`
			Estado    string `json:"estado"`
		} `json:"data"`
		TotalCount int `json:"total_count"`
	}
	var recs page
	waitFor(t, 150*time.Second, "every factura received", func() bool {
		if st, body := call(t, hc, "POST", api()+"/empresa/correo/leer", demo.APIKey, []byte(`{}`)); st != 200 {
			t.Fatalf("POST /empresa/correo/leer: %d %s", st, body)
		}
		st, body := call(t, hc, "GET", api()+"/recibidos?limit=100", demo.APIKey, nil)
		if st != 200 {
			t.Fatalf("GET /recibidos: %d %s", st, body)
		}
		recs = page{}
		json.Unmarshal(body, &recs)
		return recs.TotalCount >= n+demoSupplierDocs
	})
	folios := map[int64]int{}
	for _, r := range recs.Data {
		folios[r.Folio]++
		if r.RutEmisor != demoSupplierRut || r.Estado != "pendiente" {
			t.Errorf("recibido %+v", r)
		}
	}
	if recs.TotalCount != n+demoSupplierDocs || len(folios) != n+demoSupplierDocs {
		t.Errorf("%d recibidos with %d folios, want %d each", recs.TotalCount, len(folios), n+demoSupplierDocs)
	}
	// Every file read is acknowledged to the supplier, once per file.
	waitFor(t, 150*time.Second, "every acknowledgment", func() bool { return len(messageIDs(t, srv.Messages(userS))) >= n })
	if ids := messageIDs(t, srv.Messages(userS)); len(ids) != n {
		t.Errorf("%d distinct acknowledgments, want %d", len(ids), n)
	}
	// Nothing stuck: every mail of both companies sent.
	for _, key := range []string{demo.APIKey, sup.APIKey} {
		var last []byte
		ok := within(150*time.Second, func() bool {
			st, body := call(t, hc, "GET", api()+"/correos?limit=100", key, nil)
			if st != 200 {
				t.Fatalf("GET /correos: %d %s", st, body)
			}
			last = body
			return !strings.Contains(string(body), `"estado":"pendiente"`) && !strings.Contains(string(body), `"estado":"fallido"`)
		})
		if !ok {
			t.Fatalf("mails not sent within 150 s: %s", last)
		}
	}
	t.Logf("killed with %d of %d mails sent, and with %d of %d documents received", sentAtKill, n, before, n+demoSupplierDocs)
	p.stop(t)
}

// countRecibidos counts the received documents in the database at rest
// (the server is down), with the binary's own reading of it.
func countRecibidos(t *testing.T, data, dbURL, empresaID string) int {
	t.Helper()
	ctx := context.Background()
	var st store.Store
	var err error
	if dbURL == "" {
		st, err = sqlite.Open(ctx, filepath.Join(data, sqlite.FileName), nil)
	} else {
		st, err = postgres.Open(ctx, dbURL, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	page, err := st.ListRecibidos(ctx, empresaID, store.RecibidoFilter{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	return int(page.TotalCount)
}

// within polls cond until it holds (true) or the time is up (false).
func within(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// waitFor polls cond until it holds or the time is up.
func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
