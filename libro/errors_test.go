package libro_test

import (
	"strings"
	"testing"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/libro"
)

// wantErr fails unless err mentions every part of want.
func wantErr(t *testing.T, what string, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error, want one mentioning %q", what, want)
		return
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: error %q does not mention %q", what, err, w)
		}
	}
}

// Every bad purchase row is refused with an error naming the row and its
// field.
func TestComprasErrors(t *testing.T) {
	e := theSets(t)
	opts := libro.Options{Emisor: e.creds.Emisor, At: at, FctProp: "0.60"}
	good := libro.Compra{Tipo: 33, Folio: 1, Fecha: "2026-01-10", RutEmisor: rut(78000001), MntNeto: 1000}
	for _, c := range []struct {
		field  string
		change func(*libro.Compra)
	}{
		{"Tipo", func(c *libro.Compra) { c.Tipo = 52 }},
		{"Folio", func(c *libro.Compra) { c.Folio = 0 }},
		{"Folio", func(c *libro.Compra) { c.Folio = 12345678901 }},
		{"Fecha", func(c *libro.Compra) { c.Fecha = "10-01-2026" }},
		{"RutEmisor", func(c *libro.Compra) { c.RutEmisor = "78000001-0" }},
		{"MntNeto", func(c *libro.Compra) { c.MntNeto = -1 }},
		{"MntExe", func(c *libro.Compra) { c.MntExe = 1 << 62 }},
		{"IVAUsoComun", func(c *libro.Compra) { c.IVAUsoComun, c.IVANoRec = true, 4 }},
		{"IVANoRec", func(c *libro.Compra) { c.IVANoRec = 5 }},
		{"RetencionTotal", func(c *libro.Compra) { c.RetencionTotal = true }},
		{"MntNeto", func(c *libro.Compra) { c.MntNeto, c.MntExe, c.IVANoRec = 0, 10, 1 }},
		{"TpoDocRef", func(c *libro.Compra) { c.TpoDocRef, c.FolioDocRef = 52, 1 }},
		{"FolioDocRef", func(c *libro.Compra) { c.TpoDocRef = 33 }},
	} {
		row := good
		c.change(&row)
		_, err := libro.NewCompras(opts, []libro.Compra{good, row})
		wantErr(t, c.field, err, "compras[1]."+c.field)
	}
	_, err := libro.NewCompras(opts, []libro.Compra{good, good})
	wantErr(t, "a repeated row", err, "compras[1] repeats compras[0]")
	_, err = libro.NewCompras(libro.Options{Emisor: e.creds.Emisor}, []libro.Compra{{Tipo: 30, Folio: 781, Fecha: "2026-01-10",
		RutEmisor: rut(78000001), MntNeto: 30171, IVAUsoComun: true}})
	wantErr(t, "IVA uso común without a factor", err, "compras[0]", "FctProp")
	for _, f := range []dte.Decimal{"0", "1.2345", "100", "x"} {
		_, err = libro.NewCompras(libro.Options{Emisor: e.creds.Emisor, FctProp: f}, []libro.Compra{good})
		wantErr(t, "FctProp "+string(f), err, "options.FctProp")
	}
	other := good
	other.Folio, other.Fecha = 2, "2026-02-01"
	_, err = libro.NewCompras(opts, []libro.Compra{good, other})
	wantErr(t, "two months", err, "2026-01, 2026-02", "options.Periodo")
	opts.Periodo = "2026-02"
	if _, err := libro.NewCompras(opts, []libro.Compra{good, other}); err != nil {
		t.Errorf("two months with options.Periodo: %v", err)
	}
	_, err = libro.NewCompras(opts, nil)
	wantErr(t, "no rows", err, "no entries")
	// A supplier's name ISO-8859-1 cannot carry is refused when the libro
	// is written, naming the row.
	bad := good
	bad.Folio, bad.RazonSocial = 3, "Proveedor ☃"
	_, err = libro.Compras(opts, e.creds.Cert, []libro.Compra{good, bad})
	wantErr(t, "a name outside Latin-1", err, "detalle[1].razon_social")
}

// The carátula's options are checked, each error naming its option.
func TestOptionsErrors(t *testing.T) {
	e := theSets(t)
	rows := compras("2026-01-10")
	for _, c := range []struct {
		name   string
		change func(*libro.Options)
		want   string
	}{
		{"emisor RUT", func(o *libro.Options) { o.Emisor.Rut = "1-1" }, "options.Emisor.Rut"},
		{"RutEnvia", func(o *libro.Options) { o.RutEnvia = "x" }, "options.RutEnvia"},
		{"FchResol", func(o *libro.Options) { o.Emisor.FechaResolucion = "" }, "options.Emisor.FechaResolucion"},
		{"NroResol", func(o *libro.Options) { o.Emisor.NumeroResolucion = -1 }, "options.Emisor.NumeroResolucion"},
		{"Periodo", func(o *libro.Options) { o.Periodo = "2026-1" }, "options.Periodo"},
		{"TipoLibro", func(o *libro.Options) { o.TipoLibro = "ANUAL" }, "options.TipoLibro"},
		{"RECTIFICA", func(o *libro.Options) { o.TipoLibro = "RECTIFICA" }, "options.CodAutRec"},
		{"FolioNotificacion", func(o *libro.Options) { o.FolioNotificacion = -2 }, "options.FolioNotificacion"},
	} {
		o := libro.Options{Emisor: e.creds.Emisor, FctProp: "0.6"}
		c.change(&o)
		_, err := libro.NewCompras(o, rows)
		wantErr(t, c.name, err, c.want)
	}
	// A MENSUAL libro carries no FolioNotificacion; a RECTIFICA its code.
	o := libro.Options{Emisor: e.creds.Emisor, FctProp: "0.6", TipoLibro: "RECTIFICA", CodAutRec: "AB12", At: at}
	out, err := libro.Compras(o, e.creds.Cert, rows)
	if err != nil {
		t.Fatal(err)
	}
	oracles(t, out, "LibroCV_v10.xsd", "EnvioLibro")
	l, err := libro.Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	if c := l.Caratula; c.TipoLibro != "RECTIFICA" || c.CodAutRec != "AB12" || c.FolioNotificacion != 0 {
		t.Errorf("RECTIFICA carátula %+v", c)
	}
	if _, err := libro.Compras(libro.Options{Emisor: e.creds.Emisor, FctProp: "0.6"}, nil, rows); err == nil {
		t.Error("Compras without a certificate: no error")
	}
	o = libro.Options{Emisor: e.creds.Emisor, FctProp: "0.6", ID: "not an id"}
	_, err = libro.Compras(o, e.creds.Cert, rows)
	wantErr(t, "a bad ID", err, "not an id")
}

// The Libro de Ventas takes the company's facturas and notes once each;
// other kinds of document are sent to their own libro.
func TestVentasErrors(t *testing.T) {
	e := theSets(t)
	opts := libro.Options{Emisor: e.creds.Emisor}
	_, err := libro.NewVentas(opts, e.basico[0].XML, e.guias[1].XML)
	wantErr(t, "a guía", err, "tipo 52", "Libro de Guías")
	_, err = libro.NewVentas(opts, e.envio, e.basico[2].XML)
	wantErr(t, "a document twice", err, "tipo 33 folio 3 is given twice")
	_, err = libro.NewVentas(opts)
	wantErr(t, "nothing", err, "no documents")
	_, err = libro.NewVentas(opts, []byte("<x/>"))
	wantErr(t, "not a DTE", err, "document 1", "<x>")
	_, err = libro.NewVentas(opts, []byte("not xml"))
	wantErr(t, "not XML", err, "document 1")
	other := opts
	other.Emisor.Rut = rut(76000001)
	_, err = libro.NewVentas(other, e.basico[0].XML)
	wantErr(t, "another company's", err, "issued by", rut(76000001))
	// Boletas are totalled in the summary only.
	l, err := libro.NewVentas(opts, e.basico[0].XML, e.boletas[0].XML, e.boletas[1].XML)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Detalle) != 1 || len(l.ResumenPeriodo) != 2 {
		t.Fatalf("detalle %+v resumen %+v", l.Detalle, l.ResumenPeriodo)
	}
	// 29800 + 2040 = 31840; neto 25042 + 1714 = 26756; IVA 4758 + 326 = 5084.
	same(t, "boletas' summary", l.ResumenPeriodo[1], libro.Totales{TpoDoc: 39, TotDoc: 2, TotMntNeto: 26756, TotMntIVA: 5084, TotMntTotal: 31840})
}

// The Libro de Guías checks what it is told about the guías.
func TestGuiasErrors(t *testing.T) {
	e := theSets(t)
	g := e.guias
	for _, c := range []struct {
		name string
		opts libro.Options
		want string
	}{
		{"a mark that does not exist", libro.Options{Anuladas: map[int64]int{g[2].Folio: 4}}, "options.Anuladas"},
		{"a guía not given", libro.Options{Anuladas: map[int64]int{999: libro.AnuladoDespues}}, "options.Anuladas[999]"},
		{"an invoice of a guía not given", libro.Options{Facturas: map[int64]libro.DocRef{999: {Tipo: 33, Folio: 1, Fecha: "2026-01-01"}}}, "options.Facturas[999]"},
		{"an invoice without a date", libro.Options{Facturas: map[int64]libro.DocRef{g[1].Folio: {Tipo: 33, Folio: 1}}}, "Fecha"},
		{"an annulled guía invoiced", libro.Options{Anuladas: map[int64]int{g[1].Folio: libro.AnuladoDespues},
			Facturas: map[int64]libro.DocRef{g[1].Folio: {Tipo: 33, Folio: 1, Fecha: "2026-01-01"}}}, "annulled"},
		{"a monthly libro", libro.Options{TipoLibro: "MENSUAL"}, "always ESPECIAL"},
	} {
		c.opts.Emisor = e.creds.Emisor
		_, err := libro.NewGuias(c.opts, g[0].XML, g[1].XML, g[2].XML)
		wantErr(t, c.name, err, c.want)
	}
	_, err := libro.NewGuias(libro.Options{Emisor: e.creds.Emisor}, e.basico[0].XML)
	wantErr(t, "no guías", err, "no guías")
	// A folio annulled before sending needs no document, and is counted
	// apart.
	l, err := libro.NewGuias(libro.Options{Emisor: e.creds.Emisor, Anuladas: map[int64]int{50: libro.AnuladoAntes}}, g[0].XML)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(l.Detalle); n != 2 || l.Detalle[1] != (libro.DetalleGuia{Folio: 50, Anulado: 1}) || l.ResumenPeriodo.TotFolAnulado != 1 {
		t.Errorf("detalle %+v resumen %+v", l.Detalle, l.ResumenPeriodo)
	}
}

// The RCOF reports boletas and their credit notes only.
func TestConsumoErrors(t *testing.T) {
	e := theSets(t)
	_, err := libro.NewConsumo(libro.Options{Emisor: e.creds.Emisor}, e.boletas[0].XML, e.basico[0].XML)
	wantErr(t, "a factura", err, "tipo 33", "boletas (39, 41)")
	_, err = libro.NewConsumo(libro.Options{Emisor: e.creds.Emisor, SecEnvio: 1000}, e.boletas[0].XML)
	wantErr(t, "SecEnvio", err, "options.SecEnvio")
	_, err = libro.NewConsumo(libro.Options{Emisor: e.creds.Emisor}, e.boletas[0].XML, e.boletas[0].XML)
	wantErr(t, "twice", err, "given twice")
	c, err := libro.NewConsumo(libro.Options{Emisor: e.creds.Emisor, SecEnvio: 2}, e.boletas[4].XML, e.boletas[2].XML)
	if err != nil {
		t.Fatal(err)
	}
	f := e.boletas[0].Folio
	same(t, "two boletas apart", c.Resumen[0].RangoUtilizados, []libro.Rango{{f + 2, f + 2}, {f + 4, f + 4}})
	if c.Caratula.SecEnvio != 2 {
		t.Errorf("SecEnvio %d", c.Caratula.SecEnvio)
	}
}
