package libro

import (
	"fmt"
	"math/big"
	"sort"
	"strings"
	"time"

	"github.com/dtekit/dtekit/dte"
)

// Options configures the libros and the RCOF. The fields marked with a
// kind apply to that kind only.
type Options struct {
	// Emisor supplies the company's RUT (RutEmisorLibro, RutEmisor),
	// FchResol (fecha_resolucion) and NroResol (numero_resolucion): the
	// resolution of the environment the file goes to, NroResol 0 in
	// certification with the FchResol the SII shows the company there.
	Emisor dte.Emisor
	// RutEnvia is who sends the file; empty means the RUT in the signing
	// certificate (the SII wants the certificate's holder).
	RutEnvia string
	// Periodo is PeriodoTributario, YYYY-MM; empty means the month of the
	// documents, which must then all fall in one month (libros only).
	Periodo string
	// TipoLibro is ESPECIAL when empty, as the certification asks;
	// MENSUAL and RECTIFICA are accepted for a LibroCompraVenta (a
	// LibroGuia is always ESPECIAL).
	TipoLibro string
	// FolioNotificacion identifies an ESPECIAL libro; 0 means 1 for the
	// Libro de Ventas, 2 for the Libro de Compras and 3 for the Libro de
	// Guías. Give a new one for each libro sent again.
	FolioNotificacion int64
	// CodAutRec is the authorisation code of a RECTIFICA.
	CodAutRec string
	// At is the signing time (TmstFirma, TmstFirmaEnv); zero means
	// time.Now().
	At time.Time
	// ID is the signed element's ID; empty means "LibroVentas",
	// "LibroCompras", "LibroGuias" or "ConsumoFolios".
	ID string

	// FctProp is the factor de proporcionalidad of the IVA de uso común,
	// e.g. "0.60" (Compras; required when a row has IVA de uso común).
	FctProp dte.Decimal

	// Anuladas marks guías by folio (Guias): AnuladoDespues for a guía
	// annulled after it was sent, RecibidaParcial for goods received in
	// part, AnuladoAntes for a folio annulled before sending (which needs
	// no document).
	Anuladas map[int64]int
	// Facturas names, by guía folio, the invoice of a guía invoiced in the
	// period (Guias).
	Facturas map[int64]DocRef

	// SecEnvio is the RCOF's sequence for its day: 0 means 1; each report
	// sent again for the same day takes the next (ConsumoFolios).
	SecEnvio int
}

// DocRef names a document by type, folio and date (YYYY-MM-DD).
type DocRef struct {
	Tipo  dte.TipoDTE
	Folio int64
	Fecha string
}

// tasaIVA is the IVA rate, in percent.
const tasaIVA = 19

// maxAmount bounds every amount the package computes with: 15 digits of
// pesos, far above any document and small enough that no sum of a
// libro's rows (2000 documents per envelope, a few envelopes) overflows.
const maxAmount = 999_999_999_999_999

// caratula checks the options common to the libros and returns the
// carátula they give; kind is "ventas", "compras" or "guias", ms the months
// of the documents.
func (o *Options) caratula(kind, operacion string, ms months) (Caratula, error) {
	var c Caratula
	rut, err := dte.ParseRUT(o.Emisor.Rut)
	if err != nil {
		return c, fmt.Errorf("libro: options.Emisor.Rut: %w", err)
	}
	c.RutEmisorLibro = rut.String()
	if o.RutEnvia != "" {
		r, err := dte.ParseRUT(o.RutEnvia)
		if err != nil {
			return c, fmt.Errorf("libro: options.RutEnvia: %w", err)
		}
		c.RutEnvia = r.String()
	}
	if c.FchResol, c.NroResol, err = resolucion(o.Emisor); err != nil {
		return c, err
	}
	c.PeriodoTributario = o.Periodo
	if c.PeriodoTributario == "" {
		c.PeriodoTributario = ms.only()
	}
	switch {
	case c.PeriodoTributario != "":
	case len(ms) == 0:
		return c, fmt.Errorf("libro: %s: no document gives the period: set options.Periodo (YYYY-MM)", kind)
	default:
		return c, fmt.Errorf("libro: %s: the documents fall in %s: set options.Periodo (YYYY-MM)", kind, ms.list())
	}
	if _, err := time.Parse("2006-01", c.PeriodoTributario); err != nil || len(c.PeriodoTributario) != 7 {
		return c, fmt.Errorf("libro: options.Periodo %q is not a YYYY-MM month", c.PeriodoTributario)
	}
	c.TipoOperacion = operacion
	c.TipoEnvio = EnvioTotal
	c.TipoLibro = o.TipoLibro
	if c.TipoLibro == "" {
		c.TipoLibro = LibroEspecial
	}
	switch {
	case kind == "guias" && c.TipoLibro != LibroEspecial:
		return c, fmt.Errorf("libro: options.TipoLibro %q: a Libro de Guías is always ESPECIAL", o.TipoLibro)
	case c.TipoLibro != LibroEspecial && c.TipoLibro != LibroMensual && c.TipoLibro != LibroRectifica:
		return c, fmt.Errorf("libro: options.TipoLibro %q is not MENSUAL, ESPECIAL or RECTIFICA", o.TipoLibro)
	}
	if c.TipoLibro == LibroRectifica {
		if o.CodAutRec == "" || len(o.CodAutRec) > 10 || !plainASCII(o.CodAutRec) {
			return c, fmt.Errorf("libro: options.CodAutRec %q: a RECTIFICA needs the SII's authorisation code (at most 10 characters)", o.CodAutRec)
		}
		c.CodAutRec = o.CodAutRec
	}
	if c.TipoLibro == LibroEspecial || kind == "guias" {
		c.FolioNotificacion = o.FolioNotificacion
		if c.FolioNotificacion == 0 {
			c.FolioNotificacion = map[string]int64{"ventas": 1, "compras": 2, "guias": 3}[kind]
		}
		if c.FolioNotificacion < 0 || c.FolioNotificacion > 999_999_999_999_999_999 {
			return c, fmt.Errorf("libro: options.FolioNotificacion %d is not a positive number of at most 18 digits", o.FolioNotificacion)
		}
	}
	return c, nil
}

// resolucion checks and returns the company's FchResol and NroResol.
func resolucion(e dte.Emisor) (string, int, error) {
	if _, err := time.Parse("2006-01-02", e.FechaResolucion); err != nil {
		return "", 0, fmt.Errorf("libro: options.Emisor.FechaResolucion %q is not a YYYY-MM-DD date", e.FechaResolucion)
	}
	if e.NumeroResolucion < 0 || e.NumeroResolucion > 999999 {
		return "", 0, fmt.Errorf("libro: options.Emisor.NumeroResolucion %d is out of range (0-999999)", e.NumeroResolucion)
	}
	return e.FechaResolucion, e.NumeroResolucion, nil
}

// id returns the signed element's ID: opts.ID or def.
func (o *Options) id(def string) string {
	if o.ID != "" {
		return o.ID
	}
	return def
}

// at returns the signing time.
func (o *Options) at() time.Time {
	if o.At.IsZero() {
		return time.Now()
	}
	return o.At
}

// plainASCII reports whether s is printable ASCII without markup.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '<' || c == '&' || c == '>' {
			return false
		}
	}
	return true
}

// months collects the months (YYYY-MM) of a libro's documents.
type months map[string]bool

// add records the month of a YYYY-MM-DD date.
func (m months) add(date string) {
	if len(date) >= 7 {
		m[date[:7]] = true
	}
}

// only returns the one month recorded, or "" when there are several or
// none.
func (m months) only() string {
	if len(m) != 1 {
		return ""
	}
	for k := range m {
		return k
	}
	return ""
}

// list names the months, sorted, for an error message.
func (m months) list() string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// pesos reads a document amount as whole pesos: absent is 0; a fraction or
// a value past maxAmount is an error naming the field.
func pesos(what, field string, d dte.Decimal) (int64, error) {
	if !d.IsSet() {
		return 0, nil
	}
	n, ok := d.Int64()
	if !ok {
		return 0, fmt.Errorf("libro: %s: %s %q is not a whole number of pesos", what, field, d)
	}
	if n < -maxAmount || n > maxAmount {
		return 0, fmt.Errorf("libro: %s: %s %q is out of range", what, field, d)
	}
	return n, nil
}

// roundMul returns round(n × f) half away from zero, for the IVA of a row
// (f = 19/100) and the credit of IVA de uso común (f = FctProp).
func roundMul(n int64, f *big.Rat) int64 {
	r := new(big.Rat).Mul(new(big.Rat).SetInt64(n), f)
	v, _ := dte.DecimalFromRat(r, 0).Int64()
	return v
}

// ivaRate is 19/100.
func ivaRate() *big.Rat { return big.NewRat(tasaIVA, 100) }

// ivaOf returns the IVA of a neto: 19 % rounded half up.
func ivaOf(neto int64) int64 { return roundMul(neto, ivaRate()) }

// tasa19 is the IVA rate as a Decimal.
const tasa19 dte.Decimal = "19"
