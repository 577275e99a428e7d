package certificacion_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/certificacion"
	"github.com/dtekit/dtekit/libro"
)

// exentosSet is a SET LIBRO DE COMPRAS PARA EXENTOS written as the SII
// writes SET LIBRO DE COMPRAS (003-compras.txt): the notes name the set
// (portal checkbox SET15, sii-wave3-notes §6.1) and describe no other
// form, and no copy of one is public, so the kit reads it when it carries
// that table.
const exentosSet = "SET LIBRO DE COMPRAS PARA EXENTOS - NUMERO DE ATENCION:  414179\r\n \r\n" +
	"==========================================================================\r\n" +
	"TIPO DOCUMENTO\t\t\t\tFOLIO\r\nOBSERVACIONES\r\nMONTO EXENTO\tMONTO AFECTO\r\n" +
	"==========================================================================\r\n" +
	"FACTURA\t\t\t\t\t101\r\nFACTURA DEL GIRO CON DERECHO A CREDITO\r\n\t\t  41250\r\n\r\n" +
	"FACTURA ELECTRONICA \t\t\t 202\r\nFACTURA DEL GIRO CON DERECHO A CREDITO\r\n   8800\t\t  15340\r\n\r\n" +
	"FACTURA EXENTA ELECTRONICA\t\t 404\r\nFACTURA EXENTA DEL GIRO\r\n  12000\t\t      0\r\n\r\n" +
	"NOTA DE CREDITO\t\t\t\t303\r\nNOTA DE CREDITO POR DESCUENTO A FACTURA 101\r\n\t\t   5000\r\n" +
	"==========================================================================\r\n"

// TestLibroComprasExentos builds the Libro de Compras para Exentos of
// exentosSet with its own FolioNotificacion (4: the Libro de Compras has
// 2, and one identity takes one TOTAL) and checks every row and the
// summary against totals worked by hand (IVA 19 % half up on each row).
func TestLibroComprasExentos(t *testing.T) {
	plan, err := certificacion.Parse([]byte(exentosSet))
	if err != nil {
		t.Fatal(err)
	}
	if s := plan.Sets[0]; s.Kind != certificacion.SetLibroComprasExentos || s.Atencion != "414179" || len(s.Compras) != 4 {
		t.Fatalf("parsed %+v", s)
	}
	c := creds(t)
	res, err := certificacion.Generate(context.Background(), plan, certificacion.Config{Emisor: c.Emisor, Cert: c.Cert, Now: func() time.Time { return testAt }})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Libros) != 1 || res.Libros[0].Kind != certificacion.LibroComprasExentos {
		t.Fatalf("libros %+v", res.Libros)
	}
	l, err := libro.Parse(res.Libros[0].XML)
	if err != nil {
		t.Fatal(err)
	}
	if cr := l.Caratula; cr.TipoOperacion != "COMPRA" || cr.TipoLibro != "ESPECIAL" || cr.TipoEnvio != "TOTAL" || cr.FolioNotificacion != 4 || cr.PeriodoTributario != "2026-03" {
		t.Errorf("carátula %+v", cr)
	}
	type row struct {
		tipo                  int
		folio                 int64
		exe, neto, iva, total int64
		refTipo               int
		refFolio              int64
	}
	// 30 F101: neto 41250, IVA 41250 × 0.19 = 7837.5 → 7838, total 49088.
	// 33 F202: exento 8800, neto 15340, IVA 2914.6 → 2915, total 8800 + 15340 + 2915 = 27055.
	// 34 F404: exento 12000, no IVA, total 12000.
	// 60 F303: neto 5000, IVA 950, total 5950, a discount on the factura 30 F101.
	want := []row{{30, 101, 0, 41250, 7838, 49088, 0, 0}, {33, 202, 8800, 15340, 2915, 27055, 0, 0},
		{34, 404, 12000, 0, 0, 12000, 0, 0}, {60, 303, 0, 5000, 950, 5950, 30, 101}}
	if len(l.Detalle) != len(want) {
		t.Fatalf("%d rows, want %d", len(l.Detalle), len(want))
	}
	for i, w := range want {
		d := l.Detalle[i]
		got := row{d.TpoDoc, d.NroDoc, d.MntExe, d.MntNeto, d.MntIVA, d.MntTotal, d.TpoDocRef, d.FolioDocRef}
		if got != w {
			t.Errorf("row %d: %+v, want %+v", i+1, got, w)
		}
	}
	// One document per type, so each summary row repeats its row.
	for _, r := range l.ResumenPeriodo {
		var w *row
		for i := range want {
			if want[i].tipo == r.TpoDoc {
				w = &want[i]
			}
		}
		if w == nil || r.TotDoc != 1 || r.TotMntExe != w.exe || r.TotMntNeto != w.neto || r.TotMntIVA != w.iva || r.TotMntTotal != w.total {
			t.Errorf("summary %+v, want %+v", r, w)
		}
	}

	// With the Libro de Compras in one file: both libros, distinct
	// identities, both accepted LOK by the fake SII and approved.
	all := append(fullSetFile(t, "003-compras.txt"), exentosSet...)
	plan, err = certificacion.Parse(all)
	if err != nil {
		t.Fatal(err)
	}
	res, err = certificacion.Generate(context.Background(), plan, certificacion.Config{Emisor: c.Emisor, Cert: c.Cert, Now: func() time.Time { return testAt }})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "kit")
	if _, err := certificacion.WriteDir(dir, res, c.Emisor); err != nil {
		t.Fatal(err)
	}
	fake, client := fakeSII(t)
	if _, err := certificacion.Enviar(context.Background(), client, dir, nil); err != nil {
		t.Fatal(err)
	}
	m, err := certificacion.Estado(context.Background(), client, dir, certificacion.Poll{Rounds: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Libros) != 2 || m.Libros[1].File != "libros/02-LibroComprasExentos-414179.xml" {
		t.Fatalf("libros %+v", m.Libros)
	}
	for _, l := range m.Libros {
		if l.Envio == nil || l.Envio.Estado != "LOK" {
			t.Errorf("%s: %+v, want LOK", l.File, l.Envio)
		}
	}
	declareAll(t, fake, m)
}

// TestLibroComprasExentosRefuses: an observation that does not say how
// the IVA is treated is an error naming its line, never a guess, and a
// set of instructions alone is left pending with the reason.
func TestLibroComprasExentosRefuses(t *testing.T) {
	c := creds(t)
	gen := func(text string) (*certificacion.Result, error) {
		plan, err := certificacion.Parse([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		return certificacion.Generate(context.Background(), plan, certificacion.Config{Emisor: c.Emisor, Cert: c.Cert, Now: func() time.Time { return testAt }})
	}
	for obs, want := range map[string]string{
		"FACTURA DEL GIRO SIN DERECHO A CREDITO": "line 9",
		"COMPRA DE ACTIVO FIJO":                  "line 9",
	} {
		_, err := gen(strings.Replace(exentosSet, "FACTURA DEL GIRO CON DERECHO A CREDITO", obs, 1))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), obs) {
			t.Errorf("%q: %v, want an error naming %s", obs, err, want)
		}
	}
	res, err := gen("SET LIBRO DE COMPRAS PARA EXENTOS - NUMERO DE ATENCION: 414179\r\nCONSTRUYA EL LIBRO DE COMPRAS.\r\n")
	if err != nil || len(res.Libros) != 0 || len(res.Pending) != 1 || !strings.Contains(res.Pending[0].Reason, "no table") {
		t.Errorf("instructions only: %v, libros %d, pending %+v", err, len(res.Libros), res.Pending)
	}
}
