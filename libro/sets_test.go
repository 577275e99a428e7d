package libro_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
)

// This file emits, with the test credentials, the documents of the SII's
// sample sets that the libros are built from: SET BASICO 414175
// (../shared/sii/sets/001-basico.txt), SET GUIA DE DESPACHO 428551
// (005-guia_despacho.txt) and the boleta set (boleta-SetPruebaBE-…). The
// cases are written here by hand from those files; the certification kit
// parses them for real.

// emitted are the documents of one run, shared by the package's tests.
type emitted struct {
	creds   *dtetest.Creds
	basico  []*dte.Emitted // cases 1 to 8, in order
	guias   []*dte.Emitted // cases 1 to 3
	boletas []*dte.Emitted // CASO-1 to CASO-5
	envio   []byte         // the EnvioDTE of basico
}

var sets = sync.OnceValues(func() (*emitted, error) {
	c, err := dtetest.New(nil)
	if err != nil {
		return nil, err
	}
	// One instant for every document, so they share a date and a period.
	now := time.Now()
	em, err := c.Emitter(func() time.Time { return now })
	if err != nil {
		return nil, err
	}
	e := &emitted{creds: c}
	today := dte.ChileTime(now).Format("2006-01-02")
	emit := func(req *dte.EmitirDTERequest) (*dte.Emitted, error) {
		for k := range req.Referencias {
			if r := &req.Referencias[k]; r.FechaRef == "" {
				r.FechaRef = today
			}
		}
		return em.Emit(context.Background(), req)
	}
	for i, req := range basicoRequests() {
		// Notes refer to the document of the case they name.
		for k := range req.Referencias {
			r := &req.Referencias[k]
			if r.FolioRef < 0 {
				ref := e.basico[-r.FolioRef-1]
				r.TipoDocRef, r.FolioRef, r.FechaRef = dte.RefTipo(ref.Tipo), ref.Folio, ref.FechaEmision
			}
		}
		d, err := emit(req)
		if err != nil {
			return nil, fmt.Errorf("basico case %d: %w", i+1, err)
		}
		e.basico = append(e.basico, d)
	}
	for i, req := range guiaRequests() {
		d, err := emit(req)
		if err != nil {
			return nil, fmt.Errorf("guía case %d: %w", i+1, err)
		}
		e.guias = append(e.guias, d)
	}
	for i, req := range boletaRequests() {
		d, err := emit(req)
		if err != nil {
			return nil, fmt.Errorf("boleta case %d: %w", i+1, err)
		}
		e.boletas = append(e.boletas, d)
	}
	xmls := make([][]byte, len(e.basico))
	for i, d := range e.basico {
		xmls[i] = d.XML
	}
	if e.envio, err = dte.BuildEnvio(dte.EnvioOptions{Emisor: c.Emisor, At: now}, c.Cert, xmls...); err != nil {
		return nil, err
	}
	return e, nil
})

func theSets(t testing.TB) *emitted {
	t.Helper()
	e, err := sets()
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// rut returns a RUT with its check digit.
func rut(n int) string { return fmt.Sprintf("%d-%c", n, dte.CheckDigit(n)) }

// setRef is the first reference of every set document.
func setRef(caso string) dte.Referencia {
	return dte.Referencia{TipoDocRef: dte.RefCodigo("SET"), FolioRef: 1, FechaRef: "", RazonRef: "CASO " + caso}
}

func intp(n int) *int { return &n }

// basicoRequests are the eight cases of SET BASICO 414175. A reference
// with FolioRef -k names the document of case k, filled in when emitting.
func basicoRequests() []*dte.EmitirDTERequest {
	line := func(name, qty, price, dsc string) dte.LineaDetalle {
		return dte.LineaDetalle{Nombre: name, Cantidad: dte.Decimal(qty), Precio: dte.Decimal(price), DescuentoPct: dte.Decimal(dsc)}
	}
	exe := func(l dte.LineaDetalle) dte.LineaDetalle { l.IndExe = intp(1); return l }
	factura := func(k, receptor int, lines ...dte.LineaDetalle) *dte.EmitirDTERequest {
		return &dte.EmitirDTERequest{TipoDTE: 33, Receptor: dte.Receptor{Rut: rut(receptor), RazonSocial: fmt.Sprintf("Cliente %d de Prueba Ltda.", k),
			Giro: "Comercio", Direccion: "Calle 1", Comuna: "Santiago"}, Detalle: lines,
			Referencias: []dte.Referencia{setRef(fmt.Sprintf("414175-%d", k))}}
	}
	note := func(k, tipo, of, cod int, razon string, lines ...dte.LineaDetalle) *dte.EmitirDTERequest {
		return &dte.EmitirDTERequest{TipoDTE: dte.TipoDTE(tipo), Receptor: dte.Receptor{Rut: rut(77000001), RazonSocial: "Cliente 1 de Prueba Ltda.",
			Giro: "Comercio", Direccion: "Calle 1", Comuna: "Santiago"}, Detalle: lines,
			Referencias: []dte.Referencia{setRef(fmt.Sprintf("414175-%d", k)),
				{FolioRef: int64(-of), CodigoRef: intp(cod), RazonRef: razon}}}
	}
	c3 := []dte.LineaDetalle{line("Pintura B&W AFECTO", "24", "1937", ""), line("ITEM 2 AFECTO", "149", "2975", ""),
		exe(line("ITEM 3 SERVICIO EXENTO", "1", "34705", ""))}
	c4 := factura(4, 77000004, line("ITEM 1 AFECTO", "81", "1672", ""), line("ITEM 2 AFECTO", "35", "1405", ""),
		exe(line("ITEM 3 SERVICIO EXENTO", "2", "6767", "")))
	c4.DescuentosGlobales = []dte.DscRcgGlobal{{TpoMov: "D", TpoValor: "%", ValorDR: "6", GlosaDR: "DESCUENTO GLOBAL ITEMES AFECTOS"}}
	c5 := note(5, 61, 1, 2, "CORRIGE GIRO DEL RECEPTOR", dte.LineaDetalle{Nombre: "Cajón AFECTO"})
	c5.Detalle[0].DscItem = "DONDE DICE Comercio DEBE DECIR Comercio al por menor"
	return []*dte.EmitirDTERequest{
		factura(1, 77000001, line("Cajón AFECTO", "123", "923", ""), line("Relleno AFECTO", "53", "1473", "")),
		factura(2, 77000002, line("Pañuelo AFECTO", "235", "1926", "4"), line("ITEM 2 AFECTO", "161", "990", "5")),
		factura(3, 77000003, c3...),
		c4,
		c5,
		note(6, 61, 2, 3, "DEVOLUCION DE MERCADERIAS", line("Pañuelo AFECTO", "86", "1926", "4"), line("ITEM 2 AFECTO", "109", "990", "5")),
		note(7, 61, 3, 1, "ANULA FACTURA", c3...),
		note(8, 56, 5, 1, "ANULA NOTA DE CREDITO ELECTRONICA", dte.LineaDetalle{Nombre: "Cajón AFECTO"}),
	}
}

// guiaRequests are the three cases of SET GUIA DE DESPACHO 428551.
func guiaRequests() []*dte.EmitirDTERequest {
	em := dtetest.DemoEmisor()
	self := dte.Receptor{Rut: em.Rut, RazonSocial: em.RazonSocial, Giro: "Venta al por mayor", Direccion: em.Direccion, Comuna: em.Comuna}
	client := dte.Receptor{Rut: rut(77000009), RazonSocial: "Cliente de Guías S.A.", Giro: "Comercio", Direccion: "Calle 9", Comuna: "Santiago"}
	qty := func(name, q string) dte.LineaDetalle {
		return dte.LineaDetalle{Nombre: name, Cantidad: dte.Decimal(q), Precio: "0"}
	}
	priced := func(name, q, p string) dte.LineaDetalle {
		return dte.LineaDetalle{Nombre: name, Cantidad: dte.Decimal(q), Precio: dte.Decimal(p)}
	}
	return []*dte.EmitirDTERequest{
		{TipoDTE: 52, Receptor: self, IndTraslado: intp(5), Detalle: []dte.LineaDetalle{qty("ITEM 1", "66"), qty("ITEM 2", "87"), qty("ITEM 3", "52")},
			Referencias: []dte.Referencia{setRef("428551-1")}},
		{TipoDTE: 52, Receptor: client, IndTraslado: intp(1), TipoDespacho: intp(2),
			Detalle: []dte.LineaDetalle{priced("ITEM 1", "202", "4416"), priced("ITEM 2", "383", "1263")}, Referencias: []dte.Referencia{setRef("428551-2")}},
		{TipoDTE: 52, Receptor: client, IndTraslado: intp(1), TipoDespacho: intp(1),
			Detalle: []dte.LineaDetalle{priced("ITEM 1", "124", "1506"), priced("ITEM 2", "248", "3481")}, Referencias: []dte.Referencia{setRef("428551-3")}},
	}
}

// boletaRequests are the five cases of the boleta set (prices include
// IVA).
func boletaRequests() []*dte.EmitirDTERequest {
	line := func(name, q, p string) dte.LineaDetalle {
		return dte.LineaDetalle{Nombre: name, Cantidad: dte.Decimal(q), Precio: dte.Decimal(p)}
	}
	boleta := func(k int, lines ...dte.LineaDetalle) *dte.EmitirDTERequest {
		return &dte.EmitirDTERequest{TipoDTE: 39, Detalle: lines, Receptor: dte.Receptor{Rut: "66666666-6", RazonSocial: "Consumidor final"},
			Referencias: []dte.Referencia{{TipoDocRef: dte.RefCodigo("SET"), RazonRef: fmt.Sprintf("CASO-%d", k)}}}
	}
	exento := line("item exento 2", "2", "1000")
	exento.IndExe = intp(1)
	arroz := line("Arroz", "5", "700")
	arroz.Unidad = "Kg"
	return []*dte.EmitirDTERequest{
		boleta(1, line("Cambio de aceite", "1", "19900"), line("Alineacion y balanceo", "1", "9900")),
		boleta(2, line("Papel de regalo", "17", "120")),
		boleta(3, line("Sandwic", "2", "1500"), line("Bebida", "2", "550")),
		boleta(4, line("item afecto 1", "8", "1590"), exento),
		boleta(5, arroz),
	}
}
