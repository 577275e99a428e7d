package libro

import (
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/signer"
)

// Compra is one purchase document of the Libro de Compras: a row of the
// set de pruebas' LIBRO DE COMPRAS table, or any document the company
// received. Amounts are whole pesos; the IVA is computed (19 % of MntNeto,
// rounded half up on the row).
type Compra struct {
	// Tipo is the document type (TpoDoc). The set's names map as the SII's
	// tables do: FACTURA (paper) 30, FACTURA ELECTRONICA 33, NOTA DE
	// CREDITO (paper) 60, FACTURA DE COMPRA ELECTRONICA 46; also 32, 34,
	// 55, 56, 61 and the other types of the libro's schema.
	Tipo dte.TipoDTE
	// Folio is the document's number.
	Folio int64
	// Fecha is the document's date, YYYY-MM-DD.
	Fecha string
	// RutEmisor is the supplier: who issued the document, or, for a
	// factura de compra (46), whom the company bought from.
	RutEmisor string
	// RazonSocial is the supplier's name (optional, at most 50 characters
	// are written).
	RazonSocial string
	// MntExe is the exempt amount, MntNeto the taxable one ("monto
	// afecto").
	MntExe  int64
	MntNeto int64
	// IVAUsoComun marks IVA de uso común: the IVA goes to IVAUsoComun, and
	// the libro's Options.FctProp gives the credit.
	IVAUsoComun bool
	// IVANoRec is the code of IVA not recoverable (1 to 4, or 9; 4 is
	// "entrega gratuita del proveedor"); 0 when the IVA is recoverable.
	IVANoRec int
	// RetencionTotal marks a factura de compra (or its note) whose IVA the
	// company retained in full: MntIVA is the IVA, OtrosImp code 15 the
	// same amount, and MntTotal the neto plus the exempt amount.
	RetencionTotal bool
	// TpoDocRef and FolioDocRef name the document a note modifies
	// (optional).
	TpoDocRef   dte.TipoDTE
	FolioDocRef int64
}

// doctoTypes are the document types of the LibroCompraVenta schema
// (DoctoType).
var doctoTypes = map[dte.TipoDTE]bool{
	29: true, 30: true, 32: true, 33: true, 34: true, 35: true, 38: true, 39: true, 40: true, 41: true,
	43: true, 45: true, 46: true, 48: true, 53: true, 55: true, 56: true, 60: true, 61: true,
	101: true, 102: true, 103: true, 104: true, 105: true, 106: true, 108: true, 109: true,
	110: true, 111: true, 112: true, 175: true, 180: true, 185: true, 500: true, 501: true,
	900: true, 901: true, 902: true, 903: true, 904: true, 905: true, 906: true, 907: true, 909: true,
	910: true, 911: true, 914: true, 918: true, 919: true, 920: true, 921: true, 922: true, 924: true,
}

// Compras builds the Libro de Compras of compras and signs it with cert:
// see NewCompras and Libro.Sign.
func Compras(opts Options, cert *signer.Certificate, compras []Compra) ([]byte, error) {
	l, err := NewCompras(opts, compras)
	if err != nil {
		return nil, err
	}
	return l.Sign(cert)
}

// NewCompras builds the Libro de Compras (TipoOperacion COMPRA): one
// Detalle row per entry, in the order given, and ResumenPeriodo totalled
// per type. Each row's IVA is round(MntNeto × 19 %): recoverable IVA goes to
// MntIVA; IVA de uso común to IVAUsoComun (MntIVA 0), and its type's
// summary carries FctProp and TotCredIVAUsoComun = round(FctProp ×
// TotIVAUsoComun); IVA not recoverable to IVANoRec with its code (MntIVA
// 0); a total retention as MntIVA plus OtrosImp code 15. MntTotal is
// MntExe + MntNeto + the whole IVA, less the IVA retained.
//
// A bad entry is an error naming it (compras[i]) and its field.
func NewCompras(opts Options, compras []Compra) (*Libro, error) {
	if len(compras) == 0 {
		return nil, errors.New("libro: compras: no entries")
	}
	var fct *big.Rat
	if opts.FctProp.IsSet() {
		if !opts.FctProp.Valid() || opts.FctProp.Places() > 3 || opts.FctProp.Sign() <= 0 ||
			opts.FctProp.Rat().Cmp(big.NewRat(99999, 1000)) > 0 {
			return nil, fmt.Errorf("libro: options.FctProp %q is not a factor between 0.001 and 99.999 with at most 3 decimals", opts.FctProp)
		}
		fct = opts.FctProp.Rat()
	}
	ms := months{}
	seen := map[string]int{}
	l := &Libro{ID: opts.id("LibroCompras"), Schema: SchemaCompraVenta, TmstFirma: opts.at()}
	for i, c := range compras {
		row, err := compraRow(i, c)
		if err != nil {
			return nil, err
		}
		key := fmt.Sprintf("%s|%d|%d", row.RUTDoc, row.TpoDoc, row.NroDoc)
		if j, dup := seen[key]; dup {
			return nil, fmt.Errorf("libro: compras[%d] repeats compras[%d] (supplier %s, tipo %d, folio %d)", i, j, row.RUTDoc, row.TpoDoc, row.NroDoc)
		}
		seen[key] = i
		if c.IVAUsoComun && fct == nil {
			return nil, fmt.Errorf("libro: compras[%d] has IVA de uso común: set options.FctProp, the factor de proporcionalidad", i)
		}
		ms.add(c.Fecha)
		l.Detalle = append(l.Detalle, row)
	}
	var err error
	if l.Caratula, err = opts.caratula("compras", OperacionCompra, ms); err != nil {
		return nil, err
	}
	l.ResumenPeriodo = Totalize(l.Detalle)
	for i := range l.ResumenPeriodo {
		t := &l.ResumenPeriodo[i]
		if t.TotOpIVAUsoComun > 0 {
			t.FctProp = opts.FctProp
			t.TotCredIVAUsoComun = roundMul(t.TotIVAUsoComun, fct)
		}
	}
	return l, nil
}

// compraRow checks entry i and computes its row.
func compraRow(i int, c Compra) (Detalle, error) {
	field := func(name string) string { return fmt.Sprintf("compras[%d].%s", i, name) }
	fail := func(name, format string, args ...any) (Detalle, error) {
		return Detalle{}, fmt.Errorf("libro: %s: %s", field(name), fmt.Sprintf(format, args...))
	}
	if !doctoTypes[c.Tipo] {
		return fail("Tipo", "%d is not a document type of the Libro de Compras (30 factura, 33 factura electrónica, 46 factura de compra, 60 nota de crédito...)", c.Tipo)
	}
	if c.Folio <= 0 || c.Folio > 9_999_999_999 {
		return fail("Folio", "%d is not a folio of 1 to 10 digits", c.Folio)
	}
	if _, err := time.Parse("2006-01-02", c.Fecha); err != nil {
		return fail("Fecha", "%q is not a YYYY-MM-DD date", c.Fecha)
	}
	rut, err := dte.ParseRUT(c.RutEmisor)
	if err != nil {
		return fail("RutEmisor", "%v", err)
	}
	for name, v := range map[string]int64{"MntExe": c.MntExe, "MntNeto": c.MntNeto} {
		if v < 0 || v > maxAmount {
			return fail(name, "%d is not an amount of 0 to 15 digits", v)
		}
	}
	marks := 0
	for _, b := range []bool{c.IVAUsoComun, c.IVANoRec != 0, c.RetencionTotal} {
		if b {
			marks++
		}
	}
	if marks > 1 {
		return fail("IVAUsoComun", "a row's IVA is either de uso común, not recoverable or retained, not several")
	}
	switch c.IVANoRec {
	case 0, 1, 2, 3, 4, 9:
	default:
		return fail("IVANoRec", "%d is not a code of IVA not recoverable (1, 2, 3, 4, 9)", c.IVANoRec)
	}
	if c.RetencionTotal && !c.Tipo.RetainsIVAInFull() {
		return fail("RetencionTotal", "tipo %d does not retain the IVA in full (46 and its notes 56, 61 do)", c.Tipo)
	}
	if marks > 0 && c.MntNeto == 0 {
		return fail("MntNeto", "a row without a taxable amount has no IVA to mark")
	}
	if c.TpoDocRef != 0 && !doctoTypes[c.TpoDocRef] {
		return fail("TpoDocRef", "%d is not a document type of the libro", c.TpoDocRef)
	}
	if (c.TpoDocRef != 0) != (c.FolioDocRef != 0) || c.FolioDocRef < 0 || c.FolioDocRef > 9_999_999_999 {
		return fail("FolioDocRef", "a reference needs both TpoDocRef and a FolioDocRef of 1 to 10 digits")
	}
	row := Detalle{TpoDoc: int(c.Tipo), NroDoc: c.Folio, FchDoc: c.Fecha, RUTDoc: rut.String(), RznSoc: c.RazonSocial,
		TpoDocRef: int(c.TpoDocRef), FolioDocRef: c.FolioDocRef, MntExe: c.MntExe, MntNeto: c.MntNeto}
	iva := int64(0)
	if c.MntNeto > 0 {
		row.TasaImp = tasa19
		iva = ivaOf(c.MntNeto)
	}
	row.MntTotal = c.MntExe + c.MntNeto + iva
	switch {
	case c.IVAUsoComun:
		row.IVAUsoComun = iva
	case c.IVANoRec != 0:
		row.IVANoRec = []IVANoRec{{CodIVANoRec: c.IVANoRec, MntIVANoRec: iva}}
	case c.RetencionTotal:
		row.MntIVA = iva
		row.OtrosImp = []OtroImp{{CodImp: 15, TasaImp: tasa19, MntImp: iva}}
		row.MntTotal -= iva
	default:
		row.MntIVA = iva
	}
	return row, nil
}
