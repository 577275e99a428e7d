package siitest

import (
	"bytes"
	"fmt"
	"maps"
	"math/big"
	"strings"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/chile"
	"github.com/dtekit/dtekit/libro"
	"github.com/dtekit/dtekit/signer"
)

// This file is the fake's review of libros (LibroCompraVenta, LibroGuia)
// and of the RCOF (ConsumoFolios), uploaded through DTEUpload like an
// envelope (sii-wave3-notes §3.6, §3.7, §4.4).
//
// A libro that passes the upload's checks gets a track id; getEstUp then
// answers LSO and, at the next query, its final state:
//
//   - upload STATUS 7: the root names no schema in xsi:schemaLocation
//     ("SCH-00001 Invalid Schema Name"), or Options.Schema or the reader
//     refuses it (RSC when rejections are deferred);
//   - LRF: the signature is missing, broken, or does not cover EnvioLibro;
//   - LRC: the carátula does not name the company (RutEmisorLibro), the
//     token's holder (RutEnvia) or the company's resolution
//     (SetResolucion), or lacks what its TipoLibro or TipoEnvio needs
//     (FolioNotificacion for ESPECIAL, CodAutRec for RECTIFICA,
//     NroSegmento for PARCIAL);
//   - LNC: the parts do not match TipoEnvio (TOTAL without ResumenPeriodo,
//     PARCIAL without ResumenSegmento or with ResumenPeriodo, FINAL with
//     Detalle, AJUSTE with no libro to adjust), or the libro's identity
//     (company, kind, TipoOperacion, period, TipoLibro,
//     FolioNotificacion) already has an accepted TOTAL or FINAL: "Libro
//     Cerrado";
//   - LRH: the libro is not "cuadrado": a summary row differs from the sum
//     of its type's Detalle rows (TotDoc counting annulled rows, amounts
//     not), a row's MntTotal or IVA breaks its formula, the credit of IVA
//     de uso común is not round(FctProp × TotIVAUsoComun), or, as the SII's
//     certification reviewer checks, a row of a sales libro or of a Libro
//     de Guías differs from the document the fake received (type, folio,
//     date, RUT, amounts, kind of transfer) or names one it never
//     received. The SII's own upload checks the libro's cuadratura; its
//     reviewer compares with the documents when the set is declared, and
//     answers SRH. The fake answers at once, so a test sees the mismatch
//     where it uploads.
//   - LOK otherwise.
//
// An RCOF walks the envelope's states (Options.Steps) to RFR (signature),
// RCT (carátula), RCH (its summary: types other than 39, 41, 61 or
// repeated, FoliosUtilizados ≠ FoliosEmitidos + FoliosAnulados, ranges
// that disagree with the counts or overlap, MntTotal ≠ MntNeto + MntIva +
// MntExento, neto or IVA on boletas exentas; counts, amounts or folios
// that differ from the boletas of its days the fake received, for a day
// from 2021 on; or a SecEnvio not above the last one accepted for its
// day), or, when all is right, RPR with reparo 250 for a day from
// 2022-08-01 on (the RVD is no longer required; the SII answers so in
// certification too, sii-wave3-notes §4.3) and EPR before. The notes
// describe the cross-check with the boletas as giving reparos; the fake
// refuses instead (RCH), since getEstUp tells a reparo 250 from another
// one only by mail, and a test must see the mismatch.

// LibroReview is what the fake read of an uploaded libro or RCOF and what
// its review found.
type LibroReview struct {
	// Root is "LibroCompraVenta", "LibroGuia" or "ConsumoFolios".
	Root string
	// TipoOperacion, TipoLibro, TipoEnvio, Periodo and FolioNotificacion
	// are the libro's carátula; an RCOF has its FchInicio as Periodo and
	// its SecEnvio.
	TipoOperacion, TipoLibro, TipoEnvio, Periodo string
	FolioNotificacion                            int64
	SecEnvio                                     int
	// Problems explain the final state, one line each (empty for LOK and
	// EPR; the reparo 250 of an RCOF).
	Problems []string
}

// resolucion is a company's resolution, as its carátulas must name it.
type resolucion struct {
	fch string
	nro int
}

// SetResolucion records company's resolution in this environment
// (FchResol, NroResol; 0 in certification): the envelopes, libros and
// RCOFs whose carátula names another are then refused (RCT, LRC; the SII
// answers CRT-3-19). Until it is set, any resolution is accepted.
func (f *Fake) SetResolucion(company, fchResol string, nroResol int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.resol[strings.ToUpper(company)] = resolucion{fch: fchResol, nro: nroResol}
}

// libroSchemas maps each root the fake reviews as a libro to its schema.
var libroSchemas = map[string]string{
	libro.RootCompraVenta: libro.SchemaCompraVenta,
	libro.RootGuia:        libro.SchemaGuia,
	libro.RootConsumo:     libro.SchemaConsumo,
}

// receiveLibro files an uploaded libro or RCOF under a new track id, as
// receive does an envelope; ok is false when data is neither.
func (f *Fake) receiveLibro(data []byte, tokenRUT, company string) (e *Envelope, status int, errs []string, ok bool) {
	root, _ := dte.RootName(data)
	want, ok := libroSchemas[root]
	if !ok {
		return nil, 0, nil, false
	}
	reject := func(lines ...string) (*Envelope, int, []string, bool) {
		if !f.opts.DeferRejections {
			return nil, 7, lines, true
		}
		rev := &LibroReview{Root: root, Problems: lines}
		return f.file(data, tokenRUT, company, rev, "RSC", []string{}), 0, nil, true
	}
	var (
		cv     *libro.Libro
		guia   *libro.LibroGuia
		rcof   *libro.Consumo
		schema string
		err    error
	)
	switch root {
	case libro.RootCompraVenta:
		if cv, err = libro.Parse(data); err == nil {
			schema = cv.Schema
		}
	case libro.RootGuia:
		if guia, err = libro.ParseGuia(data); err == nil {
			schema = guia.Schema
		}
	default:
		if rcof, err = libro.ParseConsumo(data); err == nil {
			schema = rcof.Schema
		}
	}
	if err != nil {
		return reject(err.Error())
	}
	if schema != want {
		return reject("SCH-00001 Invalid Schema Name")
	}
	if f.opts.Schema != nil {
		if lines := f.opts.Schema(root, data); len(lines) > 0 {
			return reject(lines...)
		}
	}
	signedID := ""
	switch {
	case cv != nil:
		signedID = cv.ID
	case guia != nil:
		signedID = guia.ID
	default:
		signedID = rcof.ID
	}
	sigOK := libroSigned(data, signedID)
	f.mu.Lock()
	defer f.mu.Unlock()
	var rev *LibroReview
	var final string
	var steps []string
	switch {
	case cv != nil:
		rev, final = f.reviewCV(cv, sigOK, tokenRUT, company)
	case guia != nil:
		rev, final = f.reviewGuia(guia, sigOK, tokenRUT, company)
	default:
		rev, final = f.reviewConsumo(rcof, sigOK, tokenRUT, company)
		steps = truncateSteps(f.opts.Steps, final)
	}
	return f.fileLocked(data, tokenRUT, company, rev, final, steps), 0, nil, true
}

// file files a reviewed libro; see fileLocked.
func (f *Fake) file(data []byte, tokenRUT, company string, rev *LibroReview, final string, steps []string) *Envelope {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fileLocked(data, tokenRUT, company, rev, final, steps)
}

// fileLocked gives a reviewed libro its track id and timeline (LSO then
// the final state, unless steps are given). Call with f.mu held.
func (f *Fake) fileLocked(data []byte, tokenRUT, company string, rev *LibroReview, final string, steps []string) *Envelope {
	if steps == nil {
		steps = []string{"LSO"}
	}
	e := &Envelope{Company: strings.ToUpper(company), Sender: tokenRUT, Received: f.now(), Raw: bytes.Clone(data),
		Final: final, Steps: steps, Libro: rev}
	if f.opts.ReviewDelay > 0 {
		e.ReviewedAt = e.Received.Add(f.opts.ReviewDelay)
	}
	f.trackNext++
	e.TrackID = fmt.Sprintf("%010d", f.trackNext)
	f.envelopes = append(f.envelopes, e)
	f.byTrack[e.TrackID] = e
	f.journalEnvelope(e)
	return e
}

// libroSigned reports whether data's signatures all verify and one of them
// covers the element with ID id.
func libroSigned(data []byte, id string) bool {
	sigs, err := signer.Verify(data)
	if err != nil {
		return false
	}
	for _, s := range sigs {
		if s.ID == id && id != "" && s.Err == nil {
			return true
		}
	}
	return false
}

// problems collects a review's findings.
type problems []string

func (p *problems) add(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

// caratula checks what every libro's carátula must name. Call with f.mu
// held.
func (f *Fake) caratula(p *problems, c *libro.Caratula, tokenRUT, company string) {
	if !strings.EqualFold(c.RutEmisorLibro, company) {
		p.add("RutEmisorLibro %s no es la empresa %s", c.RutEmisorLibro, company)
	}
	if !strings.EqualFold(c.RutEnvia, tokenRUT) {
		p.add("RutEnvia %s no es quien envia (%s)", c.RutEnvia, tokenRUT)
	}
	if r, ok := f.resol[strings.ToUpper(company)]; ok && (r.fch != c.FchResol || r.nro != c.NroResol) {
		p.add("FchResol %s NroResol %d no son los de la empresa (%s, %d)", c.FchResol, c.NroResol, r.fch, r.nro)
	}
	switch {
	case c.TipoLibro == libro.LibroEspecial && c.FolioNotificacion <= 0:
		p.add("un libro ESPECIAL requiere FolioNotificacion")
	case c.TipoLibro == libro.LibroRectifica && c.CodAutRec == "":
		p.add("un libro RECTIFICA requiere CodAutRec")
	}
	if c.TipoEnvio == "PARCIAL" && c.NroSegmento <= 0 {
		p.add("un envio PARCIAL requiere NroSegmento")
	}
}

// tipoEnvio checks which parts a libro carries against its TipoEnvio.
func tipoEnvio(p *problems, tipo string, segmento, periodo, detalle bool) {
	switch tipo {
	case "", libro.EnvioTotal:
		if !periodo {
			p.add("un envio TOTAL requiere ResumenPeriodo")
		}
	case "PARCIAL":
		if periodo || !segmento || !detalle {
			p.add("un envio PARCIAL lleva ResumenSegmento y Detalle, sin ResumenPeriodo")
		}
	case "FINAL":
		if !periodo || detalle {
			p.add("un envio FINAL lleva solo ResumenPeriodo")
		}
	case "AJUSTE":
		if !periodo {
			p.add("un envio AJUSTE requiere ResumenPeriodo")
		}
	}
}

// closed reports whether a libro of the same identity was already accepted
// whole (TOTAL or FINAL with LOK), and whether any was (for AJUSTE). Call
// with f.mu held.
func (f *Fake) closed(company string, r *LibroReview) (whole, some bool) {
	for _, e := range f.envelopes {
		o := e.Libro
		if o == nil || e.Final != "LOK" || !strings.EqualFold(e.Company, company) || o.Root != r.Root ||
			o.TipoOperacion != r.TipoOperacion || o.Periodo != r.Periodo || o.TipoLibro != r.TipoLibro ||
			o.FolioNotificacion != r.FolioNotificacion {
			continue
		}
		some = true
		if o.TipoEnvio == "" || o.TipoEnvio == libro.EnvioTotal || o.TipoEnvio == "FINAL" {
			whole = true
		}
	}
	return whole, some
}

// identity reviews a libro's envío kind against the libros accepted
// before: LNC problems. Call with f.mu held.
func (f *Fake) identity(p *problems, company string, r *LibroReview) {
	whole, some := f.closed(company, r)
	switch {
	case r.TipoEnvio == "AJUSTE" && !some:
		p.add("no hay un libro aceptado que ajustar")
	case whole && r.TipoEnvio != "AJUSTE" && r.TipoLibro != libro.LibroRectifica:
		p.add("Libro Cerrado: ya se acepto un envio TOTAL o FINAL de este libro (%s %s %s folio %d)", r.TipoOperacion, r.Periodo, r.TipoLibro, r.FolioNotificacion)
	}
}

// gate runs the checks a libro passes before its totals are looked at:
// the signature (LRF), the carátula (LRC; extra adds the kind's own
// checks), and the envío's parts and identity (LNC, with seg, per and det
// telling whether ResumenSegmento, ResumenPeriodo and Detalle are there).
// done is true, with the final state and rev.Problems set, when one fails.
// Call with f.mu held.
func (f *Fake) gate(rev *LibroReview, sigOK bool, id string, c *libro.Caratula, seg, per, det bool,
	tokenRUT, company string, extra func(*problems)) (final string, done bool) {
	var p problems
	switch {
	case !sigOK:
		p.add("la firma del libro no es valida o no cubre EnvioLibro %q", id)
		final = "LRF"
	default:
		if f.caratula(&p, c, tokenRUT, company); extra != nil {
			extra(&p)
		}
		if len(p) > 0 {
			final = "LRC"
			break
		}
		if tipoEnvio(&p, c.TipoEnvio, seg, per, det); len(p) == 0 {
			f.identity(&p, company, rev)
		}
		final = "LNC"
	}
	if len(p) == 0 {
		return "", false
	}
	rev.Problems = p
	return final, true
}

// received returns the documents of company the fake accepted in
// envelopes, by type and folio. Call with f.mu held.
func (f *Fake) received(company string) map[[2]int64]*dte.Document {
	out := map[[2]int64]*dte.Document{}
	for _, e := range f.envelopes {
		if e.Libro != nil || e.Final != "EPR" || !strings.EqualFold(e.Company, company) {
			continue
		}
		env, err := dte.ParseEnvio(e.Raw)
		if err != nil || len(env.Documentos) != len(e.Docs) {
			continue
		}
		for i, d := range env.Documentos {
			if e.Docs[i].Result != Rejected {
				out[[2]int64{int64(d.Tipo), d.Folio}] = d
			}
		}
	}
	return out
}

// amount reads a document amount as whole pesos (0 when absent).
func amount(d dte.Decimal) int64 {
	n, _ := d.Int64()
	return n
}

// reviewCV reviews a LibroCompraVenta. Call with f.mu held.
func (f *Fake) reviewCV(l *libro.Libro, sigOK bool, tokenRUT, company string) (*LibroReview, string) {
	c := &l.Caratula
	rev := &LibroReview{Root: libro.RootCompraVenta, TipoOperacion: c.TipoOperacion, TipoLibro: c.TipoLibro,
		TipoEnvio: c.TipoEnvio, Periodo: c.PeriodoTributario, FolioNotificacion: c.FolioNotificacion}
	operacion := func(p *problems) {
		if c.TipoOperacion != libro.OperacionVenta && c.TipoOperacion != libro.OperacionCompra {
			p.add("TipoOperacion %q no es COMPRA ni VENTA", c.TipoOperacion)
		}
	}
	if final, done := f.gate(rev, sigOK, l.ID, c, l.ResumenSegmento != nil, l.ResumenPeriodo != nil, len(l.Detalle) > 0, tokenRUT, company, operacion); done {
		return rev, final
	}
	var p problems
	resumen := l.ResumenPeriodo
	if c.TipoEnvio == "PARCIAL" {
		resumen = l.ResumenSegmento
	}
	cuadraturaCV(&p, resumen, l.Detalle)
	if c.TipoOperacion == libro.OperacionVenta {
		docs := f.received(company)
		for i := range l.Detalle {
			ventaMatches(&p, &l.Detalle[i], docs)
		}
	}
	if len(p) > 0 {
		rev.Problems = p
		return rev, "LRH"
	}
	return rev, "LOK"
}

// cuadraturaCV checks every Detalle row's formulas, and every summary row
// of a type with rows against their sum (libro.Totalize, the SII's rule).
func cuadraturaCV(p *problems, resumen []libro.Totales, detalle []libro.Detalle) {
	for i := range detalle {
		rowFormulas(p, &detalle[i])
	}
	byType := map[int]*libro.Totales{}
	for i := range resumen {
		r := &resumen[i]
		if byType[r.TpoDoc] != nil {
			p.add("TpoDoc %d aparece dos veces en el resumen", r.TpoDoc)
		}
		byType[r.TpoDoc] = r
		if r.FctProp.IsSet() && r.FctProp.Valid() {
			want := roundTimes(r.TotIVAUsoComun, r.FctProp.Rat())
			if r.TotCredIVAUsoComun != want {
				p.add("TpoDoc %d: TotCredIVAUsoComun %d, FctProp %s x TotIVAUsoComun %d da %d", r.TpoDoc, r.TotCredIVAUsoComun, r.FctProp, r.TotIVAUsoComun, want)
			}
		} else if r.TotIVAUsoComun != 0 {
			p.add("TpoDoc %d: TotIVAUsoComun sin FctProp", r.TpoDoc)
		}
	}
	for _, s := range libro.Totalize(detalle) {
		tipo, r := s.TpoDoc, byType[s.TpoDoc]
		if r == nil {
			p.add("TpoDoc %d tiene Detalle pero no esta en el resumen", tipo)
			continue
		}
		for _, c := range []struct {
			name      string
			got, want int64
		}{
			{"TotDoc", int64(r.TotDoc), int64(s.TotDoc)}, {"TotAnulado", int64(r.TotAnulado), int64(s.TotAnulado)},
			{"TotMntExe", r.TotMntExe, s.TotMntExe}, {"TotMntNeto", r.TotMntNeto, s.TotMntNeto}, {"TotMntIVA", r.TotMntIVA, s.TotMntIVA},
			{"TotIVAUsoComun", r.TotIVAUsoComun, s.TotIVAUsoComun}, {"TotIVARetTotal", r.TotIVARetTotal, s.TotIVARetTotal},
			{"TotIVARetParcial", r.TotIVARetParcial, s.TotIVARetParcial}, {"TotMntTotal", r.TotMntTotal, s.TotMntTotal},
		} {
			if c.got != c.want {
				p.add("TpoDoc %d: %s %d, la suma del Detalle es %d", tipo, c.name, c.got, c.want)
			}
		}
		if r.TotOpIVAUsoComun != 0 && r.TotOpIVAUsoComun != s.TotOpIVAUsoComun {
			p.add("TpoDoc %d: TotOpIVAUsoComun %d, el Detalle tiene %d", tipo, r.TotOpIVAUsoComun, s.TotOpIVAUsoComun)
		}
		if a, b := noRecMap(r), noRecMap(&s); !maps.Equal(a, b) {
			p.add("TpoDoc %d: TotIVANoRec %v, la suma del Detalle es %v", tipo, a, b)
		}
		if a, b := otrosMap(r), otrosMap(&s); !maps.Equal(a, b) {
			p.add("TpoDoc %d: TotOtrosImp %v, la suma del Detalle es %v", tipo, a, b)
		}
	}
}

// roundTimes returns round(n × f), half away from zero.
func roundTimes(n int64, f *big.Rat) int64 {
	v, _ := dte.DecimalFromRat(new(big.Rat).Mul(new(big.Rat).SetInt64(n), f), 0).Int64()
	return v
}

// ivaAt returns the IVA of neto at rate percent, rounded half up.
func ivaAt(neto int64, rate dte.Decimal) int64 {
	return roundTimes(neto, new(big.Rat).Quo(rate.Rat(), big.NewRat(100, 1)))
}

// rowFormulas checks one row: its IVA splits round(MntNeto × TasaImp) and
// MntTotal adds up.
func rowFormulas(p *problems, d *libro.Detalle) {
	if d.Anulado {
		return
	}
	noRec := int64(0)
	for _, n := range d.IVANoRec {
		noRec += n.MntIVANoRec
	}
	if d.TasaImp.Valid() && d.MntNeto > 0 {
		if got, want := d.MntIVA+noRec+d.IVAUsoComun, ivaAt(d.MntNeto, d.TasaImp); got != want {
			p.add("Detalle tipo %d folio %d: MntIVA + IVANoRec + IVAUsoComun = %d, MntNeto x TasaImp = %d", d.TpoDoc, d.NroDoc, got, want)
		}
	}
	total := d.MntExe + d.MntNeto + d.MntIVA + noRec + d.IVAUsoComun - d.IVARetTotal - d.IVARetParcial
	for _, o := range d.OtrosImp {
		switch dte.TaxCodeKind(o.CodImp) {
		case dte.TaxAdded:
			total += o.MntImp
		case dte.TaxWithheld, dte.TaxIVAWithheld:
			total -= o.MntImp
		default:
			return // a code whose effect the fake does not know
		}
	}
	if total != d.MntTotal {
		p.add("Detalle tipo %d folio %d: MntTotal %d, sus montos suman %d", d.TpoDoc, d.NroDoc, d.MntTotal, total)
	}
}

// ventaMatches checks a sales row against the document the fake received.
func ventaMatches(p *problems, d *libro.Detalle, docs map[[2]int64]*dte.Document) {
	switch d.TpoDoc {
	case 33, 34, 43, 46, 56, 61, 110, 111, 112:
	default:
		return // paper documents and totals-only types
	}
	if d.Anulado {
		return
	}
	doc := docs[[2]int64{int64(d.TpoDoc), d.NroDoc}]
	if doc == nil {
		p.add("Detalle tipo %d folio %d: el SII no ha recibido ese documento", d.TpoDoc, d.NroDoc)
		return
	}
	tt := &doc.Totales
	for _, c := range []struct {
		name      string
		got, want int64
	}{
		{"MntExe", d.MntExe, amount(tt.MntExe)}, {"MntNeto", d.MntNeto, amount(tt.MntNeto)},
		{"MntIVA", d.MntIVA, amount(tt.IVA)}, {"MntTotal", d.MntTotal, amount(tt.MntTotal)},
	} {
		if c.got != c.want {
			p.add("Detalle tipo %d folio %d: %s %d, el documento dice %d", d.TpoDoc, d.NroDoc, c.name, c.got, c.want)
		}
	}
	if d.FchDoc != "" && d.FchDoc != doc.FechaEmision {
		p.add("Detalle tipo %d folio %d: FchDoc %s, el documento dice %s", d.TpoDoc, d.NroDoc, d.FchDoc, doc.FechaEmision)
	}
	if d.RUTDoc != "" && !chile.SameRUT(d.RUTDoc, doc.Receptor.Rut) {
		p.add("Detalle tipo %d folio %d: RUTDoc %s, el documento dice %s", d.TpoDoc, d.NroDoc, d.RUTDoc, doc.Receptor.Rut)
	}
}

func noRecMap(t *libro.Totales) map[int]int64 {
	m := map[int]int64{}
	for _, n := range t.TotIVANoRec {
		m[n.CodIVANoRec] += n.TotMntIVANoRec
	}
	return m
}

func otrosMap(t *libro.Totales) map[int]int64 {
	m := map[int]int64{}
	for _, o := range t.TotOtrosImp {
		m[o.CodImp] += o.TotMntImp
	}
	return m
}

// reviewGuia reviews a LibroGuia. Call with f.mu held.
func (f *Fake) reviewGuia(l *libro.LibroGuia, sigOK bool, tokenRUT, company string) (*LibroReview, string) {
	c := &l.Caratula
	rev := &LibroReview{Root: libro.RootGuia, TipoLibro: c.TipoLibro, TipoEnvio: c.TipoEnvio,
		Periodo: c.PeriodoTributario, FolioNotificacion: c.FolioNotificacion}
	if final, done := f.gate(rev, sigOK, l.ID, c, l.ResumenSegmento != nil, l.ResumenPeriodo != nil, len(l.Detalle) > 0, tokenRUT, company, nil); done {
		return rev, final
	}
	var p problems
	r := l.ResumenPeriodo
	if c.TipoEnvio == "PARCIAL" {
		r = l.ResumenSegmento
	}
	docs := f.received(company)
	var want libro.ResumenGuias
	traslados := map[int]libro.TotTraslado{}
	for i := range l.Detalle {
		d := &l.Detalle[i]
		switch d.Anulado {
		case libro.AnuladoAntes:
			want.TotFolAnulado++
			continue
		case libro.AnuladoDespues:
			want.TotGuiaAnulada++
			if docs[[2]int64{52, d.Folio}] == nil {
				p.add("Detalle folio %d: guia anulada que el SII no ha recibido", d.Folio)
			}
			continue
		}
		if d.TpoOper == 1 {
			want.TotGuiaVenta++
			want.TotMntGuiaVta += d.MntTotal
		} else {
			t := traslados[d.TpoOper]
			t.TpoTraslado, t.CantGuia, t.MntGuia = d.TpoOper, t.CantGuia+1, t.MntGuia+d.MntTotal
			traslados[d.TpoOper] = t
		}
		if d.TasaImp.Valid() && d.MntNeto > 0 {
			if iva := ivaAt(d.MntNeto, d.TasaImp); iva != d.IVA {
				p.add("Detalle folio %d: IVA %d, MntNeto x TasaImp = %d", d.Folio, d.IVA, iva)
			}
		}
		guiaMatches(&p, d, docs)
	}
	if r != nil {
		for _, c := range []struct {
			name      string
			got, want int64
		}{
			{"TotFolAnulado", int64(r.TotFolAnulado), int64(want.TotFolAnulado)}, {"TotGuiaAnulada", int64(r.TotGuiaAnulada), int64(want.TotGuiaAnulada)},
			{"TotGuiaVenta", int64(r.TotGuiaVenta), int64(want.TotGuiaVenta)}, {"TotMntGuiaVta", r.TotMntGuiaVta, want.TotMntGuiaVta},
		} {
			if c.got != c.want {
				p.add("%s %d, el Detalle da %d", c.name, c.got, c.want)
			}
		}
		seen := map[int]bool{}
		for _, t := range r.TotTraslado {
			seen[t.TpoTraslado] = true
			if t.TpoTraslado >= 8 {
				continue // export transfers carry no TpoOper to count by
			}
			if w := traslados[t.TpoTraslado]; w.CantGuia != t.CantGuia || w.MntGuia != t.MntGuia {
				p.add("TotTraslado %d: %d guias por %d, el Detalle da %d por %d", t.TpoTraslado, t.CantGuia, t.MntGuia, w.CantGuia, w.MntGuia)
			}
		}
		for k, w := range traslados {
			if !seen[k] && k != 0 {
				p.add("TotTraslado %d falta: el Detalle tiene %d guias", k, w.CantGuia)
			}
		}
	}
	if len(p) > 0 {
		rev.Problems = p
		return rev, "LRH"
	}
	return rev, "LOK"
}

// guiaMatches checks a guía's row against the guía the fake received.
func guiaMatches(p *problems, d *libro.DetalleGuia, docs map[[2]int64]*dte.Document) {
	doc := docs[[2]int64{52, d.Folio}]
	if doc == nil {
		p.add("Detalle folio %d: el SII no ha recibido esa guia", d.Folio)
		return
	}
	if got := amount(doc.Totales.MntTotal); got != d.MntTotal {
		p.add("Detalle folio %d: MntTotal %d, la guia dice %d", d.Folio, d.MntTotal, got)
	}
	if doc.IndTraslado != nil && *doc.IndTraslado <= 7 && *doc.IndTraslado != d.TpoOper {
		p.add("Detalle folio %d: TpoOper %d, la guia tiene IndTraslado %d", d.Folio, d.TpoOper, *doc.IndTraslado)
	}
	if d.FchDoc != "" && d.FchDoc != doc.FechaEmision {
		p.add("Detalle folio %d: FchDoc %s, la guia dice %s", d.Folio, d.FchDoc, doc.FechaEmision)
	}
	if d.RUTDoc != "" && !chile.SameRUT(d.RUTDoc, doc.Receptor.Rut) {
		p.add("Detalle folio %d: RUTDoc %s, la guia dice %s", d.Folio, d.RUTDoc, doc.Receptor.Rut)
	}
}

// reviewConsumo reviews an RCOF. Call with f.mu held.
func (f *Fake) reviewConsumo(c *libro.Consumo, sigOK bool, tokenRUT, company string) (*LibroReview, string) {
	cr := &c.Caratula
	rev := &LibroReview{Root: libro.RootConsumo, Periodo: cr.FchInicio, SecEnvio: cr.SecEnvio}
	var p problems
	if !sigOK {
		p.add("la firma no es valida o no cubre DocumentoConsumoFolios %q", c.ID)
		rev.Problems = p
		return rev, "RFR"
	}
	f.caratula(&p, &libro.Caratula{RutEmisorLibro: cr.RutEmisor, RutEnvia: cr.RutEnvia, FchResol: cr.FchResol, NroResol: cr.NroResol}, tokenRUT, company)
	if cr.FchInicio == "" || cr.FchFinal < cr.FchInicio {
		p.add("FchInicio %q y FchFinal %q no forman un periodo", cr.FchInicio, cr.FchFinal)
	}
	if len(p) > 0 {
		rev.Problems = p
		return rev, "RCT"
	}
	seen := map[int]bool{}
	for _, r := range c.Resumen {
		t := r.TipoDocumento
		switch {
		case t != 39 && t != 41 && t != 61:
			p.add("TipoDocumento %d no es 39, 41 ni 61", t)
		case seen[t]:
			p.add("TipoDocumento %d aparece dos veces", t)
		}
		seen[t] = true
		if r.FoliosUtilizados != r.FoliosEmitidos+r.FoliosAnulados {
			p.add("TipoDocumento %d: FoliosUtilizados %d no es FoliosEmitidos %d + FoliosAnulados %d", t, r.FoliosUtilizados, r.FoliosEmitidos, r.FoliosAnulados)
		}
		if r.MntTotal != r.MntNeto+r.MntIva+r.MntExento {
			p.add("TipoDocumento %d: MntTotal %d no es MntNeto + MntIva + MntExento = %d", t, r.MntTotal, r.MntNeto+r.MntIva+r.MntExento)
		}
		if t == 41 && (r.MntNeto != 0 || r.MntIva != 0) {
			p.add("TipoDocumento 41: una boleta exenta no lleva MntNeto ni MntIva")
		}
		used, bad1 := rangeCount(r.RangoUtilizados)
		void, bad2 := rangeCount(r.RangoAnulados)
		switch {
		case bad1 || bad2:
			p.add("TipoDocumento %d: un rango tiene Inicial mayor que Final", t)
		case len(r.RangoUtilizados) > 0 && used != int64(r.FoliosEmitidos):
			p.add("TipoDocumento %d: RangoUtilizados cubre %d folios, FoliosEmitidos es %d", t, used, r.FoliosEmitidos)
		case len(r.RangoAnulados) > 0 && void != int64(r.FoliosAnulados):
			p.add("TipoDocumento %d: RangoAnulados cubre %d folios, FoliosAnulados es %d", t, void, r.FoliosAnulados)
		case overlap(r.RangoUtilizados, r.RangoAnulados):
			p.add("TipoDocumento %d: RangoUtilizados y RangoAnulados se traslapan", t)
		}
	}
	if len(p) == 0 {
		f.consumoMatches(&p, c, company)
	}
	for _, e := range f.envelopes {
		o := e.Libro
		if o == nil || o.Root != libro.RootConsumo || !strings.EqualFold(e.Company, company) || o.Periodo != rev.Periodo {
			continue
		}
		if (e.Final == "EPR" || e.Final == "RPR") && o.SecEnvio >= cr.SecEnvio {
			p.add("La secuencia enviada (%d) no corresponde con la ultima registrada en el SII (%d)", cr.SecEnvio, o.SecEnvio)
			break
		}
	}
	if len(p) > 0 {
		rev.Problems = p
		return rev, "RCH"
	}
	if cr.FchInicio >= "2022-08-01" {
		rev.Problems = []string{"250 Envio de RVD no es obligatorio desde agosto 2022"}
		return rev, "RPR"
	}
	return rev, "EPR"
}

// consumoMatches checks an RCOF against the boletas (39, 41) of its days
// the fake received (through DTEUpload or the REST API) and accepted: per
// type, FoliosEmitidos is their count, MntNeto and MntExento their sums,
// MntIva the summed MntNeto times 19 % (rounded to the peso), MntTotal
// MntNeto + MntIva + MntExento, RangoUtilizados their folios; a type received and
// not reported is a problem too. Days before 2021-01-01 are not checked:
// boletas were not sent to the SII then (sii-wave3-notes §4.2). Credit
// notes (61) are not checked. Call with f.mu held.
func (f *Fake) consumoMatches(p *problems, c *libro.Consumo, company string) {
	cr := &c.Caratula
	if cr.FchInicio < "2021-01-01" {
		return
	}
	type sums struct {
		n, neto, iva, exe, total int64
		folios                   map[int64]bool
	}
	got := map[int]*sums{}
	for key, d := range f.received(company) {
		t := int(key[0])
		if (t != 39 && t != 41) || d.FechaEmision < cr.FchInicio || d.FechaEmision > cr.FchFinal {
			continue
		}
		s := got[t]
		if s == nil {
			s = &sums{folios: map[int64]bool{}}
			got[t] = s
		}
		tt := &d.Totales
		s.n++
		s.neto, s.iva, s.exe, s.total = s.neto+amount(tt.MntNeto), s.iva+amount(tt.IVA), s.exe+amount(tt.MntExe), s.total+amount(tt.MntTotal)
		s.folios[key[1]] = true
	}
	for _, r := range c.Resumen {
		t := r.TipoDocumento
		if t != 39 && t != 41 {
			continue
		}
		s := got[t]
		if s == nil {
			s = &sums{folios: map[int64]bool{}}
		}
		delete(got, t)
		if t == 39 {
			// The RVD's rule (Res. Ex. SII N° 74/2020, "Listado resumen de
			// campos RVD"; sii-wave3-notes §4.1): MntIva is the day's
			// MntNeto times the rate, not the sum of each boleta's IVA,
			// and MntTotal adds the three amounts.
			s.iva = ivaAt(s.neto, "19")
			s.total = s.neto + s.iva + s.exe
		}
		for _, v := range []struct {
			name      string
			got, want int64
		}{{"FoliosEmitidos", int64(r.FoliosEmitidos), s.n}, {"MntNeto", r.MntNeto, s.neto}, {"MntIva", r.MntIva, s.iva},
			{"MntExento", r.MntExento, s.exe}, {"MntTotal", r.MntTotal, s.total}} {
			if v.got != v.want {
				p.add("TipoDocumento %d: %s %d, las boletas que el SII recibio de %s a %s dan %d", t, v.name, v.got, cr.FchInicio, cr.FchFinal, v.want)
			}
		}
		for _, g := range r.RangoUtilizados {
			for n := g.Inicial; n <= g.Final && n-g.Inicial < 1_000_000; n++ {
				if !s.folios[n] {
					p.add("TipoDocumento %d: el folio %d de RangoUtilizados no es una boleta que el SII recibio", t, n)
					break
				}
			}
		}
	}
	for _, t := range []int{39, 41} {
		if s := got[t]; s != nil {
			p.add("TipoDocumento %d: el SII recibio %d boleta(s) de %s a %s que el RCOF no informa", t, s.n, cr.FchInicio, cr.FchFinal)
		}
	}
}

// rangeCount counts the folios of runs; bad is true when one is reversed.
func rangeCount(rs []libro.Rango) (n int64, bad bool) {
	for _, r := range rs {
		if r.Final < r.Inicial {
			return 0, true
		}
		n += r.Final - r.Inicial + 1
	}
	return n, false
}

// overlap reports whether a run of a meets a run of b.
func overlap(a, b []libro.Rango) bool {
	for _, x := range a {
		for _, y := range b {
			if x.Inicial <= y.Final && y.Inicial <= x.Final {
				return true
			}
		}
	}
	return false
}
