package cesion

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/xmldsig"
	"github.com/dtekit/dtekit/internal/xmltree"
	"github.com/dtekit/dtekit/signer"
)

// MaxBytes bounds the AEC Verify reads: the DTE, two base64 images of at
// most 4,000,000 characters each (the schema's bound), 40 receipts and 40
// cesiones fit well within it.
const MaxBytes = 12 << 20

// maxDepth bounds the nesting of an AEC: the DTE's deepest element sits
// about ten levels below the root.
const maxDepth = 48

// Policy says which signature failures refuse a file (see the package
// documentation).
type Policy int

const (
	// PolicyRegistry accepts what the SII's registry recorded: an inner
	// signature (over DocumentoDTECedido or a DocumentoCesion) present,
	// with its certificate, whose digest or value does not verify is a
	// warning. The file's own signature, the DTE and the chain must hold.
	PolicyRegistry Policy = iota
	// PolicyStrict refuses any signature that does not verify, and a
	// RUTAutorizado that is neither its signer's RUT nor the cedente's.
	PolicyStrict
)

// VerifyOptions are what Verify checks beyond the file itself.
type VerifyOptions struct {
	// DTE is the ceded document's verification (trusted CAF keys, signer
	// policy), as dte.VerifyWith takes it. Its AuthorizedSigners and
	// ValidAtSigning also hold each level's signer: the emisor's for
	// DocumentoDTECedido, each cedente's for its cesión, the last
	// cedente's for the file.
	DTE dte.VerifyOptions
	// Policy chooses which signature failures refuse the file.
	Policy Policy
	// Now is the instant no TmstCesion may be after (the registry's rule);
	// zero means the current time. Five minutes of clock skew are allowed.
	Now time.Time
}

// Firma is the result of one signature of the file.
type Firma struct {
	// Nivel names what it signs: "AEC", "DTECedido", "DTE", "Recibo[n]"
	// (the n-th receipt) or "Cesion[n]" (n is SeqCesion).
	Nivel string `json:"nivel"`
	// Signer is the certificate beside the signature (nil without one).
	Signer *dte.Signer `json:"signer,omitempty"`
	OK     bool        `json:"ok"`
	// Standalone is true when it verified only with its parent cut out
	// as a document of its own.
	Standalone bool   `json:"standalone,omitempty"`
	Error      string `json:"error,omitempty"`
}

// CesionLeida is one cesión as the file states it.
type CesionLeida struct {
	Seq                                int          `json:"seq"`
	Cedente                            Parte        `json:"cedente"`
	Autorizados                        []Autorizado `json:"autorizados"`
	DeclaracionJurada                  string       `json:"declaracion_jurada,omitempty"`
	Cesionario                         Parte        `json:"cesionario"`
	Monto                              int64        `json:"monto"`
	UltimoVencimiento                  string       `json:"ultimo_vencimiento"`
	OtrasCondiciones                   string       `json:"otras_condiciones,omitempty"`
	EmailDeudor                        string       `json:"email_deudor,omitempty"`
	TmstCesion                         string       `json:"tmst_cesion"`
	Firmas                             []Firma      `json:"firmas"`
	idTipo, idEmisor, idRecep, idFolio string
	idFchEmis, idMntTotal              string
}

// Report is what Verify read and found.
type Report struct {
	// Documento is the ceded DTE, and DTE its verification.
	Documento *dte.Document     `json:"-"`
	DTE       *dte.VerifyReport `json:"dte,omitempty"`
	// RutCedente, RutCesionario and TmstFirmaEnvio are the carátula's.
	RutCedente     string `json:"rut_cedente"`
	RutCesionario  string `json:"rut_cesionario"`
	TmstFirmaEnvio string `json:"tmst_firma_envio"`
	// Recibos counts the Ley 19.983 receipts the ceded document carries.
	Recibos  int           `json:"recibos"`
	Cesiones []CesionLeida `json:"cesiones"`
	// Firmas is every signature of the file, in file order.
	Firmas []Firma `json:"firmas"`
	// Warnings are what the policy let pass.
	Warnings []string `json:"warnings,omitempty"`
	// Problems are what refused the file, each named by its field.
	Problems []dte.FieldError `json:"problems,omitempty"`
}

// OK reports whether the file passed.
func (r *Report) OK() bool { return len(r.Problems) == 0 }

// ErrRefused is wrapped by Verify's error when the file was read and some
// check failed; the report lists why.
var ErrRefused = errors.New("cesion: AEC refused")

// RefusedError lists every problem that refused a file.
type RefusedError struct{ Problems []dte.FieldError }

func (e *RefusedError) Error() string {
	var b strings.Builder
	b.WriteString("cesion: AEC refused: ")
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.Field + ": " + p.Message)
	}
	return b.String()
}

func (e *RefusedError) Unwrap() error { return ErrRefused }

// parsed is an AEC's structure: the ceded document, the offsets of the
// parts a re-cession pastes, and what each cesión states.
type parsed struct {
	tree      *xmltree.Document
	latin1    bool
	doc       *dte.Document
	dteRaw    []byte
	cedidoRaw [2]int
	cesionRaw [][2]int
	cesiones  []CesionLeida
	recibos   int
	aecDoc    *xmltree.Element
	cedidoDoc *xmltree.Element
	cesionDoc []*xmltree.Element
	caratula  map[string]string
}

const ns = dte.NamespaceSiiDte

// parse reads the shape of an AEC; its errors are *dte.ValidationError
// naming the element at fault.
func parse(data []byte) (*parsed, error) {
	if len(data) > MaxBytes {
		return nil, invalid("aec", dte.CodeTooLarge, fmt.Sprintf("%d bytes; at most %d", len(data), MaxBytes))
	}
	t, err := xmltree.ParseWith(data, xmltree.Options{MaxBytes: MaxBytes, MaxDepth: maxDepth})
	if err != nil {
		return nil, invalid("aec", dte.CodeInvalidFormat, err.Error())
	}
	p := &parsed{tree: t, latin1: t.Encoding == xmltree.Latin1}
	root := t.Root
	if !root.Is(ns, "AEC") {
		return nil, invalid("AEC", dte.CodeInvalidFormat, "the root is not an AEC of the SII namespace")
	}
	if v, _ := root.Attr("version"); v != "1.0" {
		return nil, invalid("AEC.version", dte.CodeInvalidValue, fmt.Sprintf("version %q; the schema fixes 1.0", v))
	}
	for _, a := range root.Attrs {
		if !(a.URI == "" && a.Local == "version") && !(a.URI == nsXSI && a.Local == "schemaLocation") {
			return nil, invalid("AEC."+a.QName(), dte.CodeNotAllowed, "an attribute the AEC's root does not carry")
		}
	}
	if !schemaLocationOK(root) {
		return nil, invalid("AEC.schemaLocation", dte.CodeInvalidValue, "xsi:schemaLocation must name the SII namespace and AEC_v10.xsd")
	}
	kids := root.Elements()
	if len(kids) != 2 || !kids[0].Is(ns, "DocumentoAEC") || !isSig(kids[1]) {
		return nil, invalid("AEC", dte.CodeInvalidFormat, "an AEC holds DocumentoAEC and then its Signature")
	}
	if strayText(root) {
		return nil, invalid("AEC", dte.CodeInvalidFormat, strayTextMsg)
	}
	p.aecDoc = kids[0]
	kids = p.aecDoc.Elements()
	if len(kids) != 2 || !kids[0].Is(ns, "Caratula") || !kids[1].Is(ns, "Cesiones") {
		return nil, invalid("DocumentoAEC", dte.CodeInvalidFormat, "DocumentoAEC holds Caratula and Cesiones")
	}
	p.caratula = texts(kids[0])
	parts := kids[1].Elements()
	if len(parts) < 2 || !parts[0].Is(ns, "DTECedido") {
		return nil, invalid("Cesiones", dte.CodeInvalidFormat, "Cesiones holds DTECedido and then 1 to 40 Cesion")
	}
	if n := len(parts) - 1; n > MaxCesiones {
		return nil, invalid("Cesiones.Cesion", dte.CodeTooMany, fmt.Sprintf("%d cesiones; a document passes through at most %d", n, MaxCesiones))
	}
	if id := t.DuplicateID(); id != "" {
		return nil, invalid("aec", dte.CodeDuplicate, fmt.Sprintf("the ID %q appears on more than one element", id))
	}
	// The ceded document.
	ced := parts[0]
	p.cedidoRaw = [2]int{ced.Start, ced.End}
	kids = ced.Elements()
	if len(kids) != 2 || !kids[0].Is(ns, "DocumentoDTECedido") || !isSig(kids[1]) {
		return nil, invalid("DTECedido", dte.CodeInvalidFormat, "DTECedido holds DocumentoDTECedido and then its Signature")
	}
	if strayText(ced) {
		return nil, invalid("DTECedido", dte.CodeInvalidFormat, strayTextMsg)
	}
	p.cedidoDoc = kids[0]
	var dteEl *xmltree.Element
	for _, e := range p.cedidoDoc.Elements() {
		switch {
		case e.Is(ns, "DTE") && dteEl == nil:
			dteEl = e
		case e.Is(ns, "Recibo"):
			p.recibos++
		case e.Is(ns, "ImagenDTE"), e.Is(ns, "ImagenAR"), e.Is(ns, "TmstFirma"):
		default:
			return nil, invalid("DocumentoDTECedido."+e.Local, dte.CodeNotAllowed, "an element DocumentoDTECedido does not hold")
		}
	}
	if dteEl == nil {
		return nil, invalid("DocumentoDTECedido.DTE", dte.CodeRequired, "no DTE")
	}
	if p.recibos > MaxRecibos {
		return nil, invalid("DocumentoDTECedido.Recibo", dte.CodeTooMany, fmt.Sprintf("%d receipts; at most %d", p.recibos, MaxRecibos))
	}
	decl := ""
	if p.latin1 {
		decl = xmlDecl
	}
	p.dteRaw = append([]byte(decl), standalone(data, dteEl)...)
	p.doc, err = dte.ParseDTE(p.dteRaw)
	if err != nil {
		return nil, invalid("DocumentoDTECedido.DTE", dte.CodeInvalidFormat, err.Error())
	}
	if !Cedible(p.doc.Tipo) {
		return nil, invalid("DocumentoDTECedido.DTE.TipoDTE", dte.CodeNotAllowed,
			fmt.Sprintf("a document of type %d cannot be ceded; only 33, 34, 43 and 46 can", p.doc.Tipo))
	}
	for i, c := range parts[1:] {
		f := fmt.Sprintf("Cesion[%d]", i+1)
		if !c.Is(ns, "Cesion") {
			return nil, invalid(f, dte.CodeInvalidFormat, "Cesiones holds DTECedido and then only Cesion")
		}
		kids = c.Elements()
		if len(kids) < 2 || !kids[0].Is(ns, "DocumentoCesion") {
			return nil, invalid(f, dte.CodeInvalidFormat, "a Cesion holds DocumentoCesion and then 1 to 3 signatures")
		}
		if len(kids)-1 > MaxAutorizados {
			return nil, invalid(f+".Signature", dte.CodeTooMany, fmt.Sprintf("%d signatures; at most %d", len(kids)-1, MaxAutorizados))
		}
		for _, s := range kids[1:] {
			if !isSig(s) {
				return nil, invalid(f, dte.CodeInvalidFormat, "a Cesion holds DocumentoCesion and then only signatures")
			}
		}
		if strayText(c) {
			return nil, invalid(f, dte.CodeInvalidFormat, strayTextMsg)
		}
		cl, err := readCesion(f, kids[0])
		if err != nil {
			return nil, err
		}
		p.cesionRaw = append(p.cesionRaw, [2]int{c.Start, c.End})
		p.cesionDoc = append(p.cesionDoc, kids[0])
		p.cesiones = append(p.cesiones, cl)
	}
	return p, nil
}

// readCesion reads a DocumentoCesion's fields.
func readCesion(f string, d *xmltree.Element) (CesionLeida, error) {
	var c CesionLeida
	top := texts(d)
	seq, err := strconv.Atoi(top["SeqCesion"])
	if err != nil {
		return c, invalid(f+".SeqCesion", dte.CodeInvalidFormat, fmt.Sprintf("%q is not a sequence number", top["SeqCesion"]))
	}
	c.Seq = seq
	id := d.Child(ns, "IdDTE")
	ced := d.Child(ns, "Cedente")
	ces := d.Child(ns, "Cesionario")
	if id == nil || ced == nil || ces == nil {
		return c, invalid(f, dte.CodeRequired, "a DocumentoCesion names IdDTE, Cedente and Cesionario")
	}
	ids := texts(id)
	c.idTipo, c.idEmisor, c.idRecep, c.idFolio, c.idFchEmis, c.idMntTotal =
		ids["TipoDTE"], ids["RUTEmisor"], ids["RUTReceptor"], ids["Folio"], ids["FchEmis"], ids["MntTotal"]
	c.Cedente = parte(ced)
	c.Cesionario = parte(ces)
	for _, a := range ced.Elements() {
		if a.Is(ns, "RUTAutorizado") {
			t := texts(a)
			c.Autorizados = append(c.Autorizados, Autorizado{RUT: t["RUT"], Nombre: t["Nombre"]})
		}
	}
	if n := len(c.Autorizados); n < 1 || n > MaxAutorizados {
		return c, invalid(f+".Cedente.RUTAutorizado", dte.CodeOutOfRange, fmt.Sprintf("%d authorized people; 1 to %d", n, MaxAutorizados))
	}
	c.DeclaracionJurada = texts(ced)["DeclaracionJurada"]
	c.Monto, err = strconv.ParseInt(top["MontoCesion"], 10, 64)
	if err != nil {
		return c, invalid(f+".MontoCesion", dte.CodeInvalidFormat, fmt.Sprintf("%q is not an amount", top["MontoCesion"]))
	}
	c.UltimoVencimiento = top["UltimoVencimiento"]
	c.OtrasCondiciones, c.EmailDeudor, c.TmstCesion = top["OtrasCondiciones"], top["eMailDeudor"], top["TmstCesion"]
	return c, nil
}

// Verify reads and verifies an AEC (see the package documentation). The
// report is returned whenever the file could be read; the error is a
// *RefusedError (wrapping ErrRefused) when a check failed, or a
// *dte.ValidationError naming the element when the file is not an AEC.
func Verify(data []byte, o VerifyOptions) (*Report, error) {
	p, err := parse(data)
	if err != nil {
		return nil, err
	}
	r := &Report{Documento: p.doc, Recibos: p.recibos, Cesiones: p.cesiones,
		RutCedente: p.caratula["RutCedente"], RutCesionario: p.caratula["RutCesionario"], TmstFirmaEnvio: p.caratula["TmstFirmaEnvio"]}
	bad := func(field, msg string) {
		r.Problems = append(r.Problems, dte.FieldError{Field: field, Code: dte.CodeInvalidValue, Message: msg})
	}

	// The ceded DTE: its signature, stamp, CAF and totals.
	rep, err := dte.VerifyWith(p.dteRaw, o.DTE)
	r.DTE = rep
	switch {
	case rep == nil:
		bad("DocumentoDTECedido.DTE", err.Error())
	case rep.Kind != "DTE" || len(rep.Documents) != 1:
		bad("DocumentoDTECedido.DTE", "not one DTE")
	default:
		d := rep.Documents[0]
		r.Firmas = append(r.Firmas, Firma{Nivel: "DTE", Signer: d.Signer, OK: d.Signature.OK && d.Policy.OK, Error: d.Signature.Error + d.Policy.Error})
		for _, c := range []struct {
			name string
			c    dte.Check
		}{{"Signature", d.Signature}, {"Policy", d.Policy}, {"TED", d.TED}, {"Totales", d.Totals}} {
			if !c.c.OK {
				bad("DocumentoDTECedido.DTE."+c.name, c.c.Error)
			}
		}
	}

	// Every signature of the file, matched to its level by position, each
	// first held to the shape of the SII's profile.
	xmltree.Walk(p.tree.Root, func(e *xmltree.Element) {
		if isSig(e) {
			if msg := sigShape(e); msg != "" {
				bad(fmt.Sprintf("Signature@%d", e.Start), msg)
			}
		}
	})
	sigs, _ := signer.Verify(data)
	byOffset := map[int]signer.VerifiedSignature{}
	for _, s := range sigs {
		byOffset[s.Offset] = s
		if c := s.Certificate; c != nil && bytes.Equal(c.RawIssuer, c.RawSubject) &&
			c.CheckSignature(c.SignatureAlgorithm, c.RawTBSCertificate, c.Signature) != nil {
			bad(fmt.Sprintf("Signature@%d.KeyInfo.X509Data.X509Certificate", s.Offset),
				"the self-signed certificate's own signature does not verify: the certificate was edited")
		}
	}
	// check reports the signature sig over signed, holds a verified one
	// to the signer policy for party (none when party is empty), and
	// decides whether a failure refuses the file or, for an inner
	// signature under PolicyRegistry, is a warning.
	check := func(nivel, field string, sig, signed *xmltree.Element, party, tmst string, inner bool) Firma {
		s, ok := byOffset[sig.Start]
		f := Firma{Nivel: nivel}
		switch {
		case !ok:
			f.Error = "the signature could not be read"
		case s.RefStart != signed.Start || s.RefEnd != signed.End:
			f.Error = "the signature does not reference " + signed.Local
		default:
			f.Signer = dte.SignerOf(s)
			f.OK, f.Standalone = s.Err == nil, s.Standalone
			if s.Err != nil {
				f.Error = s.Err.Error()
			}
		}
		switch {
		case f.OK && party == "":
		case f.OK:
			if err := o.DTE.CheckSigner(party, f.Signer, tmst); err != nil {
				f.OK, f.Error = false, err.Error()
				bad(field, err.Error())
			}
		case inner && o.Policy == PolicyRegistry && ok && s.Certificate != nil && s.RefStart == signed.Start &&
			(errors.Is(s.Err, xmldsig.ErrDigestMismatch) || errors.Is(s.Err, xmldsig.ErrBadSignature)):
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s: the signature does not verify as the file stands (%s); accepted as the registry accepts it", field, f.Error))
		default:
			bad(field, "the signature does not verify: "+f.Error)
		}
		r.Firmas = append(r.Firmas, f)
		return f
	}
	level := func(nivel, field string, signed *xmltree.Element, party, tmst string, inner bool) {
		check(nivel, field, xmltree.NextElement(signed), signed, party, tmst, inner)
	}
	// The debtor's receipts: their signatures only, since the signer
	// policy names who signs for the emisor and the cedentes.
	n := 0
	for _, e := range p.cedidoDoc.Elements() {
		if !e.Is(ns, "Recibo") {
			continue
		}
		n++
		dr := e.Child(ns, "DocumentoRecibo")
		if dr == nil || !isSig(xmltree.NextElement(dr)) {
			bad(fmt.Sprintf("DocumentoDTECedido.Recibo[%d]", n), "a Recibo holds DocumentoRecibo and then its Signature")
			continue
		}
		level(fmt.Sprintf("Recibo[%d]", n), fmt.Sprintf("DocumentoDTECedido.Recibo[%d].Signature", n), dr, "", "", true)
	}
	level("DTECedido", "DTECedido.Signature", p.cedidoDoc, p.doc.Emisor.Rut, texts(p.cedidoDoc)["TmstFirma"], true)
	for i, c := range p.cesiones {
		f := fmt.Sprintf("Cesion[%d]", i+1)
		d := p.cesionDoc[i]
		sigEls := d.Parent.Elements()[1:]
		if len(sigEls) != len(c.Autorizados) {
			bad(f+".Signature", fmt.Sprintf("%d signatures for %d authorized people; one each, in order", len(sigEls), len(c.Autorizados)))
		}
		for j, se := range sigEls {
			fi := check(fmt.Sprintf("Cesion[%d]", c.Seq), fmt.Sprintf("%s.Signature[%d]", f, j+1), se, d, c.Cedente.RUT, c.TmstCesion, true)
			if j < len(c.Autorizados) && fi.Signer != nil {
				a := c.Autorizados[j].RUT
				if !sameRUT(a, fi.Signer.RUT) {
					msg := fmt.Sprintf("RUTAutorizado %s is not the RUT of its signer's certificate (%s)", a, fi.Signer.RUT)
					if o.Policy == PolicyStrict && !sameRUT(a, c.Cedente.RUT) {
						bad(fmt.Sprintf("%s.Cedente.RUTAutorizado[%d].RUT", f, j+1), msg)
					} else {
						r.Warnings = append(r.Warnings, fmt.Sprintf("%s.Cedente.RUTAutorizado[%d].RUT: %s", f, j+1, msg))
					}
				}
			}
			c.Firmas = append(c.Firmas, fi)
		}
		r.Cesiones[i].Firmas = c.Firmas
	}
	last := p.cesiones[len(p.cesiones)-1]
	level("AEC", "AEC.Signature", p.aecDoc, last.Cedente.RUT, r.TmstFirmaEnvio, false)

	checkChain(p, bad)
	now := chile(instant(o.Now)).Add(5 * time.Minute).Format(tmstLayout)
	for i, c := range p.cesiones {
		if _, err := time.Parse(tmstLayout, c.TmstCesion); err != nil {
			bad(fmt.Sprintf("Cesion[%d].TmstCesion", i+1), fmt.Sprintf("%q is not a timestamp YYYY-MM-DDTHH:MM:SS", c.TmstCesion))
		} else if c.TmstCesion > now {
			bad(fmt.Sprintf("Cesion[%d].TmstCesion", i+1), fmt.Sprintf("%s is in the future", c.TmstCesion))
		}
	}
	if !sameRUT(r.RutCedente, last.Cedente.RUT) {
		bad("Caratula.RutCedente", fmt.Sprintf("%s is not the last cesión's cedente %s", r.RutCedente, last.Cedente.RUT))
	}
	if !sameRUT(r.RutCesionario, last.Cesionario.RUT) {
		bad("Caratula.RutCesionario", fmt.Sprintf("%s is not the last cesión's cesionario %s", r.RutCesionario, last.Cesionario.RUT))
	}
	if len(r.Problems) > 0 {
		return r, &RefusedError{Problems: r.Problems}
	}
	return r, nil
}

// checkChain checks the cesiones against the document and each other.
func checkChain(p *parsed, bad func(field, msg string)) {
	d := p.doc
	mnt, _ := d.Totales.MntTotal.Int64()
	emis, _ := time.Parse(dateLayout, d.FechaEmision)
	prevDecl := false
	for i, c := range p.cesiones {
		f := fmt.Sprintf("Cesion[%d]", i+1)
		if c.Seq != i+1 {
			bad(f+".SeqCesion", fmt.Sprintf("%d where %d was due: cesiones run 1, 2, 3… in file order", c.Seq, i+1))
		}
		if c.idTipo != strconv.Itoa(int(d.Tipo)) || c.idFolio != strconv.FormatInt(d.Folio, 10) || !sameRUT(c.idEmisor, d.Emisor.Rut) ||
			!sameRUT(c.idRecep, d.Receptor.Rut) || c.idFchEmis != d.FechaEmision || c.idMntTotal != strconv.FormatInt(mnt, 10) {
			bad(f+".IdDTE", "IdDTE does not name the ceded document (type, folio, RUTs, date and total)")
		}
		if i == 0 {
			if !sameRUT(c.Cedente.RUT, d.Emisor.Rut) {
				bad(f+".Cedente.RUT", fmt.Sprintf("the first cedente %s is not the document's emisor %s", c.Cedente.RUT, d.Emisor.Rut))
			}
		} else if prev := p.cesiones[i-1]; !sameRUT(c.Cedente.RUT, prev.Cesionario.RUT) {
			bad(f+".Cedente.RUT", fmt.Sprintf("the cedente %s is not the previous cesionario %s", c.Cedente.RUT, prev.Cesionario.RUT))
		}
		if _, err := dte.ParseRUT(c.Cesionario.RUT); err != nil {
			bad(f+".Cesionario.RUT", fmt.Sprintf("%q is not a RUT", c.Cesionario.RUT))
		} else if sameRUT(c.Cesionario.RUT, c.Cedente.RUT) {
			bad(f+".Cesionario.RUT", "the cesionario is the cedente itself")
		}
		if c.Monto <= 0 || c.Monto > mnt {
			bad(f+".MontoCesion", fmt.Sprintf("%d is not over 0 and at most the document's total %d", c.Monto, mnt))
		}
		if v, err := time.Parse(dateLayout, c.UltimoVencimiento); err != nil {
			bad(f+".UltimoVencimiento", fmt.Sprintf("%q is not a date", c.UltimoVencimiento))
		} else if v.Before(emis) {
			bad(f+".UltimoVencimiento", fmt.Sprintf("%s is before the issue date %s", c.UltimoVencimiento, d.FechaEmision))
		}
		if c.DeclaracionJurada == "" && (p.recibos == 0 || prevDecl) {
			bad(f+".Cedente.DeclaracionJurada", "a sworn declaration is required when no receipt travels with the document or the previous cesión carried one")
		}
		prevDecl = prevDecl || c.DeclaracionJurada != ""
	}
}

// schemaLocationOK reports whether the root's xsi:schemaLocation, when
// present, names the SII namespace and the AEC schema, as the registry
// needs to pick the schema.
func schemaLocationOK(root *xmltree.Element) bool {
	for _, a := range root.Attrs {
		if a.URI == nsXSI && a.Local == "schemaLocation" {
			f := strings.Fields(a.Value)
			return len(f) == 2 && f[0] == ns && (f[1] == "AEC_v10.xsd" || strings.HasSuffix(f[1], "/AEC_v10.xsd"))
		}
	}
	return true
}

// standalone returns the bytes of e as a document of its own: when e
// inherits its namespace from an ancestor (as the DTE inside the files the
// SII's portal writes does), the declaration is added to its start tag, and
// nothing else, as the notes' §9 found these parts were signed.
func standalone(data []byte, e *xmltree.Element) []byte {
	raw := data[e.Start:e.End]
	for _, d := range e.NS {
		if d.Prefix == e.Prefix {
			return raw
		}
	}
	name := e.QName()
	attr := ` xmlns="` + e.URI + `"`
	if e.Prefix != "" {
		attr = ` xmlns:` + e.Prefix + `="` + e.URI + `"`
	}
	out := make([]byte, 0, len(raw)+len(attr))
	out = append(out, raw[:1+len(name)]...)
	out = append(out, attr...)
	return append(out, raw[1+len(name):]...)
}

// sigShape checks a Signature element against the sequence of
// xmldsignature_v10.xsd outside SignedInfo (which its own value covers):
// SignedInfo, SignatureValue and KeyInfo once each, KeyInfo holding one
// KeyValue with one RSAKeyValue (Modulus, Exponent) and one X509Data with one
// X509Certificate. A duplicated part, which no digest covers, would let a
// file differ from what was signed while every signature still verifies.
// It returns what is wrong, "" when nothing is.
func sigShape(sig *xmltree.Element) string {
	seq := func(e *xmltree.Element, names ...string) []*xmltree.Element {
		kids := e.Elements()
		if len(kids) != len(names) {
			return nil
		}
		for i, k := range kids {
			if !k.Is(xmldsig.NSDSig, names[i]) {
				return nil
			}
		}
		return kids
	}
	top := seq(sig, "SignedInfo", "SignatureValue", "KeyInfo")
	if top == nil {
		return "a Signature holds SignedInfo, SignatureValue and KeyInfo, once each"
	}
	ki := seq(top[2], "KeyValue", "X509Data")
	if ki == nil || seq(ki[1], "X509Certificate") == nil {
		return "KeyInfo holds KeyValue and X509Data with one X509Certificate"
	}
	kv := seq(ki[0], "RSAKeyValue")
	if kv == nil || seq(kv[0], "Modulus", "Exponent") == nil {
		return "KeyValue holds one RSAKeyValue with Modulus and Exponent"
	}
	for _, e := range []*xmltree.Element{sig, top[2], ki[0], ki[1], kv[0]} {
		if strayText(e) {
			return e.Local + ": " + strayTextMsg
		}
	}
	// Base64 lets the last character before "=" carry bits no value
	// uses: an edit of those would change the file and nothing a check
	// reads, so only the canonical form is taken.
	kv = kv[0].Elements()
	for _, e := range []*xmltree.Element{top[1], kv[0], kv[1], ki[1].Elements()[0]} {
		b64 := strings.Map(func(r rune) rune {
			if r == ' ' || r == '\t' || r == '\r' || r == '\n' {
				return -1
			}
			return r
		}, e.Text())
		if _, err := base64.StdEncoding.Strict().DecodeString(b64); err != nil {
			return e.Local + ": not base64 in its canonical form"
		}
	}
	return ""
}

// strayTextMsg is why a file with strayText is refused.
const strayTextMsg = "text between elements, where the schema allows none and no signature covers it"

// strayText reports whether e holds character data other than white space
// between its child elements. Checked where no signature reaches (the
// file's root, DTECedido, Cesion and the parts of a Signature outside
// SignedInfo), so that no byte of an accepted file can be changed.
func strayText(e *xmltree.Element) bool {
	for _, c := range e.Children {
		if c.Kind == xmltree.KindText && strings.Trim(c.Text, " \t\r\n") != "" {
			return true
		}
	}
	return false
}

func isSig(e *xmltree.Element) bool { return e.Is(xmldsig.NSDSig, "Signature") }

// texts maps the names of e's leaf children in the SII namespace to their
// trimmed text (the first of each name).
func texts(e *xmltree.Element) map[string]string {
	m := map[string]string{}
	for _, c := range e.Elements() {
		if c.URI != ns {
			continue
		}
		if _, dup := m[c.Local]; !dup && len(c.Elements()) == 0 {
			m[c.Local] = strings.TrimSpace(c.Text())
		}
	}
	return m
}

func parte(e *xmltree.Element) Parte {
	t := texts(e)
	return Parte{RUT: t["RUT"], RazonSocial: t["RazonSocial"], Direccion: t["Direccion"], Email: t["eMail"]}
}
