package dte

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"github.com/dtekit/dtekit/internal/xmlflat"
	"io"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Document is a signed DTE read back from its XML by ParseDTE or ParseEnvio:
// what the printed representation and verification need, in the model's
// types. Amounts are kept as written (Decimal text), texts as decoded.
type Document struct {
	// ID is the signed element's ID attribute, e.g. "T33F1001".
	ID string
	// Tipo, Folio and FechaEmision identify the document (IdDoc).
	Tipo         TipoDTE
	Folio        int64
	FechaEmision string
	// IndServicio, IndTraslado and TipoDespacho are the IdDoc indicators
	// when present.
	IndServicio  *int
	IndTraslado  *int
	TipoDespacho *int
	// Emisor carries RUT, razón social, giro, address, Acteco and the SII
	// branch code (CdgSIISucur); the envelope-only fields stay empty.
	Emisor Emisor
	// Receptor is the recipient as written (a boleta without one reads
	// 66666666-6).
	Receptor Receptor
	// Detalle holds the detail lines in order.
	Detalle []DocLine
	// DescuentosGlobales are the DscRcgGlobal lines; IndExeDR and NroLinDR
	// are always set from the XML.
	DescuentosGlobales []DscRcgGlobal
	// Referencias are the Referencia lines (FechaRef is empty on boletas).
	Referencias []Referencia
	// Comisiones are a liquidación-factura's commission lines.
	Comisiones []ComisionDTE
	// Export carries an export document's customs and currency data:
	// TpoMoneda, TpoCambio (from OtraMoneda), the receptor's NumID and
	// Nacionalidad, FormaPagoExp and the Transporte/Aduana codes as
	// written (clausula_venta, ports, countries and package type hold the
	// numeric customs codes, or a port's free identification). Nil for the
	// other types.
	Export *ExportData
	// Totales is the document's Totales element.
	Totales Totales
	// OtraMoneda is the totals in a second currency, when present.
	OtraMoneda *OtraMoneda
	// TED is the <TED>…</TED> element exactly as the file holds it (the
	// flattened, ISO-8859-1 bytes the PDF417 stamp encodes).
	TED []byte
	// TmstFirma is the signing timestamp as written (Chile local time).
	TmstFirma string
	// Raw is the signed DTE: the whole input for ParseDTE, the <DTE>
	// element's bytes verbatim for a document read by ParseEnvio.
	Raw []byte
}

// DocLine is one detail line of a parsed document.
type DocLine struct {
	NroLinDet int
	// TipoDocLiq is the settled document type of a liquidación-factura line.
	TipoDocLiq string
	// IndExe is 0 for a taxable line, 1 exempt, 2 not billable (others as
	// written).
	IndExe int
	// Nombre and Descripcion are NmbItem and DscItem.
	Nombre      string
	Descripcion string
	Cantidad    Decimal
	Unidad      string
	Precio      Decimal
	// DescuentoPct/RecargoPct are the percentages, DescuentoMonto and
	// RecargoMonto the amounts they came to.
	DescuentoPct   Decimal
	DescuentoMonto Decimal
	RecargoPct     Decimal
	RecargoMonto   Decimal
	CodImpAdic     []int
	MontoItem      Decimal
}

// Envio is a signed EnvioDTE or EnvioBOLETA read back by ParseEnvio.
type Envio struct {
	// Boleta is true for an EnvioBOLETA.
	Boleta bool
	// SetID is SetDTE's ID attribute (the envelope signature's reference).
	SetID string
	// Caratula is the envelope's cover.
	Caratula Caratula
	// Documentos holds every DTE in order; each one's Raw is its <DTE>
	// element exactly as pasted in the envelope.
	Documentos []*Document
	// Raw is the whole envelope as given.
	Raw []byte
}

// Caratula is an envelope's cover (Carátula).
type Caratula struct {
	RutEmisor    string
	RutEnvia     string
	RutReceptor  string
	FchResol     string
	NroResol     int
	TmstFirmaEnv string
	SubTotDTE    []SubTotDTE
}

// SubTotDTE counts an envelope's documents of one type.
type SubTotDTE struct {
	Tipo     TipoDTE
	Cantidad int
}

// ParseDTE reads a signed (or unsigned) standalone DTE: a <DTE> root in the
// SII namespace holding Documento, Liquidacion or Exportaciones. It accepts
// ISO-8859-1 (as declared) or UTF-8 input and any whitespace between
// elements, never panics, and reports malformed input as an error.
func ParseDTE(data []byte) (*Document, error) {
	root, src, err := pxParse(data)
	if err != nil {
		return nil, err
	}
	if root.name != "DTE" {
		return nil, fmt.Errorf("dte: parse: root element is <%s>, not <DTE>", root.name)
	}
	doc, err := pxDocument(root, src)
	if err != nil {
		return nil, err
	}
	doc.Raw = data
	return doc, nil
}

// ParseEnvio reads a signed EnvioDTE or EnvioBOLETA: its Carátula and every
// DTE in it, each with its raw bytes as found in the envelope (so each DTE's
// signature can be checked on its own). Same input rules as ParseDTE.
func ParseEnvio(data []byte) (*Envio, error) {
	root, src, err := pxParse(data)
	if err != nil {
		return nil, err
	}
	env := &Envio{Raw: data}
	switch root.name {
	case "EnvioDTE":
	case "EnvioBOLETA":
		env.Boleta = true
	default:
		return nil, fmt.Errorf("dte: parse: root element is <%s>, not <EnvioDTE> or <EnvioBOLETA>", root.name)
	}
	set := root.child("SetDTE")
	if set == nil {
		return nil, errors.New("dte: parse: the envelope has no SetDTE")
	}
	env.SetID = set.attr("ID")
	if c := set.child("Caratula"); c != nil {
		cr := &env.Caratula
		cr.RutEmisor = c.val("RutEmisor")
		cr.RutEnvia = c.val("RutEnvia")
		cr.RutReceptor = c.val("RutReceptor")
		cr.FchResol = c.val("FchResol")
		cr.TmstFirmaEnv = c.val("TmstFirmaEnv")
		var p pxErr
		cr.NroResol = p.int("Caratula/NroResol", c.val("NroResol"))
		for _, s := range c.all("SubTotDTE") {
			cr.SubTotDTE = append(cr.SubTotDTE, SubTotDTE{
				Tipo:     TipoDTE(p.int("SubTotDTE/TpoDTE", s.val("TpoDTE"))),
				Cantidad: p.int("SubTotDTE/NroDTE", s.val("NroDTE")),
			})
		}
		if p.err != nil {
			return nil, p.err
		}
	} else {
		return nil, errors.New("dte: parse: the envelope has no Caratula")
	}
	for i, n := range set.all("DTE") {
		doc, err := pxDocument(n, src)
		if err != nil {
			return nil, fmt.Errorf("dte: parse: document %d of the envelope: %w", i+1, err)
		}
		doc.Raw = src.slice(n)
		env.Documentos = append(env.Documentos, doc)
	}
	return env, nil
}

// RootName returns the local name of a file's root element ("DTE",
// "EnvioDTE", "EnvioBOLETA", ...), so a caller can choose between ParseDTE
// and ParseEnvio.
func RootName(data []byte) (string, error) {
	dec, _, err := pxDecoder(data)
	if err != nil {
		return "", err
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", fmt.Errorf("dte: parse: %w", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			return se.Name.Local, nil
		}
	}
}

// pxNode is one element of the light tree the parser builds.
type pxNode struct {
	name, space string
	attrs       []xml.Attr
	kids        []*pxNode
	text        []byte
	start, end  int // offsets of the element in the original input
}

// child returns the first child element with the given local name.
func (n *pxNode) child(name string) *pxNode {
	if n == nil {
		return nil
	}
	for _, k := range n.kids {
		if k.name == name {
			return k
		}
	}
	return nil
}

// all returns the child elements with the given local name.
func (n *pxNode) all(name string) []*pxNode {
	if n == nil {
		return nil
	}
	var out []*pxNode
	for _, k := range n.kids {
		if k.name == name {
			out = append(out, k)
		}
	}
	return out
}

// str returns the text directly inside n ("" for a nil node).
func (n *pxNode) str() string {
	if n == nil {
		return ""
	}
	return string(n.text)
}

// val returns the trimmed text of the named child.
func (n *pxNode) val(name string) string { return strings.TrimSpace(n.child(name).str()) }

// txt returns the untrimmed text of the named child.
func (n *pxNode) txt(name string) string { return n.child(name).str() }

// attr returns the value of an attribute without namespace.
func (n *pxNode) attr(name string) string {
	for _, a := range n.attrs {
		if a.Name.Local == name && a.Name.Space == "" {
			return a.Value
		}
	}
	return ""
}

// pxSource maps the decoder's offsets back to the original bytes.
type pxSource struct {
	orig  []byte
	base  int   // bytes skipped before decoding (a UTF-8 byte-order mark)
	highs []int // positions in orig of bytes ≥ 0x80 when the input was Latin-1
}

// pos converts an offset in the decoded (UTF-8) stream to one in orig.
func (s *pxSource) pos(u int) int {
	if len(s.highs) == 0 {
		return s.base + u
	}
	// The i-th high byte (0-based) occupies decoded bytes [h+i, h+i+2).
	k := sort.Search(len(s.highs), func(i int) bool { return s.highs[i]+i+2 > u })
	return u - k
}

// slice returns the original bytes of an element.
func (s *pxSource) slice(n *pxNode) []byte {
	a, b := s.pos(n.start), s.pos(n.end)
	if a < 0 || b > len(s.orig) || a > b {
		return nil
	}
	return s.orig[a:b:b]
}

// pxMaxDepth bounds element nesting; the SII's documents nest about ten
// levels, envelopes a few more.
const pxMaxDepth = 64

// pxDecoder prepares a strict decoder over data, transcoding ISO-8859-1
// input to UTF-8 and remembering how to map offsets back.
func pxDecoder(data []byte) (*xml.Decoder, *pxSource, error) {
	src := &pxSource{orig: data}
	in := data
	if bytes.HasPrefix(in, []byte("\xEF\xBB\xBF")) {
		in, src.base = in[3:], 3
	}
	enc := strings.ToUpper(xmlflat.DeclaredEncoding(in))
	switch enc {
	case "", "UTF-8", "UTF8", "US-ASCII", "ASCII":
		if !utf8.Valid(in) {
			return nil, nil, errors.New("dte: parse: the input is not valid UTF-8 and declares no other encoding")
		}
	case "ISO-8859-1", "ISO8859-1", "ISO_8859-1", "LATIN1", "LATIN-1", "L1":
		if src.base != 0 {
			return nil, nil, errors.New("dte: parse: a UTF-8 byte-order mark contradicts the declared ISO-8859-1 encoding")
		}
		n := 0
		for _, c := range in {
			if c >= 0x80 {
				n++
			}
		}
		if n > 0 {
			out := make([]byte, 0, len(in)+n)
			src.highs = make([]int, 0, n)
			for i, c := range in {
				if c < 0x80 {
					out = append(out, c)
					continue
				}
				src.highs = append(src.highs, i)
				out = utf8.AppendRune(out, rune(c))
			}
			in = out
		}
	default:
		return nil, nil, fmt.Errorf("dte: parse: unsupported encoding %q (the SII's files are ISO-8859-1)", enc)
	}
	dec := xml.NewDecoder(bytes.NewReader(in))
	dec.Strict = true
	// The bytes are UTF-8 by now, whatever the declaration says.
	dec.CharsetReader = func(label string, r io.Reader) (io.Reader, error) { return r, nil }
	return dec, src, nil
}

// pxParse builds the light tree of data and checks the root is in the SII
// namespace.
func pxParse(data []byte) (*pxNode, *pxSource, error) {
	dec, src, err := pxDecoder(data)
	if err != nil {
		return nil, nil, err
	}
	var root *pxNode
	var stack []*pxNode
	for {
		off := int(dec.InputOffset())
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("dte: parse: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if len(stack) >= pxMaxDepth {
				return nil, nil, fmt.Errorf("dte: parse: elements nested deeper than %d levels", pxMaxDepth)
			}
			n := &pxNode{name: t.Name.Local, space: t.Name.Space, attrs: t.Attr, start: off}
			if len(stack) == 0 {
				if root != nil {
					return nil, nil, errors.New("dte: parse: more than one root element")
				}
				root = n
			} else {
				p := stack[len(stack)-1]
				p.kids = append(p.kids, n)
			}
			stack = append(stack, n)
		case xml.EndElement:
			if len(stack) == 0 {
				return nil, nil, errors.New("dte: parse: unbalanced end tag")
			}
			stack[len(stack)-1].end = int(dec.InputOffset())
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				p := stack[len(stack)-1]
				p.text = append(p.text, t...)
			}
		}
	}
	if root == nil {
		return nil, nil, errors.New("dte: parse: no root element")
	}
	if len(stack) != 0 {
		return nil, nil, errors.New("dte: parse: unexpected end of input")
	}
	if root.space != NamespaceSiiDte {
		return nil, nil, fmt.Errorf("dte: parse: root <%s> is not in the SII namespace %s", root.name, NamespaceSiiDte)
	}
	return root, src, nil
}

// pxErr collects the first conversion error while a document is read.
type pxErr struct{ err error }

func (p *pxErr) int64(field, s string) int64 {
	if s == "" {
		return 0
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil && p.err == nil {
		p.err = fmt.Errorf("dte: parse: %s %q is not an integer", field, s)
	}
	return n
}

func (p *pxErr) int(field, s string) int {
	n := p.int64(field, s)
	if n != int64(int(n)) || n > 1<<31-1 || n < -(1<<31) {
		if p.err == nil {
			p.err = fmt.Errorf("dte: parse: %s %q is out of range", field, s)
		}
		return 0
	}
	return int(n)
}

// intPtr reads an optional integer element.
func (p *pxErr) intPtr(field string, n *pxNode) *int {
	if n == nil {
		return nil
	}
	v := p.int(field, strings.TrimSpace(n.str()))
	return &v
}

// dec reads an optional decimal element.
func (p *pxErr) dec(field, s string) Decimal {
	if s == "" {
		return ""
	}
	d := Decimal(s)
	if !d.Valid() {
		if p.err == nil {
			p.err = fmt.Errorf("dte: parse: %s %q is not a decimal number", field, s)
		}
		return ""
	}
	return d
}

// pxDocument reads one <DTE> element.
func pxDocument(dteNode *pxNode, src *pxSource) (*Document, error) {
	var body *pxNode
	for _, k := range dteNode.kids {
		if k.name == "Documento" || k.name == "Liquidacion" || k.name == "Exportaciones" {
			body = k
			break
		}
	}
	if body == nil {
		return nil, errors.New("dte: parse: the DTE holds no Documento, Liquidacion or Exportaciones")
	}
	enc := body.child("Encabezado")
	if enc == nil {
		return nil, errors.New("dte: parse: the document has no Encabezado")
	}
	id := enc.child("IdDoc")
	if id == nil {
		return nil, errors.New("dte: parse: the document has no IdDoc")
	}
	var p pxErr
	doc := &Document{
		ID:           body.attr("ID"),
		Tipo:         TipoDTE(p.int("IdDoc/TipoDTE", id.val("TipoDTE"))),
		Folio:        p.int64("IdDoc/Folio", id.val("Folio")),
		FechaEmision: id.val("FchEmis"),
		IndServicio:  p.intPtr("IdDoc/IndServicio", id.child("IndServicio")),
		IndTraslado:  p.intPtr("IdDoc/IndTraslado", id.child("IndTraslado")),
		TipoDespacho: p.intPtr("IdDoc/TipoDespacho", id.child("TipoDespacho")),
		TmstFirma:    body.val("TmstFirma"),
	}
	if doc.Folio <= 0 && p.err == nil {
		return nil, fmt.Errorf("dte: parse: IdDoc/Folio %q is not a positive folio", id.val("Folio"))
	}
	if doc.Tipo.IsExport() {
		doc.Export = &ExportData{FormaPagoExp: p.intPtr("IdDoc/FmaPagExp", id.child("FmaPagExp"))}
	}

	if em := enc.child("Emisor"); em != nil {
		e := &doc.Emisor
		e.Rut = em.val("RUTEmisor")
		e.RazonSocial = pxFirst(em.txt("RznSoc"), em.txt("RznSocEmisor"))
		e.Giro = pxFirst(em.txt("GiroEmis"), em.txt("GiroEmisor"))
		for _, a := range em.all("Acteco") {
			e.Acteco = append(e.Acteco, p.int("Emisor/Acteco", strings.TrimSpace(a.str())))
		}
		e.SucursalSII = p.intPtr("Emisor/CdgSIISucur", em.child("CdgSIISucur"))
		e.Direccion = em.txt("DirOrigen")
		e.Comuna = em.txt("CmnaOrigen")
		e.Ciudad = em.txt("CiudadOrigen")
	}
	if rc := enc.child("Receptor"); rc != nil {
		r := &doc.Receptor
		r.Rut = rc.val("RUTRecep")
		r.RazonSocial = rc.txt("RznSocRecep")
		r.Giro = rc.txt("GiroRecep")
		r.Direccion = rc.txt("DirRecep")
		r.Comuna = rc.txt("CmnaRecep")
		r.Ciudad = rc.txt("CiudadRecep")
		if x := rc.child("Extranjero"); x != nil && doc.Export != nil {
			doc.Export.NumID = x.txt("NumId")
			doc.Export.Nacionalidad = x.val("Nacionalidad")
		}
	}
	if tr := enc.child("Transporte"); tr != nil && doc.Export != nil {
		pxAduana(&p, tr.child("Aduana"), doc.Export)
	}
	if tt := enc.child("Totales"); tt != nil {
		t := &doc.Totales
		t.TpoMoneda = tt.val("TpoMoneda")
		t.MntNeto = p.dec("Totales/MntNeto", tt.val("MntNeto"))
		t.MntExe = p.dec("Totales/MntExe", tt.val("MntExe"))
		t.TasaIVA = p.dec("Totales/TasaIVA", tt.val("TasaIVA"))
		t.IVA = p.dec("Totales/IVA", tt.val("IVA"))
		for _, im := range tt.all("ImptoReten") {
			t.ImptoReten = append(t.ImptoReten, ImptoReten{
				TipoImp:  p.int("ImptoReten/TipoImp", im.val("TipoImp")),
				TasaImp:  p.dec("ImptoReten/TasaImp", im.val("TasaImp")),
				MontoImp: p.dec("ImptoReten/MontoImp", im.val("MontoImp")),
			})
		}
		t.IVANoRet = p.dec("Totales/IVANoRet", tt.val("IVANoRet"))
		if c := tt.child("Comisiones"); c != nil {
			t.Comisiones = &Comisiones{
				ValComNeto: p.dec("Comisiones/ValComNeto", c.val("ValComNeto")),
				ValComExe:  p.dec("Comisiones/ValComExe", c.val("ValComExe")),
				ValComIVA:  p.dec("Comisiones/ValComIVA", c.val("ValComIVA")),
			}
		}
		t.MntTotal = p.dec("Totales/MntTotal", tt.val("MntTotal"))
		t.MontoNF = p.dec("Totales/MontoNF", tt.val("MontoNF"))
		if doc.Export != nil {
			doc.Export.TpoMoneda = t.TpoMoneda
		}
	}
	if om := enc.child("OtraMoneda"); om != nil {
		doc.OtraMoneda = &OtraMoneda{
			TpoMoneda:     om.val("TpoMoneda"),
			TpoCambio:     p.dec("OtraMoneda/TpoCambio", om.val("TpoCambio")),
			MntExeOtrMnda: p.dec("OtraMoneda/MntExeOtrMnda", om.val("MntExeOtrMnda")),
			MntTotOtrMnda: p.dec("OtraMoneda/MntTotOtrMnda", om.val("MntTotOtrMnda")),
		}
		if doc.Export != nil {
			doc.Export.TpoCambio = doc.OtraMoneda.TpoCambio
		}
	}

	for _, d := range body.all("Detalle") {
		l := DocLine{
			NroLinDet:      p.int("Detalle/NroLinDet", d.val("NroLinDet")),
			TipoDocLiq:     d.val("TpoDocLiq"),
			IndExe:         p.int("Detalle/IndExe", d.val("IndExe")),
			Nombre:         d.txt("NmbItem"),
			Descripcion:    d.txt("DscItem"),
			Cantidad:       p.dec("Detalle/QtyItem", d.val("QtyItem")),
			Unidad:         d.val("UnmdItem"),
			Precio:         p.dec("Detalle/PrcItem", d.val("PrcItem")),
			DescuentoPct:   p.dec("Detalle/DescuentoPct", d.val("DescuentoPct")),
			DescuentoMonto: p.dec("Detalle/DescuentoMonto", d.val("DescuentoMonto")),
			RecargoPct:     p.dec("Detalle/RecargoPct", d.val("RecargoPct")),
			RecargoMonto:   p.dec("Detalle/RecargoMonto", d.val("RecargoMonto")),
			MontoItem:      p.dec("Detalle/MontoItem", d.val("MontoItem")),
		}
		for _, c := range d.all("CodImpAdic") {
			l.CodImpAdic = append(l.CodImpAdic, p.int("Detalle/CodImpAdic", strings.TrimSpace(c.str())))
		}
		doc.Detalle = append(doc.Detalle, l)
	}
	for _, g := range body.all("DscRcgGlobal") {
		doc.DescuentosGlobales = append(doc.DescuentosGlobales, DscRcgGlobal{
			NroLinDR: p.intPtr("DscRcgGlobal/NroLinDR", g.child("NroLinDR")),
			TpoMov:   g.val("TpoMov"),
			GlosaDR:  g.txt("GlosaDR"),
			TpoValor: g.val("TpoValor"),
			ValorDR:  p.dec("DscRcgGlobal/ValorDR", g.val("ValorDR")),
			IndExeDR: p.intPtr("DscRcgGlobal/IndExeDR", g.child("IndExeDR")),
		})
	}
	for _, r := range body.all("Referencia") {
		ref := Referencia{
			FolioRef:  pxFolioRef(r.val("FolioRef")),
			FechaRef:  r.val("FchRef"),
			CodigoRef: p.intPtr("Referencia/CodRef", r.child("CodRef")),
			RazonRef:  r.txt("RazonRef"),
		}
		if s := r.val("TpoDocRef"); s != "" {
			if n, err := strconv.Atoi(s); err == nil && n > 0 {
				ref.TipoDocRef = RefTipo(TipoDTE(n))
			} else {
				ref.TipoDocRef = RefCodigo(s)
			}
		}
		doc.Referencias = append(doc.Referencias, ref)
	}
	for _, c := range body.all("Comisiones") {
		cm := ComisionDTE{
			TipoMovim:    c.val("TipoMovim"),
			Glosa:        c.txt("Glosa"),
			TasaComision: p.dec("Comisiones/TasaComision", c.val("TasaComision")),
			ValComNeto:   p.int64("Comisiones/ValComNeto", c.val("ValComNeto")),
			ValComExe:    p.int64("Comisiones/ValComExe", c.val("ValComExe")),
		}
		if c.child("ValComIVA") != nil {
			v := p.int64("Comisiones/ValComIVA", c.val("ValComIVA"))
			cm.ValComIVA = &v
		}
		doc.Comisiones = append(doc.Comisiones, cm)
	}
	if ted := body.child("TED"); ted != nil {
		doc.TED = src.slice(ted)
	}
	if p.err != nil {
		return nil, p.err
	}
	return doc, nil
}

// pxAduana reads the Transporte/Aduana block back into export data.
func pxAduana(p *pxErr, a *pxNode, x *ExportData) {
	if a == nil {
		return
	}
	x.ModalidadVenta = p.intPtr("Aduana/CodModVenta", a.child("CodModVenta"))
	x.ClausulaVenta = a.val("CodClauVenta")
	x.TotalClausula = p.dec("Aduana/TotClauVenta", a.val("TotClauVenta"))
	x.ViaTransporte = p.intPtr("Aduana/CodViaTransp", a.child("CodViaTransp"))
	x.PuertoEmbarque = pxFirst(a.val("CodPtoEmbarque"), a.txt("IdAdicPtoEmb"))
	x.PuertoDesembarque = pxFirst(a.val("CodPtoDesemb"), a.txt("IdAdicPtoDesemb"))
	if t := a.child("Tara"); t != nil {
		v := p.int64("Aduana/Tara", strings.TrimSpace(t.str()))
		x.Tara = &v
	}
	x.UnidadTara = p.intPtr("Aduana/CodUnidMedTara", a.child("CodUnidMedTara"))
	x.PesoBruto = p.dec("Aduana/PesoBruto", a.val("PesoBruto"))
	x.UnidadPesoBruto = p.intPtr("Aduana/CodUnidPesoBruto", a.child("CodUnidPesoBruto"))
	x.PesoNeto = p.dec("Aduana/PesoNeto", a.val("PesoNeto"))
	x.UnidadPesoNeto = p.intPtr("Aduana/CodUnidPesoNeto", a.child("CodUnidPesoNeto"))
	if t := a.child("TotBultos"); t != nil {
		v := p.int64("Aduana/TotBultos", strings.TrimSpace(t.str()))
		x.TotalBultos = &v
	}
	if tb := a.child("TipoBultos"); tb != nil {
		x.TipoBulto = tb.val("CodTpoBultos")
		x.Marcas = tb.txt("Marcas")
	}
	x.MntFlete = p.dec("Aduana/MntFlete", a.val("MntFlete"))
	x.MntSeguro = p.dec("Aduana/MntSeguro", a.val("MntSeguro"))
	x.PaisRecep = a.val("CodPaisRecep")
	x.PaisDest = a.val("CodPaisDestin")
}

// pxFirst returns a when it is not empty, else b.
func pxFirst(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// pxFolioRef reads FolioRef, a string in the schema; a non-numeric one
// reads as 0.
func pxFolioRef(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0
	}
	return n
}
