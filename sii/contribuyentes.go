package sii

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/mail"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/textclip"
	"github.com/dtekit/dtekit/internal/xmlflat"
)

// The SII's list of authorized electronic issuers.
//
// The SII publishes, under "Consulta de contribuyentes autorizados" of its
// electronic invoicing pages, the companies authorized to issue electronic
// documents with the address each registered for the exchange of documents
// between companies (its "mail de intercambio"). The whole list downloads
// as a file named ce_empresas_dwnld_YYYYMMDD.csv (from
// https://palena.sii.cl/cvc_cgi/dte/ce_empresas_dwnld, certificación at
// maullin.sii.cl, with a session of the company's certificate). Its format
// is not documented by the SII; public code that reads it agrees on:
//
//   - one header line, "RUT;RAZON SOCIAL;NUMERO RESOLUCION;FECHA
//     RESOLUCION;MAIL INTERCAMBIO;URL", then one company a line;
//   - fields separated by ";" with no quoting (LibreDTE reads it with
//     str_getcsv(line, ';', ''): github.com/LibreDTE/libredte-lib and
//     forks, lib/Sii.php, Sii::getContribuyentes);
//   - the RUT with its hyphen and no dots ("76543210-3"), the date as
//     DD-MM-YYYY, sometimes with a trailing space, the address possibly
//     empty (github.com/happier-milo/ruraldte-engine, engine/sii-padron.ts
//     and its test, which also measured about 1.74 million rows, 150 MB);
//   - ISO-8859-1 text (Odoo and other integrations open it with
//     encoding="ISO-8859-1" and delimiter ';').
//
// ReadContribuyentes reads it as hostile input: the file, each line and
// the rows are bounded (ContribuyentesLimits), a line that cannot be read
// is skipped with a warning naming its line, and only a file that is not
// the list at all (no header, a bound exceeded) is refused.

// Contribuyente is one company of the SII's list.
type Contribuyente struct {
	// Line is the row's line in the file, from 1 (the header).
	Line        int
	Rut         dte.RUT
	RazonSocial string
	// NumeroResolucion and FechaResolucion (YYYY-MM-DD) are the
	// resolution that authorized the company (0 and "" when unreadable).
	NumeroResolucion int64
	FechaResolucion  string
	// Correo is the company's intercambio address ("" when none).
	Correo string
	URL    string
}

// ContribuyentesLimits bound what ReadContribuyentes reads. Zero fields
// take the defaults.
type ContribuyentesLimits struct {
	// MaxBytes bounds the file (default 512 MiB; the SII's was about
	// 150 MB in 2026).
	MaxBytes int64
	// MaxLine bounds one line, in bytes (default 4 KiB).
	MaxLine int
	// MaxRows bounds the companies (default 5 million).
	MaxRows int
	// MaxWarnings bounds the warnings kept (default 1000); all are
	// counted.
	MaxWarnings int
}

// Defaults returns l with its zero fields set to the defaults.
func (l ContribuyentesLimits) Defaults() ContribuyentesLimits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = 512 << 20
	}
	if l.MaxLine <= 0 {
		l.MaxLine = 4 << 10
	}
	if l.MaxRows <= 0 {
		l.MaxRows = 5_000_000
	}
	if l.MaxWarnings <= 0 {
		l.MaxWarnings = 1000
	}
	return l
}

// Warning is a line of the list that was skipped or read in part.
type Warning struct {
	Line    int    `json:"linea"`
	Message string `json:"mensaje"`
}

func (w Warning) String() string { return fmt.Sprintf("line %d: %s", w.Line, w.Message) }

// ContribuyentesReport is what one read of the list found.
type ContribuyentesReport struct {
	// Lines are the lines read, the header included; Rows the companies
	// handed to the caller.
	Lines, Rows int
	// Warnings are the first MaxWarnings warnings; WarningCount counts
	// them all.
	Warnings     []Warning
	WarningCount int
}

// Warn records a warning about a line (the caller's too: a RUT repeated).
func (r *ContribuyentesReport) Warn(lim ContribuyentesLimits, line int, format string, args ...any) {
	r.WarningCount++
	if len(r.Warnings) < lim.Defaults().MaxWarnings {
		r.Warnings = append(r.Warnings, Warning{Line: line, Message: fmt.Sprintf(format, args...)})
	}
}

// ErrNotContribuyentes reports a file that is not the SII's list of
// contribuyentes, or one over a bound.
var ErrNotContribuyentes = errors.New("not the SII's list of authorized contribuyentes")

// The columns ReadContribuyentes knows, by their header names.
const (
	colRut        = "RUT"
	colRazon      = "RAZON SOCIAL"
	colNumero     = "NUMERO RESOLUCION"
	colFecha      = "FECHA RESOLUCION"
	colMail       = "MAIL INTERCAMBIO"
	colURL        = "URL"
	maxRazonBytes = 300
	maxURLBytes   = 500
	maxMailBytes  = 254
)

// ReadContribuyentes reads the SII's list from r and hands each company to
// each, in file order; an error from each stops the read and is returned.
// It returns an error wrapping ErrNotContribuyentes when the first line is
// not the list's header or a bound is exceeded (naming the line), and the
// reader's own errors; lines it cannot read are skipped with a warning in
// the report.
func ReadContribuyentes(r io.Reader, lim ContribuyentesLimits, each func(Contribuyente) error) (*ContribuyentesReport, error) {
	lim = lim.Defaults()
	rep := &ContribuyentesReport{}
	lr := &io.LimitedReader{R: r, N: lim.MaxBytes + 1}
	br := bufio.NewReaderSize(lr, 64<<10)
	var cols map[string]int
	var ncols int
	for {
		line, err := readLine(br, lim.MaxLine)
		if errors.Is(err, errLineTooLong) {
			return rep, fmt.Errorf("line %d: longer than %d bytes: %w", rep.Lines+1, lim.MaxLine, ErrNotContribuyentes)
		}
		if line == nil && err != nil {
			if lr.N <= 0 {
				return rep, fmt.Errorf("the file is larger than %d bytes: %w", lim.MaxBytes, ErrNotContribuyentes)
			}
			if errors.Is(err, io.EOF) {
				break
			}
			return rep, err
		}
		if lr.N <= 0 {
			return rep, fmt.Errorf("the file is larger than %d bytes: %w", lim.MaxBytes, ErrNotContribuyentes)
		}
		rep.Lines++
		n := rep.Lines
		text := decodeLine(line)
		if n == 1 {
			text = strings.TrimPrefix(text, "\uFEFF")
			if cols, ncols = header(text); cols == nil {
				return rep, fmt.Errorf("line 1: %q is not the header %q: %w", clip(text, 120),
					"RUT;RAZON SOCIAL;NUMERO RESOLUCION;FECHA RESOLUCION;MAIL INTERCAMBIO;URL", ErrNotContribuyentes)
			}
			continue
		}
		if strings.TrimSpace(text) == "" {
			continue
		}
		c, ok := row(rep, lim, n, text, cols, ncols)
		if !ok {
			continue
		}
		if rep.Rows >= lim.MaxRows {
			return rep, fmt.Errorf("line %d: more than %d companies: %w", n, lim.MaxRows, ErrNotContribuyentes)
		}
		rep.Rows++
		if err := each(c); err != nil {
			return rep, err
		}
	}
	if rep.Lines == 0 {
		return rep, fmt.Errorf("the file is empty: %w", ErrNotContribuyentes)
	}
	return rep, nil
}

var errLineTooLong = errors.New("line too long")

// readLine reads one line without its end ("\n" or "\r\n"), at most max
// bytes (errLineTooLong beyond); after the last line it returns nil and
// the reader's error (io.EOF).
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var out []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(out)+len(frag) > max+2 {
			return nil, errLineTooLong
		}
		out = append(out, frag...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			if len(out) == 0 {
				return nil, err
			}
			return trimEOL(out, max)
		}
		return trimEOL(out, max)
	}
}

func trimEOL(b []byte, max int) ([]byte, error) {
	b = bytes.TrimSuffix(b, []byte("\n"))
	b = bytes.TrimSuffix(b, []byte("\r"))
	if len(b) > max {
		return nil, errLineTooLong
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

// decodeLine reads a line as UTF-8 when it is valid UTF-8 (a file saved
// again by a spreadsheet), else as ISO-8859-1, the SII's encoding.
func decodeLine(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return xmlflat.Latin1ToString(b)
}

// header maps the columns of a header line to their positions; nil when
// the line lacks the RUT or the address column.
func header(line string) (map[string]int, int) {
	fields := strings.Split(line, ";")
	cols := map[string]int{}
	for i, f := range fields {
		name := strings.ToUpper(strings.Join(strings.Fields(f), " "))
		switch name {
		case colRut, colRazon, colNumero, colFecha, colMail, colURL:
			if _, dup := cols[name]; dup {
				return nil, 0
			}
			cols[name] = i
		}
	}
	if _, ok := cols[colRut]; !ok {
		return nil, 0
	}
	if _, ok := cols[colMail]; !ok {
		return nil, 0
	}
	return cols, len(fields)
}

// row reads one company; ok is false when the line is skipped (with its
// warning recorded).
func row(rep *ContribuyentesReport, lim ContribuyentesLimits, n int, text string, cols map[string]int, ncols int) (Contribuyente, bool) {
	fields := strings.Split(text, ";")
	if len(fields) > ncols {
		// The file has no quoting: a razón social with a ";" splits in
		// two. Join the extra fields back into it when it is there.
		i, ok := cols[colRazon]
		if !ok {
			rep.Warn(lim, n, "%d fields, the header has %d", len(fields), ncols)
			return Contribuyente{}, false
		}
		extra := len(fields) - ncols
		joined := strings.Join(fields[i:i+extra+1], ";")
		fields = append(append(fields[:i:i], joined), fields[i+extra+1:]...)
	}
	get := func(col string) string {
		i, ok := cols[col]
		if !ok || i >= len(fields) {
			return ""
		}
		return strings.TrimSpace(fields[i])
	}
	if len(fields) <= cols[colRut] {
		rep.Warn(lim, n, "no RUT")
		return Contribuyente{}, false
	}
	for _, f := range fields {
		if strings.IndexFunc(f, unicode.IsControl) >= 0 {
			rep.Warn(lim, n, "control characters in the line")
			return Contribuyente{}, false
		}
	}
	c := Contribuyente{Line: n}
	rutText := get(colRut)
	rut, err := dte.ParseRUT(rutText)
	if err != nil || rut.Number < 1000 {
		rep.Warn(lim, n, "RUT %q is not valid", clip(rutText, 40))
		return Contribuyente{}, false
	}
	c.Rut = rut
	c.RazonSocial = textclip.Clip(get(colRazon), maxRazonBytes)
	if v := get(colNumero); v != "" {
		num, err := strconv.ParseInt(v, 10, 64)
		if err != nil || num < 0 {
			rep.Warn(lim, n, "NUMERO RESOLUCION %q is not a number; left empty", clip(v, 40))
		} else {
			c.NumeroResolucion = num
		}
	}
	if v := get(colFecha); v != "" {
		d, err := time.Parse("02-01-2006", v)
		if err != nil {
			rep.Warn(lim, n, "FECHA RESOLUCION %q is not DD-MM-YYYY; left empty", clip(v, 40))
		} else {
			c.FechaResolucion = d.Format(time.DateOnly)
		}
	}
	if v := get(colMail); v != "" {
		if addr, ok := mailAddress(v); ok {
			c.Correo = addr
		} else {
			rep.Warn(lim, n, "MAIL INTERCAMBIO %q is not an e-mail address; left empty", clip(v, 80))
		}
	}
	if v := get(colURL); len(v) <= maxURLBytes {
		c.URL = v
	} else {
		rep.Warn(lim, n, "URL longer than %d bytes; left empty", maxURLBytes)
	}
	return c, true
}

// mailAddress checks one bare address as the service checks every
// address it takes (at most 254 bytes, nothing but the address).
func mailAddress(v string) (string, bool) {
	if len(v) > maxMailBytes {
		return "", false
	}
	if a, err := mail.ParseAddress(v); err != nil || a.Address != v {
		return "", false
	}
	return v, true
}

// clip cuts outside text for a message.
func clip(s string, n int) string { return textclip.ClipMark(s, n) }
