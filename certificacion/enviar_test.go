package certificacion_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/certificacion"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/internal/oracle"
	"github.com/dtekit/dtekit/libro"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/sii/siitest"
)

// fakeSII starts the fake SII in process, its clock at the kit's signing
// instant, as strict as it gets: every upload checked against its
// official schema (xmllint) and the company's certification resolution
// (FchResol of the test emisor, NroResol 0) required on every carátula.
// It returns a client of it with the test certificate.
func fakeSII(t *testing.T) (*siitest.Fake, *sii.Client) {
	t.Helper()
	clock := func() time.Time { return testAt.Add(time.Minute) }
	fake := siitest.New(siitest.Options{Clock: clock, Schema: oracle.SchemaCheck(t)}).Start()
	t.Cleanup(fake.Close)
	fake.Register(dtetest.SignerRUT, dtetest.EmisorRUT)
	fake.SetResolucion(dtetest.EmisorRUT, creds(t).Emisor.FechaResolucion, 0)
	c, err := sii.New(sii.Config{Endpoints: fake.Endpoints(), Certificate: creds(t).Cert, Clock: clock,
		RetryPause: time.Millisecond, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return fake, c
}

// TestEnviarEstado is the acceptance of sending and tracking: the folder of
// a full set file (basic set, Libro de Ventas, Libro de Compras, guía set,
// Libro de Guías, boletas and their RCOF) uploaded to the fake SII in
// manifest order, polled until final: every envelope EPR with every
// document accepted (0 reparos, 0 rechazos), every libro LOK, the RCOF RPR
// (reparo 250, as the SII answers every RCOF since 2022-08), each track id
// and state recorded in manifest.json, and the portal's table printed.
func TestEnviarEstado(t *testing.T) {
	res := generateFull(t)
	dir := filepath.Join(t.TempDir(), "kit")
	if _, err := certificacion.WriteDir(dir, res, creds(t).Emisor); err != nil {
		t.Fatal(err)
	}
	fake, c := fakeSII(t)
	ctx := context.Background()
	m, err := certificacion.Enviar(ctx, c, dir, func() time.Time { return testAt })
	if err != nil {
		t.Fatal(err)
	}
	ups := m.Uploads()
	if len(ups) != 8 { // 4 envelopes (basic, guías, the factura of the invoiced guía, boletas) and 4 libros
		t.Fatalf("%d uploads, want 8", len(ups))
	}
	for _, u := range ups {
		if *u.Envio == nil || (*u.Envio).TrackID == "" || (*u.Envio).Fecha != "2026-03-02T10:30:00-03:00" {
			t.Fatalf("%s: no track id recorded: %+v", u.File, *u.Envio)
		}
	}
	// A second run sends nothing again.
	before := (*ups[0].Envio).TrackID
	if m, err = certificacion.Enviar(ctx, c, dir, nil); err != nil || (*m.Uploads()[0].Envio).TrackID != before {
		t.Fatalf("second Enviar: %v, track id %s, want %s kept", err, (*m.Uploads()[0].Envio).TrackID, before)
	}

	m, err = certificacion.Estado(ctx, c, dir, certificacion.Poll{Rounds: 10})
	if err != nil {
		t.Fatal(err)
	}
	again, err := certificacion.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, u := range again.Uploads() {
		e := *u.Envio
		if e == nil || !e.Final {
			t.Fatalf("%s: not final after polling: %+v", u.File, e)
		}
		switch {
		case strings.Contains(u.File, "ConsumoFolios"):
			if e.Estado != "RPR" {
				t.Errorf("%s: %s %s, want RPR (reparo 250)", u.File, e.Estado, e.Glosa)
			}
		case u.Libro:
			if e.Estado != "LOK" || !e.Aprobado() {
				t.Errorf("%s: %s %s, want LOK", u.File, e.Estado, e.Glosa)
			}
		default:
			if e.Estado != "EPR" || e.Informados == 0 || e.Aceptados != e.Informados || e.Reparos != 0 || e.Rechazados != 0 {
				t.Errorf("%s: %+v, want EPR with every document accepted", u.File, e)
			}
		}
		if e.Estado != (*m.Uploads()[i].Envio).Estado {
			t.Errorf("%s: the manifest on disk says %s, Estado returned %s", u.File, e.Estado, (*m.Uploads()[i].Envio).Estado)
		}
	}
	// The boleta set went through DTEUpload, never the REST API, and every
	// set and libro passes the fake's certification reviewer.
	if n := len(fake.Requests(siitest.BoletaUpload)); n != 0 {
		t.Errorf("%d uploads through the boleta REST API; the boleta set goes through DTEUpload", n)
	}
	for _, u := range again.Uploads() {
		if strings.Contains(u.File, "EnvioBOLETA") && (*u.Envio).Boleta {
			t.Errorf("%s: recorded as a REST upload", u.File)
		}
	}
	declareAll(t, fake, again)
	tabla := certificacion.Tabla(again)
	for _, want := range []string{"| SET BASICO | 414175 | `envios/01-EnvioDTE-BASICO-414175.xml` | ", "EPR (8 aceptados, 0 reparos, 0 rechazos)",
		"| SET LIBRO DE VENTAS | 414176 | `libros/01-LibroVentas-414176.xml` | ", "| 2026-03-02 | LOK |"} {
		if !strings.Contains(tabla, want) {
			t.Errorf("the table lacks %q:\n%s", want, tabla)
		}
	}
	if strings.Contains(tabla, "⚠") {
		t.Errorf("the table warns:\n%s", tabla)
	}
	t.Logf("\n%s", tabla)
}

// TestEnviarEverySet sends the folder of every SII set file alone (the
// exempt factura, exports, factura de compra among them) to a fake SII:
// every envelope ends EPR with every document accepted, every libro LOK.
func TestEnviarEverySet(t *testing.T) {
	if testing.Short() {
		t.Skip("sends every set file's folder (CI runs it)")
	}
	ctx := context.Background()
	n := 0
	for i, name := range setFiles {
		fake, c := fakeSII(t) // a fresh SII per file: every file's folios start at 1
		dir := filepath.Join(t.TempDir(), name)
		if _, err := certificacion.WriteDir(dir, generate(t, name), creds(t).Emisor); err != nil {
			t.Fatal(err)
		}
		if _, err := certificacion.Enviar(ctx, c, dir, nil); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		m, err := certificacion.Estado(ctx, c, dir, certificacion.Poll{Rounds: 10})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		declareAll(t, fake, m)
		for _, u := range m.Uploads() {
			n++
			e := *u.Envio
			if !e.Final || (!e.Aprobado() && !(strings.Contains(u.File, "ConsumoFolios") && e.Estado == "RPR")) {
				t.Errorf("%d %s %s: %+v", i, name, u.File, e)
			}
		}
	}
	// 7 envelopes (basic, exempt, guías, compra, 2 exports, boletas),
	// Compras, RCOF; and 007-boletas.csv's boletas, notes and RCOF.
	if n != 12 {
		t.Errorf("%d uploads, want 12", n)
	}
}

// declareAll declares to the fake's certification reviewer every set of
// the manifest with its envelope's track id, and every libro but the RCOF
// with its own, in manifest order, and wants SOK for each.
func declareAll(t *testing.T, fake *siitest.Fake, m *certificacion.Manifest) {
	t.Helper()
	for _, s := range m.Sets {
		if s.Envelope == "" || s.Envio == nil || s.Kind == string(certificacion.SetFacturaGuias) || s.Kind == string(certificacion.SetBoletaNotas) {
			// The factura of the invoiced guía is not a set, nor are the
			// notes on boletas of 007-boletas.csv: not declared.
			continue
		}
		a := siitest.Avance{Company: m.RutEmisor, Set: s.Name, Atencion: s.NumeroAtencion, Casos: len(s.Cases), TrackIDs: []string{s.Envio.TrackID}}
		if mail := fake.DeclararAvance(a); mail.Estado != "SOK" {
			t.Errorf("%s %s: %s %q", s.Name, s.NumeroAtencion, mail.Estado, mail.Reparos)
		}
	}
	for _, l := range m.Libros {
		op := map[string]string{"LIBRO DE VENTAS": "VENTA", "LIBRO DE COMPRAS": "COMPRA", "LIBRO DE COMPRAS PARA EXENTOS": "COMPRA", "LIBRO DE GUIAS": "GUIA"}[l.Kind]
		if op == "" || l.Envio == nil {
			continue
		}
		a := siitest.Avance{Company: m.RutEmisor, Set: l.Set, Atencion: l.NumeroAtencion, Libro: op, TrackIDs: []string{l.Envio.TrackID}}
		if mail := fake.DeclararAvance(a); mail.Estado != "SOK" {
			t.Errorf("%s %s: %s %q", l.Set, l.NumeroAtencion, mail.Estado, mail.Reparos)
		}
	}
}

// TestRCOFRounding: the fake SII, like the RVD's rule, wants each type's
// MntIva to be the day's neto times 19 %: the kit's RCOF of the boleta set
// (IVA 8328 on a neto of 43831) ends RPR, while one that adds the boletas'
// own IVA (8329, a peso off) is refused naming MntIva.
func TestRCOFRounding(t *testing.T) {
	res := generate(t, "boleta-SetPruebaBE-reconstructed.txt")
	dir := filepath.Join(t.TempDir(), "kit")
	if _, err := certificacion.WriteDir(dir, res, creds(t).Emisor); err != nil {
		t.Fatal(err)
	}
	fake, c := fakeSII(t)
	ctx := context.Background()
	if _, err := certificacion.Enviar(ctx, c, dir, func() time.Time { return testAt }); err != nil {
		t.Fatal(err)
	}
	m, err := certificacion.Estado(ctx, c, dir, certificacion.Poll{Rounds: 10})
	if err != nil {
		t.Fatal(err)
	}
	if e := m.Libros[0].Envio; e == nil || e.Estado != "RPR" {
		t.Fatalf("the kit's RCOF: %+v, want RPR", e)
	}
	// libro.ConsumoFolios adds the boletas' own amounts.
	summed, err := libro.ConsumoFolios(libro.Options{Emisor: creds(t).Emisor, SecEnvio: 2, At: testAt}, creds(t).Cert, res.Sets[0].Envelope)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(summed, []byte("<MntIva>8329</MntIva>")) {
		t.Fatalf("the boletas' own IVA do not add up to 8329:\n%s", summed)
	}
	up, err := c.UploadClassic(ctx, m.RutEmisor, summed)
	if err != nil || !up.Accepted() {
		t.Fatalf("upload: %v %+v", err, up)
	}
	var st *sii.EnvelopeStatus
	for range 10 {
		if st, err = c.EnvelopeStatus(ctx, m.RutEmisor, up.TrackID); err != nil {
			t.Fatal(err)
		}
	}
	e, _ := fake.Envelope(up.TrackID)
	if st.Estado != "RCH" || e.Libro == nil || !strings.Contains(fmt.Sprint(e.Libro.Problems), "MntIva 8329") {
		t.Errorf("an RCOF with the summed IVA: %s, %+v; want RCH naming MntIva", st.Estado, e.Libro)
	}
}
