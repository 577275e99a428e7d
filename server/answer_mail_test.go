package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing"
	"github.com/dtekit/dtekit/email/emailtest"
	"github.com/dtekit/dtekit/sii/siitest"
	"github.com/dtekit/dtekit/store"
)

// TestAnswerMailAddresses, on both backends, against real SMTP servers:
// the answers to a supplier that gave no address are never skipped in
// silence. A receives B's factura by upload without correo_emisor while
// the SII's list of contribuyentes does not know B: its acknowledgment
// is recorded with correo_estado sin_direccion (no mail id), and
// dtekit_mail_answers_total counts it. Once the list gives B's
// intercambio address, A's acceptance is mailed there (correo_estado
// en_cola, correo_para the list's address) and arrives, and so is the
// acknowledgment of a file uploaded afterwards; the metric counts them
// under contribuyentes.
func TestAnswerMailAddresses(t *testing.T) {
	backends(t, func(t *testing.T, open func(t *testing.T) store.Store) {
		t.Parallel()
		sender := emailtest.User{Address: "dte@empresa-a.cl", Username: "a", Password: "clave-a"}
		supplier := emailtest.User{Address: "intercambio@proveedor-b.cl", Username: "b", Password: "clave-b"}
		ms := emailtest.Start(t, sender, supplier)
		fake := newFake(t)
		f := submitting(t, open(t), billing.Config{Mail: billing.MailConfig{TLS: &tls.Config{RootCAs: ms.RootCAs}, AllowLoopback: true, AnyPort: true,
			Every: time.Hour, Backoff: []time.Duration{time.Hour}}}, fake)
		a, b := f.A, f.B
		_, port, _ := strings.Cut(ms.SMTPAddr, ":")
		p, _ := strconv.Atoi(port)
		want(t, f.do("PUT", apiBase+"/empresa/correo", map[string]any{"direccion": sender.Address,
			"smtp": map[string]any{"host": "127.0.0.1", "port": p, "seguridad": "starttls", "usuario": sender.Username, "password": sender.Password}},
			a.adminHdr...), 200)

		// acuseOf waits for the acknowledgment job to note the document.
		acuseOf := func(id string) api.RecibidoAccion {
			t.Helper()
			deadline := time.Now().Add(30 * time.Second)
			for {
				r := f.do("GET", apiBase+"/recibidos/"+id, nil, a.readHdr...)
				want(t, r, 200)
				var d api.Recibido
				r.JSON(t, &d)
				if d.Respuestas.Acuse != nil {
					return *d.Respuestas.Acuse
				}
				if time.Now().After(deadline) {
					t.Fatalf("recibido %s: no acknowledgment noted: %s", id, r.Body)
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
		upload := func(ids ...string) string {
			t.Helper()
			r := f.postXML(apiBase+"/recibidos", f.envioFrom(b, a.rut, ids...), a.writeHdr...)
			want(t, r, 201)
			var rec api.Recepcion
			r.JSON(t, &rec)
			if rec.Remitente != nil || len(rec.Recibidos) != len(ids) {
				t.Fatalf("the upload: %s", r.Body)
			}
			return rec.Recibidos[0]
		}

		// Nobody knows B's address.
		first, _ := f.emit(b, facturaTo(a.rut, 1))
		doc := upload(first)
		if ac := acuseOf(doc); ac.CorreoEstado != "sin_direccion" || ac.CorreoID != "" || ac.CorreoPara != "" {
			t.Errorf("the acknowledgment to a supplier with no address: %+v, want correo_estado sin_direccion and no mail", ac)
		}

		// The SII's list knows B's intercambio address.
		list := "RUT;RAZON SOCIAL;NUMERO RESOLUCION;FECHA RESOLUCION;MAIL INTERCAMBIO;URL\r\n" +
			b.rut + ";EMPRESA B DE PRUEBA;80;22-08-2014 ;" + supplier.Address + ";\r\n"
		if _, err := f.b.Mail.ImportContribuyentes(context.Background(), api.ContribuyentesImportParams{Archivo: strings.NewReader(list), Origen: "ce_empresas_dwnld_20261129.csv"}); err != nil {
			t.Fatal(err)
		}
		fake.SeedRCV(siitest.RCVSeed{RutEmisor: b.rut, RutReceptor: a.rut, Tipo: 33, Folio: 1, Received: time.Now().Add(-time.Hour), FmaPago: 2})
		r := f.do("POST", apiBase+"/recibidos/"+doc+"/aceptar", nil, a.writeHdr...)
		want(t, r, 200)
		var accepted api.Recibido
		r.JSON(t, &accepted)
		dec := accepted.Respuestas.Decision
		if dec == nil || dec.CorreoEstado != "en_cola" || dec.CorreoPara != supplier.Address || dec.CorreoID == "" {
			t.Fatalf("the acceptance of a document whose supplier is on the list: %s", r.Body)
		}
		if c := f.waitCorreo(a, dec.CorreoID); c.Para != supplier.Address || c.Tipo != "resultado" {
			t.Errorf("the acceptance's mail: %+v", c)
		}
		second, _ := f.emit(b, facturaTo(a.rut, 2))
		ac := acuseOf(upload(second))
		if ac.CorreoEstado != "en_cola" || ac.CorreoPara != supplier.Address || ac.CorreoID == "" {
			t.Fatalf("the acknowledgment after the import: %+v", ac)
		}
		f.waitCorreo(a, ac.CorreoID)
		msgs := ms.Messages(supplier)
		if len(msgs) != 2 || !bytes.Contains(msgs[0], []byte("ResultadoDTE")) && !bytes.Contains(msgs[1], []byte("ResultadoDTE")) {
			t.Errorf("the supplier's mailbox holds %d messages, want the acceptance and the acknowledgment", len(msgs))
		}

		r = f.do("GET", "/metrics", nil)
		want(t, r, 200)
		for _, line := range []string{`dtekit_mail_answers_total{resultado="sin_direccion"} 1`,
			`dtekit_mail_answers_total{resultado="contribuyentes"} 2`, `dtekit_mail_answers_total{resultado="remitente"} 0`,
			`dtekit_mail_answers_total{resultado="sin_remitente"} 0`} {
			if !bytes.Contains(r.Body, []byte(line+"\n")) {
				t.Errorf("/metrics lacks %s", line)
			}
		}
	})
}
