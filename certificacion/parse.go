package certificacion

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dtekit/dtekit/dte"
)

// ParseError is a line of the set file the parser cannot read: the kit
// never guesses what a line means.
type ParseError struct {
	// Line is the 1-based line number (0 for the file as a whole).
	Line int
	// Text is the line as decoded (clipped).
	Text string
	// Reason says what is wrong.
	Reason string
}

// Error names the line, its text and the reason.
func (e *ParseError) Error() string {
	if e.Line == 0 {
		return "certificacion: set file: " + e.Reason
	}
	return fmt.Sprintf("certificacion: set file line %d %q: %s", e.Line, clip(e.Text, 80), e.Reason)
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// Parse reads a set-of-tests file as the SII delivers it, in any of the
// variants seen: ISO-8859-1 or UTF-8 (a BOM is skipped), CRLF and LF mixed,
// with or without the INDICACIONES GENERALES preamble, the set headers
// ("SET BASICO - NUMERO DE ATENCION: 414175", "ATENCIÓN" with or without
// its accent) and the 80-dash separators, columns split by tabs or runs of
// spaces, one or two spaces in "CASO  414175-1"; and the boleta set
// ("CASO-1"). A file without headers is one set whose kind follows from
// its documents.
//
// Every line must be understood: one the parser cannot read, and an item
// name (or any text) whose accents were lost in a re-save (U+FFFD), are a
// *ParseError naming the line.
func Parse(data []byte) (*Plan, error) {
	if len(data) > maxSetFile {
		return nil, &ParseError{Reason: fmt.Sprintf("%d bytes; a set file is at most %d", len(data), maxSetFile)}
	}
	text := decode(data)
	raw := strings.Split(text, "\n")
	lines := make([]string, len(raw))
	for i, l := range raw {
		l = strings.TrimSuffix(l, "\r")
		if utf8.RuneCountInString(l) > maxLineRunes {
			return nil, &ParseError{Line: i + 1, Text: l, Reason: fmt.Sprintf("longer than %d characters", maxLineRunes)}
		}
		if j := strings.IndexFunc(l, badControl); j >= 0 {
			return nil, &ParseError{Line: i + 1, Text: l, Reason: fmt.Sprintf("control character %U", []rune(l[j:])[0])}
		}
		lines[i] = l
	}
	p := &parser{lines: lines, plan: &Plan{}}
	if err := p.run(); err != nil {
		return nil, err
	}
	if len(p.plan.Sets) == 0 {
		return nil, &ParseError{Reason: "no set, case or table found: this is not an SII set-of-tests file"}
	}
	return p.plan, nil
}

func badControl(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f || (r >= 0x80 && r < 0xa0) }

// decode returns the file as text: UTF-8 when it is valid UTF-8 (a BOM is
// dropped), else ISO-8859-1, the SII's encoding. A Latin-1 file with
// accents is never valid UTF-8 in practice (an accented letter followed by
// an ASCII byte is an invalid sequence).
func decode(b []byte) string {
	b = bytes.TrimPrefix(b, []byte("\xEF\xBB\xBF"))
	if utf8.Valid(b) {
		return string(b)
	}
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return string(r)
}

// fold returns s for matching keywords: upper case, Latin-1 accents
// dropped, U+FFFD (an accent lost in a re-save) as '?', runs of white space
// as one space, trimmed.
func fold(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.TrimSpace(s) {
		switch {
		case r == ' ' || r == '\t':
			space = true
			continue
		case r == utf8.RuneError:
			r = '?'
		default:
			r = foldRune(r)
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

func foldRune(r rune) rune {
	switch r {
	case 'á', 'à', 'â', 'ä', 'Á', 'À', 'Â', 'Ä':
		return 'A'
	case 'é', 'è', 'ê', 'ë', 'É', 'È', 'Ê', 'Ë':
		return 'E'
	case 'í', 'ì', 'î', 'ï', 'Í', 'Ì', 'Î', 'Ï':
		return 'I'
	case 'ó', 'ò', 'ô', 'ö', 'Ó', 'Ò', 'Ô', 'Ö':
		return 'O'
	case 'ú', 'ù', 'û', 'ü', 'Ú', 'Ù', 'Û', 'Ü':
		return 'U'
	case 'ñ', 'Ñ':
		return 'N'
	}
	if r < utf8.RuneSelf {
		return rune(strings.ToUpper(string(r))[0])
	}
	return r
}

// kw reports whether the folded text f equals keyword (folded, ASCII), a
// '?' in f standing for any one letter of keyword (a lost accent).
func kw(f, keyword string) bool {
	if len(f) != len(keyword) {
		return false
	}
	for i := 0; i < len(f); i++ {
		if f[i] != keyword[i] && f[i] != '?' {
			return false
		}
	}
	return true
}

// fieldSep splits a line into columns: tabs or runs of two or more spaces.
var fieldSep = regexp.MustCompile(`(?:\t| {2,})+`)

// fields splits a line into its columns, dropping empty leading and
// trailing ones. A single trailing space of a column before its separator
// stays with it ("HORAS PROGRAMADOR ").
func fields(l string) []string {
	parts := fieldSep.Split(l, -1)
	out := parts[:0]
	for _, p := range parts {
		if strings.TrimSpace(p) == "" {
			continue
		}
		out = append(out, p)
	}
	return out
}

var (
	reSetHeader   = regexp.MustCompile(`^SET (.+?) ?- ?NUMERO DE ATENCI[O?]N ?: ?(\d+)$`)
	reCase        = regexp.MustCompile(`^CASO ?(\d+)-(\d+)$`)
	reBoletaCase  = regexp.MustCompile(`^CASO-(\d+)$`)
	reRule        = regexp.MustCompile(`^=+$`)
	reDashes      = regexp.MustCompile(`^-{3,}$`)
	reRefCase     = regexp.MustCompile(`^(.+?) CORRESPONDIENTE A CASO ?(\d+-\d+)$`)
	rePct         = regexp.MustCompile(`^(\d{1,3}(?:[.,]\d+)?) ?%$`)
	reNumber      = regexp.MustCompile(`^\d{1,15}(?:\.\d{1,6})?$`)
	reLineRecargo = regexp.MustCompile(`^%(\d{1,3}) RECARGO EN LA LINEA DE ITEM POR COMISIONES EN EL EXTERIOR$`)
	reLineDesc    = regexp.MustCompile(`^DESCUENTO LINEA # ?(\d+) ?: ?(\d{1,3}(?:\.\d+)?) ?%$`)
	reComision    = regexp.MustCompile(`^COMISIONES EN EL EXTRANJERO \(RECARGOS GLOBALES\) ?: ?(\d{1,3}(?:\.\d+)?) ?% DEL TOTAL DE LA CLAUSULA$`)
	reGuiaCaso    = regexp.MustCompile(`^-? ?EL CASO (\d+) CORRESPONDE A UNA GUIA (QUE SE FACTURO EN EL PERIODO|ANULADA)$`)
	reFactor      = regexp.MustCompile(`(?:^|\s)(0[.,]\d{1,4})$`)
	reObsExento   = regexp.MustCompile(`^EL ITEM (\d+) ES UN SERVICIO (AFECTO|EXENTO)$`)
	reObsUnidad   = regexp.MustCompile(`^SE DEBE INFORMAR EN EL XML UNIDAD DE MEDIDA EN (\S+)$`)
)

// setNames maps the folded set names the file and the portal use to kinds.
var setNames = map[string]SetKind{
	"BASICO":                                             SetBasico,
	"LIBRO DE VENTAS":                                    SetLibroVentas,
	"LIBRO DE COMPRAS":                                   SetLibroCompras,
	"FACTURA EXENTA":                                     SetFacturaExenta,
	"GUIA DE DESPACHO":                                   SetGuiaDespacho,
	"LIBRO DE GUIAS":                                     SetLibroGuias,
	"BASICO DOCUMENTOS DE EXPORTACION (1)":               SetExportacion1,
	"BASICO DOCUMENTOS DE EXPORTACION (2)":               SetExportacion2,
	"DOCUMENTOS DE EXPORTACION (1)":                      SetExportacion1,
	"DOCUMENTOS DE EXPORTACION (2)":                      SetExportacion2,
	"BASICO CASO GENERAL DE EMISOR DE FACTURA DE COMPRA": SetFacturaCompra,
	"CASO GENERAL FACTURA COMPRA":                        SetFacturaCompra,
	"LIQUIDACION FACTURA":                                SetLiquidacionFactura,
	"LIBRO DE COMPRAS PARA EXENTOS":                      SetLibroComprasExentos,
}

// setKindOf returns the kind for a folded set name (spaces before "(" are
// optional: "EXPORTACION(2)").
func setKindOf(name string) (SetKind, bool) {
	name = strings.ReplaceAll(name, "(", " (")
	name = strings.Join(strings.Fields(name), " ")
	for n, k := range setNames {
		if kw(name, n) {
			return k, true
		}
	}
	return setUnknown, false
}

// docNames maps the folded document names of the sets to types.
var docNames = []struct {
	name string
	tipo dte.TipoDTE
}{
	{"FACTURA ELECTRONICA", 33},
	{"FACTURA NO AFECTA O EXENTA ELECTRONICA", 34},
	{"FACTURA EXENTA ELECTRONICA", 34},
	{"NOTA DE CREDITO ELECTRONICA", 61},
	{"NOTA DE DEBITO ELECTRONICA", 56},
	{"GUIA DE DESPACHO", 52},
	{"GUIA DE DESPACHO ELECTRONICA", 52},
	{"FACTURA DE EXPORTACION ELECTRONICA", 110},
	{"NOTA DE CREDITO DE EXPORTACION ELECTRONICA", 112},
	{"NOTA DE DEBITO DE EXPORTACION ELECTRONICA", 111},
	{"FACTURA DE COMPRA ELECTRONICA", 46},
	{"LIQUIDACION FACTURA ELECTRONICA", 43},
	{"LIQUIDACION-FACTURA ELECTRONICA", 43},
}

func docTipo(folded string) (dte.TipoDTE, bool) {
	for _, d := range docNames {
		if kw(folded, d.name) {
			return d.tipo, true
		}
	}
	return 0, false
}

// comprasTipos maps the LIBRO DE COMPRAS table's document names to the
// libro's codes (sii-wave3-notes §3.3: "FACTURA" paper 30, "FACTURA
// ELECTRONICA" 33, "NOTA DE CREDITO" paper 60, "FACTURA DE COMPRA
// ELECTRONICA" 46).
var comprasTipos = map[string]int{
	"FACTURA":                       30,
	"FACTURA ELECTRONICA":           33,
	"NOTA DE CREDITO":               60,
	"NOTA DE CREDITO ELECTRONICA":   61,
	"NOTA DE DEBITO":                55,
	"NOTA DE DEBITO ELECTRONICA":    56,
	"FACTURA EXENTA":                32,
	"FACTURA EXENTA ELECTRONICA":    34,
	"FACTURA DE COMPRA":             45,
	"FACTURA DE COMPRA ELECTRONICA": 46,
}

// parser walks the lines once.
type parser struct {
	lines []string
	i     int // index of the current line
	plan  *Plan
	set   *Set
}

func (p *parser) errf(i int, format string, args ...any) error {
	return &ParseError{Line: i + 1, Text: p.lines[i], Reason: fmt.Sprintf(format, args...)}
}

// lostAccent fails on a line whose text carries U+FFFD: an accent lost
// when the file was re-saved, which the kit will not guess back.
func (p *parser) lostAccent(i int, what string) error {
	if strings.ContainsRune(p.lines[i], utf8.RuneError) {
		return p.errf(i, "%s has a character lost in a re-save (U+FFFD): use the file as the SII delivered it (ISO-8859-1), the kit does not guess accents", what)
	}
	return nil
}

func (p *parser) blank(i int) bool { return strings.TrimSpace(p.lines[i]) == "" }

func (p *parser) run() error {
	for p.i < len(p.lines) {
		i := p.i
		f := fold(p.lines[i])
		switch {
		case f == "" || reDashes.MatchString(f):
			p.i++
		case kw(f, "INDICACIONES GENERALES:") || kw(f, "INDICACIONES GENERALES"):
			if p.set != nil || len(p.plan.Sets) > 0 {
				return p.errf(i, "INDICACIONES GENERALES after a set: the preamble opens the file")
			}
			p.i++
			for p.i < len(p.lines) && !p.setStart(fold(p.lines[p.i])) {
				if !p.blank(p.i) {
					p.plan.Indicaciones = append(p.plan.Indicaciones, strings.TrimSpace(p.lines[p.i]))
				}
				p.i++
			}
		case reSetHeader.MatchString(f):
			m := reSetHeader.FindStringSubmatch(f)
			kind, ok := setKindOf(m[1])
			if !ok {
				return p.errf(i, "unknown set %q (known: BASICO, FACTURA EXENTA, GUIA DE DESPACHO, LIBRO DE VENTAS, LIBRO DE COMPRAS, LIBRO DE GUIAS, EXPORTACION (1) and (2), FACTURA DE COMPRA, LIQUIDACION FACTURA, LIBRO DE COMPRAS PARA EXENTOS)", m[1])
			}
			p.newSet(kind, "SET "+m[1], m[2], i)
			p.i++
			if err := p.setBody(); err != nil {
				return err
			}
		case kw(f, boletaTitle):
			p.newSet(SetBoleta, boletaTitle, "", i)
			p.i++
			if err := p.setBody(); err != nil {
				return err
			}
		case reCase.MatchString(f) || reBoletaCase.MatchString(f):
			// A file without headers: one set, its kind from its documents.
			if p.set != nil {
				return p.errf(i, "a case outside its set")
			}
			kind := setUnknown
			if reBoletaCase.MatchString(f) {
				kind = SetBoleta
			}
			p.newSet(kind, "", "", i)
			if err := p.setBody(); err != nil {
				return err
			}
			if err := p.inferKind(p.plan.Sets[len(p.plan.Sets)-1]); err != nil {
				return err
			}
		default:
			return p.errf(i, "not a set header, a case or the INDICACIONES GENERALES preamble")
		}
		p.set = nil
	}
	return p.checkRefs()
}

func (p *parser) setStart(f string) bool {
	return reSetHeader.MatchString(f) || kw(f, boletaTitle) || reCase.MatchString(f) || reBoletaCase.MatchString(f)
}

func (p *parser) newSet(kind SetKind, name, atencion string, i int) {
	p.set = &Set{Kind: kind, Name: name, Atencion: atencion, Line: i + 1}
	p.plan.Sets = append(p.plan.Sets, p.set)
}

// inferKind names a headerless set from its documents.
func (p *parser) inferKind(s *Set) error {
	if len(s.Cases) == 0 {
		return &ParseError{Line: s.Line, Reason: "a set without cases"}
	}
	if s.Kind == SetBoleta {
		s.Name = "SET DE BOLETA ELECTRONICA"
		return nil
	}
	has := map[dte.TipoDTE]bool{}
	for _, c := range s.Cases {
		has[c.Tipo] = true
	}
	switch first := s.Cases[0].Tipo; {
	case has[110] || has[111] || has[112]:
		s.Kind = SetExportacion
	case has[46]:
		s.Kind = SetFacturaCompra
	case has[43]:
		s.Kind = SetLiquidacionFactura
	case first == 52:
		s.Kind = SetGuiaDespacho
	case first == 34:
		s.Kind = SetFacturaExenta
	case first == 33:
		s.Kind = SetBasico
	default:
		return &ParseError{Line: s.Line, Reason: fmt.Sprintf("a set without a header whose first document (tipo %d) names no set", first)}
	}
	s.Name = "SET " + string(s.Kind)
	s.Atencion, _, _ = strings.Cut(s.Cases[0].ID, "-")
	return nil
}

// setBody reads the lines of the current set up to the next set.
func (p *parser) setBody() error {
	s := p.set
	for p.i < len(p.lines) {
		i := p.i
		f := fold(p.lines[i])
		switch {
		case reSetHeader.MatchString(f) || kw(f, boletaTitle):
			return nil
		case f == "" || reDashes.MatchString(f):
			p.i++
		case reCase.MatchString(f) && s.Kind != SetBoleta:
			if err := p.caseBlock(); err != nil {
				return err
			}
		case reBoletaCase.MatchString(f) && s.Kind == SetBoleta:
			if err := p.caseBlock(); err != nil {
				return err
			}
		case reRule.MatchString(f) && (s.Kind == SetLibroCompras || s.Kind == SetLibroComprasExentos):
			if err := p.comprasTable(); err != nil {
				return err
			}
		case reRule.MatchString(f) && s.Kind == SetBoleta && len(s.Cases) > 0:
			p.i++ // the closing rule before OBSERVACIONES GENERALES
		case kw(f, "OBSERVACIONES GENERALES") && (s.Kind == SetLibroCompras || s.Kind == SetLibroComprasExentos || s.Kind == SetBoleta):
			p.i++
			if err := p.observaciones(); err != nil {
				return err
			}
		default:
			if len(s.Cases) > 0 || len(s.Compras) > 0 {
				return p.errf(i, "unexpected line after the cases of %s", s.Name)
			}
			if len(s.Notes) >= maxInstructionLinesPerSet {
				return p.errf(i, "more than %d lines of instructions", maxInstructionLinesPerSet)
			}
			if s.Kind == SetLibroGuias {
				if m := reGuiaCaso.FindStringSubmatch(f); m != nil {
					n, _ := strconv.Atoi(m[1])
					if strings.HasPrefix(m[2], "ANULADA") {
						s.GuiasAnuladas = append(s.GuiasAnuladas, n)
					} else {
						s.GuiasFacturadas = append(s.GuiasFacturadas, n)
					}
				}
			}
			s.Notes = append(s.Notes, strings.TrimSpace(p.lines[i]))
			p.i++
		}
	}
	return nil
}

// observaciones reads a set's closing OBSERVACIONES GENERALES.
func (p *parser) observaciones() error {
	s := p.set
	// The observations end at the next set's header or at the end of the
	// file; either way the factor is read from them.
	for p.i < len(p.lines) {
		f := fold(p.lines[p.i])
		if reSetHeader.MatchString(f) || kw(f, boletaTitle) {
			break
		}
		if f != "" && !reDashes.MatchString(f) {
			s.Observaciones = append(s.Observaciones, strings.TrimSpace(p.lines[p.i]))
			if len(s.Observaciones) > maxInstructionLinesPerSet {
				return p.errf(p.i, "more than %d lines of observations", maxInstructionLinesPerSet)
			}
		}
		p.i++
	}
	if s.Kind == SetLibroCompras || s.Kind == SetLibroComprasExentos {
		all := fold(strings.Join(s.Observaciones, " "))
		if strings.Contains(all, "PROPORCIONALIDAD") {
			m := reFactor.FindStringSubmatch(all)
			if m == nil {
				return &ParseError{Line: p.i, Reason: s.Name + ": the observations name a factor de proporcionalidad without a value such as 0.60"}
			}
			s.FactorProporcionalidad = dte.Decimal(strings.ReplaceAll(m[1], ",", "."))
		}
	}
	return nil
}

// comprasTable reads the LIBRO DE COMPRAS table: a header between two
// rules, then blocks of three lines (type and folio, observation, exento
// and afecto amounts) separated by blank lines, up to a closing rule.
func (p *parser) comprasTable() error {
	s := p.set
	i := p.i
	// Header: rule, titles, rule.
	p.i++
	for p.i < len(p.lines) && !reRule.MatchString(fold(p.lines[p.i])) {
		p.i++
	}
	if p.i >= len(p.lines) {
		return p.errf(i, "%s: the table header is not closed by a line of '='", s.Name)
	}
	p.i++
	for p.i < len(p.lines) {
		f := fold(p.lines[p.i])
		switch {
		case f == "":
			p.i++
			continue
		case reRule.MatchString(f):
			p.i++
			if len(s.Compras) == 0 {
				return p.errf(p.i-1, "%s: an empty table", s.Name)
			}
			return nil
		}
		if p.i+2 >= len(p.lines) {
			return p.errf(p.i, "%s: a row needs three lines (document and folio, observation, amounts)", s.Name)
		}
		c := &Compra{Line: p.i + 1}
		if err := p.lostAccent(p.i, "the document name"); err != nil {
			return err
		}
		cols := fields(p.lines[p.i])
		if len(cols) != 2 {
			return p.errf(p.i, "%s: want a document type and a folio", s.Name)
		}
		c.Documento = strings.TrimSpace(cols[0])
		tipo, ok := comprasTipos[fold(cols[0])]
		if !ok {
			return p.errf(p.i, "%s: unknown document type %q", s.Name, c.Documento)
		}
		c.Tipo = tipo
		folio, err := strconv.ParseInt(strings.TrimSpace(cols[1]), 10, 64)
		if err != nil || folio <= 0 {
			return p.errf(p.i, "%s: folio %q is not a positive number", s.Name, strings.TrimSpace(cols[1]))
		}
		c.Folio = folio
		p.i++
		if err := p.lostAccent(p.i, "the observation"); err != nil {
			return err
		}
		c.Observacion = strings.TrimSpace(p.lines[p.i])
		if c.Observacion == "" {
			return p.errf(p.i, "%s: the observation line is empty", s.Name)
		}
		p.i++
		// Amounts: "[exento]<sep><sep>afecto"; an empty first column is 0.
		var exe, afe string
		switch cols := fields(p.lines[p.i]); len(cols) {
		case 1:
			exe, afe = "0", strings.TrimSpace(cols[0])
		case 2:
			exe, afe = strings.TrimSpace(cols[0]), strings.TrimSpace(cols[1])
		default:
			return p.errf(p.i, "%s: want MONTO EXENTO and MONTO AFECTO columns", s.Name)
		}
		if len(fields(p.lines[p.i])) == 1 && !strings.HasPrefix(p.lines[p.i], "\t") && !strings.HasPrefix(p.lines[p.i], "  ") {
			return p.errf(p.i, "%s: one amount without the empty MONTO EXENTO column before it", s.Name)
		}
		for _, v := range []struct {
			s   string
			dst *int64
		}{{exe, &c.MontoExento}, {afe, &c.MontoAfecto}} {
			n, err := strconv.ParseInt(v.s, 10, 64)
			if err != nil || n < 0 {
				return p.errf(p.i, "%s: amount %q is not a whole number of pesos", s.Name, v.s)
			}
			*v.dst = n
		}
		p.i++
		s.Compras = append(s.Compras, c)
		if len(s.Compras) > maxCasesPerSet {
			return p.errf(p.i-1, "%s: more than %d rows", s.Name, maxCasesPerSet)
		}
	}
	return p.errf(i, "%s: the table is not closed by a line of '='", s.Name)
}
