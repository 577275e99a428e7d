package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/sii/siitest"
)

// cesionE2EBody is a cesión of the whole document to a factoring company.
const cesionE2EBody = `{"cesionario":{"rut":"96790240-3","razon_social":"Factoring Austral S.A.","direccion":"Av. Apoquindo 3000",` +
	`"email":"cesiones@factoring.cl"},"email_notificacion":"finanzas@empresa.cl"}`

// TestServeCesion: the built "dtekit serve --demo", submitting to a fake
// SII in this process (its registry of credit transfers as strict as
// sii-cesion-notes §8), emits a factura the fake accepts and cedes it
// through the API; the registry records the cesión, the document shows
// it (cedido, its cesión aceptada), the webhook gets dte.cedido, and a
// second cesión is refused. A cesión the registry refuses (RCS) is
// rechazada with dte.cesion_rechazada, and the document is ceded again.
// Then a second factura's cesión is uploaded
// while the fake files the AEC and holds its answer, and the server is
// killed with SIGKILL: restarted, it finds the document ceded in the
// registry and records the cesión aceptada, and the registry holds one
// cesión of the document, not two.
func TestServeCesion(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary twice")
	}
	start := time.Now()
	// The fake reviews an AEC in its six steps, 100 ms each, polled or
	// not; it trusts no CAF key of its own (the demo's authority lives in
	// the server's data directory), so the ceded DTE must be the very
	// document its review of an envelope accepted.
	fake := siitest.New(siitest.Options{Steps: []string{"SOK", "FOK"}, StepEvery: 100 * time.Millisecond})
	fake.Register(dtetest.SignerRUT, dtetest.EmisorRUT)
	srv := httptest.NewServer(fake.Handler())
	defer srv.Close()
	hooks := newHookCounter(t)
	defer hooks.srv.Close()
	// A job the kill left running is taken for abandoned after a second
	// (and its own bound, 12 s with the demo's 5 s exchanges).
	env := []string{siiURLEnv + "=" + srv.URL, rescueAfterEnv + "=1s"}
	flags := []string{"--webhook-allow-loopback", "--webhook-timeout", "5s"}
	bin := buildDtekit(t)
	data := filepath.Join(t.TempDir(), "data")
	t.Logf("built in %.1f s", time.Since(start).Seconds())
	start = time.Now()
	// Each server is killed when the test that started it ends.
	p := startServeFlags(t, bin, data, flags, env...)
	demo := readDemoFile(t, data)
	client := &http.Client{Timeout: 30 * time.Second}
	base := p.base + "/api/v1/billing"
	if status, body := call(t, client, "POST", base+"/webhooks", demo.APIKey,
		[]byte(`{"url":"`+hooks.srv.URL+`/hook","events":["dte.cedido","dte.cesion_rechazada"]}`)); status != 201 {
		t.Fatalf("creating the webhook: %d %s", status, body)
	}

	// Three facturas, one per subtest, emitted at once and accepted by
	// the fake.
	type factura struct {
		ID    string
		Folio int64
	}
	facturas := make([]factura, 3)
	for i := range facturas {
		status, body := call(t, client, "POST", base+"/dte", demo.APIKey, e2eBody(33))
		if status != 201 || json.Unmarshal(body, &facturas[i]) != nil {
			t.Fatalf("emitting: %d %s", status, body)
		}
	}
	for _, f := range facturas {
		waitDTE(t, client, base, demo.APIKey, f.ID, func(d api.DTE) bool { return d.Estado == "aceptado" }, 30*time.Second)
	}
	accepted := func(i int) (string, int64) { return facturas[i].ID, facturas[i].Folio }
	// ceded counts the registry's cesiones of a folio.
	ceded := func(folio int64) (n int, to string) {
		for _, c := range fake.Cesiones() {
			if c.RutEmisor == dtetest.EmisorRUT && c.Tipo == 33 && c.Folio == folio {
				n, to = n+1, c.Cesionario
			}
		}
		return n, to
	}

	t.Run("Cede", func(t *testing.T) {
		id, folio := accepted(0)
		status, body := call(t, client, "POST", base+"/dte/"+id+"/cesiones", demo.APIKey, []byte(cesionE2EBody))
		var c api.Cesion
		if status != 202 || json.Unmarshal(body, &c) != nil || c.Estado != api.CesionPendiente {
			t.Fatalf("ceding: %d %s", status, body)
		}
		d := waitDTE(t, client, base, demo.APIKey, id, func(d api.DTE) bool { return d.Cedido }, 30*time.Second)
		if d.Cesion == nil || d.Cesion.ID != c.ID || d.Cesion.Estado != api.CesionAceptada || d.Cesion.CodigoSII == nil ||
			*d.Cesion.CodigoSII != "EOK" || d.Cesion.TrackID == nil {
			t.Errorf("the document's cesión: %+v", d.Cesion)
		}
		if n, to := ceded(folio); n != 1 || to != "96790240-3" {
			t.Errorf("the registry records %d cesiones of folio %d (to %s), want 1 to 96790240-3", n, folio, to)
		}
		// The list, and the event.
		status, body = call(t, client, "GET", base+"/dte/"+id+"/cesiones", demo.APIKey, nil)
		var page api.Page[api.Cesion]
		if status != 200 || json.Unmarshal(body, &page) != nil || page.TotalCount != 1 || page.Data[0].Estado != api.CesionAceptada {
			t.Errorf("listing: %d %s", status, body)
		}
		waitFor(t, 30*time.Second, "the webhook's dte.cedido", func() bool { return len(hooks.byDTE()[id]["dte.cedido"]) == 1 })
		// A second cesión of the ceded document.
		status, body = call(t, client, "POST", base+"/dte/"+id+"/cesiones", demo.APIKey, []byte(cesionE2EBody))
		var e api.ErrorResponse
		if status != 409 || json.Unmarshal(body, &e) != nil || e.Code != "ALREADY_CEDED" {
			t.Errorf("a second cesión: %d %s", status, body)
		}
		if n, _ := ceded(folio); n != 1 {
			t.Errorf("the registry records %d cesiones of folio %d after the refusal", n, folio)
		}
	})

	t.Run("Rejected", func(t *testing.T) {
		id, folio := accepted(1)
		fake.ScriptAEC(dtetest.EmisorRUT, 33, folio, "RCS", "cesion invalida (guion de la prueba)")
		status, body := call(t, client, "POST", base+"/dte/"+id+"/cesiones", demo.APIKey, []byte(cesionE2EBody))
		if status != 202 {
			t.Fatalf("ceding: %d %s", status, body)
		}
		d := waitDTE(t, client, base, demo.APIKey, id, func(d api.DTE) bool { return d.Cesion == nil }, 30*time.Second)
		if d.Cedido {
			t.Errorf("a refused cesión left the document cedido")
		}
		status, body = call(t, client, "GET", base+"/dte/"+id+"/cesiones", demo.APIKey, nil)
		var page api.Page[api.Cesion]
		if status != 200 || json.Unmarshal(body, &page) != nil || len(page.Data) != 1 || page.Data[0].Estado != api.CesionRechazada ||
			orNone(page.Data[0].CodigoSII) != "RCS" {
			t.Fatalf("the refused cesión: %d %s", status, body)
		}
		waitFor(t, 30*time.Second, "the webhook's dte.cesion_rechazada", func() bool { return len(hooks.byDTE()[id]["dte.cesion_rechazada"]) == 1 })
		// Refused, the document may be ceded again.
		fake.ScriptAEC(dtetest.EmisorRUT, 33, folio, "", "")
		if status, body = call(t, client, "POST", base+"/dte/"+id+"/cesiones", demo.APIKey, []byte(cesionE2EBody)); status != 202 {
			t.Fatalf("ceding again: %d %s", status, body)
		}
		waitDTE(t, client, base, demo.APIKey, id, func(d api.DTE) bool { return d.Cedido }, 30*time.Second)
		if n, _ := ceded(folio); n != 1 {
			t.Errorf("the registry records %d cesiones of folio %d, want 1", n, folio)
		}
	})

	t.Run("Kill9MidUpload", func(t *testing.T) {
		id, folio := accepted(2)
		// The next upload is filed by the registry, and its answer never
		// comes.
		fake.Inject(siitest.RTCUpload, siitest.Fault{Kind: siitest.FaultAcceptThenHang})
		before := len(fake.AECUploads())
		status, body := call(t, client, "POST", base+"/dte/"+id+"/cesiones", demo.APIKey, []byte(cesionE2EBody))
		if status != 202 {
			t.Fatalf("ceding: %d %s", status, body)
		}
		waitFor(t, 10*time.Second, "the upload", func() bool { return len(fake.AECUploads()) > before })
		t.Logf("the AEC is filed and its answer held, %.1f s since the server started; killing it", time.Since(start).Seconds())
		p.kill(t)
		p = startServeFlags(t, bin, data, flags, env...)
		base = p.base + "/api/v1/billing" // a new port
		t.Logf("restarted, %.1f s since the first start", time.Since(start).Seconds())
		d := waitDTE(t, client, base, demo.APIKey, id, func(d api.DTE) bool { return d.Cesion != nil && d.Cesion.Estado.Final() }, 120*time.Second)
		if !d.Cedido || d.Cesion.Estado != api.CesionAceptada {
			t.Errorf("after the restart the cesión is %+v", d.Cesion)
		}
		if n, _ := ceded(folio); n != 1 {
			t.Errorf("the registry records %d cesiones of folio %d, want 1", n, folio)
		}
		uploads := 0
		for _, u := range fake.AECUploads()[before:] {
			if len(u.Chain) > 0 && u.Chain[0].Folio == folio {
				uploads++
			}
		}
		t.Logf("after the kill: cesión %s (%s), %d uploads of the AEC, %.1f s since the server first started",
			d.Cesion.Estado, orNone(d.Cesion.CodigoSII), uploads, time.Since(start).Seconds())
	})
}

// waitDTE polls GET /dte/{id} until ok holds, failing the test with the
// last answer after max.
func waitDTE(t *testing.T, client *http.Client, base, key, id string, ok func(api.DTE) bool, max time.Duration) api.DTE {
	t.Helper()
	for deadline := time.Now().Add(max); ; time.Sleep(50 * time.Millisecond) {
		status, body := call(t, client, "GET", base+"/dte/"+id, key, nil)
		var d api.DTE
		if status == 200 && json.Unmarshal(body, &d) == nil && ok(d) {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("document %s after %v: %d %s", id, max, status, body)
		}
	}
}

// orNone is *s, or "none".
func orNone(s *string) string {
	if s == nil {
		return "none"
	}
	return *s
}
