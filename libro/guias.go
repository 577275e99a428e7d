package libro

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/signer"
)

// Guias builds the Libro de Guías of guias and signs it with cert: see
// NewGuias and LibroGuia.Sign.
func Guias(opts Options, cert *signer.Certificate, guias ...[]byte) ([]byte, error) {
	l, err := NewGuias(opts, guias...)
	if err != nil {
		return nil, err
	}
	return l.Sign(cert)
}

// NewGuias builds the Libro de Guías de Despacho of the company's signed
// guías (type 52; each of guias is a signed DTE or an EnvioDTE, whose other
// types are left out). Each guía gets a Detalle row, by folio: its
// IndTraslado as TpoOper, date, receptor, MntNeto, TasaImp, IVA and
// MntTotal; opts.Facturas adds the invoice of a guía invoiced in the
// period (TpoDocRef, FolioDocRef, FchDocRef), and opts.Anuladas marks the
// annulled ones, whose rows carry only the folio and the mark (a folio
// annulled before sending needs no document). ResumenPeriodo counts the
// annulled folios (TotFolAnulado) and guías (TotGuiaAnulada), the sales
// (TotGuiaVenta, TpoOper 1, with TotMntGuiaVta) and, per other kind of
// transfer, TotTraslado with the guías' count and total.
//
// For the set de pruebas: case 1 is a traslado interno (IndTraslado 5,
// receptor the company itself), case 2 a sale invoiced in the period (give
// its factura in Facturas), case 3 a sale annulled after it was sent
// (Anuladas: AnuladoDespues).
func NewGuias(opts Options, guias ...[]byte) (*LibroGuia, error) {
	parsed, err := readDocuments(guias)
	if err != nil {
		return nil, err
	}
	em, err := dte.ParseRUT(opts.Emisor.Rut)
	if err != nil {
		return nil, fmt.Errorf("libro: options.Emisor.Rut: %w", err)
	}
	ms := months{}
	byFolio := map[int64]*dte.Document{}
	for _, d := range parsed {
		if d.Tipo != dte.GuiaDespachoElectronica {
			continue
		}
		if r, err := dte.ParseRUT(d.Emisor.Rut); err != nil || r != em {
			return nil, fmt.Errorf("libro: guias: guía folio %d was issued by %q, not by the company %s", d.Folio, d.Emisor.Rut, em)
		}
		if byFolio[d.Folio] != nil {
			return nil, fmt.Errorf("libro: guias: guía folio %d is given twice", d.Folio)
		}
		byFolio[d.Folio] = d
		ms.add(d.FechaEmision)
	}
	for folio, mark := range opts.Anuladas {
		switch {
		case mark != AnuladoAntes && mark != AnuladoDespues && mark != RecibidaParcial:
			return nil, fmt.Errorf("libro: options.Anuladas[%d] = %d is not 1 (annulled before sending), 2 (after) or 3 (received in part)", folio, mark)
		case folio <= 0 || folio > 9_999_999_999:
			return nil, fmt.Errorf("libro: options.Anuladas: %d is not a folio", folio)
		case mark != AnuladoAntes && byFolio[folio] == nil:
			return nil, fmt.Errorf("libro: options.Anuladas[%d]: no guía with that folio was given", folio)
		}
	}
	for folio, f := range opts.Facturas {
		switch {
		case byFolio[folio] == nil:
			return nil, fmt.Errorf("libro: options.Facturas[%d]: no guía with that folio was given", folio)
		case !doctoTypes[f.Tipo] || f.Folio <= 0 || f.Folio > 9_999_999_999:
			return nil, fmt.Errorf("libro: options.Facturas[%d]: tipo %d folio %d is not an invoice of the libro's types", folio, f.Tipo, f.Folio)
		}
		if _, err := time.Parse("2006-01-02", f.Fecha); err != nil {
			return nil, fmt.Errorf("libro: options.Facturas[%d].Fecha %q is not a YYYY-MM-DD date", folio, f.Fecha)
		}
		if m := opts.Anuladas[folio]; m == AnuladoAntes || m == AnuladoDespues {
			return nil, fmt.Errorf("libro: options.Facturas[%d]: the guía is annulled (options.Anuladas), it cannot have been invoiced", folio)
		}
	}
	if len(byFolio) == 0 && len(opts.Anuladas) == 0 {
		return nil, errors.New("libro: guias: no guías de despacho (type 52) among the documents")
	}
	l := &LibroGuia{ID: opts.id("LibroGuias"), Schema: SchemaGuia, TmstFirma: opts.at()}
	if l.Caratula, err = opts.caratula("guias", "", ms); err != nil {
		return nil, err
	}
	folios := make([]int64, 0, len(byFolio)+len(opts.Anuladas))
	for f := range byFolio {
		folios = append(folios, f)
	}
	for f, mark := range opts.Anuladas {
		if byFolio[f] == nil && mark == AnuladoAntes {
			folios = append(folios, f)
		}
	}
	sort.Slice(folios, func(i, j int) bool { return folios[i] < folios[j] })
	res := &ResumenGuias{}
	traslados := map[int]*TotTraslado{}
	for _, folio := range folios {
		row := DetalleGuia{Folio: folio, Anulado: opts.Anuladas[folio]}
		switch row.Anulado {
		case AnuladoAntes:
			res.TotFolAnulado++
			l.Detalle = append(l.Detalle, row)
			continue
		case AnuladoDespues:
			res.TotGuiaAnulada++
			l.Detalle = append(l.Detalle, row)
			continue
		}
		d := byFolio[folio]
		if err := guiaRow(&row, d); err != nil {
			return nil, err
		}
		if f, ok := opts.Facturas[folio]; ok {
			row.TpoDocRef, row.FolioDocRef, row.FchDocRef = int(f.Tipo), f.Folio, f.Fecha
		}
		l.Detalle = append(l.Detalle, row)
		kind := 0
		if d.IndTraslado != nil {
			kind = *d.IndTraslado
		}
		if kind == 1 {
			res.TotGuiaVenta++
			res.TotMntGuiaVta += row.MntTotal
			continue
		}
		t := traslados[kind]
		if t == nil {
			t = &TotTraslado{TpoTraslado: kind}
			traslados[kind] = t
		}
		t.CantGuia++
		t.MntGuia += row.MntTotal
	}
	for _, t := range traslados {
		res.TotTraslado = append(res.TotTraslado, *t)
	}
	sort.Slice(res.TotTraslado, func(i, j int) bool { return res.TotTraslado[i].TpoTraslado < res.TotTraslado[j].TpoTraslado })
	l.ResumenPeriodo = res
	return l, nil
}

// guiaRow fills the row of a guía that is not annulled.
func guiaRow(row *DetalleGuia, d *dte.Document) error {
	what := fmt.Sprintf("guía folio %d", d.Folio)
	if d.IndTraslado == nil || *d.IndTraslado < 1 || *d.IndTraslado > 9 {
		return fmt.Errorf("libro: guias: %s has no IndTraslado (1 to 9)", what)
	}
	if k := *d.IndTraslado; k <= 7 {
		row.TpoOper = k
	}
	row.FchDoc, row.RznSoc = d.FechaEmision, d.Receptor.RazonSocial
	if d.Receptor.Rut != "" {
		r, err := dte.ParseRUT(d.Receptor.Rut)
		if err != nil {
			return fmt.Errorf("libro: guias: %s: receptor RUT: %w", what, err)
		}
		row.RUTDoc = r.String()
	}
	var err error
	for _, a := range []struct {
		field string
		v     dte.Decimal
		dst   *int64
	}{{"MntNeto", d.Totales.MntNeto, &row.MntNeto}, {"IVA", d.Totales.IVA, &row.IVA}, {"MntTotal", d.Totales.MntTotal, &row.MntTotal}} {
		if *a.dst, err = pesos(what, "Totales/"+a.field, a.v); err != nil {
			return err
		}
		if *a.dst < 0 {
			return fmt.Errorf("libro: guias: %s: Totales/%s is negative", what, a.field)
		}
	}
	if row.IVA > 0 && d.Totales.TasaIVA.IsSet() {
		row.TasaImp = d.Totales.TasaIVA
	}
	return nil
}
