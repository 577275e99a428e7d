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

// MinSimulacion and MaxSimulacion bound the documents of the simulación
// (sii-wave3-notes §6.1: "≥ 10 and ≤ 100").
const (
	MinSimulacion = 10
	MaxSimulacion = 100
)

// SimulacionTipos are the types the simulación emits, in the order it
// cycles through them: facturas, the exempt factura, a guía de despacho
// that is a sale, notes of crédito and débito that modify an earlier
// factura of the same envelope, the factura de compra (with the whole IVA
// retained), and the export factura with its notes. Every type the
// company has CAFs for is covered (the simulación shows the SII the
// company's real operation); boletas have a certification of their own
// and liquidación-factura is not supported by the kit.
var SimulacionTipos = []dte.TipoDTE{dte.FacturaElectronica, dte.FacturaNoAfectaOExenta, dte.GuiaDespachoElectronica,
	dte.NotaCreditoElectronica, dte.NotaDebitoElectronica, dte.FacturaCompraElectronica,
	dte.FacturaExportacionElectronica, dte.NotaCreditoExportacionElectronica, dte.NotaDebitoExportacionElectronica}

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

// exportables are the simulación's export goods, priced in US dollars.
var exportables = []producto{
	{"NUECES MARIPOSA EXTRA LIGHT CAJA 10 KG", "CJ", "12.5"},
	{"CIRUELAS SECAS SIN CAROZO CAJA 12 KG", "CJ", "27.65"},
	{"VINO TINTO CABERNET SAUVIGNON CAJA 12 BOTELLAS", "CJ", "48.9"},
}

// SimulacionConfig is what Simulacion needs: the company and its
// credentials as for Generate, how many documents (at least
// MinSimulacion; 0 means MinSimulacion or, when more types are covered,
// one document of each) and which types (nil: every type of
// SimulacionTipos the CAFs cover with folios left).
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
	if n != 0 && (n < MinSimulacion || n > MaxSimulacion) {
		return nil, fmt.Errorf("certificacion: the simulación needs %d to %d documents, not %d", MinSimulacion, MaxSimulacion, n)
	}
	have := map[dte.TipoDTE]bool{}
	for _, c := range cfg.CAFs {
		if libres(c, cfg.FoliosUsados) > 0 {
			have[dte.TipoDTE(c.Tipo)] = true
		}
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
	if n == 0 {
		n = max(MinSimulacion, len(tipos))
	}
	if n < len(tipos) {
		return nil, fmt.Errorf("certificacion: %d documents cannot cover the %d types the simulación emits", n, len(tipos))
	}
	g, em, _, err := start(cfg.Config)
	if err != nil {
		return nil, err
	}
	at, fecha := g.at, g.fecha
	set := &Set{Kind: SetSimulacion, Name: "SIMULACION"}
	sr := &SetResult{Set: set}
	var last, lastExp *Doc // the latest factura and export factura, which a note modifies
	emitted := make([]*dte.Emitted, 0, n)
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
		if (t == dte.NotaCreditoExportacionElectronica || t == dte.NotaDebitoExportacionElectronica) && lastExp == nil {
			t = dte.FacturaExportacionElectronica
			if !have[t] { // no export factura to modify: a factura instead
				t = dte.FacturaElectronica
				if !have[t] {
					t = dte.FacturaNoAfectaOExenta
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
		case dte.NotaCreditoExportacionElectronica, dte.NotaDebitoExportacionElectronica:
			req.Receptor = lastExp.Request.Receptor
			x := *lastExp.Request.ExportData
			req.ExportData = &x
			code := 3
			razon := "DESCUENTO POR CALIDAD"
			if t == dte.NotaDebitoExportacionElectronica {
				razon = "AJUSTE DE FLETE INTERNACIONAL"
			}
			req.Referencias = []dte.Referencia{{TipoDocRef: dte.RefTipo(lastExp.Emitted.Tipo), FolioRef: lastExp.Emitted.Folio, FechaRef: fecha, CodigoRef: &code, RazonRef: razon}}
			req.Detalle = []dte.LineaDetalle{{Nombre: razon, Cantidad: "1", Precio: dte.Decimal(fmt.Sprintf("%d.50", 10*(1+i%5)))}}
		case dte.FacturaExportacionElectronica:
			req.Receptor = g.receptor(c)
			req.ExportData = &dte.ExportData{TpoMoneda: "DOLAR USA", ModalidadVenta: intp(1), ClausulaVenta: "FOB", ViaTransporte: intp(1),
				PaisRecep: "563", PaisDest: "563", Nacionalidad: "563"}
			for k := range 1 + i%2 {
				p := exportables[(i+k)%len(exportables)]
				req.Detalle = append(req.Detalle, dte.LineaDetalle{Nombre: p.nombre, Cantidad: dte.Decimal(fmt.Sprint(100 * (1 + (i+k)%3))), Unidad: p.unidad, Precio: p.precio})
			}
		default:
			req.Receptor = g.receptor(c)
			if t == dte.GuiaDespachoElectronica {
				ind := 1 // a sale: the goods leave with the guía
				req.IndTraslado = &ind
			}
			for k := range 1 + i%3 {
				p := catalogo[(i*3+k)%len(catalogo)]
				l := dte.LineaDetalle{Nombre: p.nombre, Cantidad: dte.Decimal(fmt.Sprint(1 + (i+k)%4)), Unidad: p.unidad, Precio: p.precio}
				if t == dte.FacturaCompraElectronica {
					l.CodImpAdic, l.Retenedor = intp(15), true // the whole IVA retained, as in the set (build.go)
				}
				req.Detalle = append(req.Detalle, l)
			}
		}
		out, err := em.Emit(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("certificacion: simulación document %d (tipo %d): %w", i+1, t, err)
		}
		d := &Doc{Case: c, Request: req, Emitted: out}
		set.Cases = append(set.Cases, c)
		sr.Docs = append(sr.Docs, d)
		emitted = append(emitted, out)
		switch t {
		case dte.FacturaElectronica, dte.FacturaNoAfectaOExenta:
			last = d
		case dte.FacturaExportacionElectronica:
			lastExp = d
		}
	}
	env, err := dte.BuildEnvioEmitted(dte.EnvioOptions{Emisor: cfg.Emisor, At: at}, cfg.Cert, emitted...)
	if err != nil {
		return nil, fmt.Errorf("certificacion: the simulación's envelope: %w", err)
	}
	sr.Envelope = env
	return &Result{Plan: &Plan{Sets: []*Set{set}}, Fecha: fecha, At: at, Sets: []*SetResult{sr}, Saltados: g.saltados}, nil
}
