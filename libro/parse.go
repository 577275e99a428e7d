package libro

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/xmltree"
)

// MaxFileBytes bounds the files Parse, ParseGuia and ParseConsumo read.
const MaxFileBytes = 16 << 20

// maxParseDepth bounds nesting: a libro is six levels deep, its Signature
// a few more.
const maxParseDepth = 16

// nsXSI is the XML Schema instance namespace (xsi:schemaLocation).
const nsXSI = "http://www.w3.org/2001/XMLSchema-instance"

// Parse reads a LibroCompraVenta: the Carátula, both summaries, every
// Detalle and TmstFirma, in this package's types. It checks the root and
// the shape it reads (numbers are numbers, the parts it needs are there),
// not the whole schema: that is the XSD's job. Input in UTF-8 or
// ISO-8859-1 is read, up to MaxFileBytes; it never panics.
func Parse(data []byte) (*Libro, error) {
	root, env, err := readRoot(data, RootCompraVenta)
	if err != nil {
		return nil, err
	}
	var p reader
	l := &Libro{ID: attr(env, "ID"), Schema: schemaOf(root)}
	l.Caratula = p.caratula(env)
	if s := child(env, "ResumenSegmento"); s != nil {
		l.ResumenSegmento = p.totales(s, "TotalesSegmento")
	}
	if s := child(env, "ResumenPeriodo"); s != nil {
		l.ResumenPeriodo = p.totales(s, "TotalesPeriodo")
	}
	for i, d := range children(env, "Detalle") {
		path := fmt.Sprintf("Detalle[%d]/", i)
		row := Detalle{
			TpoDoc:        p.int(d, path, "TpoDoc"),
			NroDoc:        p.int64(d, path, "NroDoc"),
			Anulado:       text(d, "Anulado") == "A",
			TasaImp:       p.dec(d, path, "TasaImp"),
			FchDoc:        text(d, "FchDoc"),
			RUTDoc:        text(d, "RUTDoc"),
			RznSoc:        text(d, "RznSoc"),
			TpoDocRef:     p.int(d, path, "TpoDocRef"),
			FolioDocRef:   p.int64(d, path, "FolioDocRef"),
			MntExe:        p.int64(d, path, "MntExe"),
			MntNeto:       p.int64(d, path, "MntNeto"),
			MntIVA:        p.int64(d, path, "MntIVA"),
			IVAUsoComun:   p.int64(d, path, "IVAUsoComun"),
			IVARetTotal:   p.int64(d, path, "IVARetTotal"),
			IVARetParcial: p.int64(d, path, "IVARetParcial"),
			MntTotal:      p.int64(d, path, "MntTotal"),
		}
		for _, n := range children(d, "IVANoRec") {
			row.IVANoRec = append(row.IVANoRec, IVANoRec{CodIVANoRec: p.int(n, path+"IVANoRec/", "CodIVANoRec"),
				MntIVANoRec: p.int64(n, path+"IVANoRec/", "MntIVANoRec")})
		}
		for _, o := range children(d, "OtrosImp") {
			row.OtrosImp = append(row.OtrosImp, OtroImp{CodImp: p.int(o, path+"OtrosImp/", "CodImp"),
				TasaImp: p.dec(o, path+"OtrosImp/", "TasaImp"), MntImp: p.int64(o, path+"OtrosImp/", "MntImp")})
		}
		l.Detalle = append(l.Detalle, row)
	}
	l.TmstFirma = p.time(env, "", "TmstFirma")
	if p.err != nil {
		return nil, p.err
	}
	return l, nil
}

// ParseGuia reads a LibroGuia, as Parse reads a LibroCompraVenta.
func ParseGuia(data []byte) (*LibroGuia, error) {
	root, env, err := readRoot(data, RootGuia)
	if err != nil {
		return nil, err
	}
	var p reader
	l := &LibroGuia{ID: attr(env, "ID"), Schema: schemaOf(root)}
	l.Caratula = p.caratula(env)
	resumen := func(s *xmltree.Element, path string) *ResumenGuias {
		r := &ResumenGuias{
			TotFolAnulado:    p.int(s, path, "TotFolAnulado"),
			TotGuiaAnulada:   p.int(s, path, "TotGuiaAnulada"),
			TotGuiaVenta:     p.int(s, path, "TotGuiaVenta"),
			TotMntGuiaVta:    p.int64(s, path, "TotMntGuiaVta"),
			TotMntModificado: p.int64(s, path, "TotMntModificado"),
		}
		for _, t := range children(s, "TotTraslado") {
			r.TotTraslado = append(r.TotTraslado, TotTraslado{TpoTraslado: p.int(t, path+"TotTraslado/", "TpoTraslado"),
				CantGuia: p.int(t, path+"TotTraslado/", "CantGuia"), MntGuia: p.int64(t, path+"TotTraslado/", "MntGuia")})
		}
		return r
	}
	if s := child(env, "ResumenSegmento"); s != nil {
		l.ResumenSegmento = resumen(s, "ResumenSegmento/")
	}
	if s := child(env, "ResumenPeriodo"); s != nil {
		l.ResumenPeriodo = resumen(s, "ResumenPeriodo/")
	}
	for i, d := range children(env, "Detalle") {
		path := fmt.Sprintf("Detalle[%d]/", i)
		l.Detalle = append(l.Detalle, DetalleGuia{
			Folio:         p.int64(d, path, "Folio"),
			Anulado:       p.int(d, path, "Anulado"),
			TpoOper:       p.int(d, path, "TpoOper"),
			FchDoc:        text(d, "FchDoc"),
			RUTDoc:        text(d, "RUTDoc"),
			RznSoc:        text(d, "RznSoc"),
			MntNeto:       p.int64(d, path, "MntNeto"),
			TasaImp:       p.dec(d, path, "TasaImp"),
			IVA:           p.int64(d, path, "IVA"),
			MntTotal:      p.int64(d, path, "MntTotal"),
			MntModificado: p.int64(d, path, "MntModificado"),
			TpoDocRef:     p.int(d, path, "TpoDocRef"),
			FolioDocRef:   p.int64(d, path, "FolioDocRef"),
			FchDocRef:     text(d, "FchDocRef"),
		})
	}
	l.TmstFirma = p.time(env, "", "TmstFirma")
	if p.err != nil {
		return nil, p.err
	}
	return l, nil
}

// ParseConsumo reads a ConsumoFolios, as Parse reads a libro.
func ParseConsumo(data []byte) (*Consumo, error) {
	root, doc, err := readRoot(data, RootConsumo)
	if err != nil {
		return nil, err
	}
	var p reader
	c := &Consumo{ID: attr(doc, "ID"), Schema: schemaOf(root)}
	cr := child(doc, "Caratula")
	if cr == nil {
		return nil, fmt.Errorf("libro: %s has no Caratula", RootConsumo)
	}
	c.Caratula = CaratulaConsumo{
		RutEmisor:    text(cr, "RutEmisor"),
		RutEnvia:     text(cr, "RutEnvia"),
		FchResol:     text(cr, "FchResol"),
		NroResol:     p.int(cr, "Caratula/", "NroResol"),
		FchInicio:    text(cr, "FchInicio"),
		FchFinal:     text(cr, "FchFinal"),
		Correlativo:  p.int(cr, "Caratula/", "Correlativo"),
		SecEnvio:     p.int(cr, "Caratula/", "SecEnvio"),
		TmstFirmaEnv: p.time(cr, "Caratula/", "TmstFirmaEnv"),
	}
	for i, r := range children(doc, "Resumen") {
		path := fmt.Sprintf("Resumen[%d]/", i)
		res := ResumenConsumo{
			TipoDocumento:    p.int(r, path, "TipoDocumento"),
			MntNeto:          p.int64(r, path, "MntNeto"),
			MntIva:           p.int64(r, path, "MntIva"),
			TasaIVA:          p.dec(r, path, "TasaIVA"),
			MntExento:        p.int64(r, path, "MntExento"),
			MntTotal:         p.int64(r, path, "MntTotal"),
			FoliosEmitidos:   p.int(r, path, "FoliosEmitidos"),
			FoliosAnulados:   p.int(r, path, "FoliosAnulados"),
			FoliosUtilizados: p.int(r, path, "FoliosUtilizados"),
		}
		for _, g := range children(r, "RangoUtilizados") {
			res.RangoUtilizados = append(res.RangoUtilizados, Rango{Inicial: p.int64(g, path+"RangoUtilizados/", "Inicial"),
				Final: p.int64(g, path+"RangoUtilizados/", "Final")})
		}
		for _, g := range children(r, "RangoAnulados") {
			res.RangoAnulados = append(res.RangoAnulados, Rango{Inicial: p.int64(g, path+"RangoAnulados/", "Inicial"),
				Final: p.int64(g, path+"RangoAnulados/", "Final")})
		}
		c.Resumen = append(c.Resumen, res)
	}
	if p.err != nil {
		return nil, p.err
	}
	return c, nil
}

// readRoot parses data, checks that its root is {SiiDte}name, and returns
// the root and its first child element, the one the signature covers
// (EnvioLibro, DocumentoConsumoFolios).
func readRoot(data []byte, name string) (root, signed *xmltree.Element, err error) {
	d, err := xmltree.ParseWith(data, xmltree.Options{MaxBytes: MaxFileBytes, MaxDepth: maxParseDepth})
	if err != nil {
		return nil, nil, fmt.Errorf("libro: %w", err)
	}
	root = d.Root
	if !root.Is(dte.NamespaceSiiDte, name) {
		return nil, nil, fmt.Errorf("libro: root element is <%s> in namespace %q, not <%s> in %s", root.Local, root.URI, name, dte.NamespaceSiiDte)
	}
	want := "EnvioLibro"
	if name == RootConsumo {
		want = "DocumentoConsumoFolios"
	}
	if signed = child(root, want); signed == nil {
		return nil, nil, fmt.Errorf("libro: <%s> has no %s", name, want)
	}
	return root, signed, nil
}

// schemaOf returns the schema file the root's xsi:schemaLocation names for
// the SII namespace ("" when absent).
func schemaOf(root *xmltree.Element) string {
	for _, a := range root.Attrs {
		if a.URI == nsXSI && a.Local == "schemaLocation" {
			f := strings.Fields(a.Value)
			for i := 0; i+1 < len(f); i += 2 {
				if f[i] == dte.NamespaceSiiDte {
					return f[i+1]
				}
			}
		}
	}
	return ""
}

// child returns e's first child element {SiiDte}name, or nil.
func child(e *xmltree.Element, name string) *xmltree.Element {
	return e.Child(dte.NamespaceSiiDte, name)
}

// children returns e's child elements {SiiDte}name, in order.
func children(e *xmltree.Element, name string) []*xmltree.Element {
	var out []*xmltree.Element
	for _, k := range e.Elements() {
		if k.Is(dte.NamespaceSiiDte, name) {
			out = append(out, k)
		}
	}
	return out
}

// text returns the trimmed text of e's child name ("" when absent).
func text(e *xmltree.Element, name string) string {
	return strings.TrimSpace(child(e, name).Text())
}

// attr returns the value of e's unprefixed attribute name.
func attr(e *xmltree.Element, name string) string {
	v, _ := e.Attr(name)
	return v
}

// reader reads numbers and keeps the first error, naming the element's
// path.
type reader struct{ err error }

func (p *reader) fail(path, name, v, what string) {
	if p.err == nil {
		p.err = fmt.Errorf("libro: %s%s %q is not %s", path, name, v, what)
	}
}

// int64 reads an integer child (absent is 0).
func (p *reader) int64(e *xmltree.Element, path, name string) int64 {
	v := text(e, name)
	if v == "" {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		p.fail(path, name, v, "an integer")
	}
	return n
}

// int reads a small integer child (absent is 0).
func (p *reader) int(e *xmltree.Element, path, name string) int {
	n := p.int64(e, path, name)
	if n != int64(int32(n)) {
		p.fail(path, name, strconv.FormatInt(n, 10), "a count")
		return 0
	}
	return int(n)
}

// dec reads a decimal child (absent is "").
func (p *reader) dec(e *xmltree.Element, path, name string) dte.Decimal {
	v := text(e, name)
	if v == "" {
		return ""
	}
	d, err := dte.ParseDecimal(v)
	if err != nil {
		p.fail(path, name, v, "a decimal number")
	}
	return d
}

// time reads a timestamp child in Chile local time (absent is zero).
func (p *reader) time(e *xmltree.Element, path, name string) time.Time {
	v := text(e, name)
	if v == "" {
		return time.Time{}
	}
	t, err := time.ParseInLocation("2006-01-02T15:04:05", v, dte.SantiagoLocation())
	if err != nil {
		p.fail(path, name, v, "a YYYY-MM-DDThh:mm:ss timestamp")
	}
	return t
}

// caratula reads a libro's Carátula.
func (p *reader) caratula(env *xmltree.Element) Caratula {
	c := child(env, "Caratula")
	if c == nil {
		if p.err == nil {
			p.err = fmt.Errorf("libro: EnvioLibro has no Caratula")
		}
		return Caratula{}
	}
	return Caratula{
		RutEmisorLibro:    text(c, "RutEmisorLibro"),
		RutEnvia:          text(c, "RutEnvia"),
		PeriodoTributario: text(c, "PeriodoTributario"),
		FchResol:          text(c, "FchResol"),
		NroResol:          p.int(c, "Caratula/", "NroResol"),
		TipoOperacion:     text(c, "TipoOperacion"),
		TipoLibro:         text(c, "TipoLibro"),
		TipoEnvio:         text(c, "TipoEnvio"),
		NroSegmento:       p.int(c, "Caratula/", "NroSegmento"),
		FolioNotificacion: p.int64(c, "Caratula/", "FolioNotificacion"),
		CodAutRec:         text(c, "CodAutRec"),
	}
}

// totales reads the rows of a summary.
func (p *reader) totales(s *xmltree.Element, name string) []Totales {
	out := []Totales{}
	for i, t := range children(s, name) {
		path := fmt.Sprintf("%s[%d]/", name, i)
		row := Totales{
			TpoDoc:             p.int(t, path, "TpoDoc"),
			TotDoc:             p.int(t, path, "TotDoc"),
			TotAnulado:         p.int(t, path, "TotAnulado"),
			TotMntExe:          p.int64(t, path, "TotMntExe"),
			TotMntNeto:         p.int64(t, path, "TotMntNeto"),
			TotMntIVA:          p.int64(t, path, "TotMntIVA"),
			TotOpIVAUsoComun:   p.int(t, path, "TotOpIVAUsoComun"),
			TotIVAUsoComun:     p.int64(t, path, "TotIVAUsoComun"),
			FctProp:            p.dec(t, path, "FctProp"),
			TotCredIVAUsoComun: p.int64(t, path, "TotCredIVAUsoComun"),
			TotOpIVARetTotal:   p.int(t, path, "TotOpIVARetTotal"),
			TotIVARetTotal:     p.int64(t, path, "TotIVARetTotal"),
			TotOpIVARetParcial: p.int(t, path, "TotOpIVARetParcial"),
			TotIVARetParcial:   p.int64(t, path, "TotIVARetParcial"),
			TotMntTotal:        p.int64(t, path, "TotMntTotal"),
		}
		for _, n := range children(t, "TotIVANoRec") {
			row.TotIVANoRec = append(row.TotIVANoRec, TotIVANoRec{CodIVANoRec: p.int(n, path+"TotIVANoRec/", "CodIVANoRec"),
				TotOpIVANoRec: p.int(n, path+"TotIVANoRec/", "TotOpIVANoRec"), TotMntIVANoRec: p.int64(n, path+"TotIVANoRec/", "TotMntIVANoRec")})
		}
		for _, o := range children(t, "TotOtrosImp") {
			row.TotOtrosImp = append(row.TotOtrosImp, TotOtrosImp{CodImp: p.int(o, path+"TotOtrosImp/", "CodImp"),
				TotMntImp: p.int64(o, path+"TotOtrosImp/", "TotMntImp")})
		}
		out = append(out, row)
	}
	return out
}
