// Package certificacion is the SII certification kit: it reads the set of
// test cases the SII hands a company applying for authorization (the "set
// de pruebas" file, SIISetDePruebas<RUT><DV>.txt, or the boleta set) into a
// typed Plan, emits every case exactly as the set asks through dte's
// pipeline (the SET reference, the notes pointing at the documents of the
// cases they name, item names and order as given, discounts, exempt lines,
// export data, guías with their transfer kind, facturas de compra with the
// whole IVA retained), packs one envelope per set (the boleta set in one
// EnvioBOLETA) and prints every document as the SII will see it, from the
// exact signed XML, with the cedible copy where the type carries one.
//
// Parse reads the file; Generate emits a parsed plan; WriteDir writes the
// result as a folder ready to upload, with a manifest.json and a LEEME.md
// that says what to upload and declare, in order. The rules that turn a
// case into a document are written beside the code that applies them (see
// build.go) with the source the SII material gives for each.
package certificacion

import (
	"github.com/dtekit/dtekit/dte"
)

// SetKind names one of the SII's test sets.
type SetKind string

// The sets the SII hands out (checkboxes SET01 … SET84 of the portal), and
// the boleta set, which has a portal of its own.
const (
	SetBasico                 SetKind = "BASICO"
	SetFacturaExenta          SetKind = "FACTURA EXENTA"
	SetGuiaDespacho           SetKind = "GUIA DE DESPACHO"
	SetLibroVentas            SetKind = "LIBRO DE VENTAS"
	SetLibroCompras           SetKind = "LIBRO DE COMPRAS"
	SetLibroGuias             SetKind = "LIBRO DE GUIAS"
	SetExportacion1           SetKind = "EXPORTACION (1)"
	SetExportacion2           SetKind = "EXPORTACION (2)"
	SetExportacion            SetKind = "EXPORTACION" // a headerless export set: (1) or (2) cannot be told
	SetFacturaCompra          SetKind = "FACTURA DE COMPRA"
	SetLiquidacionFactura     SetKind = "LIQUIDACION FACTURA"
	SetLibroComprasExentos    SetKind = "LIBRO DE COMPRAS PARA EXENTOS"
	SetBoleta                 SetKind = "BOLETA"
	setUnknown                SetKind = ""
	boletaTitle                       = "SII SET DE PRUEBA DE BOLETA ELECTRONICA DE VENTAS Y SERVICIOS"
	maxSetFile                        = 1 << 20
	maxLineRunes                      = 4096
	maxCasesPerSet                    = 500
	maxItemsPerCase                   = dte.MaxEnvioBoleta // far above any set; bounds a hostile file
	maxInstructionLinesPerSet         = 2000
	maxWarnings                       = 500
)

// Emits reports whether the set's cases are documents to emit (the libro
// sets are instructions or tables for a libro instead).
func (k SetKind) Emits() bool {
	switch k {
	case SetLibroVentas, SetLibroCompras, SetLibroGuias, SetLibroComprasExentos:
		return false
	}
	return true
}

// Plan is a parsed set-of-tests file.
type Plan struct {
	// Indicaciones is the file's preamble (INDICACIONES GENERALES), as
	// text lines.
	Indicaciones []string
	// Sets in the order of the file.
	Sets []*Set
	// Warnings are the lines the kit does not understand and left aside.
	Warnings []Warning
	// Skipped are the sets the kit does not know: not generated.
	Skipped []SkippedSet
}

// Set is one set of the file.
type Set struct {
	Kind SetKind
	// Name is the set's name as the file writes it ("SET BASICO"), or as
	// inferred for a file without headers.
	Name string
	// Atencion is the número de atención ("" for the boleta set, which has
	// none).
	Atencion string
	// Line is the line of the set's header (or of its first case).
	Line int
	// Notes are the set's free paragraphs (IMPORTANTE, INDICACIÓN) before
	// its first case or table, and the instructions of the sets that are
	// instructions only (LIBRO DE VENTAS, LIBRO DE GUIAS).
	Notes []string
	// Cases to emit, in the file's order.
	Cases []*Case
	// Compras is the table of SET LIBRO DE COMPRAS (and of SET LIBRO DE
	// COMPRAS PARA EXENTOS when it has one): documents received.
	Compras []*Compra
	// FactorProporcionalidad is the IVA uso común factor the LIBRO DE
	// COMPRAS set gives ("0.60"), or "".
	FactorProporcionalidad dte.Decimal
	// GuiasFacturadas and GuiasAnuladas are the case numbers SET LIBRO DE
	// GUIAS names as invoiced in the period and as annulled.
	GuiasFacturadas, GuiasAnuladas []int
	// Observaciones are the closing general observations of a set (LIBRO
	// DE COMPRAS, the boleta set).
	Observaciones []string
}

// Case is one test case: one document to emit.
type Case struct {
	// ID is the case's identifier: "<atención>-<k>" ("414175-1"), or the
	// number alone in the boleta set ("1").
	ID string
	// N is k, the case's number within its set.
	N int
	// Line is the line of "CASO …".
	Line int
	// Documento is the document name as written; Tipo its type.
	Documento string
	Tipo      dte.TipoDTE
	// Ref is the case a note refers to, nil for none.
	Ref *CaseRef
	// Razon is the RAZON REFERENCIA text; CodRef its code (1 anula,
	// 2 corrige texto, 3 devolución or modifica monto).
	Razon  string
	CodRef int
	// Motivo and TrasladoPor are a guía's lines; IndTraslado and
	// TipoDespacho their codes (0 when absent).
	Motivo, TrasladoPor       string
	IndTraslado, TipoDespacho int
	// Columns are the item table's column titles, folded ("CANTIDAD").
	Columns []string
	// Items in the file's order.
	Items []*Item
	// DescuentoGlobalPct is the global discount on taxable items ("6").
	DescuentoGlobalPct dte.Decimal
	// Export holds an export case's KEY: VALUE data.
	Export *Export
	// Notes are the case's free lines the kit recognised as saying nothing
	// beyond the rules it applies ("EL PRECIO UNITARIO DEL ITEM DEBE SER EL
	// MISMO DE LA FACTURA"), and the boleta set's OBSERVACION lines.
	Notes []string
}

// CaseRef is the case a note refers to.
type CaseRef struct {
	// Documento is the referenced document's name as written ("FACTURA
	// ELECTRONICA"); some export sets write only "NOTA DE CREDITO".
	Documento string
	// CaseID is the referenced case ("414175-1").
	CaseID string
	Line   int
}

// Item is one line of a case's item table. Empty fields are absent
// columns.
type Item struct {
	// Nombre is the name exactly as the file writes it, trailing spaces
	// included.
	Nombre       string
	Cantidad     dte.Decimal
	Unidad       string
	Precio       dte.Decimal // PRECIO UNITARIO, VALOR UNITARIO, VALOR LINEA or Precio Unitario con IVA
	DescuentoPct dte.Decimal
	RecargoPct   dte.Decimal
	// Exento marks an exempt line: "EXENTO" in a factura item's name, or
	// an OBSERVACION of the boleta set naming the item.
	Exento bool
	Line   int
}

// Export is an export case's data, in the file's words and as codes.
type Export struct {
	// Fields are the KEY: VALUE lines in the file's order.
	Fields []KV
	// Referencias are the REFERENCIA: lines (DUS, AWB, MIC …).
	Referencias []string
	// ComisionPct is "COMISIONES EN EL EXTRANJERO (RECARGOS GLOBALES): N%
	// DEL TOTAL DE LA CLAUSULA".
	ComisionPct dte.Decimal
}

// KV is one KEY: VALUE line.
type KV struct {
	Key, Value string
	Line       int
}

// Get returns the value of the first field with the key (folded), or "".
func (e *Export) Get(key string) string {
	if e == nil {
		return ""
	}
	for _, f := range e.Fields {
		if f.Key == key {
			return f.Value
		}
	}
	return ""
}

// Compra is one row of the LIBRO DE COMPRAS table.
type Compra struct {
	// Documento is the type as written ("FACTURA ELECTRONICA"); Tipo the
	// libro's document code (30 factura, 33 factura electrónica, 60 nota
	// de crédito, 46 factura de compra electrónica).
	Documento   string
	Tipo        int
	Folio       int64
	Observacion string
	MontoExento int64
	MontoAfecto int64
	Line        int
}

// Cases returns every case of the plan's emitting sets, in order.
func (p *Plan) Cases() []*Case {
	var out []*Case
	for _, s := range p.Sets {
		if s.Kind.Emits() {
			out = append(out, s.Cases...)
		}
	}
	return out
}
