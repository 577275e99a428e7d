package dte

import (
	"crypto/x509"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/internal/chile"
	"github.com/dtekit/dtekit/internal/xmldsig"
	"github.com/dtekit/dtekit/internal/xmltree"
	"github.com/dtekit/dtekit/signer"
	"github.com/dtekit/dtekit/ted"
)

// VerifyReport is the outcome of Verify: one entry per document, plus the
// envelope's own signature when the input is an EnvioDTE or EnvioBOLETA.
type VerifyReport struct {
	// Kind is the root element: "DTE", "EnvioDTE" or "EnvioBOLETA".
	Kind string `json:"kind"`
	// Envelope reports the SetDTE signature of an envelope (nil for a DTE):
	// its digest and value, and the policy of VerifyOptions.
	Envelope *Check `json:"envelope,omitempty"`
	// EnvelopeSigner is the certificate that signed the SetDTE.
	EnvelopeSigner *Signer `json:"envelope_signer,omitempty"`
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

// Signer describes the certificate embedded beside a signature (the one
// whose key made it).
type Signer struct {
	Subject   string    `json:"subject"`
	RUT       string    `json:"rut,omitempty"`
	Serial    string    `json:"serial"`
	Issuer    string    `json:"issuer"`
	NotBefore time.Time `json:"not_before"`
	NotAfter  time.Time `json:"not_after"`
}

// String gives the signer in one line: RUT, subject and serial.
func (s *Signer) String() string {
	if s == nil {
		return "unknown"
	}
	rut := s.RUT
	if rut == "" {
		rut = "no RUT"
	}
	return fmt.Sprintf("%s (%s, serial %s)", rut, s.Subject, s.Serial)
}

func signerOf(c *x509.Certificate, rut string) *Signer {
	if c == nil {
		return nil
	}
	return &Signer{Subject: c.Subject.String(), RUT: rut, Serial: c.SerialNumber.String(), Issuer: c.Issuer.String(),
		NotBefore: c.NotBefore, NotAfter: c.NotAfter}
}

// DocumentReport is the verification of one DTE.
type DocumentReport struct {
	ID        string  `json:"id"`
	Tipo      TipoDTE `json:"tipo_dte"`
	Folio     int64   `json:"folio"`
	MntTotal  Decimal `json:"monto_total"`
	Signature Check   `json:"signature"`
	// Signer is the certificate that signed the document.
	Signer *Signer `json:"signer,omitempty"`
	// Policy is the outcome of the signer policy of VerifyOptions (OK when
	// none is stated).
	Policy Check `json:"policy"`
	TED    Check `json:"ted"`
	// CAFAmbiente is the environment of the stamp's CAF ("certificacion"
	// or "produccion"), and CAFFecha its authorization date.
	CAFAmbiente string `json:"caf_ambiente,omitempty"`
	CAFFecha    string `json:"caf_fecha_autorizacion,omitempty"`
	Totals      Check  `json:"totals"`
	Standalone  bool   `json:"signature_checked_standalone,omitempty"`
	// SignedStart and SignedEnd are the byte offsets, in the verified
	// input, of the element the document's signature covers (its
	// Documento, Liquidacion or Exportaciones). Every field of the report
	// and of the parsed document comes from that element.
	SignedStart int `json:"-"`
	SignedEnd   int `json:"-"`
}

// OK reports whether every check of the document passed.
func (d DocumentReport) OK() bool { return d.Signature.OK && d.Policy.OK && d.TED.OK && d.Totals.OK }

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

// VerifyOptions are what VerifyWith checks beyond the signatures, stamps
// and totals themselves. Verify proves that each document is intact and was
// signed by the certificate embedded beside it; whether that certificate
// may sign for the emisor is a policy only the caller can state.
type VerifyOptions struct {
	// Keys are the trusted CAF-signing keys, typically caf.SIIKeys(), plus
	// a test authority's key for test CAFs.
	Keys caf.TrustedKeys
	// AuthorizedSigners, when not nil, maps an emisor's RUT to the RUTs
	// authorized to sign its documents and envelopes (as the SII's
	// registry of authorized users does). A document or envelope signed by
	// anyone else fails, as does one whose emisor has no entry.
	AuthorizedSigners map[string][]string
	// SignerIsRutEnvia requires, in an envelope, the envelope's signer and
	// every document's signer to be the Carátula's RutEnvia.
	SignerIsRutEnvia bool
	// ValidAtSigning requires each signer's certificate to be valid at
	// the time the signature says it was made (TmstFirma of a document,
	// TmstFirmaEnv of an envelope, Chile local time).
	ValidAtSigning bool
}

// Verify is VerifyWith without a signer policy.
func Verify(data []byte, keys caf.TrustedKeys) (*VerifyReport, error) {
	return VerifyWith(data, VerifyOptions{Keys: keys})
}

// VerifyWith checks a signed DTE, EnvioDTE or EnvioBOLETA: the shape the
// SII's schemas give signed documents (a DTE holds its Documento,
// Liquidacion or Exportaciones and then its Signature; an envelope holds
// SetDTE with an ID and then its Signature; no DTE, SetDTE or Signature
// anywhere else, and no ID twice), every XML signature (each document's
// must reference its own Documento by ID, the envelope's its SetDTE; the
// element reported is the one whose digest was checked, identified by its
// byte offsets), the signer policy of opts, every TED (FRMT with the CAF's
// key, the CAF's FRMA with opts.Keys, the DD against the document
// including IT1 and RSR, MNT = MntTotal, the CAF's dates against FchEmis)
// and every document's totals, recomputed from its lines with
// ComputeTotals and compared with its Totales.
//
// The input is read once. Only the elements these checks read are kept in
// memory, and an envelope's documents are checked one at a time as they
// are read: besides the input, Verify holds the envelope's cover, one
// document's tree, and a small emptied element (with the text between
// them) for each document already checked, so memory beyond the input
// grows with the number of documents only by that much.
//
// The report is returned whenever the input could be read and has that
// shape; the error is ErrVerification (wrapped) when any check failed, or
// says why the input could not be read.
func VerifyWith(data []byte, opts VerifyOptions) (*VerifyReport, error) {
	if len(data) > MaxEnvioBytes {
		return nil, fmt.Errorf("dte: verify: the input is %d bytes, more than the %d accepted", len(data), MaxEnvioBytes)
	}
	v := &verification{opts: opts, data: data, rep: &VerifyReport{}}
	root, doc, err := pxParse(data, nil, pxKeep, v.closed)
	if v.err != nil {
		return nil, v.err
	}
	if err != nil {
		return nil, err
	}
	if id := doc.DuplicateID(); id != "" {
		return nil, fmt.Errorf("dte: verify: %w: %q", signer.ErrDuplicateID, id)
	}
	// An envelope's documents were checked, and their trees dropped, as
	// the parser finished each one (closed).
	sh, err := readShape(root, root.Local == "DTE")
	if err != nil {
		return nil, fmt.Errorf("dte: verify: %w", err)
	}
	if sh.set == nil && len(data) > MaxDTEBytes {
		return nil, fmt.Errorf("dte: verify: the DTE is %d bytes, more than the %d accepted", len(data), MaxDTEBytes)
	}
	rep := v.rep
	rep.Kind = root.Local
	if sh.set != nil {
		if err := v.readCaratula(sh.set); err != nil {
			return nil, err
		}
		s, err := v.signature(doc, sh.setSig, sh.set, "SetDTE")
		rep.EnvelopeSigner = signerOf(s.Certificate, s.RUT)
		if err == nil && s.Certificate != nil {
			err = v.policy(s, v.caratula.RutEmisor, v.caratula.TmstFirmaEnv)
		}
		c := check(err)
		rep.Envelope = &c
	}
	for _, n := range sh.dtes {
		dr, err := v.document(doc, n)
		if err != nil {
			return nil, err
		}
		rep.Documents = append(rep.Documents, dr)
	}
	if !rep.OK() {
		return rep, fmt.Errorf("%w: %s", ErrVerification, rep.summary())
	}
	return rep, nil
}

// verification is the state of one VerifyWith.
type verification struct {
	opts     VerifyOptions
	data     []byte
	rep      *VerifyReport
	sv       *xmldsig.Verifier
	caratula *Caratula // the envelope's, once read
	err      error     // what stopped the parse in closed
}

// closed is the parser's Options.Close: each DTE of an envelope is
// verified as soon as its end tag is read, and its tree then dropped, so
// that an envelope of thousands of documents never has more than one in
// memory as a tree.
func (v *verification) closed(d *xmltree.Document, el *xmltree.Element) error {
	if !envelopeDTE(el) {
		return nil
	}
	i := len(v.rep.Documents) + 1
	if err := v.readCaratula(el.Parent); err != nil {
		v.err = err
		return err
	}
	n, err := readDTEShape((*pxNode)(el))
	if err != nil {
		v.err = fmt.Errorf("dte: verify: document %d of the envelope: %w", i, err)
		return v.err
	}
	dr, err := v.document(d, n)
	if err != nil {
		v.err = fmt.Errorf("dte: parse: document %d of the envelope: %w", i, err)
		return v.err
	}
	v.rep.Documents = append(v.rep.Documents, dr)
	d.Drop(el)
	return nil
}

// readCaratula reads the envelope's cover from SetDTE once.
func (v *verification) readCaratula(set *xmltree.Element) error {
	if v.caratula != nil {
		return nil
	}
	c, err := readCaratula(set)
	if err != nil {
		return err
	}
	v.caratula = &c
	return nil
}

// document checks one DTE: its signature, the signer policy, the stamp and
// the totals.
func (v *verification) document(d *xmltree.Document, n shapeDTE) (DocumentReport, error) {
	doc, err := pxDocument(n.dte, v.data)
	if err != nil {
		return DocumentReport{}, err
	}
	dr := DocumentReport{ID: doc.ID, Tipo: doc.Tipo, Folio: doc.Folio, MntTotal: doc.Totales.MntTotal,
		SignedStart: n.body.Start, SignedEnd: n.body.End, Policy: Check{OK: true}}
	s, err := v.signature(d, n.sig, n.body, n.body.Local)
	dr.Signature, dr.Standalone = check(err), s.Standalone
	dr.Signer = signerOf(s.Certificate, s.RUT)
	if err == nil {
		dr.Policy = check(v.policy(s, doc.Emisor.Rut, doc.TmstFirma))
	}
	t, err := verifyTED(doc, v.opts.Keys)
	if t != nil && t.DD.CAF != nil {
		dr.CAFAmbiente, dr.CAFFecha = t.DD.CAF.Ambiente(), t.DD.CAF.FA
	}
	dr.TED = check(err)
	dr.Totals = check(verifyTotals(doc))
	return dr, nil
}

// signature checks the Signature element sig, which must cover target by
// "#ID" and by its offsets.
func (v *verification) signature(d *xmltree.Document, sig, target *xmltree.Element, what string) (signer.VerifiedSignature, error) {
	if sig == nil {
		return signer.VerifiedSignature{}, fmt.Errorf("the %s is not signed", what)
	}
	if v.sv == nil {
		v.sv = xmldsig.NewVerifier(d)
	}
	r, err := v.sv.Check(sig)
	s := signer.VerifiedSignature(r)
	if err != nil {
		return s, err
	}
	id, _ := target.Attr("ID")
	switch {
	case s.Err != nil:
		return s, s.Err
	case id == "":
		return s, fmt.Errorf("the %s has no ID for its signature to reference", what)
	case s.URI == "":
		return s, fmt.Errorf(`reference URI "" covers the whole document, not the %s`, what)
	case s.URI != "#"+id || s.RefStart != target.Start || s.RefEnd != target.End:
		return s, fmt.Errorf("the signature references %q, not the %s %q beside it", s.URI, what, id)
	}
	return s, nil
}

// policy checks a valid signature against the signer policy of the
// options: emisor is the RUT it signs for, tmst when it says it was made.
func (v *verification) policy(s signer.VerifiedSignature, emisor, tmst string) error {
	var bad []string
	if err := v.opts.CheckSigner(emisor, signerOf(s.Certificate, s.RUT), tmst); err != nil {
		bad = append(bad, err.Error())
	}
	if v.opts.SignerIsRutEnvia && v.caratula != nil && (s.RUT == "" || s.RUT != chile.CanonRUT(v.caratula.RutEnvia)) {
		bad = append(bad, fmt.Sprintf("signer %s is not the Carátula's RutEnvia %s", orUnknown(s.RUT), v.caratula.RutEnvia))
	}
	if len(bad) > 0 {
		return errors.New(strings.Join(bad, "; "))
	}
	return nil
}

// CheckSigner applies the parts of the signer policy that hold for any
// signed file, a document, an envelope or an answer between companies:
// AuthorizedSigners (the signer s may sign for party, a RUT) and
// ValidAtSigning (its certificate was valid at tmst, the signing time the
// file states, YYYY-MM-DDTHH:MM:SS in Chile's time). SignerIsRutEnvia
// names a field of envelopes only and is not checked here. A nil s is a
// signature without a certificate. The error says every rule broken.
func (o VerifyOptions) CheckSigner(party string, s *Signer, tmst string) error {
	rut := ""
	if s != nil {
		rut = s.RUT
	}
	var bad []string
	if o.AuthorizedSigners != nil && !authorized(o.AuthorizedSigners, party, rut) {
		bad = append(bad, fmt.Sprintf("signer %s is not authorized for %s", orUnknown(rut), party))
	}
	if o.ValidAtSigning {
		at, err := time.ParseInLocation(xwTimestampLayout, tmst, SantiagoLocation())
		switch {
		case err != nil:
			bad = append(bad, fmt.Sprintf("signing time %q is not a timestamp", tmst))
		case s == nil:
			bad = append(bad, "no certificate")
		case at.Before(s.NotBefore) || at.After(s.NotAfter):
			bad = append(bad, fmt.Sprintf("the certificate (valid %s to %s) was not valid at the signing time %s",
				s.NotBefore.Format(time.RFC3339), s.NotAfter.Format(time.RFC3339), tmst))
		}
	}
	if len(bad) > 0 {
		return errors.New(strings.Join(bad, "; "))
	}
	return nil
}

// authorized reports whether signer may sign for emisor under m (RUTs
// compared in canonical form, whatever spelling the caller used).
func authorized(m map[string][]string, emisor, signer string) bool {
	if signer == "" {
		return false
	}
	for k, v := range m {
		if chile.CanonRUT(k) != chile.CanonRUT(emisor) {
			continue
		}
		for _, r := range v {
			if chile.CanonRUT(r) == signer {
				return true
			}
		}
	}
	return false
}

func orUnknown(rut string) string {
	if rut == "" {
		return "(certificate without a RUT)"
	}
	return rut
}

// shape is where the signed parts of a DTE or envelope lie.
type shape struct {
	set, setSig *xmltree.Element // SetDTE and its Signature (envelopes)
	dtes        []shapeDTE
}

// shapeDTE is one DTE: the element, its Documento (Liquidacion,
// Exportaciones) and its Signature (nil when unsigned).
type shapeDTE struct {
	dte       *pxNode
	body, sig *xmltree.Element
}

// readShape checks that root has the shape the SII's schemas give a DTE
// or an envelope, as far as signatures are concerned, and returns where
// its parts lie. A DTE holds one Documento, Liquidacion or Exportaciones
// and then at most one Signature; an envelope holds one SetDTE and then at
// most one Signature, and SetDTE holds Caratula and then DTEs. DTE, SetDTE
// and Signature elements anywhere else are refused: a signature that
// covers one element while a reader takes another from elsewhere (a nested
// DTE, a wrapped SetDTE) is how signature wrapping works. Without
// withDTEs the DTEs of an envelope are left to the caller, which has
// checked them (readDTEShape) and may have dropped their trees.
func readShape(root *pxNode, withDTEs bool) (*shape, error) {
	sh := &shape{}
	allowed := map[*xmltree.Element]bool{root.el(): true}
	switch root.Local {
	case "DTE":
		d, err := readDTEShape(root)
		if err != nil {
			return nil, err
		}
		sh.dtes = append(sh.dtes, d)
	case "EnvioDTE", "EnvioBOLETA":
		kids := root.el().Elements()
		if len(kids) == 0 || !kids[0].Is(NamespaceSiiDte, "SetDTE") {
			return nil, fmt.Errorf("<%s> must start with SetDTE", root.Local)
		}
		sh.set = kids[0]
		switch {
		case len(kids) == 2 && kids[1].Is(nsDSig, "Signature"):
			sh.setSig = kids[1]
		case len(kids) > 1:
			return nil, fmt.Errorf("<%s> holds <%s> after SetDTE; only its Signature may follow", root.Local, kids[1].QName())
		}
		set := sh.set.Elements()
		if len(set) == 0 || !set[0].Is(NamespaceSiiDte, "Caratula") {
			return nil, errors.New("SetDTE must start with Caratula")
		}
		for i, k := range set[1:] {
			if !k.Is(NamespaceSiiDte, "DTE") {
				return nil, fmt.Errorf("SetDTE holds <%s>; after Caratula only DTE elements may follow", k.QName())
			}
			allowed[k] = true
			if !withDTEs {
				continue
			}
			d, err := readDTEShape((*pxNode)(k))
			if err != nil {
				return nil, fmt.Errorf("document %d of the envelope: %w", i+1, err)
			}
			sh.dtes = append(sh.dtes, d)
		}
		if len(set) == 1 {
			return nil, errors.New("SetDTE holds no DTE")
		}
		allowed[sh.set] = true
		if sh.setSig != nil {
			allowed[sh.setSig] = true
		}
	default:
		return nil, fmt.Errorf("root element %s is not DTE, EnvioDTE or EnvioBOLETA", root.Local)
	}
	for _, d := range sh.dtes {
		if d.sig != nil {
			allowed[d.sig] = true
		}
	}
	var bad *xmltree.Element
	xmltree.Walk(root.el(), func(e *xmltree.Element) {
		if bad == nil && !allowed[e] && (e.Is(nsDSig, "Signature") || e.Is(NamespaceSiiDte, "DTE") || e.Is(NamespaceSiiDte, "SetDTE")) {
			bad = e
		}
	})
	if bad != nil {
		where := "the document"
		if bad.Parent != nil {
			where = "<" + bad.Parent.QName() + ">"
		}
		return nil, fmt.Errorf("a <%s> inside %s, where the SII's schema has none", bad.QName(), where)
	}
	return sh, nil
}

// readDTEShape checks one DTE element's children.
func readDTEShape(n *pxNode) (shapeDTE, error) {
	d := shapeDTE{dte: n}
	kids := n.el().Elements()
	if len(kids) == 0 || kids[0].URI != NamespaceSiiDte ||
		(kids[0].Local != "Documento" && kids[0].Local != "Liquidacion" && kids[0].Local != "Exportaciones") {
		return d, errors.New("a DTE must start with Documento, Liquidacion or Exportaciones")
	}
	d.body = kids[0]
	switch {
	case len(kids) == 2 && kids[1].Is(nsDSig, "Signature"):
		d.sig = kids[1]
	case len(kids) > 1:
		return d, fmt.Errorf("the DTE holds <%s> after its %s; only its Signature may follow", kids[1].QName(), d.body.Local)
	}
	return d, nil
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
		}{{"signature", d.Signature}, {"signer policy", d.Policy}, {"TED", d.TED}, {"totals", d.Totals}} {
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

// verifyTED checks the stamp and that its DD describes the document: RUTs,
// type, folio, date, total, the receptor's name (RSR) and the first line's
// name (IT1), both as the DD cuts them to 40 characters, and the CAF's
// dates against the emission date (authorized on or before it, and for
// the types whose CAFs expire, used within six months).
func verifyTED(d *Document, keys caf.TrustedKeys) (*ted.TED, error) {
	if len(d.TED) == 0 {
		return nil, errors.New("the document has no TED")
	}
	t, err := ted.Verify(d.TED, keys)
	if err != nil {
		return t, err
	}
	dd := t.DD
	var bad []string
	cmp := func(name, got, want string) {
		if got != want {
			bad = append(bad, fmt.Sprintf("%s %q, document %q", name, got, want))
		}
	}
	cmp("RE", chile.CanonRUT(dd.RE), chile.CanonRUT(d.Emisor.Rut))
	cmp("TD", strconv.Itoa(dd.TD), d.Tipo.String())
	cmp("F", strconv.FormatInt(dd.F, 10), strconv.FormatInt(d.Folio, 10))
	cmp("FE", dd.FE, d.FechaEmision)
	cmp("RR", chile.CanonRUT(dd.RR), chile.CanonRUT(d.Receptor.Rut))
	if !decimalEqual(Decimal(dd.MNT), d.Totales.MntTotal) {
		bad = append(bad, fmt.Sprintf("MNT %s, Totales/MntTotal %s", dd.MNT, d.Totales.MntTotal))
	}
	boleta := d.Tipo.IsBoleta()
	if rsr := clipDD(d.Receptor.RazonSocial); clipDD(dd.RSR) != rsr && !(boleta && dd.RSR == "") {
		bad = append(bad, fmt.Sprintf("RSR %q, document's receptor %q", dd.RSR, rsr))
	}
	it1 := ""
	if len(d.Detalle) > 0 {
		it1 = clipDD(d.Detalle[0].Nombre)
	}
	if clipDD(dd.IT1) != it1 && !(boleta && dd.IT1 == "") {
		bad = append(bad, fmt.Sprintf("IT1 %q, document's first line %q", dd.IT1, it1))
	}
	if c := dd.CAF; c != nil {
		// The CAF's own rule (caf.CAF.CheckUsable), applied to the date
		// the document claims.
		if fe, err := time.ParseInLocation(clockDateLayout, d.FechaEmision, SantiagoLocation()); err != nil {
			bad = append(bad, fmt.Sprintf("FchEmis %q is not a date", d.FechaEmision))
		} else if err := c.CheckUsable(fe); err != nil {
			bad = append(bad, fmt.Sprintf("FchEmis %s: %v", d.FechaEmision, err))
		}
	}
	if len(bad) > 0 {
		return t, fmt.Errorf("TED DD does not match the document: %s", strings.Join(bad, "; "))
	}
	return t, nil
}

// clipDD cuts a text as the TED's DD holds RSR and IT1: surrounding
// spaces trimmed, at most 40 characters.
func clipDD(s string) string {
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) > ted.MaxTextLen {
		s = strings.TrimSpace(string([]rune(s)[:ted.MaxTextLen]))
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
		ld.Retenedor = l.IndAgente == "R"
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
