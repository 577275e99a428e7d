package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing"
	"github.com/dtekit/dtekit/billing/billingtest"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/email"
	"github.com/dtekit/dtekit/email/emailtest"
	"github.com/dtekit/dtekit/intercambio"
	"github.com/dtekit/dtekit/signer"
	"github.com/dtekit/dtekit/signer/signertest"
)

// The outsider of TestForgedAnswers: a company the server does not host,
// whose person signs with a self-signed certificate.
const (
	outsiderRUT    = "96790240-3"
	outsiderSigner = "12222222-5"
)

// hookCounter is a webhook receiver that counts the deliveries it got by
// event type.
type hookCounter struct {
	mu  sync.Mutex
	got map[string]int
}

func (h *hookCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var ev struct {
		Type string `json:"type"`
	}
	body, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(body, &ev)
	h.mu.Lock()
	h.got[ev.Type]++
	h.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (h *hookCounter) count(typ string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.got[typ]
}

// TestForgedAnswers, on both backends, through the server and a real
// mail server: company A emits a factura to B; the server knows B's
// signer (billing.Config.SignerPolicy, as "serve --signer"). An outsider
// holding the factura's file forges B's rejection with its own
// self-signed certificate and mails it to A's public address, then
// uploads it; it also rejects as itself. Each is recorded as a refused
// answer with its reason (GET /recepciones) and changes nothing. B's own
// acceptance, uploaded, is applied and delivered to A's webhook; a forged
// rejection after it changes nothing either; A's webhook receives one
// dte.receptor_aceptado and no dte.receptor_rechazado. The same policy
// refuses, at intake, an envelope from an emisor it names no signer for.
func TestForgedAnswers(t *testing.T) {
	t.Parallel()
	outsider, err := signertest.NewCertificate(nil, signertest.CertOptions{CommonName: "Falsificador Externo", RUT: outsiderSigner})
	if err != nil {
		t.Fatal(err)
	}
	for _, be := range billingtest.Backends() {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			users := []emailtest.User{{Address: "dte@empresa-a.cl", Username: "a", Password: "clave-a"},
				{Address: "fraude@otro.cl", Username: "fraude", Password: "clave-f"}}
			ms := emailtest.Start(t, users...)
			hooks := &hookCounter{got: map[string]int{}}
			receiver := httptest.NewServer(hooks)
			t.Cleanup(receiver.Close)
			fake := newFake(t)
			st := be.NewStore(t)
			// The policy names B's signer for B: the fixture's signer,
			// who signs for each of its companies.
			cr, _ := sharedCreds(t)
			f := submitting(t, st, billing.Config{Mail: billing.MailConfig{TLS: &tls.Config{RootCAs: ms.RootCAs}, AllowLoopback: true, AnyPort: true,
				Every: time.Hour, Backoff: []time.Duration{time.Hour}},
				Delivery:     billing.DeliveryConfig{AllowLoopback: true},
				SignerPolicy: dte.VerifyOptions{AuthorizedSigners: map[string][]string{rutB: {cr.SignerRUT}}}}, fake)
			a, b := f.A, f.B
			host, portText, _ := strings.Cut(ms.IMAPSAddr, ":")
			port, _ := strconv.Atoi(portText)
			_, smtpPortText, _ := strings.Cut(ms.SMTPAddr, ":")
			smtpPort, _ := strconv.Atoi(smtpPortText)
			r := f.do("PUT", apiBase+"/empresa/correo", map[string]any{"direccion": users[0].Address, "enviar_dte": "nunca",
				"smtp": map[string]any{"host": host, "port": smtpPort, "seguridad": "starttls", "usuario": "a", "password": "clave-a"},
				"imap": map[string]any{"host": host, "port": port, "seguridad": "tls", "usuario": "a", "password": "clave-a"}},
				a.adminHdr...)
			want(t, r, 200)
			r = f.do("POST", apiBase+"/webhooks", map[string]any{"url": receiver.URL + "/hooks",
				"events": []string{"dte.receptor_recibido", "dte.receptor_aceptado", "dte.receptor_rechazado", "dte.mercaderias_recibidas"}},
				a.writeHdr...)
			want(t, r, 201)
			var wh api.Webhook
			r.JSON(t, &wh)

			id, _ := f.emit(a, facturaTo(b.rut, 1))
			file := f.envioFrom(a, b.rut, id)
			answer := func(as string, cert *signer.Certificate, idResp int64, d intercambio.Decision) []byte {
				t.Helper()
				rec, err := intercambio.Receive(file, intercambio.Options{Empresa: as, Verify: dte.VerifyOptions{Keys: f.creds.TrustedKeys}, CodEnvio: 1})
				if err != nil {
					t.Fatal(err)
				}
				x, _, err := rec.Resultado(cert, intercambio.AnswerOptions{IdRespuesta: idResp, At: time.Now()}, intercambio.Todos(d))
				if err != nil {
					t.Fatal(err)
				}
				return x
			}
			reject := intercambio.Decision{Estado: intercambio.DTERechazado, Motivo: "Mercadería no solicitada"}
			forgedAsB := answer(b.rut, outsider, 1, reject)
			forgedAsB2 := answer(b.rut, outsider, 2, reject)
			forgedAsOutsider := answer(outsiderRUT, outsider, 3, reject)
			acceptB := answer(b.rut, f.signingCert(), 4, intercambio.Decision{Estado: intercambio.DTEAceptadoOK})

			noAnswer := func(when string) {
				t.Helper()
				r := f.do("GET", apiBase+"/dte/"+id, nil, a.readHdr...)
				want(t, r, 200)
				var d api.DTE
				r.JSON(t, &d)
				if d.Intercambio != nil && (d.Intercambio.Resultado == nil || d.Intercambio.Resultado.Resultado != "aceptado" ||
					len(d.Intercambio.Historial) != 0) {
					t.Errorf("%s: the factura's answers: %s", when, r.Body)
				}
			}
			refused := func(name string, rec api.Recepcion, motivo string) {
				t.Helper()
				r := f.do("GET", apiBase+"/recepciones/"+rec.ID, nil, a.readHdr...)
				want(t, r, 200)
				var got api.Recepcion
				r.JSON(t, &got)
				if got.Tipo != "respuesta" || got.Estado != "rechazada" || !bytes.Contains(got.Reporte, []byte(motivo)) {
					t.Errorf("%s: the record %s, want a refused answer for %q", name, r.Body, motivo)
				}
			}

			// 1. The forgery as B, mailed to A's address and read.
			raw, _, err := email.Compose(email.Draft{From: users[1].Address, To: users[0].Address, Subject: "Resultado DTE",
				Text: "Rechazamos la factura.", Attachments: []email.Attachment{{Filename: "ResultadoDTE.xml", Data: forgedAsB}}})
			if err != nil {
				t.Fatal(err)
			}
			if err := email.Send(context.Background(), ms.SMTPConfig(users[1]), users[1].Address, []string{users[0].Address}, raw); err != nil {
				t.Fatal(err)
			}
			r = f.do("POST", apiBase+"/empresa/correo/leer", nil, a.writeHdr...)
			want(t, r, 200)
			r = f.do("GET", apiBase+"/recepciones", nil, a.readHdr...)
			want(t, r, 200)
			var recs api.Page[api.Recepcion]
			r.JSON(t, &recs)
			if len(recs.Data) != 1 || recs.Data[0].Origen != "correo" || recs.Data[0].Remitente == nil || *recs.Data[0].Remitente != users[1].Address {
				t.Fatalf("the mailed forgery's record: %s", r.Body)
			}
			refused("the mailed forgery as B", recs.Data[0], "signer "+outsiderSigner+" is not authorized for "+b.rut)
			noAnswer("after the mailed forgery")

			// 2. The same forgery uploaded; the outsider as itself.
			upload := func(x []byte) api.RespuestaRecibida {
				t.Helper()
				r := f.postXML(apiBase+"/respuestas", x, a.writeHdr...)
				want(t, r, 200)
				var out api.RespuestaRecibida
				r.JSON(t, &out)
				return out
			}
			up := upload(forgedAsB2)
			if len(up.DTEIDs) != 0 {
				t.Errorf("the uploaded forgery as B changed %v", up.DTEIDs)
			}
			refused("the uploaded forgery as B", up.Recepcion, "signer "+outsiderSigner+" is not authorized for "+b.rut)
			up = upload(forgedAsOutsider)
			refused("the outsider as itself", up.Recepcion, "RutResponde "+outsiderRUT+" is not the document's receptor "+b.rut)
			noAnswer("after the uploaded forgeries")

			// 3. B's own acceptance: applied and delivered.
			if up = upload(acceptB); len(up.DTEIDs) != 1 || up.DTEIDs[0] != id {
				t.Fatalf("B's acceptance: %+v", up)
			}
			// 4. The forgery again, mailed with another number: nothing.
			forgedAsB3 := answer(b.rut, outsider, 5, reject)
			raw, _, _ = email.Compose(email.Draft{From: users[1].Address, To: users[0].Address, Subject: "Resultado DTE",
				Attachments: []email.Attachment{{Filename: "ResultadoDTE.xml", Data: forgedAsB3}}})
			if err := email.Send(context.Background(), ms.SMTPConfig(users[1]), users[1].Address, []string{users[0].Address}, raw); err != nil {
				t.Fatal(err)
			}
			want(t, f.do("POST", apiBase+"/empresa/correo/leer", nil, a.writeHdr...), 200)
			noAnswer("after B's acceptance and another forgery")

			deadline := time.Now().Add(30 * time.Second)
			for hooks.count("dte.receptor_aceptado") == 0 && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
			}
			r = f.do("GET", apiBase+"/webhooks/"+wh.ID+"/deliveries", nil, a.readHdr...)
			want(t, r, 200)
			var dl api.Page[api.Delivery]
			r.JSON(t, &dl)
			if dl.TotalCount != 1 || len(dl.Data) != 1 || dl.Data[0].EventType != "dte.receptor_aceptado" {
				t.Errorf("A's webhook deliveries: %s, want the acceptance's only", r.Body)
			}
			if hooks.count("dte.receptor_aceptado") != 1 || hooks.count("dte.receptor_rechazado") != 0 {
				t.Errorf("the receiver got %v, want one dte.receptor_aceptado and no rejection", hooks.got)
			}

			// The same policy at intake: A's envelope, uploaded by B, comes
			// from an emisor the policy names no signer for.
			r = f.postXML(apiBase+"/recibidos", file, b.writeHdr...)
			want(t, r, 201)
			var rec api.Recepcion
			r.JSON(t, &rec)
			if rec.Tipo != "envio" || rec.Estado != "rechazada" || !bytes.Contains(rec.Reporte, []byte("is not authorized for "+a.rut)) {
				t.Errorf("an envelope whose signer the policy does not name: %s", r.Body)
			}
		})
	}
}
