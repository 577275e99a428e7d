package dte

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/dtekit/dtekit/internal/xmltree"
	"github.com/dtekit/dtekit/signer"
)

// Envelope limits of the SII's schemas.
const (
	// MaxEnvioDTE is the most documents one EnvioDTE may carry
	// (EnvioDTE_v10.xsd).
	MaxEnvioDTE = 2000
	// MaxEnvioBoleta is the most documents one EnvioBOLETA may carry
	// (EnvioBOLETA_v11.xsd).
	MaxEnvioBoleta = 500
	// DefaultSetID is the ID BuildEnvio gives SetDTE, the element the
	// envelope's signature references.
	DefaultSetID = "SetDoc"
)

// EnvioOptions configures BuildEnvio.
type EnvioOptions struct {
	// Emisor supplies RutEmisor, FchResol (fecha_resolucion) and NroResol
	// (numero_resolucion, 0 in certification). Every DTE in the envelope
	// must have been issued by this RUT.
	Emisor Emisor
	// RutEnvia is the RUT of the person sending the envelope; empty means
	// the RUT in the signing certificate.
	RutEnvia string
	// RutReceptor is whom the envelope goes to: empty means the SII
	// (60803000-K); use the customer's RUT for the exchange copy.
	RutReceptor string
	// At is the signing time written in TmstFirmaEnv (Chile local time);
	// zero means time.Now().
	At time.Time
	// SetID is SetDTE's ID; empty means DefaultSetID ("SetDoc").
	SetID string
}

// BuildEnvio packs signed DTEs into an envelope and signs it: an EnvioBOLETA
// when the documents are boletas (39, 41), an EnvioDTE otherwise — mixing
// both is refused, as the SII receives them through different services.
//
// Each DTE's bytes are pasted verbatim (only the XML declaration and the
// whitespace around the root are left out), so its own signature stays
// valid; the Carátula gets one SubTotDTE per type in ascending order, and
// the whole SetDTE is then signed with cert. Every document must be a
// signed DTE of opts.Emisor, written in ISO-8859-1 (or pure ASCII); a
// (tipo, folio) pair may appear only once.
func BuildEnvio(opts EnvioOptions, cert *signer.Certificate, dtes ...[]byte) ([]byte, error) {
	e, err := newEnvHead(opts, cert, len(dtes))
	if err != nil {
		return nil, err
	}
	return e.pack(cert, len(dtes), func(i int) ([]byte, *sealedDTE) { return dtes[i], nil })
}

// BuildEnvioEmitted is BuildEnvio over documents this process emitted
// (Emitter.Emit or Stamp), in the order given. A document Stamp wrote and
// signed in the strict canonical shape, whose XML still holds exactly
// those bytes, is pasted without being read again: its shape is known by
// construction, and only its bytes are compared with Stamp's own copy.
// Any other (an Emitted whose XML was changed or replaced, or built by
// the caller) is read as BuildEnvio reads its documents. The result is
// the same as BuildEnvio's over the documents' XML, byte for byte.
func BuildEnvioEmitted(opts EnvioOptions, cert *signer.Certificate, docs ...*Emitted) ([]byte, error) {
	e, err := newEnvHead(opts, cert, len(docs))
	if err != nil {
		return nil, err
	}
	for i, d := range docs {
		if d == nil {
			return nil, fmt.Errorf("dte: envio: document %d is nil", i+1)
		}
	}
	return e.pack(cert, len(docs), func(i int) ([]byte, *sealedDTE) { return docs[i].XML, sealedFor(docs[i], e.setID) })
}

// newEnvHead checks an envelope's options for n documents signed with
// cert and returns what its Carátula says besides its counts.
func newEnvHead(opts EnvioOptions, cert *signer.Certificate, n int) (*envHead, error) {
	if cert == nil {
		return nil, errors.New("dte: envio: no signing certificate")
	}
	if n == 0 {
		return nil, errors.New("dte: envio: no documents to pack")
	}
	rutEm, err := ParseRUT(opts.Emisor.Rut)
	if err != nil {
		return nil, fmt.Errorf("dte: envio: emisor rut: %w", err)
	}
	rutEnvia := opts.RutEnvia
	if rutEnvia == "" {
		r, ok := cert.RUT()
		if !ok {
			return nil, errors.New("dte: envio: the certificate carries no RUT; set EnvioOptions.RutEnvia")
		}
		rutEnvia = r
	}
	envia, err := ParseRUT(rutEnvia)
	if err != nil {
		return nil, fmt.Errorf("dte: envio: RutEnvia: %w", err)
	}
	recep := RUTSII()
	if opts.RutReceptor != "" {
		if recep, err = ParseRUT(opts.RutReceptor); err != nil {
			return nil, fmt.Errorf("dte: envio: RutReceptor: %w", err)
		}
	}
	if _, err := time.Parse(clockDateLayout, opts.Emisor.FechaResolucion); err != nil {
		return nil, fmt.Errorf("dte: envio: emisor fecha_resolucion %q is not a YYYY-MM-DD date", opts.Emisor.FechaResolucion)
	}
	if opts.Emisor.NumeroResolucion < 0 || opts.Emisor.NumeroResolucion > 999999 {
		return nil, fmt.Errorf("dte: envio: emisor numero_resolucion %d is out of range (0-999999)", opts.Emisor.NumeroResolucion)
	}
	setID := opts.SetID
	if setID == "" {
		setID = DefaultSetID
	}
	if !envValidID(setID) {
		return nil, fmt.Errorf("dte: envio: SetID %q is not a valid XML ID", setID)
	}
	at := opts.At
	if at.IsZero() {
		at = time.Now()
	}
	return &envHead{rutEm: rutEm, envia: envia, recep: recep, emisor: opts.Emisor, at: at, setID: setID}, nil
}

// envHead is what an envelope's Carátula says besides its counts.
type envHead struct {
	rutEm, envia, recep RUT
	emisor              Emisor
	at                  time.Time
	setID               string
}

// write writes the envelope up to the end of its Carátula: the root (an
// EnvioBOLETA or an EnvioDTE, by schema), SetDTE's start tag and the
// Carátula with one SubTotDTE per type in ascending order.
func (e *envHead) write(w *xw, root, schema string, counts map[TipoDTE]int) {
	tipos := make([]TipoDTE, 0, len(counts))
	for t := range counts {
		tipos = append(tipos, t)
	}
	sort.Slice(tipos, func(i, j int) bool { return tipos[i] < tipos[j] })
	w.raw(xmlDeclaration)
	xwSignedRoot(w, root, schema)
	w.raw(`<SetDTE ID="` + e.setID + `">`)
	w.raw(`<Caratula version="1.0">`)
	w.plain("RutEmisor", e.rutEm.String())
	w.plain("RutEnvia", e.envia.String())
	w.plain("RutReceptor", e.recep.String())
	w.plain("FchResol", e.emisor.FechaResolucion)
	w.int("NroResol", int64(e.emisor.NumeroResolucion))
	w.plain("TmstFirmaEnv", xwTimestamp(e.at))
	for _, t := range tipos {
		w.open("SubTotDTE")
		w.int("TpoDTE", int64(t))
		w.int("NroDTE", int64(counts[t]))
		w.close("SubTotDTE")
	}
	w.close("Caratula")
}

// pack reads the n documents that input returns in turn (those sealed by
// Stamp from their seal; the others in one strict scan when they are
// written in canonical form, by envDocument otherwise), writes the
// envelope and signs its SetDTE, whose digest steps over the sealed and
// the scanned documents.
func (e *envHead) pack(cert *signer.Certificate, n int, input func(int) ([]byte, *sealedDTE)) ([]byte, error) {
	bodies := make([][]byte, n)
	spans := make([]xmltree.Span, n)
	fast := make([]bool, n)
	counts := map[TipoDTE]int{}
	type tipoFolio struct {
		tipo  TipoDTE
		folio int64
	}
	seen := make(map[tipoFolio]int, n)
	boletas, size := 0, 0
	var sc envScan
	for i := 0; i < n; i++ {
		var (
			body []byte
			doc  envDoc
			span xmltree.Span
			ok   bool
			err  error
		)
		if data, sealed := input(i); sealed != nil {
			body, doc, span, ok = sealed.xml[sealed.span.Start:sealed.span.End], sealed.doc, sealed.span, true
		} else if body, doc, span, ok, err = sc.document(data, e.setID); err != nil {
			return nil, fmt.Errorf("dte: envio: document %d: %w", i+1, err)
		}
		r, err := ParseRUT(doc.Rut)
		if err != nil || r != e.rutEm {
			return nil, fmt.Errorf("dte: envio: document %d (%s) was issued by %q, not by the envelope's emisor %s", i+1, doc.ID, doc.Rut, e.rutEm)
		}
		key := tipoFolio{doc.Tipo, doc.Folio}
		if j, dup := seen[key]; dup {
			return nil, fmt.Errorf("dte: envio: documents %d and %d are both tipo %d folio %d", j+1, i+1, doc.Tipo, doc.Folio)
		}
		seen[key] = i
		if doc.Tipo.IsBoleta() {
			boletas++
		}
		counts[doc.Tipo]++
		bodies[i], spans[i], fast[i] = body, span, ok
		size += len(body) + 1
	}
	boleta := boletas > 0
	if boleta && boletas != n {
		return nil, fmt.Errorf("dte: envio: %d boletas and %d other documents: boletas (39, 41) go in an EnvioBOLETA of their own", boletas, n-boletas)
	}
	root, schema, max := "EnvioDTE", "EnvioDTE_v10.xsd", MaxEnvioDTE
	if boleta {
		root, schema, max = "EnvioBOLETA", "EnvioBOLETA_v11.xsd", MaxEnvioBoleta
	}
	if n > max {
		return nil, fmt.Errorf("dte: envio: %d documents; an %s carries at most %d", n, root, max)
	}
	// Room for the Carátula and the envelope's Signature (KeyInfo with
	// the certificate), which the signer then inserts in place.
	w := &xw{buf: make([]byte, 0, size+2048+2*len(cert.CertificatePEM()))}
	e.write(w, root, schema, counts)
	// The fast canonical path steps over the documents ScanRoot has
	// already checked, in the scope they are pasted into (envScope).
	verified := make([]xmltree.Span, 0, len(bodies))
	for i, b := range bodies {
		w.raw("\n")
		if fast[i] {
			verified = append(verified, spans[i].Moved(len(w.buf)))
		}
		w.buf = append(w.buf, b...)
	}
	w.raw("\n</SetDTE></" + root + ">\n")
	signed, err := signInPlace(cert, w.buf, e.setID, verified)
	if err != nil {
		return nil, fmt.Errorf("dte: envio: signing SetDTE: %w", err)
	}
	return signed, nil
}

// envScope is the namespace scope a DTE is pasted into: the envelope
// root's declarations (EnvioDTE and EnvioBOLETA alike).
var envScope = []xmltree.NSDecl{{Prefix: "", URI: NamespaceSiiDte}, {Prefix: "xsi", URI: namespaceXSI}}

// envScan reads the DTEs of one envelope, reusing its scratch space.
type envScan struct {
	marks []xmltree.Mark
	visit func(xmltree.Mark) // appends to marks
	root  xmltree.RootScanner
}

// document checks one signed DTE for an envelope and returns the bytes of
// its <DTE> element with the document's identity (ID, type, folio and
// emisor; the rest of the returned Document is left empty). A DTE written
// in canonical form, as dtekit writes them, is checked in one strict scan
// that also yields its span for the envelope's digest (fast is then
// true); any other is read by envDocument.
func (s *envScan) document(data []byte, setID string) (body []byte, doc envDoc, span xmltree.Span, fast bool, err error) {
	if len(data) > MaxDTEBytes {
		return nil, doc, span, false, fmt.Errorf("the DTE is %d bytes, more than the %d accepted", len(data), MaxDTEBytes)
	}
	s.marks = s.marks[:0]
	// The root's children are marked by the scan; identity steps down
	// from Documento to TipoDTE, Folio and RUTEmisor with Mark.Child.
	if s.visit == nil {
		s.visit = func(m xmltree.Mark) { s.marks = append(s.marks, m) }
	}
	if d, span, ok := s.root.Scan(data, xmlLimits(len(data), nil), envScope, setID, 1, s.visit); ok {
		if body, doc, ok := s.identity(data, d); ok {
			return body, doc, span, true, nil
		}
	}
	body, doc, err = envDocument(data)
	return body, doc, span, false, err
}

// envDoc is what an envelope needs of a DTE: its Documento's ID, its type
// and folio, and its emisor's RUT as written.
type envDoc struct {
	ID    string
	Tipo  TipoDTE
	Folio int64
	Rut   string
}

// identity reads from a DTE that the scan accepted (the marks of the
// root's children, then Mark.Child) what envDocument reads from its tree.
// ok is false when the answer could differ from envDocument's (an element
// on the path that declares a namespace, a value with a reference or a
// byte outside ASCII, a document refused): envDocument then reads it and
// reports any error.
func (s *envScan) identity(data []byte, d *xmltree.Document) ([]byte, envDoc, bool) {
	root := d.Root
	if root.Local != "DTE" || root.URI != NamespaceSiiDte || (d.Encoding != xmltree.Latin1 && !envASCII(data)) {
		return nil, envDoc{}, false
	}
	signed := false
	var elem *xmltree.Mark
	for i := range s.marks {
		m := &s.marks[i]
		if m.Depth != 1 {
			continue
		}
		tag := data[m.Start:m.Inner]
		switch string(m.Name) {
		case "Signature":
			const dsig = `<Signature xmlns="` + nsDSig + `"`
			if bytes.HasPrefix(tag, []byte(dsig)) && (tag[len(dsig)] == ' ' || tag[len(dsig)] == '>') {
				signed = true
			}
		case "Documento", "Liquidacion", "Exportaciones":
			if elem == nil {
				if bytes.Contains(tag, []byte(" xmlns")) {
					return nil, envDoc{}, false
				}
				elem = m
			}
		}
	}
	if !signed || elem == nil {
		return nil, envDoc{}, false
	}
	enc, ok := s.child(data, *elem, "Encabezado")
	if !ok {
		return nil, envDoc{}, false
	}
	id, ok := s.child(data, enc, "IdDoc")
	if !ok {
		return nil, envDoc{}, false
	}
	tipo, ok1 := s.value(data, id, "TipoDTE")
	folio, ok2 := s.value(data, id, "Folio")
	em, ok3 := s.child(data, enc, "Emisor")
	if !ok1 || !ok2 || !ok3 {
		return nil, envDoc{}, false
	}
	rut, ok := s.value(data, em, "RUTEmisor")
	if !ok {
		return nil, envDoc{}, false
	}
	docID := ""
	tag := data[elem.Start:elem.Inner]
	if k := bytes.Index(tag, []byte(` ID="`)); k >= 0 {
		v := tag[k+5:]
		v = v[:bytes.IndexByte(v, '"')]
		if !envPlain(v) {
			return nil, envDoc{}, false
		}
		docID = string(v)
	}
	t, err1 := strconv.Atoi(string(tipo))
	f, err2 := strconv.ParseInt(string(folio), 10, 64)
	if err1 != nil || err2 != nil || t != int(int32(t)) || f <= 0 {
		return nil, envDoc{}, false
	}
	return data[root.Start:root.End], envDoc{ID: docID, Tipo: TipoDTE(t), Folio: f, Rut: string(rut)}, true
}

// child returns the first child of parent named name; ok is false when
// it is missing or declares a namespace.
func (s *envScan) child(data []byte, parent xmltree.Mark, name string) (xmltree.Mark, bool) {
	m, ok := parent.Child(data, name)
	return m, ok && !bytes.Contains(data[m.Start:m.Inner], []byte(" xmlns"))
}

// value returns the trimmed text of the named child of parent when it is
// plain ASCII text without references or child elements.
func (s *envScan) value(data []byte, parent xmltree.Mark, name string) ([]byte, bool) {
	m, ok := s.child(data, parent, name)
	if !ok {
		return nil, false
	}
	v, ok := m.Text(data)
	if !ok || !envPlain(v) {
		return nil, false
	}
	return bytes.TrimSpace(v), true
}

// envPlain reports whether b is printable ASCII (or whitespace) without
// markup or references.
func envPlain(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 || c == '&' || c == '<' || (c < 0x20 && c != ' ' && c != '\t' && c != '\n') {
			return false
		}
	}
	return true
}

// envDocument checks one signed DTE for an envelope and returns the bytes
// of its <DTE> element with the document's identity (ID, type, folio and
// emisor; the rest of the returned Document is left empty). Only the
// elements that carry those are built: the detail, stamp, signature and
// the rest are stepped over when written in canonical form, and read in
// full otherwise. The envelope's signature then covers every byte.
func envDocument(data []byte) ([]byte, envDoc, error) {
	if len(data) > MaxDTEBytes {
		return nil, envDoc{}, fmt.Errorf("the DTE is %d bytes, more than the %d accepted", len(data), MaxDTEBytes)
	}
	root, d, err := pxParse(data, envSkim, nil, nil)
	if err != nil {
		return nil, envDoc{}, err
	}
	if d.Encoding != xmltree.Latin1 && !envASCII(data) {
		return nil, envDoc{}, fmt.Errorf("it is not ISO-8859-1 (read as %s) and not pure ASCII: pasting it would change its bytes", d.Encoding)
	}
	if root.Local != "DTE" {
		return nil, envDoc{}, fmt.Errorf("root element is <%s>, not <DTE>", root.Local)
	}
	if root.el().Child(nsDSig, "Signature") == nil {
		return nil, envDoc{}, errors.New("the DTE is not signed")
	}
	var elem *pxNode
	for _, k := range root.el().Elements() {
		if k.URI == NamespaceSiiDte && (k.Local == "Documento" || k.Local == "Liquidacion" || k.Local == "Exportaciones") {
			elem = (*pxNode)(k)
			break
		}
	}
	id := elem.child("Encabezado").child("IdDoc")
	if id == nil {
		return nil, envDoc{}, errors.New("the DTE has no Documento/Encabezado/IdDoc")
	}
	var p pxErr
	doc := envDoc{
		ID:    elem.attr("ID"),
		Tipo:  TipoDTE(p.int("IdDoc/TipoDTE", id.val("TipoDTE"))),
		Folio: p.int64("IdDoc/Folio", id.val("Folio")),
		Rut:   elem.child("Encabezado").child("Emisor").val("RUTEmisor"),
	}
	if p.err != nil {
		return nil, envDoc{}, p.err
	}
	if doc.Folio <= 0 {
		return nil, envDoc{}, fmt.Errorf("IdDoc/Folio %q is not a positive folio", id.val("Folio"))
	}
	body := data[root.Start:root.End]
	if !bytes.HasPrefix(body, []byte("<DTE")) {
		return nil, envDoc{}, errors.New("the DTE root must be written <DTE …> without a prefix")
	}
	return body, doc, nil
}

// envSkim tells the reader which elements of a DTE envDocument does not
// need: everything but the path to IdDoc and Emisor.
func envSkim(e *xmltree.Element) bool {
	switch e.Parent.Local {
	case "DTE":
		return e.Local == "Signature"
	case "Documento", "Liquidacion", "Exportaciones":
		return e.Local != "Encabezado"
	case "Encabezado":
		return e.Local != "IdDoc" && e.Local != "Emisor"
	case "IdDoc":
		return e.Local != "TipoDTE" && e.Local != "Folio"
	case "Emisor":
		return e.Local != "RUTEmisor"
	}
	return false
}

// envASCII reports whether b is pure ASCII.
func envASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// envValidID reports whether s can be an XML ID written without escaping.
func envValidID(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_' || (r >= 'A' && r <= 'Z') || (r >= 'a' && r <= 'z'):
		case i > 0 && (r == '-' || r == '.' || (r >= '0' && r <= '9')):
		default:
			return false
		}
	}
	return true
}
