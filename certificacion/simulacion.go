package certificacion

import (
	"context"
	"errors"
	"fmt"

	"github.com/dtekit/dtekit/dte"
)

// SetSimulacion is the kind of the simulación's one envelope (the
// certification's step after the sets: real-like documents without the
// SET reference).
const SetSimulacion SetKind = "SIMULACION"

// MinSimulacion is the number of documents the SII asks the simulación to
// hold at least.
const MinSimulacion = 10

// SimulacionTipos are the types the simulación emits, in the order it
// cycles through them: facturas, the exempt factura, a guía de despacho
// that is a sale, and notes of débito and crédito that modify an earlier
// factura of the same envelope. The others (exports, boletas, facturas de
// compra and liquidaciones) are left to their sets.
var SimulacionTipos = []dte.TipoDTE{dte.FacturaElectronica, dte.FacturaNoAfectaOExenta, dte.GuiaDespachoElectronica,
	dte.NotaCreditoElectronica, dte.NotaDebitoElectronica}

// ErrSimulacionCAF is returned (wrapped) when the CAFs do not cover the
// types the simulación needs.
var ErrSimulacionCAF = errors.New("certificacion: the CAFs do not cover the simulación")

// producto is one line of the simulación's catalog.
type producto struct {
	nombre, unidad string
	precio         dte.Decimal
}

// catalogo is the template the simulación draws its items from: goods and
// services a small company sells, with whole-peso prices.
var catalogo = []producto{
	{"RESMA PAPEL CARTA 500 HOJAS", "UN", "3990"},
	{"CARTUCHO TINTA NEGRA", "UN", "18490"},
	{"SERVICIO DE INSTALACION DE RED", "HR", "25000"},
	{"CABLE UTP CAT 6", "MT", "450"},
	{"ESCRITORIO MELAMINA 120 CM", "UN", "89990"},
	{"SILLA ERGONOMICA", "UN", "64990"},
	{"MANTENCION EQUIPOS COMPUTACIONALES", "UN", "45000"},
	{"DISCO SOLIDO 1 TB", "UN", "52990"},
	{"TECLADO USB", "UN", "8990"},
	{"ASESORIA TECNICA", "HR", "35000"},
}

// SimulacionConfig is what Simulacion needs: the company and its
// credentials as for Generate, how many documents (at least
// MinSimulacion; 0 means MinSimulacion) and which types (nil: every type of
// SimulacionTipos the CAFs cover).
type SimulacionConfig struct {
	Config
	N     int
	Tipos []dte.TipoDTE
}

// Simulacion emits the certification's simulación: N real-like documents
// of the company's authorized types, cycling through them, with items from
// a catalog (one to three lines, quantities and prices varying from
// document to document), without the SET reference, each note modifying
// the amount of the envelope's latest factura of its kind (CodRef 3), all
// in one signed EnvioDTE. The Result has one set of kind SetSimulacion,
// which WriteDir writes like any other.
func Simulacion(ctx context.Context, cfg SimulacionConfig) (*Result, error) {
	if cfg.Cert == nil {
		return nil, errors.New("certificacion: no signing certificate")
	}
	if err := cfg.Emisor.Validate(); err != nil {
		return nil, fmt.Errorf("certificacion: emisor: %w", err)
	}
	if cfg.Emisor.NumeroResolucion != 0 {
		return nil, fmt.Errorf("certificacion: the emisor's numero_resolucion is %d; in certification it is 0 (a wrong pair gives CRT-3-19)", cfg.Emisor.NumeroResolucion)
	}
	n := cfg.N
	if n == 0 {
		n = MinSimulacion
	}
	if n < MinSimulacion || n > 500 {
		return nil, fmt.Errorf("certificacion: the simulación needs %d to 500 documents, not %d", MinSimulacion, n)
	}
	have := map[dte.TipoDTE]bool{}
	for _, c := range cfg.CAFs {
		have[dte.TipoDTE(c.Tipo)] = true
	}
	tipos := cfg.Tipos
	if tipos == nil {
		for _, t := range SimulacionTipos {
			if have[t] {
				tipos = append(tipos, t)
			}
		}
	}
	ok := map[dte.TipoDTE]bool{}
	for _, t := range SimulacionTipos {
		ok[t] = true
	}
	hasFactura := false
	for _, t := range tipos {
		if !ok[t] {
			return nil, fmt.Errorf("certificacion: the simulación does not emit tipo %d (%s); it emits %v", t, t.Name(), SimulacionTipos)
		}
		if !have[t] {
			return nil, fmt.Errorf("%w: no CAF for tipo %d (%s), which it was asked to emit", ErrSimulacionCAF, t, t.Name())
		}
		hasFactura = hasFactura || t == dte.FacturaElectronica || t == dte.FacturaNoAfectaOExenta
	}
	if len(tipos) == 0 || !hasFactura {
		return nil, fmt.Errorf("%w: it needs a CAF of factura electrónica (33) or exenta (34), whose facturas the notes modify", ErrSimulacionCAF)
	}
	g, em, _, err := start(cfg.Config)
	if err != nil {
		return nil, err
	}
	at, fecha := g.at, g.fecha
	set := &Set{Kind: SetSimulacion, Name: "SIMULACION"}
	sr := &SetResult{Set: set}
	var last *Doc // the latest factura, which a note modifies
	xmls := make([][]byte, 0, n)
	for i := range n {
		t := tipos[i%len(tipos)]
		if (t == dte.NotaCreditoElectronica || t == dte.NotaDebitoElectronica) && last == nil {
			t = tipos[0] // a note needs a factura before it
			for _, u := range tipos {
				if u == dte.FacturaElectronica || u == dte.FacturaNoAfectaOExenta {
					t = u
					break
				}
			}
		}
		c := &Case{ID: fmt.Sprintf("SIM-%d", i+1), N: i + 1, Tipo: t, Documento: t.Name()}
		req := &dte.EmitirDTERequest{TipoDTE: t, FechaEmision: fecha}
		switch t {
		case dte.NotaCreditoElectronica, dte.NotaDebitoElectronica:
			req.Receptor = last.Request.Receptor
			code := 3
			razon := "DESCUENTO POR PRONTO PAGO"
			if t == dte.NotaDebitoElectronica {
				razon = "INTERESES POR PAGO FUERA DE PLAZO"
			}
			req.Referencias = []dte.Referencia{{TipoDocRef: dte.RefTipo(last.Emitted.Tipo), FolioRef: last.Emitted.Folio, FechaRef: fecha, CodigoRef: &code, RazonRef: razon}}
			req.Detalle = []dte.LineaDetalle{{Nombre: razon, Cantidad: "1", Precio: dte.Decimal(fmt.Sprint(1000 * (1 + i%5)))}}
			if last.Emitted.Tipo == dte.FacturaNoAfectaOExenta {
				exe := 1
				req.Detalle[0].IndExe = &exe
			}
		default:
			req.Receptor = g.receptor(c)
			if t == dte.GuiaDespachoElectronica {
				ind := 1 // a sale: the goods leave with the guía
				req.IndTraslado = &ind
			}
			for k := range 1 + i%3 {
				p := catalogo[(i*3+k)%len(catalogo)]
				req.Detalle = append(req.Detalle, dte.LineaDetalle{Nombre: p.nombre, Cantidad: dte.Decimal(fmt.Sprint(1 + (i+k)%4)), Unidad: p.unidad, Precio: p.precio})
			}
		}
		out, err := em.Emit(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("certificacion: simulación document %d (tipo %d): %w", i+1, t, err)
		}
		d := &Doc{Case: c, Request: req, Emitted: out}
		set.Cases = append(set.Cases, c)
		sr.Docs = append(sr.Docs, d)
		xmls = append(xmls, out.XML)
		if t == dte.FacturaElectronica || t == dte.FacturaNoAfectaOExenta {
			last = d
		}
	}
	env, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: cfg.Emisor, At: at}, cfg.Cert, xmls...)
	if err != nil {
		return nil, fmt.Errorf("certificacion: the simulación's envelope: %w", err)
	}
	sr.Envelope = env
	return &Result{Plan: &Plan{Sets: []*Set{set}}, Fecha: fecha, At: at, Sets: []*SetResult{sr}}, nil
}
