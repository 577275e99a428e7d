package dte

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/dtekit/dtekit/internal/xmltree"
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
	// Transporte is the Encabezado's transport data (Patente, RUTTrans,
	// Chofer, DirDest, CmnaDest, CiudadDest) as written, nil when the
	// document has none of them.
	Transporte *Transporte
	// Totales is the document's Totales element.
	Totales Totales
	// OtraMoneda is the totals in a second currency, when present.
	OtraMoneda *OtraMoneda
	// TED is the <TED>…</TED> element exactly as the file holds it (the
	// flattened, ISO-8859-1 bytes the PDF417 stamp encodes).
	TED []byte
	// TmstFirma is the signing timestamp as written (Chile local time).
	TmstFirma string
	// SignatureValue is the base64 text of the DTE's own XML-DSig
	// SignatureValue with its whitespace removed ("" for an unsigned
	// DTE): what the SII's getEstDteAv asks for as FirmaDte.
	SignatureValue string
	// Raw is the signed DTE: the whole input for ParseDTE, the <DTE>
	// element's bytes verbatim for a document read by ParseEnvio.
	Raw []byte
}

// DocLine is one detail line of a parsed document.
type DocLine struct {
	NroLinDet int
	// IndAgente is Retenedor/IndAgente ("R"), "" without Retenedor.
	IndAgente string
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
// elements, never panics, and reports malformed input as an error. Input
// size, element count and nesting are bounded (MaxDTEBytes, MaxXMLDepth),
// and elements it does not read are checked but not kept in memory.
func ParseDTE(data []byte) (*Document, error) {
	if len(data) > MaxDTEBytes {
		return nil, fmt.Errorf("dte: parse: the DTE is %d bytes, more than the %d accepted", len(data), MaxDTEBytes)
	}
	root, _, err := pxParse(data, nil, pxKeep, nil)
	if err != nil {
		return nil, err
	}
	if root.Local != "DTE" {
		return nil, fmt.Errorf("dte: parse: root element is <%s>, not <DTE>", root.Local)
	}
	if _, err := readShape(root, true); err != nil {
		return nil, fmt.Errorf("dte: parse: %w", err)
	}
	doc, err := pxDocument(root, data)
	if err != nil {
		return nil, err
	}
	doc.Raw = data
	return doc, nil
}

// ParseEnvio reads a signed EnvioDTE or EnvioBOLETA: its Carátula and every
// DTE in it, each with its raw bytes as found in the envelope (so each DTE's
// signature can be checked on its own). Same input rules as ParseDTE
// (MaxEnvioBytes for the size); each document's tree is let go as soon as
// it has been read.
func ParseEnvio(data []byte) (*Envio, error) {
	env := &Envio{Raw: data}
	// Each DTE is read as soon as its end tag is, and its tree dropped.
	var cerr error
	closed := func(d *xmltree.Document, el *xmltree.Element) error {
		if !envelopeDTE(el) {
			return nil
		}
		i := len(env.Documentos) + 1
		if _, err := readDTEShape((*pxNode)(el)); err != nil {
			cerr = fmt.Errorf("dte: parse: document %d of the envelope: %w", i, err)
			return cerr
		}
		doc, err := pxDocument((*pxNode)(el), data)
		if err != nil {
			cerr = fmt.Errorf("dte: parse: document %d of the envelope: %w", i, err)
			return cerr
		}
		doc.Raw = data[el.Start:el.End:el.End]
		env.Documentos = append(env.Documentos, doc)
		d.Drop(el)
		return nil
	}
	root, _, err := pxParse(data, nil, pxKeep, closed)
	if cerr != nil {
		return nil, cerr
	}
	if err != nil {
		return nil, err
	}
	switch root.Local {
	case "EnvioDTE":
	case "EnvioBOLETA":
		env.Boleta = true
	default:
		return nil, fmt.Errorf("dte: parse: root element is <%s>, not <EnvioDTE> or <EnvioBOLETA>", root.Local)
	}
	sh, err := readShape(root, false)
	if err != nil {
		return nil, fmt.Errorf("dte: parse: %w", err)
	}
	env.SetID, _ = sh.set.Attr("ID")
	if env.Caratula, err = readCaratula(sh.set); err != nil {
		return nil, err
	}
	return env, nil
}

// envelopeDTE reports whether el is a DTE of an envelope's SetDTE (pxKeep
// keeps DTE elements nowhere else but at the root).
func envelopeDTE(el *xmltree.Element) bool {
	set := el.Parent
	return el.Is(NamespaceSiiDte, "DTE") && set != nil && set.Is(NamespaceSiiDte, "SetDTE") && set.Parent != nil && set.Parent.Parent == nil
}

// readCaratula reads an envelope's cover from its SetDTE.
func readCaratula(set *xmltree.Element) (Caratula, error) {
	var cr Caratula
	c := (*pxNode)(set).child("Caratula")
	if c == nil {
		return cr, errors.New("dte: parse: the envelope has no Caratula")
	}
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
	return cr, p.err
}

// RootName returns the local name of a file's root element ("DTE",
// "EnvioDTE", "EnvioBOLETA", ...), so a caller can choose between ParseDTE
// and ParseEnvio. The whole file must be well-formed XML.
func RootName(data []byte) (string, error) {
	opts := xmlLimits(len(data), nil)
	opts.Keep = func(*xmltree.Element) (bool, error) { return false, nil }
	d, err := xmltree.ParseWith(data, opts)
	if err != nil {
		return "", fmt.Errorf("dte: parse: %w", err)
	}
	return d.Root.Local, nil
}

// nsDSig is the XML-DSig namespace.
const nsDSig = "http://www.w3.org/2000/09/xmldsig#"

// Limits of the XML readers of this package, applied by ParseDTE,
// ParseEnvio, Verify and BuildEnvio to whatever they are given.
const (
	// MaxDTEBytes bounds a standalone DTE: a boleta of 1,000 lines with
	// long descriptions stays well under it.
	MaxDTEBytes = 8 << 20
	// MaxEnvioBytes bounds an envelope: 2,000 documents of 64 KB each.
	MaxEnvioBytes = 128 << 20
	// MaxXMLDepth bounds element nesting: the SII's documents nest about
	// ten levels, envelopes three more.
	MaxXMLDepth = 32
)

// xmlLimits returns the reader options for an input of n bytes: the
// envelope's size limit (ParseDTE checks the DTE's own), the depth limit,
// and an element count that no genuine document of that size reaches: the
// SII's documents average 30 to 50 bytes per element (a line of a boleta,
// the densest, about 30), so one element per 16 bytes leaves twice the
// room while a flood of empty elements is refused after reading a quarter
// of it or less.
func xmlLimits(n int, skim func(*xmltree.Element) bool) xmltree.Options {
	return xmltree.Options{MaxBytes: MaxEnvioBytes, MaxDepth: MaxXMLDepth, MaxElements: n/16 + 256, Skim: skim}
}

// pxNode is one element of the tree the parser reads, with the lookups the
// SII's documents need: children in the SII namespace by local name.
type pxNode xmltree.Element

// el returns n as the reader's element.
func (n *pxNode) el() *xmltree.Element { return (*xmltree.Element)(n) }

// child returns the first child element with the given local name in the
// SII namespace.
func (n *pxNode) child(name string) *pxNode {
	if n == nil {
		return nil
	}
	return (*pxNode)(n.el().Child(NamespaceSiiDte, name))
}

// all returns the child elements with the given local name in the SII
// namespace.
func (n *pxNode) all(name string) []*pxNode {
	if n == nil {
		return nil
	}
	var out []*pxNode
	for _, c := range n.Children {
		if c.Kind == xmltree.KindElement && c.El.Is(NamespaceSiiDte, name) {
			out = append(out, (*pxNode)(c.El))
		}
	}
	return out
}

// str returns the text directly inside n ("" for a nil node).
func (n *pxNode) str() string {
	if n == nil {
		return ""
	}
	return n.el().Text()
}

// val returns the trimmed text of the named child.
func (n *pxNode) val(name string) string { return strings.TrimSpace(n.child(name).str()) }

// txt returns the untrimmed text of the named child.
func (n *pxNode) txt(name string) string { return n.child(name).str() }

// attr returns the value of an attribute without namespace.
func (n *pxNode) attr(name string) string {
	v, _ := n.el().Attr(name)
	return v
}

// pxParse reads data with the package's limits and checks that the root
// is in the SII namespace. skim, keep (pxKeep, or nil for every element)
// and closed are xmltree's Options.Skim, Keep and Close.
func pxParse(data []byte, skim func(*xmltree.Element) bool, keep func(*xmltree.Element) (bool, error),
	closed func(*xmltree.Document, *xmltree.Element) error) (*pxNode, *xmltree.Document, error) {
	opts := xmlLimits(len(data), skim)
	opts.Keep, opts.Close = keep, closed
	d, err := xmltree.ParseWith(data, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("dte: parse: %w", err)
	}
	root := d.Root
	if root.URI != NamespaceSiiDte {
		return nil, nil, fmt.Errorf("dte: parse: root <%s> is not in the SII namespace %s", root.QName(), NamespaceSiiDte)
	}
	return (*pxNode)(root), d, nil
}

// maxAmountDigits is the most integer digits an amount, quantity or price
// has in the SII's schemas (18); longer numbers are refused before any
// arithmetic sees them.
const maxAmountDigits = 18

// pxIntDigits counts the digits of s before its decimal point, leading
// zeros included (the schema counts them too).
func pxIntDigits(s string) int {
	n := 0
	for i := 0; i < len(s) && s[i] != '.'; i++ {
		if s[i] >= '0' && s[i] <= '9' {
			n++
		}
	}
	return n
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
	if n := pxIntDigits(s); n > maxAmountDigits {
		if p.err == nil {
			p.err = fmt.Errorf("dte: parse: %s has %d integer digits, more than the schema's %d", field, n, maxAmountDigits)
		}
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
func pxDocument(dteNode *pxNode, src []byte) (*Document, error) {
	var body *pxNode
	for _, k := range dteNode.el().Elements() {
		if k.URI == NamespaceSiiDte && (k.Local == "Documento" || k.Local == "Liquidacion" || k.Local == "Exportaciones") {
			body = (*pxNode)(k)
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
	if sig := dteNode.el().Child(nsDSig, "Signature"); sig != nil {
		doc.SignatureValue = strings.Join(strings.Fields(sig.Child(nsDSig, "SignatureValue").Text()), "")
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
	if tr := enc.child("Transporte"); tr != nil {
		t := &Transporte{Patente: tr.txt("Patente"), RutTransportista: tr.val("RUTTrans"),
			DireccionDestino: tr.txt("DirDest"), ComunaDestino: tr.txt("CmnaDest"), CiudadDestino: tr.txt("CiudadDest")}
		if c := tr.child("Chofer"); c != nil {
			t.Chofer = &Chofer{Rut: c.val("RUTChofer"), Nombre: c.txt("NombreChofer")}
		}
		if *t != (Transporte{}) {
			doc.Transporte = t
		}
		if doc.Export != nil {
			pxAduana(&p, tr.child("Aduana"), doc.Export)
		}
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
		if r := d.child("Retenedor"); r != nil {
			l.IndAgente = r.val("IndAgente")
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
		if doc.Tipo.IsBoleta() && r.val("TpoDocRef") == "" && r.val("CodRef") == RefCodigoSET {
			// A boleta's reference to the test set (see docReferencias).
			doc.Referencias = append(doc.Referencias, Referencia{TipoDocRef: RefCodigo(RefCodigoSET), RazonRef: r.txt("RazonRef")})
			continue
		}
		folio, folioText := pxFolioRef(r.val("FolioRef"))
		ref := Referencia{
			FolioRef:      folio,
			FolioRefTexto: folioText,
			FechaRef:      r.val("FchRef"),
			CodigoRef:     p.intPtr("Referencia/CodRef", r.child("CodRef")),
			RazonRef:      r.txt("RazonRef"),
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
		doc.TED = src[ted.Start:ted.End:ted.End]
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

// pxFolioRef reads FolioRef, a string in the schema: a number as the
// folio, anything else (the case of a SET reference, "414175-1") as the
// text folio with folio 0.
func pxFolioRef(s string) (int64, string) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, s
	}
	return n, ""
}

// pxRead lists, by the local name of an element in the SII namespace, the
// children (in the SII namespace too) that pxDocument and readCaratula
// read. Only those are kept in the tree when a document is read for
// ParseDTE, ParseEnvio and Verify; everything else is checked and
// stepped over (and still covered by the signatures, whose canonical form
// is written from the bytes). The TED is kept without its content: it is
// taken by its bytes.
var pxRead = func() map[string]map[string]bool {
	set := func(names ...string) map[string]bool {
		m := make(map[string]bool, len(names))
		for _, n := range names {
			m[n] = true
		}
		return m
	}
	body := set("Encabezado", "Detalle", "DscRcgGlobal", "Referencia", "Comisiones", "TED", "TmstFirma")
	return map[string]map[string]bool{
		"SetDTE":        set("Caratula", "DTE"),
		"Caratula":      set("RutEmisor", "RutEnvia", "RutReceptor", "FchResol", "NroResol", "TmstFirmaEnv", "SubTotDTE"),
		"SubTotDTE":     set("TpoDTE", "NroDTE"),
		"DTE":           set("Documento", "Liquidacion", "Exportaciones"),
		"Documento":     body,
		"Liquidacion":   body,
		"Exportaciones": body,
		"Encabezado":    set("IdDoc", "Emisor", "Receptor", "Transporte", "Totales", "OtraMoneda"),
		"IdDoc":         set("TipoDTE", "Folio", "FchEmis", "IndServicio", "IndTraslado", "TipoDespacho", "FmaPagExp"),
		"Emisor": set("RUTEmisor", "RznSoc", "RznSocEmisor", "GiroEmis", "GiroEmisor", "Acteco", "CdgSIISucur",
			"DirOrigen", "CmnaOrigen", "CiudadOrigen"),
		"Receptor":   set("RUTRecep", "RznSocRecep", "GiroRecep", "DirRecep", "CmnaRecep", "CiudadRecep", "Extranjero"),
		"Extranjero": set("NumId", "Nacionalidad"),
		"Transporte": set("Patente", "RUTTrans", "Chofer", "DirDest", "CmnaDest", "CiudadDest", "Aduana"),
		"Chofer":     set("RUTChofer", "NombreChofer"),
		"Aduana": set("CodModVenta", "CodClauVenta", "TotClauVenta", "CodViaTransp", "CodPtoEmbarque", "IdAdicPtoEmb",
			"CodPtoDesemb", "IdAdicPtoDesemb", "Tara", "CodUnidMedTara", "PesoBruto", "CodUnidPesoBruto", "PesoNeto",
			"CodUnidPesoNeto", "TotBultos", "TipoBultos", "MntFlete", "MntSeguro", "CodPaisRecep", "CodPaisDestin"),
		"TipoBultos": set("CodTpoBultos", "Marcas"),
		"Totales":    set("TpoMoneda", "MntNeto", "MntExe", "TasaIVA", "IVA", "ImptoReten", "IVANoRet", "Comisiones", "MntTotal", "MontoNF"),
		"ImptoReten": set("TipoImp", "TasaImp", "MontoImp"),
		"Comisiones": set("ValComNeto", "ValComExe", "ValComIVA", "TipoMovim", "Glosa", "TasaComision"),
		"OtraMoneda": set("TpoMoneda", "TpoCambio", "MntExeOtrMnda", "MntTotOtrMnda"),
		"Retenedor":  set("IndAgente"),
		"Detalle": set("NroLinDet", "TpoDocLiq", "IndExe", "Retenedor", "NmbItem", "DscItem", "QtyItem", "UnmdItem", "PrcItem",
			"DescuentoPct", "DescuentoMonto", "RecargoPct", "RecargoMonto", "MontoItem", "CodImpAdic"),
		"DscRcgGlobal": set("NroLinDR", "TpoMov", "GlosaDR", "TpoValor", "ValorDR", "IndExeDR"),
		"Referencia":   set("FolioRef", "FchRef", "CodRef", "RazonRef", "TpoDocRef"),
	}
}()

// pxDSigRead lists the elements of a Signature that signer reads.
var pxDSigRead = map[string]bool{
	"SignedInfo": true, "CanonicalizationMethod": true, "SignatureMethod": true, "Reference": true,
	"Transforms": true, "Transform": true, "DigestMethod": true, "DigestValue": true, "SignatureValue": true,
	"KeyInfo": true, "X509Data": true, "X509Certificate": true, "KeyValue": true, "RSAKeyValue": true,
	"Modulus": true, "Exponent": true,
}

// pxKeep is the xmltree.Options.Keep of ParseDTE, ParseEnvio and Verify:
// it keeps the elements they read (pxRead, pxDSigRead) and refuses, as it
// meets them, what readShape refuses: in a DTE, envelope or SetDTE any
// element the SII's schema does not put there, and a DTE, SetDTE or
// Signature anywhere else. Nothing else is kept, so a document full of
// elements nobody reads costs no memory beyond its own bytes.
func pxKeep(el *xmltree.Element) (bool, error) {
	p := el.Parent
	signed := el.Is(nsDSig, "Signature") || el.Is(NamespaceSiiDte, "DTE") || el.Is(NamespaceSiiDte, "SetDTE")
	if !p.Kept() {
		if signed {
			return false, pxMisplaced(el)
		}
		return false, nil
	}
	if p.URI == nsDSig {
		if signed {
			return false, pxMisplaced(el)
		}
		return el.URI == nsDSig && pxDSigRead[el.Local], nil
	}
	if p.URI != NamespaceSiiDte {
		return false, nil
	}
	n, first := pxFirstKids(p)
	switch {
	case p.Local == "DTE":
		isBody := el.URI == NamespaceSiiDte && pxRead["DTE"][el.Local]
		switch {
		case n == 0 && !isBody:
			return false, errors.New("a DTE must start with Documento, Liquidacion or Exportaciones")
		case n == 1 && el.Is(nsDSig, "Signature"), n == 0:
			return true, nil
		}
		return false, fmt.Errorf("the DTE holds <%s> after its %s; only its Signature may follow", el.QName(), first.Local)
	case p.Parent == nil && (p.Local == "EnvioDTE" || p.Local == "EnvioBOLETA"):
		switch {
		case n == 0 && el.Is(NamespaceSiiDte, "SetDTE"), n == 1 && el.Is(nsDSig, "Signature"):
			return true, nil
		case n == 0:
			return false, fmt.Errorf("<%s> must start with SetDTE", p.Local)
		}
		return false, fmt.Errorf("<%s> holds <%s> after SetDTE; only its Signature may follow", p.Local, el.QName())
	case p.Local == "SetDTE":
		switch {
		case n == 0 && el.Is(NamespaceSiiDte, "Caratula"), n > 0 && el.Is(NamespaceSiiDte, "DTE"):
			return true, nil
		case n == 0:
			return false, errors.New("SetDTE must start with Caratula")
		}
		return false, fmt.Errorf("SetDTE holds <%s>; after Caratula only DTE elements may follow", el.QName())
	case signed:
		return false, pxMisplaced(el)
	}
	return el.URI == NamespaceSiiDte && pxRead[p.Local][el.Local], nil
}

// pxFirstKids returns how many child elements e has, counting up to two,
// and the first one.
func pxFirstKids(e *xmltree.Element) (n int, first *xmltree.Element) {
	for _, c := range e.Children {
		if c.Kind != xmltree.KindElement {
			continue
		}
		if n++; n == 1 {
			first = c.El
		} else {
			break
		}
	}
	return n, first
}

// pxMisplaced reports a DTE, SetDTE or Signature where the SII's schemas
// have none.
func pxMisplaced(el *xmltree.Element) error {
	return fmt.Errorf("a <%s> inside <%s>, where the SII's schema has none", el.QName(), el.Parent.QName())
}
