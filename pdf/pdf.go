// Package pdf renders the printed representation of a signed DTE (the
// "representación impresa" the SII requires): the issuer's header with the
// red R.U.T. box, the receptor, the detail lines, references, commissions,
// export data, the totals and the Timbre Electrónico as a PDF417 symbol drawn
// with vector rectangles.
//
// Two paper formats are supported: letter (Carta) for every document type,
// and 80 mm continuous thermal paper (Termica80) for boletas 39 and 41 and
// facturas 33 and 34, printed as one page as long as the content. The
// cedible copy (Ley 19.983) adds the acknowledgement-of-receipt box and the
// legal text on 33, 34, 43 and 46, and "CEDIBLE CON SU FACTURA" on guías 52.
//
// Text uses the PDF core fonts (Helvetica) in the Windows-1252 code page,
// which holds every ISO-8859-1 letter a DTE may carry (ñ, á, ü, °, ¿, ...),
// so no font is embedded: a one-page document weighs about 16 KB.
//
// Amounts are printed the Chilean way: pesos with thousands dots
// ("$ 1.234.567"); export documents print their currency ("US$", "€", "£",
// "¥", else the SII's currency name) and keep the decimals as the XML writes
// them, with a decimal comma ("US$ 18.338,8"). RUTs are printed with
// thousands dots ("76.192.083-9"), dates as "14 de mayo de 2025". Line
// discounts and surcharges are shown as amounts with their percentage
// ("-7.788 (10%)"). An export document's customs codes (nationality,
// countries, ports, transport route, sale clause and modality, payment
// form, package type, units) are printed with the names the customs tables
// of package aduana give them, then the code: "SAN ANTONIO (906)"; a code
// the tables lack is printed as its number, "código 999 (no listado)".
//
// The stamp is the TED's bytes in PDF417 (EC level 5, columns chosen for
// the SII's 9 × 4 cm box on letter paper, 7.2 cm wide on 80 mm), drawn as filled rectangles in
// one path, with a white quiet zone, the module rounded down to whole
// printer dots (1/300 inch on letter, 1/200 inch on 80 mm). On letter it
// sits at the bottom left, 2.03 cm from the paper's edge, beside the totals;
// the detail, references and other tables continue over as many pages as
// needed, with the column titles repeated and "continúa" at the foot of
// each page, and the totals and stamp close the last page. Under the stamp:
// "Timbre Electrónico SII", "Res. N° X de YYYY" (from Options.Resolucion,
// which the XML does not carry) and "Verifique documento: www.sii.cl".
package pdf

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/dtekit/dtekit/dte"
)

// Format is a paper format.
type Format int

// The paper formats.
const (
	// Carta is US letter (215.9 × 279.4 mm), for every document type;
	// long documents continue over several pages.
	Carta Format = iota
	// Termica80 is 80 mm continuous (thermal) paper, 72 mm printable,
	// rendered as one page whose height follows the content. It applies to
	// boletas 39 and 41 and facturas 33 and 34.
	Termica80
)

// String returns the format's name as the CLI spells it: "carta" or "80mm".
func (f Format) String() string {
	switch f {
	case Carta:
		return "carta"
	case Termica80:
		return "80mm"
	}
	return "Format(" + strconv.Itoa(int(f)) + ")"
}

// ParseFormat reads a format name: "carta" (also "letter") or "80mm" (also
// "80", "termica", "thermal"), in any case.
func ParseFormat(s string) (Format, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "carta", "letter":
		return Carta, nil
	case "80mm", "80", "termica", "térmica", "thermal", "termica80":
		return Termica80, nil
	}
	return 0, fmt.Errorf("%w: unknown format %q (want carta or 80mm)", ErrFormat, s)
}

// Applies reports whether the format can print documents of type t: Carta
// prints every type, Termica80 only 33, 34, 39 and 41.
func (f Format) Applies(t dte.TipoDTE) bool {
	switch f {
	case Carta:
		return true
	case Termica80:
		switch t {
		case dte.FacturaElectronica, dte.FacturaNoAfectaOExenta, dte.BoletaElectronica, dte.BoletaExentaElectronica:
			return true
		}
	}
	return false
}

// Resolucion identifies the SII resolution that authorized the issuer to
// emit DTEs, printed under the stamp as "Res. N° 80 de 2014". The document
// XML does not carry it: it comes from the issuer's registration
// (dte.Emisor.NumeroResolucion and FechaResolucion). In certification the
// number is 0.
type Resolucion struct {
	// Numero is the resolution number (0 in the certification environment).
	Numero int
	// Fecha is the resolution date as YYYY-MM-DD (or just YYYY); only the
	// year is printed.
	Fecha string
}

// Year returns the resolution's year, or an error when Fecha does not start
// with a four-digit year.
func (r Resolucion) Year() (int, error) {
	s := strings.TrimSpace(r.Fecha)
	if len(s) < 4 || (len(s) > 4 && s[4] != '-') {
		return 0, fmt.Errorf("%w: resolution date %q is not YYYY-MM-DD", ErrResolucion, r.Fecha)
	}
	y, err := strconv.Atoi(s[:4])
	if err != nil || y < 1990 || y > 2200 {
		return 0, fmt.Errorf("%w: resolution date %q has no plausible year", ErrResolucion, r.Fecha)
	}
	return y, nil
}

// Text returns the line printed under the stamp, e.g. "Res. N° 80 de 2014".
func (r Resolucion) Text() (string, error) {
	if r.Numero < 0 {
		return "", fmt.Errorf("%w: resolution number %d is negative", ErrResolucion, r.Numero)
	}
	y, err := r.Year()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Res. N° %d de %d", r.Numero, y), nil
}

// OficinaNoInformada is printed under the red box when Options.OficinaSII
// is empty: the SII office is the issuer's own (where its resolution was
// granted), so no office is assumed.
const OficinaNoInformada = "S.I.I. - OFICINA NO INFORMADA"

// Options controls Render.
type Options struct {
	// Format is the paper format; the zero value is Carta.
	Format Format
	// Cedible renders the transferable copy (copia cedible): "CEDIBLE",
	// the acuse de recibo box and the Ley 19.983 text on 33, 34, 43 and 46,
	// "CEDIBLE CON SU FACTURA" on 52. Other types fail with ErrNoCedible.
	Cedible bool
	// Resolucion is the issuer's SII resolution; its date is required.
	Resolucion Resolucion
	// OficinaSII is the SII office printed under the red box as
	// "S.I.I. - <office>" (a value already starting with "S.I.I." is
	// printed as given). The office is the issuer's, from its registration
	// (dte.Emisor.OficinaSII); empty prints OficinaNoInformada, never a
	// guessed office.
	OficinaSII string
	// URLBoletas is the address where the issuer's customers check their
	// boletas (the issuer's own site, which must keep them for three
	// months), printed under the stamp of a boleta (39, 41) as "Verifique
	// documento: <address>" instead of the SII's address, which is for
	// the other types (sii-wave3-notes §6.4 and §7). Empty keeps
	// www.sii.cl.
	URLBoletas string
	// Logo is the issuer's logo, a PNG or JPEG image (each side at most
	// MaxLogoPixels), printed at the top left of a letter page and centred
	// above the issuer on 80 mm paper; nil prints none. Another kind of
	// data fails with ErrLogo.
	Logo []byte
}

// OptionsFor returns letter-format options carrying an issuer's resolution
// and SII office, as registered in dte.Emisor.
func OptionsFor(e dte.Emisor) Options {
	return Options{
		Resolucion: Resolucion{Numero: e.NumeroResolucion, Fecha: e.FechaResolucion},
		OficinaSII: e.OficinaSII,
	}
}

// Errors returned by Render; test with errors.Is.
var (
	// ErrNoCedible means a cedible copy was asked for a type that has none
	// (boletas, notes, exports).
	ErrNoCedible = errors.New("pdf: this document type has no cedible copy")
	// ErrFormat means the paper format is unknown or does not apply to the
	// document type (80 mm is for 33, 34, 39 and 41).
	ErrFormat = errors.New("pdf: paper format not available")
	// ErrNoTimbre means the document carries no TED to print.
	ErrNoTimbre = errors.New("pdf: the document has no TED (Timbre Electrónico)")
	// ErrResolucion means Options.Resolucion is missing or malformed.
	ErrResolucion = errors.New("pdf: invalid SII resolution")
	// ErrDocument means the document cannot be printed as it is (no type
	// name, no folio, a TED too long for the stamp, ...).
	ErrDocument = errors.New("pdf: document cannot be printed")
)

// Render writes the printed representation of doc to w as a PDF.
//
// It fails, before writing anything, with ErrNoTimbre when doc has no TED,
// ErrResolucion when opts.Resolucion has no valid date, ErrNoCedible for a
// cedible copy of a type without one, ErrFormat for 80 mm paper with a type
// other than 33, 34, 39 or 41, and ErrDocument for a document whose type is
// not one of the twelve DTEs or whose TED does not fit a PDF417 symbol. The
// output is deterministic: the same document and options give the same
// bytes.
func Render(w io.Writer, doc *dte.Document, opts Options) error {
	b, err := RenderBytes(doc, opts)
	if err != nil {
		return err
	}
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("pdf: writing %s: %w", docLabel(doc), err)
	}
	return nil
}

// RenderBytes is Render returning the PDF's bytes.
func RenderBytes(doc *dte.Document, opts Options) (out []byte, err error) {
	if doc == nil {
		return nil, fmt.Errorf("%w: nil document", ErrDocument)
	}
	if err := check(doc, opts); err != nil {
		return nil, err
	}
	r, err := newRenderer(doc, opts)
	if err != nil {
		return nil, err
	}
	switch opts.Format {
	case Termica80:
		r.roll()
	default:
		r.carta()
	}
	var buf bytes.Buffer
	buf.Grow(32 << 10)
	if err := r.f.Output(&buf); err != nil {
		return nil, fmt.Errorf("pdf: rendering %s: %w", docLabel(doc), err)
	}
	return buf.Bytes(), nil
}

// check validates the document and options before rendering.
func check(doc *dte.Document, opts Options) error {
	label := docLabel(doc)
	if !doc.Tipo.Valid() {
		return fmt.Errorf("%w: %s: type %d is not one of the twelve DTE types", ErrDocument, label, int(doc.Tipo))
	}
	if doc.Folio <= 0 {
		return fmt.Errorf("%w: %s: folio %d is not positive", ErrDocument, label, doc.Folio)
	}
	if len(doc.TED) == 0 {
		return fmt.Errorf("%w: %s", ErrNoTimbre, label)
	}
	if _, err := opts.Resolucion.Text(); err != nil {
		return fmt.Errorf("%s: %w", label, err)
	}
	switch opts.Format {
	case Carta, Termica80:
	default:
		return fmt.Errorf("%w: %s: unknown format %d", ErrFormat, label, int(opts.Format))
	}
	if !opts.Format.Applies(doc.Tipo) {
		return fmt.Errorf("%w: %s: %s paper is for types 33, 34, 39 and 41, not %d", ErrFormat, label, opts.Format, int(doc.Tipo))
	}
	if opts.Cedible && !doc.Tipo.HasCedible() {
		return fmt.Errorf("%w: %s (%s): only 33, 34, 43, 46 and 52 have one", ErrNoCedible, label, doc.Tipo.Name())
	}
	return nil
}

// docLabel names a document in error messages: "T33F1001" or "type 33
// folio 1001".
func docLabel(doc *dte.Document) string {
	if doc == nil {
		return "<nil document>"
	}
	if doc.ID != "" && len(doc.ID) <= 40 {
		return doc.ID
	}
	return fmt.Sprintf("type %d folio %d", int(doc.Tipo), doc.Folio)
}
