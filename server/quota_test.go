package server

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing"
	"github.com/dtekit/dtekit/billing/billingtest"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/email"
	"github.com/dtekit/dtekit/email/emailtest"
	"github.com/dtekit/dtekit/internal/oracle"
	"github.com/dtekit/dtekit/store"
)

// diskOf opens a fresh store of backend be and returns it with a
// function that measures it on disk (oracle.SQLiteSize, or the inbox's
// relations by oracle.PostgresSize).
func diskOf(t *testing.T, be billingtest.Backend) (store.Store, func() int64) {
	t.Helper()
	dsn := be.DSN(t)
	st, err := be.Open(context.Background(), dsn, store.JobsConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if be.Name == billingtest.SQLite.Name {
		return st, oracle.SQLiteSize(t, dsn)
	}
	return st, oracle.PostgresSize(t, dsn, "recepciones", "recibidos", "mensajes")
}

// junkEnvio is an "EnvioDTE" of about n bytes that no database can
// compress (random base64 in a comment), refused at intake.
func junkEnvio(n int) []byte {
	raw := make([]byte, n*3/4)
	_, _ = rand.Read(raw)
	return []byte("<EnvioDTE><!-- " + base64.StdEncoding.EncodeToString(raw) + " --></EnvioDTE>")
}

// junkMail is an outsider's message to addr carrying files.
func junkMail(t *testing.T, addr string, files ...[]byte) []byte {
	t.Helper()
	d := email.Draft{From: "spam@outsider.example", To: addr, Subject: "Factura", Text: "adjunto"}
	for i, f := range files {
		d.Attachments = append(d.Attachments, email.Attachment{Filename: fmt.Sprintf("EnvioDTE_%d.xml", i), Data: f})
	}
	raw, _, err := email.Compose(d)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestJunkMailBounded, on both backends: an outsider mails ten messages
// to company A's public address, each with two refused "EnvioDTE" of
// 512 KiB (10.5 MB in all, which were kept whole); read through POST
// /empresa/correo/leer, they add little to the database (measured on
// disk). Then A's quota: with room for one more file, a message of two
// is recorded rechazado, its detalle naming the quota, never dropped;
// with the mails kept at max_mensajes, the read stops with 409
// LIMIT_EXCEEDED and leaves the message in the mailbox, read once room
// is made. GET/PUT /empresa/recepcion show and set the quota (admin
// only, ranges checked); B's is its own.
func TestJunkMailBounded(t *testing.T) {
	t.Parallel()
	for _, be := range billingtest.Backends() {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			users := []emailtest.User{{Address: "dte@empresa-a.cl", Username: "a", Password: "clave-a"}}
			ms := emailtest.Start(t, users...)
			st, disk := diskOf(t, be)
			f := submitting(t, st, billing.Config{Mail: billing.MailConfig{TLS: &tls.Config{RootCAs: ms.RootCAs}, AllowLoopback: true, AnyPort: true,
				Every: time.Hour, Backoff: []time.Duration{time.Hour}}}, newFake(t))
			a, b := f.A, f.B
			_, p, _ := strings.Cut(ms.IMAPSAddr, ":")
			port, _ := strconv.Atoi(p)
			u := users[0]
			want(t, f.do("PUT", apiBase+"/empresa/correo", map[string]any{"direccion": u.Address, "enviar_dte": "nunca",
				"imap": map[string]any{"host": "127.0.0.1", "port": port, "seguridad": "tls", "usuario": u.Username, "password": u.Password}},
				a.adminHdr...), 200)
			read := func() *response {
				t.Helper()
				return f.do("POST", apiBase+"/empresa/correo/leer", nil, a.writeHdr...)
			}
			settings := func(c company) api.RecepcionSettings {
				t.Helper()
				r := f.do("GET", apiBase+"/empresa/recepcion", nil, c.readHdr...)
				want(t, r, 200)
				var s api.RecepcionSettings
				r.JSON(t, &s)
				return s
			}

			// Files of 512 KiB keep the test quick under -race; the growth
			// of 15 MiB files is measured by inbox.TestRefusedFilesBounded.
			size := 512 << 10
			if testing.Short() {
				size = 128 << 10
			}
			before := disk()
			for range 10 {
				ms.Append(u, junkMail(t, u.Address, junkEnvio(size), junkEnvio(size)))
			}
			r := read()
			want(t, r, 200)
			if got := string(r.Body); got != `{"leidos":10,"repetidos":0,"rechazados":0}` {
				t.Errorf("the read of the junk: %s", got)
			}
			after := disk()
			t.Logf("%s: 10 junk mails with 20 refused files of %.1f MB; the database went from %.1f MB to %.1f MB (+%.0f KB)",
				be.Name, float64(len(junkEnvio(size)))/1e6, float64(before)/1e6, float64(after)/1e6, float64(after-before)/1e3)
			// What twenty prefixes, reports and ten mails keep, with room
			// for the databases' page allocation: far less than the 20
			// files themselves.
			if grew, sent := after-before, int64(20*size); grew > sent/4 {
				t.Errorf("the database grew by %d bytes for 20 refused files of %d bytes", grew, size)
			}
			s := settings(a)
			if s.Uso.Recepciones != 20 || s.Uso.Mensajes != 10 || s.Uso.RecepcionBytes > 20*(8<<10) ||
				s.Vigente.MaxRecepciones != 100_000 || s.Empresa.MaxRecepciones != nil || s.UpdatedAt != nil {
				t.Errorf("A's quota after the junk: %+v", s)
			}

			// Room for one more file: the message of two is refused.
			for _, tc := range []struct {
				body map[string]any
				hdr  []string
				code fault.Code
			}{
				{map[string]any{"max_recepciones": 21}, a.writeHdr, fault.Forbidden},
				{map[string]any{"max_recepciones": 0}, a.adminHdr, fault.Validation},
				{map[string]any{"max_recepciones": 100_001}, a.adminHdr, fault.Validation},
				{map[string]any{"retencion_dias": 4000}, a.adminHdr, fault.Validation},
				{map[string]any{"cuota": 1}, a.adminHdr, fault.Validation},
			} {
				r := f.do("PUT", apiBase+"/empresa/recepcion", tc.body, tc.hdr...)
				want(t, r, map[fault.Code]int{fault.Forbidden: 403, fault.Validation: 400}[tc.code], tc.code)
			}
			want(t, f.do("PUT", apiBase+"/empresa/recepcion", map[string]any{"max_recepciones": 21}, a.adminHdr...), 200)
			ms.Append(u, junkMail(t, u.Address, junkEnvio(1000), junkEnvio(1000)))
			r = read()
			want(t, r, 200)
			if got := string(r.Body); got != `{"leidos":0,"repetidos":0,"rechazados":1}` {
				t.Errorf("the read over the quota: %s", got)
			}
			r = f.do("GET", apiBase+"/empresa/correo/mensajes?limit=1", nil, a.readHdr...)
			var msgs api.Page[api.Mensaje]
			r.JSON(t, &msgs)
			if len(msgs.Data) != 1 || msgs.Data[0].Estado != "rechazado" || !strings.Contains(msgs.Data[0].Detalle, "quota") ||
				!strings.Contains(msgs.Data[0].Detalle, "max_recepciones 21") {
				t.Errorf("the message over the quota: %s", r.Body)
			}
			// An upload over the quota: 409.
			want(t, f.postXML(apiBase+"/recibidos", []byte("no es XML"), a.writeHdr...), 409, fault.LimitExceeded)

			// The mails kept reach max_mensajes: the read stops.
			want(t, f.do("PUT", apiBase+"/empresa/recepcion", map[string]any{"max_mensajes": 11}, a.adminHdr...), 200)
			ms.Append(u, junkMail(t, u.Address, []byte("<x/>")))
			want(t, read(), 409, fault.LimitExceeded)
			if s := settings(a); s.Uso.Mensajes != 11 || s.Vigente.MaxMensajes != 11 || s.Empresa.MaxMensajes == nil {
				t.Errorf("A's quota at its mail limit: %+v", s)
			}
			want(t, f.do("PUT", apiBase+"/empresa/recepcion", map[string]any{}, a.adminHdr...), 200)
			r = read()
			want(t, r, 200)
			if got := string(r.Body); got != `{"leidos":0,"repetidos":0,"rechazados":1}` {
				t.Errorf("the read once room is made: %s", got)
			}
			if s := settings(b); s.Uso != (api.RecepcionUso{}) || s.Empresa.MaxMensajes != nil {
				t.Errorf("B's quota: %+v", s)
			}
		})
	}
}

// TestUploadBucket: uploads take a per-company bucket smaller than the
// per-credential one (a tenth of the rate, a burst of 10): the 11th quick
// upload of A is 429 with Retry-After while A's other calls and B's
// uploads go on.
func TestUploadBucket(t *testing.T) {
	t.Parallel()
	f := newFixture(t, billingtestSQLite(t), RateLimit{PerSecond: -1})
	// A server whose limiters' clock stands still: no token comes back
	// while the test runs, however slow the machine.
	now := time.Now()
	srv, err := New(Config{Billing: f.b, RateLimit: RateLimit{PerSecond: 20, Burst: 100}, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	f.tt = &tester{t: t, h: srv}
	a, b := f.A, f.B
	for i := range 10 {
		want(t, f.postXML(apiBase+"/recibidos", []byte("no es XML "+strconv.Itoa(i)), a.writeHdr...), 201)
	}
	r := f.postXML(apiBase+"/recibidos", []byte("no es XML 10"), a.writeHdr...)
	want(t, r, 429, fault.RateLimited)
	if r.Header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	want(t, f.postXML(apiBase+"/respuestas", []byte("<RespuestaDTE/>"), a.writeHdr...), 429, fault.RateLimited)
	want(t, f.do("GET", apiBase+"/recibidos", nil, a.readHdr...), 200)
	want(t, f.postXML(apiBase+"/recibidos", []byte("no es XML de B"), b.writeHdr...), 201)
}
