package siitest_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/internal/oracle"
	"github.com/dtekit/dtekit/libro"
	"github.com/dtekit/dtekit/signer"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/sii/siitest"
)

// libroWorld is a started fake, a client, and the company's documents
// already accepted by the fake.
type libroWorld struct {
	f       *siitest.Fake
	c       *dtetest.Creds
	client  *sii.Client
	em      *dte.Emitter
	docs    []*dte.Emitted // 33, 33, 61 referring to the first
	guias   []*dte.Emitted // 52 traslado interno, 52 venta
	boletas []*dte.Emitted // two 39
}

func newLibroWorld(t *testing.T) *libroWorld {
	t.Helper()
	f, c := started(t, siitest.Options{Schema: oracle.SchemaCheck(t)})
	client, err := sii.New(sii.Config{Endpoints: f.Endpoints(), Certificate: c.Cert})
	if err != nil {
		t.Fatal(err)
	}
	em, err := c.Emitter(nil)
	if err != nil {
		t.Fatal(err)
	}
	w := &libroWorld{f: f, c: c, client: client, em: em}
	emit := func(req *dte.EmitirDTERequest) *dte.Emitted {
		t.Helper()
		d, err := em.Emit(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	cliente := dte.Receptor{Rut: "76086428-5", RazonSocial: "Comercial Andes Ltda.", Giro: "Comercio", Direccion: "Calle 1", Comuna: "Santiago"}
	line := func(q, p string) []dte.LineaDetalle {
		return []dte.LineaDetalle{{Nombre: "Resma carta", Cantidad: dte.Decimal(q), Precio: dte.Decimal(p)}}
	}
	f1 := emit(&dte.EmitirDTERequest{TipoDTE: 33, Receptor: cliente, Detalle: line("10", "2990")})
	f2 := emit(&dte.EmitirDTERequest{TipoDTE: 33, Receptor: cliente, Detalle: line("3", "1500")})
	nc := emit(&dte.EmitirDTERequest{TipoDTE: 61, Receptor: cliente, Detalle: line("2", "2990"),
		Referencias: []dte.Referencia{{TipoDocRef: dte.RefTipo(33), FolioRef: f1.Folio, FechaRef: f1.FechaEmision, CodigoRef: intp(3), RazonRef: "DEVOLUCION"}}})
	w.docs = []*dte.Emitted{f1, f2, nc}
	self := dte.Receptor{Rut: c.Emisor.Rut, RazonSocial: c.Emisor.RazonSocial, Giro: "Comercio", Direccion: c.Emisor.Direccion, Comuna: c.Emisor.Comuna}
	w.guias = []*dte.Emitted{
		emit(&dte.EmitirDTERequest{TipoDTE: 52, Receptor: self, IndTraslado: intp(5), Detalle: line("66", "0")}),
		emit(&dte.EmitirDTERequest{TipoDTE: 52, Receptor: cliente, IndTraslado: intp(1), TipoDespacho: intp(2), Detalle: line("4", "2990")}),
	}
	consumidor := dte.Receptor{Rut: "66666666-6", RazonSocial: "Consumidor final"}
	w.boletas = []*dte.Emitted{
		emit(&dte.EmitirDTERequest{TipoDTE: 39, Receptor: consumidor, Detalle: line("1", "19900")}),
		emit(&dte.EmitirDTERequest{TipoDTE: 39, Receptor: consumidor, Detalle: line("17", "120")}),
	}
	var xmls [][]byte
	for _, d := range append(append([]*dte.Emitted{}, w.docs...), w.guias...) {
		xmls = append(xmls, d.XML)
	}
	env, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: c.Emisor}, c.Cert, xmls...)
	if err != nil {
		t.Fatal(err)
	}
	if st := w.upload(t, env); st.Estado != "EPR" {
		t.Fatalf("the documents' envelope ended %s", st.Estado)
	}
	return w
}

func intp(n int) *int { return &n }

// emit emits one more document with the world's emitter.
func (w *libroWorld) emit(t *testing.T, req *dte.EmitirDTERequest) *dte.Emitted {
	t.Helper()
	d, err := w.em.Emit(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// upload sends a file through the client and polls getEstUp until a final
// state, returning it; for a libro it also checks the LSO step.
func (w *libroWorld) upload(t *testing.T, data []byte) *sii.EnvelopeStatus {
	t.Helper()
	ctx := context.Background()
	res, err := w.client.Upload(ctx, w.c.Emisor.Rut, data)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Accepted() {
		t.Fatalf("upload STATUS %d %v", res.Status, res.Errors)
	}
	root, _ := dte.RootName(data)
	for i := 0; i < 10; i++ {
		st, err := w.client.EnvelopeStatus(ctx, w.c.Emisor.Rut, res.TrackID)
		if err != nil {
			t.Fatal(err)
		}
		switch st.Estado {
		case "SOK", "CRT", "FOK", "PDR":
			continue
		case "LSO":
			if i != 0 || (root != libro.RootCompraVenta && root != libro.RootGuia) {
				t.Errorf("LSO at query %d of a %s", i+1, root)
			}
			continue
		}
		if (root == libro.RootCompraVenta || root == libro.RootGuia) && i != 1 {
			t.Errorf("%s: final state %s at query %d, want LSO first", root, st.Estado, i+1)
		}
		return st
	}
	t.Fatal("no final state after 10 queries")
	return nil
}

// review returns the fake's review of the libro with trackID's final state.
func (w *libroWorld) review(t *testing.T, st *sii.EnvelopeStatus) *siitest.LibroReview {
	t.Helper()
	e, ok := w.f.Envelope(st.TrackID)
	if !ok || e.Libro == nil {
		t.Fatalf("track %s is not a libro", st.TrackID)
	}
	return e.Libro
}

func (w *libroWorld) opts() libro.Options { return libro.Options{Emisor: w.c.Emisor} }

// signed changes a libro built by a libro.New… function and signs it.
func signed[L interface {
	Sign(*signer.Certificate) ([]byte, error)
}](t *testing.T, cert *signer.Certificate, l L, err error, change func(L)) []byte {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	change(l)
	out, err := l.Sign(cert)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// expect checks a libro's final state and that some problem line
// mentions each of want.
func (w *libroWorld) expect(t *testing.T, what string, data []byte, estado string, want ...string) {
	t.Helper()
	st := w.upload(t, data)
	rev := w.review(t, st)
	if st.Estado != estado {
		t.Errorf("%s: %s (%s) %q, want %s", what, st.Estado, st.Glosa, rev.Problems, estado)
		return
	}
	all := strings.Join(rev.Problems, "\n")
	for _, s := range want {
		if !strings.Contains(all, s) {
			t.Errorf("%s: %s, but no problem mentions %q: %q", what, estado, s, rev.Problems)
		}
	}
	if len(want) == 0 && len(rev.Problems) > 0 && estado == "LOK" {
		t.Errorf("%s: LOK with problems %q", what, rev.Problems)
	}
}

// A correct Libro de Ventas of the documents the fake accepted is LOK,
// after LSO; the same libro with one total off by a peso is LRH, naming the
// total; a row whose amounts differ from the document the fake received is
// LRH too, and so is a row of a document it never received.
func TestLibroVentasReview(t *testing.T) {
	w := newLibroWorld(t)
	var xmls [][]byte
	for _, d := range w.docs {
		xmls = append(xmls, d.XML)
	}
	good, err := libro.Ventas(w.opts(), w.c.Cert, xmls...)
	if err != nil {
		t.Fatal(err)
	}
	w.expect(t, "a correct libro", good, "LOK")
	if st := w.upload(t, good); st.Glosa != "Tipo de Envio de Libro No Corresponde" || st.Estado != "LNC" {
		t.Errorf("the same libro again: %s %q, want LNC (libro cerrado)", st.Estado, st.Glosa)
	}
	fresh := func(folio int64, change func(*libro.Libro)) []byte {
		o := w.opts()
		o.FolioNotificacion = folio
		l, err := libro.NewVentas(o, xmls...)
		return signed(t, w.c.Cert, l, err, change)
	}
	w.expect(t, "a new FolioNotificacion", fresh(10, func(*libro.Libro) {}), "LOK")
	w.expect(t, "a summary total off by one", fresh(11, func(l *libro.Libro) { l.ResumenPeriodo[0].TotMntNeto++ }),
		"LRH", "TpoDoc 33: TotMntNeto")
	w.expect(t, "a count off by one", fresh(12, func(l *libro.Libro) { l.ResumenPeriodo[1].TotDoc = 2 }),
		"LRH", "TpoDoc 61: TotDoc 2, la suma del Detalle es 1")
	w.expect(t, "a row and its summary both wrong", fresh(13, func(l *libro.Libro) {
		l.Detalle[0].MntNeto += 10
		l.Detalle[0].MntTotal += 10
		l.ResumenPeriodo[0].TotMntNeto += 10
		l.ResumenPeriodo[0].TotMntTotal += 10
	}), "LRH", "MntNeto x TasaImp", "MntNeto "+fmt.Sprint(29900+10)+", el documento dice 29900")
	w.expect(t, "a folio the SII never received", fresh(14, func(l *libro.Libro) {
		l.Detalle[1].NroDoc = 999
	}), "LRH", "tipo 33 folio 999: el SII no ha recibido")
	w.expect(t, "a wrong MntTotal formula", fresh(15, func(l *libro.Libro) {
		l.Detalle[2].MntTotal--
		l.ResumenPeriodo[1].TotMntTotal--
	}), "LRH", "Detalle tipo 61 folio 1: MntTotal")
}

// The carátula, the signature, the schema and the envío's parts are each
// refused with their own code.
func TestLibroRefusals(t *testing.T) {
	w := newLibroWorld(t)
	xml := w.docs[0].XML
	sign := func(folio int64, change func(*libro.Libro)) []byte {
		o := w.opts()
		o.FolioNotificacion = folio
		l, err := libro.NewVentas(o, xml)
		return signed(t, w.c.Cert, l, err, change)
	}
	w.expect(t, "another company's libro", sign(20, func(l *libro.Libro) { l.Caratula.RutEmisorLibro = "76086428-5" }),
		"LRC", "RutEmisorLibro 76086428-5")
	w.expect(t, "another sender", sign(21, func(l *libro.Libro) { l.Caratula.RutEnvia = "11111111-1" }), "LRC", "RutEnvia")
	w.expect(t, "ESPECIAL without FolioNotificacion", sign(22, func(l *libro.Libro) { l.Caratula.FolioNotificacion = 0 }),
		"LRC", "FolioNotificacion")
	w.f.SetResolucion(w.c.Emisor.Rut, "2024-05-10", 0)
	w.expect(t, "the company's resolution", sign(23, func(*libro.Libro) {}), "LOK")
	w.f.SetResolucion(w.c.Emisor.Rut, "2024-05-11", 0)
	w.expect(t, "another resolution", sign(24, func(*libro.Libro) {}), "LRC", "FchResol 2024-05-10 NroResol 0")
	w.f.SetResolucion(w.c.Emisor.Rut, "2024-05-10", 0)
	w.expect(t, "TOTAL without ResumenPeriodo", sign(25, func(l *libro.Libro) { l.ResumenPeriodo = nil }),
		"LNC", "TOTAL requiere ResumenPeriodo")
	w.expect(t, "FINAL with Detalle", sign(26, func(l *libro.Libro) { l.Caratula.TipoEnvio = "FINAL" }),
		"LNC", "FINAL lleva solo ResumenPeriodo")
	w.expect(t, "AJUSTE of nothing", sign(27, func(l *libro.Libro) { l.Caratula.TipoEnvio = "AJUSTE" }),
		"LNC", "no hay un libro aceptado")
	w.expect(t, "AJUSTE of a closed libro", sign(23, func(l *libro.Libro) { l.Caratula.TipoEnvio = "AJUSTE" }), "LOK")
	// The signature no longer covers what was changed after signing.
	good := sign(28, func(*libro.Libro) {})
	tampered := bytes.Replace(good, []byte("<TotMntTotal>"), []byte("<TotMntTotal>1"), 1)
	w.expect(t, "a libro changed after signing", tampered, "LRF", "firma")
	// Without xsi:schemaLocation the SII cannot pick a schema: STATUS 7.
	noSchema := bytes.Replace(good, []byte(` xsi:schemaLocation="http://www.sii.cl/SiiDte LibroCV_v10.xsd"`), nil, 1)
	res, err := w.client.Upload(context.Background(), w.c.Emisor.Rut, noSchema)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != 7 || len(res.Errors) == 0 || !strings.Contains(res.Errors[0], "SCH-00001") {
		t.Errorf("a libro without schemaLocation: STATUS %d %v, want 7 SCH-00001", res.Status, res.Errors)
	}
	// A schema violation (a TipoLibro outside the enumeration) is STATUS 7
	// with xmllint's lines.
	res, err = w.client.Upload(context.Background(), w.c.Emisor.Rut, sign(29, func(l *libro.Libro) { l.Caratula.TipoLibro = "ANUAL" }))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != 7 || !strings.Contains(strings.Join(res.Errors, " "), "TipoLibro") {
		t.Errorf("a libro outside its schema: STATUS %d %v, want 7 naming TipoLibro", res.Status, res.Errors)
	}
}

// The Libro de Compras (whose rows are the company's purchases, not
// documents the fake holds) is checked for its cuadratura: LOK as built,
// LRH when the credit of IVA de uso común or an IVA split is wrong.
func TestLibroComprasReview(t *testing.T) {
	w := newLibroWorld(t)
	rows := []libro.Compra{
		{Tipo: 30, Folio: 781, Fecha: "2026-01-10", RutEmisor: "78000001-5", MntNeto: 30171, IVAUsoComun: true},
		{Tipo: 33, Folio: 67, Fecha: "2026-01-10", RutEmisor: "78000001-5", MntNeto: 12135, IVANoRec: 4},
		{Tipo: 46, Folio: 9, Fecha: "2026-01-10", RutEmisor: "78000001-5", MntNeto: 10632, RetencionTotal: true},
	}
	build := func(folio int64, change func(*libro.Libro)) []byte {
		l, err := libro.NewCompras(libro.Options{Emisor: w.c.Emisor, FctProp: "0.60", FolioNotificacion: folio}, rows)
		return signed(t, w.c.Cert, l, err, change)
	}
	w.expect(t, "the set's purchases", build(2, func(*libro.Libro) {}), "LOK")
	// 0.60 × 5732 = 3439.2 → 3439; 3440 is wrong.
	w.expect(t, "a wrong credit", build(3, func(l *libro.Libro) { l.ResumenPeriodo[0].TotCredIVAUsoComun = 3440 }),
		"LRH", "TotCredIVAUsoComun 3440, FctProp 0.6 x TotIVAUsoComun 5732 da 3439")
	// Moving the IVA de uso común to MntIVA keeps the sum but not the
	// summary.
	w.expect(t, "IVA moved", build(4, func(l *libro.Libro) { l.Detalle[0].MntIVA, l.Detalle[0].IVAUsoComun = 5732, 0 }),
		"LRH", "TpoDoc 30: TotMntIVA 0, la suma del Detalle es 5732")
	// The retention subtracted twice: MntTotal = neto − IVA.
	w.expect(t, "retention twice", build(5, func(l *libro.Libro) {
		l.Detalle[2].MntTotal -= 2020
		l.ResumenPeriodo[2].TotMntTotal -= 2020
	}), "LRH", "Detalle tipo 46 folio 9: MntTotal 8612, sus montos suman 10632")
}

// The Libro de Guías: LOK as built; LRH when a count or a transfer total
// disagrees with the rows, or a row with the guía the fake received.
func TestLibroGuiasReview(t *testing.T) {
	w := newLibroWorld(t)
	g := w.guias
	build := func(folio int64, change func(*libro.LibroGuia)) []byte {
		o := w.opts()
		o.FolioNotificacion = folio
		o.Facturas = map[int64]libro.DocRef{g[1].Folio: {Tipo: 33, Folio: w.docs[0].Folio, Fecha: w.docs[0].FechaEmision}}
		l, err := libro.NewGuias(o, g[0].XML, g[1].XML)
		return signed(t, w.c.Cert, l, err, change)
	}
	w.expect(t, "the guías", build(3, func(*libro.LibroGuia) {}), "LOK")
	w.expect(t, "a sale counted twice", build(4, func(l *libro.LibroGuia) { l.ResumenPeriodo.TotGuiaVenta = 2 }),
		"LRH", "TotGuiaVenta 2, el Detalle da 1")
	w.expect(t, "a transfer kind missing", build(5, func(l *libro.LibroGuia) { l.ResumenPeriodo.TotTraslado = nil }),
		"LRH", "TotTraslado 5 falta")
	w.expect(t, "a row off the guía", build(6, func(l *libro.LibroGuia) {
		l.Detalle[1].TpoOper = 2
		l.ResumenPeriodo.TotGuiaVenta, l.ResumenPeriodo.TotMntGuiaVta = 0, 0
		l.ResumenPeriodo.TotTraslado = append(l.ResumenPeriodo.TotTraslado, libro.TotTraslado{TpoTraslado: 2, CantGuia: 1, MntGuia: l.Detalle[1].MntTotal})
	}), "LRH", "TpoOper 2, la guia tiene IndTraslado 1")
	w.expect(t, "an annulled guía never sent", build(7, func(l *libro.LibroGuia) {
		l.Detalle = append(l.Detalle, libro.DetalleGuia{Folio: 500, Anulado: libro.AnuladoDespues})
		l.ResumenPeriodo.TotGuiaAnulada = 1
	}), "LRH", "folio 500: guia anulada que el SII no ha recibido")
}

// The RCOF of boletas is answered RPR with reparo 250 for a day since
// 2022-08-01 (as the SII does, in certification too), EPR for an earlier
// day; a SecEnvio not above the last accepted, a summary that does not
// add up, or one that differs from the boletas the SII received that day,
// is RCH; another company's carátula RCT.
func TestConsumoFoliosReview(t *testing.T) {
	w := newLibroWorld(t)
	b := w.boletas
	ctx := context.Background()
	// The boletas reach the SII first, in one EnvioBOLETA through DTEUpload.
	env, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: w.c.Emisor}, w.c.Cert, b[0].XML, b[1].XML)
	if err != nil {
		t.Fatal(err)
	}
	up, err := w.client.UploadClassic(ctx, w.c.Emisor.Rut, env)
	if err != nil || !up.Accepted() {
		t.Fatalf("the boletas' envelope: %v %+v", err, up)
	}
	for range 5 {
		if _, err := w.client.EnvelopeStatus(ctx, w.c.Emisor.Rut, up.TrackID); err != nil {
			t.Fatal(err)
		}
	}
	build := func(sec int, change func(*libro.Consumo), boletas ...*dte.Emitted) []byte {
		if boletas == nil {
			boletas = b
		}
		var xmls [][]byte
		for _, d := range boletas {
			xmls = append(xmls, d.XML)
		}
		c, err := libro.NewConsumo(libro.Options{Emisor: w.c.Emisor, SecEnvio: sec}, xmls...)
		return signed(t, w.c.Cert, c, err, change)
	}
	expect := func(what string, data []byte, estado string, want ...string) {
		t.Helper()
		w.expect(t, what, data, estado, want...)
	}
	expect("today's RCOF", build(1, func(*libro.Consumo) {}), "RPR", "250")
	expect("the same SecEnvio again", build(1, func(*libro.Consumo) {}), "RCH", "La secuencia enviada (1)")
	expect("the next SecEnvio", build(2, func(*libro.Consumo) {}), "RPR", "250")
	// Before 2021 boletas were not sent to the SII: nothing to compare.
	old := func(c *libro.Consumo) { c.Caratula.FchInicio, c.Caratula.FchFinal = "2020-05-03", "2020-05-03" }
	expect("a day before 2022-08-01", build(1, old), "EPR")
	// A summary that adds up but is not what the SII received.
	expect("one boleta left out", build(8, func(*libro.Consumo) {}, b[0]), "RCH", "FoliosEmitidos 1, las boletas que el SII recibio")
	expect("amounts that are not the boletas'", build(9, func(c *libro.Consumo) {
		r := &c.Resumen[0]
		r.MntNeto, r.MntIva, r.MntTotal = r.MntNeto+100, r.MntIva+19, r.MntTotal+119
	}), "RCH", "MntNeto", "MntTotal")
	third := w.emit(t, &dte.EmitirDTERequest{TipoDTE: 39, Receptor: dte.Receptor{Rut: "66666666-6", RazonSocial: "Consumidor final"},
		Detalle: []dte.LineaDetalle{{Nombre: "Resma carta", Cantidad: "2", Precio: "550"}}})
	expect("a boleta the SII never received", build(10, func(*libro.Consumo) {}, b[0], b[1], third), "RCH", "FoliosEmitidos 3")
	expect("a total that does not add up", build(3, func(c *libro.Consumo) { c.Resumen[0].MntTotal++ }), "RCH", "MntTotal")
	expect("counts that do not add up", build(4, func(c *libro.Consumo) { c.Resumen[0].FoliosUtilizados = 3 }), "RCH", "FoliosUtilizados 3")
	expect("a range that does not match", build(5, func(c *libro.Consumo) { c.Resumen[0].RangoUtilizados[0].Final += 5 }),
		"RCH", "RangoUtilizados cubre 7 folios")
	expect("overlapping ranges", build(6, func(c *libro.Consumo) {
		r := &c.Resumen[0]
		r.FoliosAnulados, r.FoliosUtilizados = 1, 3
		r.RangoAnulados = []libro.Rango{{Inicial: r.RangoUtilizados[0].Inicial, Final: r.RangoUtilizados[0].Inicial}}
	}), "RCH", "se traslapan")
	expect("another company", build(7, func(c *libro.Consumo) { c.Caratula.RutEmisor = "76086428-5" }), "RCT", "RutEmisorLibro 76086428-5")
}
