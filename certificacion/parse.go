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
	// Case is the case whose own data the line is ("414175-3"), or "".
	Case string
}

// Error names the line, its text, the case and the reason.
func (e *ParseError) Error() string {
	if e.Line == 0 {
		return "certificacion: set file: " + e.Reason
	}
	if e.Case != "" {
		return fmt.Sprintf("certificacion: set file line %d %q (case %s): %s", e.Line, clip(e.Text, 80), e.Case, e.Reason)
	}
	return fmt.Sprintf("certificacion: set file line %d %q: %s", e.Line, clip(e.Text, 80), e.Reason)
}

// Warning is a line of the set file the kit does not understand and
// leaves aside: every case it can read is still generated, and the line is
// shown by generar, written in manifest.json and in LEEME.md so that a
// person reads it against the SII's text.
type Warning struct {
	// Line is the 1-based line number.
	Line int
	// Text is the line as decoded (clipped).
	Text string
	// Reason says why the kit left it aside.
	Reason string
}

// String names the line, its text and the reason.
func (w Warning) String() string {
	return fmt.Sprintf("line %d %q: %s", w.Line, clip(w.Text, 80), w.Reason)
}

// SkippedSet is a set of the file the kit does not know: listed as not
// generated, with the reason, while the rest of the file is.
type SkippedSet struct {
	// Name is the set's name as the file writes it; Atencion its número
	// de atención; Line the line of its header.
	Name, Atencion string
	Line           int
	Reason         string
}

// String names the set, its line and the reason.
func (s SkippedSet) String() string {
	return fmt.Sprintf("%s (número de atención %s, line %d): %s", s.Name, orDash(s.Atencion), s.Line, s.Reason)
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
// It reads by structure (set headers, CASO blocks, item tables, KEY: VALUE
// lines), not by a list of the lines it expects: a line it does not
// understand is a Warning naming the line (Plan.Warnings), footnotes such
// as "(**) VER INSTRUCCIONES" are kept as the set's notes, markers inside
// field names ("FLETE (**):") are dropped, and a set whose header names a
// set the kit does not know is listed in Plan.Skipped with the reason while
// the others are read. The file is refused, with a *ParseError naming the
// line (and the case), only when a case's own data cannot be read: its
// document, reference, reason, item lines, or an item name (or any text)
// whose accents were lost in a re-save (U+FFFD).
//
// A file whose first line is "Folio;IndExe;NmbItem;QtyItem;UnmdItem;
// PrcItem;Anular;Rebajar" is the spreadsheet of the pre-2020 boleta set
// (007-boletas.csv), read as boletascsv.go describes: the boleta set and
// its credit notes, with a warning that the file is a transcription.
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
	run := p.run
	if isBoletasCSV(lines) {
		run = func() error {
			if err := p.boletasCSV(); err != nil {
				return err
			}
			return p.checkRefs()
		}
	}
	if err := run(); err != nil {
		return nil, err
	}
	if len(p.plan.Sets) == 0 {
		if len(p.plan.Skipped) > 0 {
			names := make([]string, len(p.plan.Skipped))
			for i, s := range p.plan.Skipped {
				names[i] = s.Name
			}
			return nil, &ParseError{Reason: "no set the kit knows: " + strings.Join(names, ", ") + " (known: " + knownSets + ")"}
		}
		return nil, &ParseError{Reason: "no set, case or table found: this is not an SII set-of-tests file"}
	}
	return p.plan, nil
}

func badControl(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f || (r >= 0x80 && r < 0xa0) }

// decode returns the file as text: UTF-8 when it is valid UTF-8 (a BOM is
// dropped), else ISO-8859-1, the SII's encoding, with the bytes 0x80-0x9F
// that Windows-1252 uses for printable characters (curly quotes, dashes,
// €) read as Windows-1252 does, for a file re-saved on Windows. A Latin-1
// file with accents is never valid UTF-8 in practice (an accented letter
// followed by an ASCII byte is an invalid sequence).
func decode(b []byte) string {
	b = bytes.TrimPrefix(b, []byte("\xEF\xBB\xBF"))
	if utf8.Valid(b) {
		return string(b)
	}
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
		if c >= 0x80 && c < 0xa0 && cp1252[c-0x80] != 0 {
			r[i] = cp1252[c-0x80]
		}
	}
	return string(r)
}

// cp1252 maps the bytes 0x80-0x9F to the characters Windows-1252 gives
// them (0 where it gives none: those stay control characters).
var cp1252 = [32]rune{
	'€', 0, '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', 0, 'Ž', 0,
	0, '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', 0, 'ž', 'Ÿ',
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
	reSetHeader   = regexp.MustCompile(`^SET (.+?) ?- ?(?:NUMERO|NRO\.?|N°|Nº|N\.) DE ATENCI[O?]N ?:? ?(\d+)$`)
	reFootnote    = regexp.MustCompile(`^\(\*+\)`)
	reMarker      = regexp.MustCompile(`\s*\(\*+\)\s*`)
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
	// kase is the case being read, named in its errors.
	kase string
}

func (p *parser) errf(i int, format string, args ...any) error {
	return &ParseError{Line: i + 1, Text: p.lines[i], Reason: fmt.Sprintf(format, args...), Case: p.kase}
}

// warn records line i as one the kit leaves aside.
func (p *parser) warn(i int, format string, args ...any) error {
	if len(p.plan.Warnings) >= maxWarnings {
		return p.errf(i, "more than %d lines the kit does not understand: this does not look like an SII set-of-tests file", maxWarnings)
	}
	p.plan.Warnings = append(p.plan.Warnings, Warning{Line: i + 1, Text: strings.TrimSpace(p.lines[i]), Reason: fmt.Sprintf(format, args...)})
	return nil
}

// knownSets lists the sets the kit generates, for messages.
const knownSets = "BASICO, FACTURA EXENTA, GUIA DE DESPACHO, LIBRO DE VENTAS, LIBRO DE COMPRAS, LIBRO DE GUIAS, EXPORTACION (1) and (2), FACTURA DE COMPRA, LIQUIDACION FACTURA, LIBRO DE COMPRAS PARA EXENTOS, the boleta set"

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
			p.i++
			for p.i < len(p.lines) && !p.setStart(fold(p.lines[p.i])) {
				if !p.blank(p.i) {
					p.plan.Indicaciones = append(p.plan.Indicaciones, strings.TrimSpace(p.lines[p.i]))
					if len(p.plan.Indicaciones) > maxInstructionLinesPerSet {
						return p.errf(p.i, "more than %d lines of indications", maxInstructionLinesPerSet)
					}
				}
				p.i++
			}
		case reSetHeader.MatchString(f):
			m := reSetHeader.FindStringSubmatch(f)
			kind, ok := setKindOf(m[1])
			if !ok {
				p.skipSet(i, m[1], m[2])
				continue
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
			if err := p.warn(i, "outside every set: not a set header, a case or the INDICACIONES GENERALES preamble; left aside"); err != nil {
				return err
			}
			p.i++
		}
		p.set = nil
	}
	return p.checkRefs()
}

// skipSet lists the set whose header is at line i, whose name the kit does
// not know, as not generated, and passes over its lines up to the next
// set's header.
func (p *parser) skipSet(i int, name, atencion string) {
	p.plan.Skipped = append(p.plan.Skipped, SkippedSet{Name: "SET " + strings.TrimSpace(p.setName(i, name)), Atencion: atencion, Line: i + 1,
		Reason: "the kit does not know this set (it knows " + knownSets + "); generate its cases by other means"})
	p.i = i + 1
	for p.i < len(p.lines) {
		f := fold(p.lines[p.i])
		if reSetHeader.MatchString(f) || kw(f, boletaTitle) {
			return
		}
		p.i++
	}
}

// setName returns the set's name as line i writes it (the folded name
// when the line cannot be cut).
func (p *parser) setName(i int, folded string) string {
	l := strings.TrimSpace(p.lines[i])
	if len(l) > 4 && strings.EqualFold(l[:4], "SET ") {
		if j := strings.LastIndex(l, "-"); j > 4 {
			return strings.TrimSpace(l[4:j])
		}
	}
	return folded
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
		case reRule.MatchString(f) && (s.Kind == SetLibroCompras || s.Kind == SetLibroComprasExentos) && len(s.Compras) == 0:
			if err := p.comprasTable(); err != nil {
				return err
			}
		case reRule.MatchString(f) && (len(s.Cases) > 0 || len(s.Compras) > 0):
			p.i++ // a closing rule, or the rules around a footnote
		case kw(f, "OBSERVACIONES GENERALES") || kw(f, "OBSERVACIONES GENERALES:"):
			p.i++
			if err := p.observaciones(); err != nil {
				return err
			}
		case reFootnote.MatchString(f):
			// "(**) VER INSTRUCCIONES …": a footnote to a marked field,
			// kept with the set's notes.
			if len(s.Notes) >= maxInstructionLinesPerSet {
				return p.errf(i, "more than %d lines of instructions", maxInstructionLinesPerSet)
			}
			s.Notes = append(s.Notes, strings.TrimSpace(p.lines[i]))
			p.i++
		default:
			if len(s.Cases) > 0 || len(s.Compras) > 0 {
				if err := p.warn(i, "after the cases of %s: not a case, a table or a footnote; left aside", orDash(s.Name)); err != nil {
					return err
				}
				p.i++
				continue
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
