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
	"github.com/dtekit/dtekit/store"
)

// The SII's list as it downloads (ISO-8859-1 bytes, CRLF): one receptor
// with an intercambio address, one without.
const siiListSample = "RUT;RAZON SOCIAL;NUMERO RESOLUCION;FECHA RESOLUCION;MAIL INTERCAMBIO;URL\r\n" +
	"76543210-3;RECEPTORA \xd1UBLE SPA;80;22-08-2014 ;intercambio@receptora.cl;\r\n" +
	"11111111-1;SIN CASILLA LTDA;42;01-01-2020 ;;\r\n"

// TestDocumentMailAddresses, on both backends, against real SMTP and IMAP
// servers: a company that mails its documents at signing emits to a
// receptor with no address anywhere, and the document shows its mail
// sin_direccion (GET /dte/{id}), with a count in /metrics; once the SII's
// list of contribuyentes is imported, a document to a receptor on it is
// mailed to the list's address and arrives there. Importing the same file
// again gives the same list.
func TestDocumentMailAddresses(t *testing.T) {
	backends(t, func(t *testing.T, open func(t *testing.T) store.Store) {
		t.Parallel()
		sender := emailtest.User{Address: "dte@empresa-a.cl", Username: "a", Password: "clave-a"}
		receptor := emailtest.User{Address: "intercambio@receptora.cl", Username: "r", Password: "clave-r"}
		ms := emailtest.Start(t, sender, receptor)
		f := submitting(t, open(t), billing.Config{Mail: billing.MailConfig{TLS: &tls.Config{RootCAs: ms.RootCAs}, AllowLoopback: true, AnyPort: true,
			Every: time.Hour, Backoff: []time.Duration{time.Hour}}}, newFake(t))
		a := f.A
		_, port, _ := strings.Cut(ms.SMTPAddr, ":")
		p, _ := strconv.Atoi(port)
		want(t, f.do("PUT", apiBase+"/empresa/correo", map[string]any{"direccion": sender.Address, "enviar_dte": "firmado",
			"smtp": map[string]any{"host": "127.0.0.1", "port": p, "seguridad": "starttls", "usuario": sender.Username, "password": sender.Password}},
			a.adminHdr...), 200)

		// mailOf waits until the document's mail reaches a final state.
		mailOf := func(id string) api.Correo {
			t.Helper()
			deadline := time.Now().Add(30 * time.Second)
			for {
				r := f.do("GET", apiBase+"/dte/"+id, nil, a.readHdr...)
				want(t, r, 200)
				var d api.DTE
				r.JSON(t, &d)
				if d.Correo != nil && d.Correo.Estado != "pendiente" {
					return *d.Correo
				}
				if time.Now().After(deadline) {
					t.Fatalf("document %s: no mail settled: %s", id, r.Body)
				}
				time.Sleep(50 * time.Millisecond)
			}
		}

		// No cliente, no list: nothing is sent, and the document says so.
		none, _ := f.emit(a, facturaTo("11111111-1", 1))
		if c := mailOf(none); c.Estado != "sin_direccion" || c.Para != "" || c.UltimoError == nil ||
			!strings.Contains(*c.UltimoError, "no address") || c.DTEID == nil || *c.DTEID != none {
			t.Errorf("the mail of a document to a receptor with no address: %+v", c)
		}

		// The SII's list gives the receptor's address.
		res, err := f.b.Mail.ImportContribuyentes(context.Background(), api.ContribuyentesImportParams{Archivo: strings.NewReader(siiListSample), Origen: "ce_empresas_dwnld_20261129.csv"})
		if err != nil || res.Contribuyentes != 2 || res.ConCorreo != 1 || res.TotalAdvertencias != 0 {
			t.Fatalf("import: %+v, %v", res, err)
		}
		listed, _ := f.emit(a, facturaTo("76543210-3", 1))
		if c := mailOf(listed); c.Estado != "enviado" || c.Para != receptor.Address {
			t.Errorf("the mail of a document to a receptor on the list: %+v", c)
		}
		msgs := ms.Messages(receptor)
		if len(msgs) != 1 || !bytes.Contains(msgs[0], []byte("DTE_tipo_33_folio")) || !bytes.Contains(msgs[0], []byte("To: <"+receptor.Address+">")) {
			t.Errorf("the receptor's mailbox holds %d messages: %.600s", len(msgs), msgs[0])
		}
		// A receptor on the list without an address is still sin_direccion.
		blank, _ := f.emit(a, facturaTo("11111111-1", 1))
		if c := mailOf(blank); c.Estado != "sin_direccion" {
			t.Errorf("a receptor on the list without an address: %+v", c)
		}

		r := f.do("GET", "/metrics", nil)
		want(t, r, 200)
		for _, line := range []string{`dtekit_mail_documents_total{resultado="sin_direccion"} 2`,
			`dtekit_mail_documents_total{resultado="contribuyentes"} 1`, `dtekit_mail_documents_total{resultado="cliente"} 0`,
			`dtekit_mail_documents_total{resultado="sin_remitente"} 0`} {
			if !bytes.Contains(r.Body, []byte(line+"\n")) {
				t.Errorf("/metrics lacks %s", line)
			}
		}

		// The same file again: the same list, the old one purged.
		again, err := f.b.Mail.ImportContribuyentes(context.Background(), api.ContribuyentesImportParams{Archivo: strings.NewReader(siiListSample), Origen: "again.csv"})
		if err != nil || again.Contribuyentes != 2 || again.ConCorreo != 1 || again.Eliminados != 2 || again.Lista == res.Lista {
			t.Errorf("reimport: %+v, %v", again, err)
		}
		k, err := f.st.GetContribuyente(context.Background(), "76543210-3")
		if err != nil || k.Correo != receptor.Address || k.RazonSocial != "RECEPTORA ÑUBLE SPA" || k.FechaResolucion != "2014-08-22" {
			t.Errorf("after the reimport: %+v, %v", k, err)
		}
	})
}
