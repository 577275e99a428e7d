package libro

import (
	"errors"
	"fmt"
	"sort"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/signer"
)

// Ventas builds the Libro de Ventas of docs and signs it with cert: see
// NewVentas and Libro.Sign.
func Ventas(opts Options, cert *signer.Certificate, docs ...[]byte) ([]byte, error) {
	l, err := NewVentas(opts, docs...)
	if err != nil {
		return nil, err
	}
	return l.Sign(cert)
}

// NewVentas builds the Libro de Ventas (TipoOperacion VENTA) of the
// company's signed documents. Each of docs is a signed DTE or an envelope
// (EnvioDTE, EnvioBOLETA) of the company's, read with dte's parser; every
// document must have been issued by opts.Emisor, and a type and folio may
// appear once.
//
// Facturas (33, 34) and their notes (56, 61) get one Detalle row each,
// sorted by type and folio, with the receptor, the date and the amounts of
// the document's Totales: MntExe, MntNeto, MntIVA with TasaImp, other taxes
// in OtrosImp, IVA retained in IVARetTotal (code 15) or IVARetParcial, and
// MntTotal. Boletas (39, 41) are totalled in the summary only, as the SII
// asks. ResumenPeriodo totals each type: TotDoc, TotMntExe, TotMntNeto,
// TotMntIVA, the other taxes and retentions, TotMntTotal. Guías (52) belong
// in the Libro de Guías, facturas de compra (46) in the Libro de Compras;
// export documents (110–112), whose amounts are in another currency, and
// liquidaciones-factura (43) are refused.
func NewVentas(opts Options, docs ...[]byte) (*Libro, error) {
	parsed, err := readDocuments(docs)
	if err != nil {
		return nil, err
	}
	if len(parsed) == 0 {
		return nil, errors.New("libro: ventas: no documents")
	}
	em, err := dte.ParseRUT(opts.Emisor.Rut)
	if err != nil {
		return nil, fmt.Errorf("libro: options.Emisor.Rut: %w", err)
	}
	ms := months{}
	seen := map[string]bool{}
	l := &Libro{ID: opts.id("LibroVentas"), Schema: SchemaCompraVenta, TmstFirma: opts.at()}
	sums := map[int]*Totales{}
	for _, d := range parsed {
		what := fmt.Sprintf("tipo %d folio %d", d.Tipo, d.Folio)
		if r, err := dte.ParseRUT(d.Emisor.Rut); err != nil || r != em {
			return nil, fmt.Errorf("libro: ventas: %s was issued by %q, not by the company %s", what, d.Emisor.Rut, em)
		}
		key := dte.DocumentID(d.Tipo, d.Folio)
		if seen[key] {
			return nil, fmt.Errorf("libro: ventas: %s is given twice", what)
		}
		seen[key] = true
		switch {
		case d.Tipo == dte.GuiaDespachoElectronica:
			return nil, fmt.Errorf("libro: ventas: %s is a guía de despacho: guías go in the Libro de Guías (Guias)", what)
		case d.Tipo == dte.FacturaCompraElectronica:
			return nil, fmt.Errorf("libro: ventas: %s is a factura de compra, a purchase: it goes in the Libro de Compras (Compras)", what)
		case d.Tipo.IsExport():
			return nil, fmt.Errorf("libro: ventas: %s is an export document, whose amounts are in another currency: this libro is not built for it", what)
		case d.Tipo == dte.LiquidacionFacturaElectronica:
			return nil, fmt.Errorf("libro: ventas: %s is a liquidación-factura: this libro is not built for it", what)
		}
		row, err := ventaRow(d, what)
		if err != nil {
			return nil, err
		}
		ms.add(d.FechaEmision)
		t := sums[row.TpoDoc]
		if t == nil {
			t = &Totales{TpoDoc: row.TpoDoc}
			sums[row.TpoDoc] = t
		}
		t.Add(&row)
		if !d.Tipo.IsBoleta() {
			l.Detalle = append(l.Detalle, row)
		}
	}
	if l.Caratula, err = opts.caratula("ventas", OperacionVenta, ms); err != nil {
		return nil, err
	}
	sort.Slice(l.Detalle, func(i, j int) bool {
		a, b := &l.Detalle[i], &l.Detalle[j]
		return a.TpoDoc < b.TpoDoc || (a.TpoDoc == b.TpoDoc && a.NroDoc < b.NroDoc)
	})
	l.ResumenPeriodo = sortedTotales(sums)
	return l, nil
}

// ventaRow reads the Detalle row of a sales document.
func ventaRow(d *dte.Document, what string) (Detalle, error) {
	tt := &d.Totales
	row := Detalle{TpoDoc: int(d.Tipo), NroDoc: d.Folio, FchDoc: d.FechaEmision, RznSoc: d.Receptor.RazonSocial}
	if d.Receptor.Rut != "" {
		r, err := dte.ParseRUT(d.Receptor.Rut)
		if err != nil {
			return row, fmt.Errorf("libro: ventas: %s: receptor RUT: %w", what, err)
		}
		row.RUTDoc = r.String()
	}
	var err error
	amount := func(field string, v dte.Decimal) int64 {
		n, e := pesos(what, "Totales/"+field, v)
		if e != nil && err == nil {
			err = e
		}
		return n
	}
	row.MntExe = amount("MntExe", tt.MntExe)
	row.MntNeto = amount("MntNeto", tt.MntNeto)
	row.MntIVA = amount("IVA", tt.IVA)
	row.MntTotal = amount("MntTotal", tt.MntTotal)
	if tt.TasaIVA.IsSet() && tt.TasaIVA.Sign() > 0 {
		row.TasaImp = tt.TasaIVA
	}
	for _, im := range tt.ImptoReten {
		m := amount(fmt.Sprintf("ImptoReten[%d]/MontoImp", im.TipoImp), im.MontoImp)
		switch dte.TaxCodeKind(im.TipoImp) {
		case dte.TaxIVAWithheld:
			if im.TipoImp == 15 {
				row.IVARetTotal += m
			} else {
				row.IVARetParcial += m
			}
		case dte.TaxAdded, dte.TaxWithheld:
			row.OtrosImp = append(row.OtrosImp, OtroImp{CodImp: im.TipoImp, TasaImp: im.TasaImp, MntImp: m})
		default:
			return row, fmt.Errorf("libro: ventas: %s: tax code %d has no place in the libro", what, im.TipoImp)
		}
	}
	return row, err
}

// Add totals one Detalle row of t's type into t, as the SII's cuadratura
// asks: the row counts in TotDoc, an annulled one also in TotAnulado and
// with no amount; every amount adds to its total, IVA not recoverable and
// other taxes by code, and the rows with IVA de uso común or IVA retained
// are counted. FctProp and TotCredIVAUsoComun are left as they are.
func (t *Totales) Add(r *Detalle) {
	t.TotDoc++
	if r.Anulado {
		t.TotAnulado++
		return
	}
	t.TotMntExe += r.MntExe
	t.TotMntNeto += r.MntNeto
	t.TotMntIVA += r.MntIVA
	for _, n := range r.IVANoRec {
		found := false
		for i := range t.TotIVANoRec {
			if t.TotIVANoRec[i].CodIVANoRec == n.CodIVANoRec {
				t.TotIVANoRec[i].TotOpIVANoRec++
				t.TotIVANoRec[i].TotMntIVANoRec += n.MntIVANoRec
				found = true
			}
		}
		if !found {
			t.TotIVANoRec = append(t.TotIVANoRec, TotIVANoRec{CodIVANoRec: n.CodIVANoRec, TotOpIVANoRec: 1, TotMntIVANoRec: n.MntIVANoRec})
		}
	}
	if r.IVAUsoComun != 0 {
		t.TotOpIVAUsoComun++
		t.TotIVAUsoComun += r.IVAUsoComun
	}
	for _, o := range r.OtrosImp {
		found := false
		for i := range t.TotOtrosImp {
			if t.TotOtrosImp[i].CodImp == o.CodImp {
				t.TotOtrosImp[i].TotMntImp += o.MntImp
				found = true
			}
		}
		if !found {
			t.TotOtrosImp = append(t.TotOtrosImp, TotOtrosImp{CodImp: o.CodImp, TotMntImp: o.MntImp})
		}
	}
	if r.IVARetTotal != 0 {
		t.TotOpIVARetTotal++
		t.TotIVARetTotal += r.IVARetTotal
	}
	if r.IVARetParcial != 0 {
		t.TotOpIVARetParcial++
		t.TotIVARetParcial += r.IVARetParcial
	}
	t.TotMntTotal += r.MntTotal
}

// Totalize returns the summary of rows: one Totales per document type, in
// ascending order, each the Add of its type's rows.
func Totalize(rows []Detalle) []Totales {
	sums := map[int]*Totales{}
	for i := range rows {
		t := sums[rows[i].TpoDoc]
		if t == nil {
			t = &Totales{TpoDoc: rows[i].TpoDoc}
			sums[rows[i].TpoDoc] = t
		}
		t.Add(&rows[i])
	}
	return sortedTotales(sums)
}

// sortedTotales returns the summary rows in ascending type order, with
// their tax entries sorted by code.
func sortedTotales(sums map[int]*Totales) []Totales {
	out := make([]Totales, 0, len(sums))
	for _, t := range sums {
		sort.Slice(t.TotIVANoRec, func(i, j int) bool { return t.TotIVANoRec[i].CodIVANoRec < t.TotIVANoRec[j].CodIVANoRec })
		sort.Slice(t.TotOtrosImp, func(i, j int) bool { return t.TotOtrosImp[i].CodImp < t.TotOtrosImp[j].CodImp })
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].TpoDoc < out[j].TpoDoc })
	return out
}

// readDocuments parses signed DTEs and envelopes into their documents, in
// order.
func readDocuments(files [][]byte) ([]*dte.Document, error) {
	var out []*dte.Document
	for i, data := range files {
		root, err := dte.RootName(data)
		if err != nil {
			return nil, fmt.Errorf("libro: document %d: %w", i+1, err)
		}
		switch root {
		case "DTE":
			d, err := dte.ParseDTE(data)
			if err != nil {
				return nil, fmt.Errorf("libro: document %d: %w", i+1, err)
			}
			out = append(out, d)
		case "EnvioDTE", "EnvioBOLETA":
			e, err := dte.ParseEnvio(data)
			if err != nil {
				return nil, fmt.Errorf("libro: document %d: %w", i+1, err)
			}
			out = append(out, e.Documentos...)
		default:
			return nil, fmt.Errorf("libro: document %d: root element <%s> is not a DTE, EnvioDTE or EnvioBOLETA", i+1, root)
		}
	}
	return out, nil
}
