package libro

import (
	"errors"
	"fmt"
	"sort"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/signer"
)

// ConsumoFolios builds the RCOF of boletas and signs it with cert: see
// NewConsumo and Consumo.Sign.
func ConsumoFolios(opts Options, cert *signer.Certificate, boletas ...[]byte) ([]byte, error) {
	c, err := NewConsumo(opts, boletas...)
	if err != nil {
		return nil, err
	}
	return c.Sign(cert)
}

// NewConsumo builds the Consumo de Folios (RCOF) of the company's signed
// boletas: each of boletas is a signed DTE or envelope (an EnvioBOLETA of
// the set), of types 39, 41 and 61 (the credit notes of boletas). The
// report spans the boletas' days (FchInicio, FchFinal; one day in a daily
// report) and has one Resumen per type present, in ascending order, with
// the sums of the documents' MntNeto, IVA, MntExe and MntTotal (TasaIVA 19
// when there is IVA), FoliosEmitidos and FoliosUtilizados (the number of
// documents: this package reports no folios annulled at the SII) and the
// runs of consecutive folios used.
//
// The RCOF is not required in production since 2022-08-01 (Res. Ex. SII
// N° 53/2022: the SII answers reparo 250); the boleta certification still
// asks for the one of its set, sent through DTEUpload.
func NewConsumo(opts Options, boletas ...[]byte) (*Consumo, error) {
	parsed, err := readDocuments(boletas)
	if err != nil {
		return nil, err
	}
	if len(parsed) == 0 {
		return nil, errors.New("libro: consumo: no boletas")
	}
	em, err := dte.ParseRUT(opts.Emisor.Rut)
	if err != nil {
		return nil, fmt.Errorf("libro: options.Emisor.Rut: %w", err)
	}
	c := &Consumo{ID: opts.id("ConsumoFolios"), Schema: SchemaConsumo}
	cr := &c.Caratula
	cr.RutEmisor = em.String()
	if opts.RutEnvia != "" {
		r, err := dte.ParseRUT(opts.RutEnvia)
		if err != nil {
			return nil, fmt.Errorf("libro: options.RutEnvia: %w", err)
		}
		cr.RutEnvia = r.String()
	}
	if cr.FchResol, cr.NroResol, err = resolucion(opts.Emisor); err != nil {
		return nil, err
	}
	cr.SecEnvio = opts.SecEnvio
	if cr.SecEnvio == 0 {
		cr.SecEnvio = 1
	}
	if cr.SecEnvio < 0 || cr.SecEnvio > 999 {
		return nil, fmt.Errorf("libro: options.SecEnvio %d is not 1 to 999", opts.SecEnvio)
	}
	cr.TmstFirmaEnv = opts.at()
	sums := map[int]*ResumenConsumo{}
	folios := map[int][]int64{}
	seen := map[string]bool{}
	for _, d := range parsed {
		what := fmt.Sprintf("tipo %d folio %d", d.Tipo, d.Folio)
		if d.Tipo != dte.BoletaElectronica && d.Tipo != dte.BoletaExentaElectronica && d.Tipo != dte.NotaCreditoElectronica {
			return nil, fmt.Errorf("libro: consumo: %s: the RCOF reports boletas (39, 41) and their credit notes (61) only", what)
		}
		if r, err := dte.ParseRUT(d.Emisor.Rut); err != nil || r != em {
			return nil, fmt.Errorf("libro: consumo: %s was issued by %q, not by the company %s", what, d.Emisor.Rut, em)
		}
		key := dte.DocumentID(d.Tipo, d.Folio)
		if seen[key] {
			return nil, fmt.Errorf("libro: consumo: %s is given twice", what)
		}
		seen[key] = true
		if len(d.FechaEmision) != 10 {
			return nil, fmt.Errorf("libro: consumo: %s has no date", what)
		}
		if cr.FchInicio == "" || d.FechaEmision < cr.FchInicio {
			cr.FchInicio = d.FechaEmision
		}
		if d.FechaEmision > cr.FchFinal {
			cr.FchFinal = d.FechaEmision
		}
		r := sums[int(d.Tipo)]
		if r == nil {
			r = &ResumenConsumo{TipoDocumento: int(d.Tipo)}
			sums[int(d.Tipo)] = r
		}
		tt := &d.Totales
		for _, a := range []struct {
			field string
			v     dte.Decimal
			dst   *int64
		}{{"MntNeto", tt.MntNeto, &r.MntNeto}, {"IVA", tt.IVA, &r.MntIva}, {"MntExe", tt.MntExe, &r.MntExento}, {"MntTotal", tt.MntTotal, &r.MntTotal}} {
			n, err := pesos(what, "Totales/"+a.field, a.v)
			if err != nil {
				return nil, err
			}
			if n < 0 {
				return nil, fmt.Errorf("libro: consumo: %s: Totales/%s is negative", what, a.field)
			}
			*a.dst += n
		}
		r.FoliosEmitidos++
		folios[int(d.Tipo)] = append(folios[int(d.Tipo)], d.Folio)
	}
	for _, t := range []int{39, 41, 61} {
		r := sums[t]
		if r == nil {
			continue
		}
		if r.MntIva > 0 {
			r.TasaIVA = tasa19
		}
		r.FoliosUtilizados = r.FoliosEmitidos + r.FoliosAnulados
		r.RangoUtilizados = Rangos(folios[t])
		c.Resumen = append(c.Resumen, *r)
	}
	return c, nil
}

// Rangos returns the runs of consecutive folios in folios (in any order,
// repeats ignored), ascending: {1, 2, 3, 7} gives 1–3 and 7–7.
func Rangos(folios []int64) []Rango {
	if len(folios) == 0 {
		return nil
	}
	fs := append([]int64(nil), folios...)
	sort.Slice(fs, func(i, j int) bool { return fs[i] < fs[j] })
	out := []Rango{{Inicial: fs[0], Final: fs[0]}}
	for _, f := range fs[1:] {
		last := &out[len(out)-1]
		switch {
		case f == last.Final:
		case f == last.Final+1:
			last.Final = f
		default:
			out = append(out, Rango{Inicial: f, Final: f})
		}
	}
	return out
}
