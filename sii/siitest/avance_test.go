package siitest_test

import (
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/libro"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/sii/siitest"
)

// setWorld is a fake, a client, and an emitter of a small set of tests
// (atención 9001): case 1 and 2 facturas, case 3 a credit note on case 1.
type setWorld struct {
	f      *siitest.Fake
	c      *dtetest.Creds
	client *sii.Client
	em     *dte.Emitter
}

func newSetWorld(t *testing.T) *setWorld {
	t.Helper()
	f, c := started(t, siitest.Options{})
	client, err := sii.New(sii.Config{Endpoints: f.Endpoints(), Certificate: c.Cert})
	if err != nil {
		t.Fatal(err)
	}
	em, err := c.Emitter(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &setWorld{f: f, c: c, client: client, em: em}
}

func (w *setWorld) emit(t *testing.T, req *dte.EmitirDTERequest) *dte.Emitted {
	t.Helper()
	d, err := w.em.Emit(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// caso is the SET reference of case k of atención 9001.
func caso(k string, fecha string) dte.Referencia {
	return dte.Referencia{TipoDocRef: dte.RefCodigo(dte.RefCodigoSET), FolioRefTexto: "9001-" + k, FechaRef: fecha, RazonRef: "CASO 9001-" + k}
}

// set emits the three cases; a nil modifier keeps a case as the set asks.
func (w *setWorld) set(t *testing.T) []*dte.Emitted {
	t.Helper()
	fecha := dte.Today(time.Now())
	cliente := dte.Receptor{Rut: "76086428-5", RazonSocial: "Comercial Andes Ltda.", Giro: "Comercio", Direccion: "Calle 1", Comuna: "Santiago"}
	line := []dte.LineaDetalle{{Nombre: "Cajón AFECTO", Cantidad: "10", Precio: "2990"}}
	f1 := w.emit(t, &dte.EmitirDTERequest{TipoDTE: 33, FechaEmision: fecha, Receptor: cliente, Detalle: line, Referencias: []dte.Referencia{caso("1", fecha)}})
	f2 := w.emit(t, &dte.EmitirDTERequest{TipoDTE: 33, FechaEmision: fecha, Receptor: cliente, Detalle: line, Referencias: []dte.Referencia{caso("2", fecha)}})
	nc := w.emit(t, &dte.EmitirDTERequest{TipoDTE: 61, FechaEmision: fecha, Receptor: cliente, Detalle: line, Referencias: []dte.Referencia{caso("3", fecha),
		{TipoDocRef: dte.RefTipo(33), FolioRef: f1.Folio, FechaRef: f1.FechaEmision, CodigoRef: intp(1), RazonRef: "ANULA FACTURA"}}})
	return []*dte.Emitted{f1, f2, nc}
}

// send packs docs into one envelope, uploads it (through DTEUpload when
// classic, else through the client's default route) and polls it to its
// final state; it returns the track id.
func (w *setWorld) send(t *testing.T, classic bool, docs ...*dte.Emitted) string {
	t.Helper()
	var xmls [][]byte
	for _, d := range docs {
		xmls = append(xmls, d.XML)
	}
	env, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: w.c.Emisor}, w.c.Cert, xmls...)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	up := w.client.Upload
	if classic {
		up = w.client.UploadClassic
	}
	res, err := up(ctx, w.c.Emisor.Rut, env)
	if err != nil || !res.Accepted() {
		t.Fatalf("upload: %v %+v", err, res)
	}
	for range 10 {
		var st *sii.EnvelopeStatus
		if res.Boleta {
			st, err = w.client.BoletaEnvelopeStatus(ctx, w.c.Emisor.Rut, res.TrackID)
		} else {
			st, err = w.client.EnvelopeStatus(ctx, w.c.Emisor.Rut, res.TrackID)
		}
		if err != nil {
			t.Fatal(err)
		}
		if st.Estado == "EPR" {
			return res.TrackID
		}
	}
	t.Fatalf("track %s did not reach EPR", res.TrackID)
	return ""
}

func wantMail(t *testing.T, name string, got siitest.SetMail, estado, reparo string) {
	t.Helper()
	if got.Estado != estado || (reparo != "" && !strings.Contains(strings.Join(got.Reparos, "\n"), reparo)) || (estado == "SOK" && len(got.Reparos) > 0) {
		t.Errorf("%s: %s %q, want %s with %q", name, got.Estado, got.Reparos, estado, reparo)
	}
}

// TestDeclararAvance: the fake's certification reviewer approves a set
// whose cases are all in a DTEUpload envelope, in order, each with its SET
// reference and the notes pointing at earlier cases; it answers SRH for a
// missing case, cases out of order, a note pointing outside the set, and a
// track id of another kind.
func TestDeclararAvance(t *testing.T) {
	w := newSetWorld(t)
	docs := w.set(t)
	track := w.send(t, true, docs...)
	rut := w.c.Emisor.Rut
	wantMail(t, "the set as asked", w.f.DeclararAvance(siitest.Avance{Company: rut, Set: "SET BASICO", Atencion: "9001", Casos: 3, TrackIDs: []string{track}}), "SOK", "")
	wantMail(t, "a fourth case not sent", w.f.DeclararAvance(siitest.Avance{Company: rut, Set: "SET BASICO", Atencion: "9001", Casos: 4, TrackIDs: []string{track}}), "SRH", "CASO 9001-4: El Documento no esta en el envio")
	wantMail(t, "another company", w.f.DeclararAvance(siitest.Avance{Company: "76086428-5", Set: "SET BASICO", Atencion: "9001", Casos: 3, TrackIDs: []string{track}}), "SRH", "no es de la empresa")

	// Out of order: case 2 before case 1 (a new world: new folios).
	w2 := newSetWorld(t)
	d2 := w2.set(t)
	track2 := w2.send(t, true, d2[1], d2[0], d2[2])
	wantMail(t, "out of order", w2.f.DeclararAvance(siitest.Avance{Company: rut, Set: "SET BASICO", Atencion: "9001", Casos: 3, TrackIDs: []string{track2}}), "SRH", "orden del set")

	// A note that points at a document outside the set.
	w3 := newSetWorld(t)
	fecha := dte.Today(time.Now())
	cliente := dte.Receptor{Rut: "76086428-5", RazonSocial: "Comercial Andes Ltda.", Giro: "Comercio", Direccion: "Calle 1", Comuna: "Santiago"}
	line := []dte.LineaDetalle{{Nombre: "Cajón AFECTO", Cantidad: "10", Precio: "2990"}}
	otra := w3.emit(t, &dte.EmitirDTERequest{TipoDTE: 33, FechaEmision: fecha, Receptor: cliente, Detalle: line})
	f1 := w3.emit(t, &dte.EmitirDTERequest{TipoDTE: 33, FechaEmision: fecha, Receptor: cliente, Detalle: line, Referencias: []dte.Referencia{caso("1", fecha)}})
	nc := w3.emit(t, &dte.EmitirDTERequest{TipoDTE: 61, FechaEmision: fecha, Receptor: cliente, Detalle: line, Referencias: []dte.Referencia{caso("2", fecha),
		{TipoDocRef: dte.RefTipo(33), FolioRef: otra.Folio, FechaRef: fecha, CodigoRef: intp(1), RazonRef: "ANULA FACTURA"}}})
	track3 := w3.send(t, true, otra, f1, nc)
	wantMail(t, "a note outside the set", w3.f.DeclararAvance(siitest.Avance{Company: rut, Set: "SET BASICO", Atencion: "9001", Casos: 2, TrackIDs: []string{track3}}), "SRH", "no es un caso anterior del set")
}

// TestDeclararAvanceBoletas: the boleta set in one EnvioBOLETA uploaded
// through DTEUpload is approved; the same boletas through the boleta REST
// API end EPR there, but the reviewer does not see them: SRH, "El
// Documento no está en el envío" (sii-wave3-notes §6.4).
func TestDeclararAvanceBoletas(t *testing.T) {
	for _, classic := range []bool{true, false} {
		w := newSetWorld(t)
		consumidor := dte.Receptor{Rut: "66666666-6", RazonSocial: "Consumidor final"}
		var bs []*dte.Emitted
		for _, k := range []string{"1", "2"} {
			bs = append(bs, w.emit(t, &dte.EmitirDTERequest{TipoDTE: 39, Receptor: consumidor,
				Detalle:     []dte.LineaDetalle{{Nombre: "Papel de regalo", Cantidad: "17", Precio: "120"}},
				Referencias: []dte.Referencia{{TipoDocRef: dte.RefCodigo(dte.RefCodigoSET), RazonRef: "CASO-" + k}}}))
		}
		var xmls [][]byte
		for _, d := range bs {
			xmls = append(xmls, d.XML)
		}
		env, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: w.c.Emisor}, w.c.Cert, xmls...)
		if err != nil {
			t.Fatal(err)
		}
		up := w.client.Upload
		if classic {
			up = w.client.UploadClassic
		}
		res, err := up(context.Background(), w.c.Emisor.Rut, env)
		if err != nil || !res.Accepted() || res.Boleta == classic {
			t.Fatalf("classic %v: upload %v %+v", classic, err, res)
		}
		if n := len(w.f.Requests(siitest.BoletaUpload)); (n == 0) != classic {
			t.Errorf("classic %v: %d boleta REST uploads", classic, n)
		}
		e, _ := w.f.Envelope(res.TrackID)
		if !e.Boleta || e.REST == classic || e.Final != "EPR" {
			t.Errorf("classic %v: the fake filed %+v", classic, e)
		}
		mail := w.f.DeclararAvance(siitest.Avance{Company: w.c.Emisor.Rut, Set: "SET DE BOLETA ELECTRONICA", Casos: 2, TrackIDs: []string{res.TrackID}})
		if classic {
			wantMail(t, "through DTEUpload", mail, "SOK", "")
		} else {
			wantMail(t, "through the REST API", mail, "SRH", "CASO-1: El Documento no esta en el envio")
		}
	}
}

// TestDeclararAvanceLibroVentas: a Libro de Ventas accepted LOK is refused
// at its declaration until the basic set is approved, then approved.
func TestDeclararAvanceLibroVentas(t *testing.T) {
	w := newSetWorld(t)
	docs := w.set(t)
	track := w.send(t, true, docs...)
	var xmls [][]byte
	for _, d := range docs {
		xmls = append(xmls, d.XML)
	}
	lv, err := libro.Ventas(libro.Options{Emisor: w.c.Emisor}, w.c.Cert, xmls...)
	if err != nil {
		t.Fatal(err)
	}
	res, err := w.client.UploadClassic(context.Background(), w.c.Emisor.Rut, lv)
	if err != nil || !res.Accepted() {
		t.Fatalf("libro upload: %v %+v", err, res)
	}
	for range 3 {
		if _, err := w.client.EnvelopeStatus(context.Background(), w.c.Emisor.Rut, res.TrackID); err != nil {
			t.Fatal(err)
		}
	}
	rut := w.c.Emisor.Rut
	ventas := siitest.Avance{Company: rut, Set: "SET LIBRO DE VENTAS", Atencion: "9002", Libro: "VENTA", TrackIDs: []string{res.TrackID}}
	wantMail(t, "before the basic set", w.f.DeclararAvance(ventas), "SRH", "No Tiene un SET Basico Aprobado")
	wantMail(t, "the basic set", w.f.DeclararAvance(siitest.Avance{Company: rut, Set: "SET BASICO", Atencion: "9001", Casos: 3, TrackIDs: []string{track}}), "SOK", "")
	wantMail(t, "after the basic set", w.f.DeclararAvance(ventas), "SOK", "")
	compras := ventas
	compras.Libro, compras.Set = "COMPRA", "SET LIBRO DE COMPRAS"
	wantMail(t, "a sales libro for the purchases set", w.f.DeclararAvance(compras), "SRH", "el set pide COMPRA")
	wantMail(t, "an envelope for a libro set", w.f.DeclararAvance(siitest.Avance{Company: rut, Set: "SET LIBRO DE VENTAS", Libro: "VENTA", TrackIDs: []string{track}}), "SRH", "no es un libro")
}

// TestConsumoFoliosNotOnREST: the boleta REST API has no route for the
// RCOF: it answers HTTP 400 SCH-00001 (sii-wave3-notes §4.3, §4.4) and
// files nothing, while DTEUpload takes the same file.
func TestConsumoFoliosNotOnREST(t *testing.T) {
	w := newSetWorld(t)
	b := w.emit(t, &dte.EmitirDTERequest{TipoDTE: 39, Receptor: dte.Receptor{Rut: "66666666-6", RazonSocial: "Consumidor final"},
		Detalle: []dte.LineaDetalle{{Nombre: "Papel de regalo", Cantidad: "17", Precio: "120"}}})
	rcof, err := libro.ConsumoFolios(libro.Options{Emisor: w.c.Emisor}, w.c.Cert, b.XML)
	if err != nil {
		t.Fatal(err)
	}
	token, err := w.client.BoletaToken(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, kv := range [][2]string{{"rutSender", "13567890"}, {"dvSender", "2"}, {"rutCompany", "76192083"}, {"dvCompany", "9"}} {
		mw.WriteField(kv[0], kv[1])
	}
	fw, _ := mw.CreateFormFile("archivo", "rcof.xml")
	fw.Write(rcof)
	mw.Close()
	req, _ := http.NewRequest(http.MethodPost, w.f.Endpoints().BoletaUpload+sii.PathBoletaEnvio, bytes.NewReader(body.Bytes()))
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Cookie", "TOKEN="+token)
	req.Header.Set("User-Agent", sii.DefaultUserAgent)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(string(msg), "SCH-00001") || len(w.f.Envelopes()) != 0 {
		t.Errorf("REST upload of an RCOF: HTTP %d %q, %d files filed; want 400 SCH-00001 and none", res.StatusCode, msg, len(w.f.Envelopes()))
	}
	if up, err := w.client.UploadClassic(context.Background(), w.c.Emisor.Rut, rcof); err != nil || !up.Accepted() {
		t.Errorf("DTEUpload of the RCOF: %v %+v", err, up)
	}
}

// TestEnvelopeResolucion: once the company's resolution in the
// environment is known, an envelope whose carátula names another ends RCT
// (CRT-3-19 at the SII); one that names it, EPR.
func TestEnvelopeResolucion(t *testing.T) {
	w := newSetWorld(t)
	docs := w.set(t)
	w.f.SetResolucion(w.c.Emisor.Rut, "2014-08-22", 80)
	env, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: w.c.Emisor}, w.c.Cert, docs[0].XML)
	if err != nil {
		t.Fatal(err)
	}
	res, err := w.client.UploadClassic(context.Background(), w.c.Emisor.Rut, env)
	if err != nil || !res.Accepted() {
		t.Fatalf("upload: %v %+v", err, res)
	}
	if e, _ := w.f.Envelope(res.TrackID); e.Final != "RCT" {
		t.Errorf("an envelope with resolution %s %d, the company's being 2014-08-22 80: %s, want RCT", w.c.Emisor.FechaResolucion, w.c.Emisor.NumeroResolucion, e.Final)
	}
	w.f.SetResolucion(w.c.Emisor.Rut, w.c.Emisor.FechaResolucion, w.c.Emisor.NumeroResolucion)
	if track := w.send(t, true, docs...); track == "" {
		t.Error("the envelope with the company's resolution did not end EPR")
	}
}
