package dte

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/signer"
	"github.com/dtekit/dtekit/ted"
)

// VerifyReport is the outcome of Verify: one entry per document, plus the
// envelope's own signature when the input is an EnvioDTE or EnvioBOLETA.
type VerifyReport struct {
	// Kind is the root element: "DTE", "EnvioDTE" or "EnvioBOLETA".
	Kind string `json:"kind"`
	// Envelope reports the SetDTE signature of an envelope (nil for a DTE).
	Envelope *Check `json:"envelope,omitempty"`
	// Documents holds one report per DTE, in file order.
	Documents []DocumentReport `json:"documents"`
}

// Check is the result of one verification step; Error is empty when it
// passed.
type Check struct {
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

func check(err error) Check {
	if err != nil {
		return Check{Error: err.Error()}
	}
	return Check{OK: true}
}

// DocumentReport is the verification of one DTE.
type DocumentReport struct {
	ID         string  `json:"id"`
	Tipo       TipoDTE `json:"tipo_dte"`
	Folio      int64   `json:"folio"`
	MntTotal   Decimal `json:"monto_total"`
	Signature  Check   `json:"signature"`
	TED        Check   `json:"ted"`
	Totals     Check   `json:"totals"`
	Standalone bool    `json:"signature_checked_standalone,omitempty"`
}

// OK reports whether every check of the document passed.
func (d DocumentReport) OK() bool { return d.Signature.OK && d.TED.OK && d.Totals.OK }

// OK reports whether every signature, stamp and total in the report passed.
func (r *VerifyReport) OK() bool {
	if r.Envelope != nil && !r.Envelope.OK {
		return false
	}
	if len(r.Documents) == 0 {
		return false
	}
	for _, d := range r.Documents {
		if !d.OK() {
			return false
		}
	}
	return true
}

// ErrVerification is returned by Verify when any check failed; the report
// says which.
var ErrVerification = errors.New("dte: verification failed")

// Verify checks a signed DTE, EnvioDTE or EnvioBOLETA: every XML signature
// (each document's and the envelope's), every TED (FRMT with the CAF's key,
// the CAF's FRMA with keys, the DD against the document, MNT = MntTotal) and
// every document's totals, recomputed from its lines with ComputeTotals and
// compared with its Totales. keys is typically caf.SIIKeys(), plus a test
// authority's key for test CAFs.
//
// The report is returned whenever the input could be read; the error is
// ErrVerification (wrapped) when any check failed, or a parse error.
func Verify(data []byte, keys caf.TrustedKeys) (*VerifyReport, error) {
	root, err := RootName(data)
	if err != nil {
		return nil, err
	}
	rep := &VerifyReport{Kind: root}
	var docs []*Document
	setID := ""
	switch root {
	case "DTE":
		d, err := ParseDTE(data)
		if err != nil {
			return nil, err
		}
		docs = []*Document{d}
	case "EnvioDTE", "EnvioBOLETA":
		env, err := ParseEnvio(data)
		if err != nil {
			return nil, err
		}
		docs, setID = env.Documentos, env.SetID
	default:
		return nil, fmt.Errorf("dte: verify: root element %s is not DTE, EnvioDTE or EnvioBOLETA", root)
	}

	sigs, sigErr := signer.Verify(data)
	byID := make(map[string]signer.VerifiedSignature, len(sigs))
	for _, s := range sigs {
		byID[s.ID] = s
	}
	sigCheck := func(id string) (Check, bool) {
		s, ok := byID[id]
		switch {
		case ok:
			return check(s.Err), s.Standalone
		case sigErr != nil:
			return check(fmt.Errorf("no signature references %q: %v", id, sigErr)), false
		default:
			return check(fmt.Errorf("no signature references %q", id)), false
		}
	}
	if setID != "" {
		c, _ := sigCheck(setID)
		rep.Envelope = &c
	}
	for _, d := range docs {
		dr := DocumentReport{ID: d.ID, Tipo: d.Tipo, Folio: d.Folio, MntTotal: d.Totales.MntTotal}
		dr.Signature, dr.Standalone = sigCheck(d.ID)
		dr.TED = check(verifyTED(d, keys))
		dr.Totals = check(verifyTotals(d))
		rep.Documents = append(rep.Documents, dr)
	}
	if !rep.OK() {
		return rep, fmt.Errorf("%w: %s", ErrVerification, rep.summary())
	}
	return rep, nil
}

// summary names the failed checks.
func (r *VerifyReport) summary() string {
	var out []string
	if r.Envelope != nil && !r.Envelope.OK {
		out = append(out, "envelope signature: "+r.Envelope.Error)
	}
	for _, d := range r.Documents {
		for _, c := range []struct {
			name string
			c    Check
		}{{"signature", d.Signature}, {"TED", d.TED}, {"totals", d.Totals}} {
			if !c.c.OK {
				out = append(out, fmt.Sprintf("%s %s: %s", d.ID, c.name, c.c.Error))
			}
		}
	}
	if len(out) == 0 {
		return "no documents"
	}
	return strings.Join(out, "; ")
}

// verifyTED checks the stamp and that its DD describes the document.
func verifyTED(d *Document, keys caf.TrustedKeys) error {
	if len(d.TED) == 0 {
		return errors.New("the document has no TED")
	}
	t, err := ted.Verify(d.TED, keys)
	if err != nil {
		return err
	}
	dd := t.DD
	var bad []string
	cmp := func(name, got, want string) {
		if got != want {
			bad = append(bad, fmt.Sprintf("%s %q, document %q", name, got, want))
		}
	}
	cmp("RE", canonRUT(dd.RE), canonRUT(d.Emisor.Rut))
	cmp("TD", strconv.Itoa(dd.TD), d.Tipo.String())
	cmp("F", strconv.FormatInt(dd.F, 10), strconv.FormatInt(d.Folio, 10))
	cmp("FE", dd.FE, d.FechaEmision)
	cmp("RR", canonRUT(dd.RR), canonRUT(d.Receptor.Rut))
	if !decimalEqual(Decimal(dd.MNT), d.Totales.MntTotal) {
		bad = append(bad, fmt.Sprintf("MNT %s, Totales/MntTotal %s", dd.MNT, d.Totales.MntTotal))
	}
	if len(bad) > 0 {
		return fmt.Errorf("TED DD does not match the document: %s", strings.Join(bad, "; "))
	}
	return nil
}

// canonRUT returns the canonical form of a RUT, or s itself when it does not
// parse (so the comparison still reports it).
func canonRUT(s string) string {
	if r, err := ParseRUT(s); err == nil {
		return r.String()
	}
	return s
}

// verifyTotals recomputes the document's amounts from its lines and compares
// them with what it declares.
func verifyTotals(d *Document) error {
	got, err := ComputeTotals(d.Request())
	if err != nil {
		return fmt.Errorf("cannot recompute the totals: %v", err)
	}
	var bad []string
	if len(got.Detalle) != len(d.Detalle) {
		bad = append(bad, fmt.Sprintf("%d lines recomputed, %d in the document", len(got.Detalle), len(d.Detalle)))
	} else {
		for i, l := range d.Detalle {
			if !decimalEqual(got.Detalle[i].MontoItem, l.MontoItem) {
				bad = append(bad, fmt.Sprintf("Detalle[%d]/MontoItem %s, recomputed %s", i+1, l.MontoItem, got.Detalle[i].MontoItem))
			}
		}
	}
	want, have := got.Totales, d.Totales
	for _, f := range []struct {
		name       string
		have, want Decimal
	}{
		{"MntNeto", have.MntNeto, want.MntNeto},
		{"MntExe", have.MntExe, want.MntExe},
		{"IVA", have.IVA, want.IVA},
		{"IVANoRet", have.IVANoRet, want.IVANoRet},
		{"MontoNF", have.MontoNF, want.MontoNF},
		{"MntTotal", have.MntTotal, want.MntTotal},
	} {
		if !decimalEqual(f.have, f.want) {
			bad = append(bad, fmt.Sprintf("Totales/%s %s, recomputed %s", f.name, orZero(f.have), orZero(f.want)))
		}
	}
	bad = append(bad, compareExtras(d, got)...)
	if len(bad) > 0 {
		return errors.New(strings.Join(bad, "; "))
	}
	return nil
}

// compareExtras compares the additional taxes, the commission sums and the
// second-currency totals of a document with the recomputed ones.
func compareExtras(d *Document, got *Totals) []string {
	var bad []string
	have, want := d.Totales.ImptoReten, got.Totales.ImptoReten
	if len(have) != len(want) {
		bad = append(bad, fmt.Sprintf("%d ImptoReten lines, recomputed %d", len(have), len(want)))
	} else {
		for i := range have {
			if have[i].TipoImp != want[i].TipoImp || !decimalEqual(have[i].MontoImp, want[i].MontoImp) {
				bad = append(bad, fmt.Sprintf("ImptoReten[%d] %d/%s, recomputed %d/%s", i+1,
					have[i].TipoImp, orZero(have[i].MontoImp), want[i].TipoImp, orZero(want[i].MontoImp)))
			}
		}
	}
	if hc, wc := d.Totales.Comisiones, got.Totales.Comisiones; (hc == nil) != (wc == nil) {
		bad = append(bad, "Totales/Comisiones present in only one of the document and the recomputation")
	} else if hc != nil && (!decimalEqual(hc.ValComNeto, wc.ValComNeto) || !decimalEqual(hc.ValComExe, wc.ValComExe) || !decimalEqual(hc.ValComIVA, wc.ValComIVA)) {
		bad = append(bad, fmt.Sprintf("Totales/Comisiones %s/%s/%s, recomputed %s/%s/%s",
			orZero(hc.ValComNeto), orZero(hc.ValComExe), orZero(hc.ValComIVA), orZero(wc.ValComNeto), orZero(wc.ValComExe), orZero(wc.ValComIVA)))
	}
	if ho, wo := d.OtraMoneda, got.OtraMoneda; ho != nil && wo != nil {
		if !decimalEqual(ho.MntExeOtrMnda, wo.MntExeOtrMnda) || !decimalEqual(ho.MntTotOtrMnda, wo.MntTotOtrMnda) {
			bad = append(bad, fmt.Sprintf("OtraMoneda %s/%s, recomputed %s/%s",
				orZero(ho.MntExeOtrMnda), orZero(ho.MntTotOtrMnda), orZero(wo.MntExeOtrMnda), orZero(wo.MntTotOtrMnda)))
		}
	} else if (ho == nil) != (wo == nil) {
		bad = append(bad, "OtraMoneda present in only one of the document and the recomputation")
	}
	return bad
}

func orZero(d Decimal) Decimal {
	if d == "" {
		return "0"
	}
	return d
}

// Request rebuilds, from a parsed document, the emission request its
// amounts derive from: lines with quantity, price and percentages (or the
// written MontoItem when a line has no quantity and price), global
// discounts, commissions, taxes and export data. Verify recomputes totals
// from it; it is also a starting point to re-issue a document.
//
// Additional taxes keep their rate when the document states one, so the
// amount is recomputed, and their written amount otherwise.
func (d *Document) Request() *EmitirDTERequest {
	r := &EmitirDTERequest{
		TipoDTE:      d.Tipo,
		FechaEmision: d.FechaEmision,
		Receptor:     d.Receptor,
		IndTraslado:  d.IndTraslado,
		TipoDespacho: d.TipoDespacho,
		IndServicio:  d.IndServicio,
		Referencias:  d.Referencias,
		Comisiones:   d.Comisiones,
		ExportData:   d.Export,
	}
	for _, l := range d.Detalle {
		ld := LineaDetalle{
			TipoDocLiq:   l.TipoDocLiq,
			Nombre:       l.Nombre,
			DscItem:      l.Descripcion,
			Cantidad:     l.Cantidad,
			Unidad:       l.Unidad,
			Precio:       l.Precio,
			DescuentoPct: l.DescuentoPct,
			RecargoPct:   l.RecargoPct,
		}
		if l.IndExe != 0 {
			v := l.IndExe
			ld.IndExe = &v
		}
		if len(l.CodImpAdic) > 0 {
			v := l.CodImpAdic[0]
			ld.CodImpAdic = &v
		}
		// A line without quantity and price, or whose discount or
		// surcharge is stated only as an amount (the schema allows it, the
		// request model does not), keeps its written MontoItem.
		if !l.Cantidad.IsSet() || !l.Precio.IsSet() ||
			(l.DescuentoMonto.IsSet() && !l.DescuentoPct.IsSet()) ||
			(l.RecargoMonto.IsSet() && !l.RecargoPct.IsSet()) {
			ld.MontoItem = l.MontoItem
			ld.DescuentoPct, ld.RecargoPct = "", ""
		}
		r.Detalle = append(r.Detalle, ld)
	}
	r.DescuentosGlobales = d.DescuentosGlobales
	for _, im := range d.Totales.ImptoReten {
		ir := ImpuestoRetencion{TipoImp: im.TipoImp, TasaImp: im.TasaImp}
		if !im.TasaImp.IsSet() {
			if v, ok := im.MontoImp.Int64(); ok {
				ir.MontoImp = &v
			}
		}
		r.ImpuestosRetenciones = append(r.ImpuestosRetenciones, ir)
	}
	return r
}
