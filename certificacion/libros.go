package certificacion

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/libro"
	"github.com/dtekit/dtekit/signer"
)

// LibroKind names a libro the kit builds.
type LibroKind string

// The libros of the certification, in upload order.
const (
	LibroVentas         LibroKind = "LIBRO DE VENTAS"
	LibroCompras        LibroKind = "LIBRO DE COMPRAS"
	LibroComprasExentos LibroKind = "LIBRO DE COMPRAS PARA EXENTOS"
	LibroGuias          LibroKind = "LIBRO DE GUIAS"
	LibroRCOF           LibroKind = "CONSUMO DE FOLIOS"
)

// FolioNotificacion of each libro's first attempt: 1 for the Libro de
// Ventas and 2 for the Libro de Compras ([SII-INSTSET], sii-wave3-notes
// §3.3), 3 for the Libro de Guías and 4 for the Libro de Compras para
// Exentos, so that no two libros of one period share an identity (RUT,
// TipoOperacion, period, TipoLibro, FolioNotificacion): the SII refuses a
// second TOTAL of one identity (LNC, "Libro Cerrado").
var firstFolioNotificacion = map[LibroKind]int64{LibroVentas: 1, LibroCompras: 2, LibroGuias: 3, LibroComprasExentos: 4}

// libroKinds maps each libro set to the libro it asks for.
var libroKinds = map[SetKind]LibroKind{SetLibroVentas: LibroVentas, SetLibroCompras: LibroCompras,
	SetLibroComprasExentos: LibroComprasExentos, SetLibroGuias: LibroGuias}

// LibroResult is one signed libro (or the RCOF) of a generated plan.
type LibroResult struct {
	Kind LibroKind
	// Set is the libro set it answers (nil for the RCOF, which answers the
	// boleta set).
	Set *Set
	// XML is the signed LibroCompraVenta, LibroGuia or ConsumoFolios.
	XML []byte
	// FolioNotificacion is a libro's FolioNotificacion, SecEnvio the
	// RCOF's SecEnvio.
	FolioNotificacion int64
	SecEnvio          int
}

// PendingLibro is a libro set the plan asks for that Generate could not
// build from this plan alone, with the reason.
type PendingLibro struct {
	Set    *Set
	Reason string
}

// reFacturaRef finds the document a purchase note modifies: "NOTA DE
// CREDITO POR DESCUENTO A FACTURA 234" (a paper factura, 30), "… DESCUENTO
// FACTURA ELECTRONICA 32" (33).
var reFacturaRef = regexp.MustCompile(`\bFACTURA( ELECTRONICA)? (\d+)\b`)

// Proveedores returns the suppliers' RUTs the kit writes in the Libro de
// Compras (the set gives none; the SII asks for "un RUT válido para cada
// proveedor"): one per row, valid and distinct from the receptor pool.
func Proveedores(n int) []string {
	out := make([]string, n)
	for i := range n {
		body := 78100100 + i*1009
		out[i] = fmt.Sprintf("%d-%c", body, dte.CheckDigit(body))
	}
	return out
}

// ComprasRows maps a LIBRO DE COMPRAS table (of SET LIBRO DE COMPRAS, or
// of SET LIBRO DE COMPRAS PARA EXENTOS) to the libro's rows, as the notes
// give (sii-wave3-notes §3.3): the parsed type (30, 33, 60, 46), "IVA USO
// COMUN" to IVA de uso común, "ENTREGA GRATUITA" to IVA not recoverable
// code 4, "RETENCION TOTAL" to the whole IVA retained, "… CON DERECHO A
// CREDITO" to recoverable IVA, and "… FACTURA [ELECTRONICA] n" in a note
// to the reference of the row with that type (30, or 33) and folio, whose
// IVA is recoverable. An observation of a row with an afecto amount that
// says none of these (among them "SIN DERECHO A CREDITO", whose kind of IVA
// not recoverable the notes do not give) is an error naming its line: the
// kit does not guess how an IVA is treated. Every row is dated fecha and
// has its own supplier (Proveedores).
func ComprasRows(s *Set, fecha string) ([]libro.Compra, error) {
	ruts := Proveedores(len(s.Compras))
	out := make([]libro.Compra, 0, len(s.Compras))
	for i, c := range s.Compras {
		obs := fold(c.Observacion)
		r := libro.Compra{Tipo: dte.TipoDTE(c.Tipo), Folio: c.Folio, Fecha: fecha, RutEmisor: ruts[i],
			MntExe: c.MontoExento, MntNeto: c.MontoAfecto}
		note := c.Tipo == 60 || c.Tipo == 61 || c.Tipo == 55 || c.Tipo == 56
		m := reFacturaRef.FindStringSubmatch(obs)
		switch {
		case strings.Contains(obs, "SIN DERECHO A CREDITO") || strings.Contains(obs, "NO RECUPERABLE"):
			if c.MontoAfecto > 0 {
				return nil, fmt.Errorf("certificacion: %s line %d: observation %q: the notes do not say which code of IVA not recoverable it is", s.Name, c.Line+1, c.Observacion)
			}
		case strings.Contains(obs, "IVA USO COMUN"):
			r.IVAUsoComun = true
		case strings.Contains(obs, "ENTREGA GRATUITA"):
			r.IVANoRec = 4
		case strings.Contains(obs, "RETENCION TOTAL"):
			r.RetencionTotal = true
		case strings.Contains(obs, "CON DERECHO A CREDITO"), note && m != nil, c.MontoAfecto == 0:
		default:
			return nil, fmt.Errorf("certificacion: %s line %d: observation %q says nothing the kit maps to a kind of IVA (con derecho a crédito, uso común, entrega gratuita, retención total, a note's factura)", s.Name, c.Line+1, c.Observacion)
		}
		if note && m == nil {
			return nil, fmt.Errorf("certificacion: %s line %d: the note's observation %q names no FACTURA [ELECTRONICA] <folio> of the table", s.Name, c.Line+1, c.Observacion)
		}
		if m != nil && note {
			folio, _ := strconv.ParseInt(m[2], 10, 64)
			tipo := 30
			if m[1] != "" {
				tipo = 33
			}
			for _, o := range s.Compras {
				if o.Folio == folio && o.Tipo == tipo {
					r.TpoDocRef, r.FolioDocRef = dte.TipoDTE(tipo), folio
				}
			}
			if r.FolioDocRef == 0 {
				return nil, fmt.Errorf("certificacion: %s line %d: the note refers to %s, which is not in the table", s.Name, c.Line+1, strings.TrimSpace(m[0]))
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// libros builds the libros the plan's libro sets ask for, and the RCOF of
// the boleta set. A libro whose source set is not in the plan is left
// pending with the reason.
func (g *generator) libros(res *Result) error {
	byKind := map[SetKind]*SetResult{}
	for _, s := range res.Sets {
		if byKind[s.Set.Kind] == nil {
			byKind[s.Set.Kind] = s
		}
	}
	opts := libro.Options{Emisor: g.cfg.Emisor, At: res.At}
	cert := g.cfg.Cert
	for _, s := range res.Sets {
		var (
			kind LibroKind
			xml  []byte
			err  error
		)
		o := opts
		o.FolioNotificacion = firstFolioNotificacion[libroKinds[s.Set.Kind]]
		switch s.Set.Kind {
		case SetLibroVentas:
			kind = LibroVentas
			src := byKind[SetBasico]
			if src == nil {
				src = byKind[SetFacturaExenta]
			}
			if src == nil || src.Envelope == nil {
				res.Pending = append(res.Pending, PendingLibro{Set: s.Set, Reason: "the file has neither SET BASICO nor SET FACTURA EXENTA, whose documents the Libro de Ventas lists"})
				continue
			}
			xml, err = libro.Ventas(o, cert, src.Envelope)
		case SetLibroCompras, SetLibroComprasExentos:
			kind = LibroCompras
			if s.Set.Kind == SetLibroComprasExentos {
				kind = LibroComprasExentos
				if len(s.Set.Compras) == 0 {
					res.Pending = append(res.Pending, PendingLibro{Set: s.Set, Reason: "the set has no table of documents (TIPO DOCUMENTO, FOLIO, OBSERVACIONES, MONTO EXENTO, MONTO AFECTO) to build the libro from; the SII material the kit follows describes no other form"})
					continue
				}
			}
			rows, e := ComprasRows(s.Set, res.Fecha)
			if e != nil {
				return e
			}
			o.FctProp = s.Set.FactorProporcionalidad
			xml, err = libro.Compras(o, cert, rows)
		case SetLibroGuias:
			kind = LibroGuias
			src := byKind[SetGuiaDespacho]
			if src == nil || src.Envelope == nil {
				res.Pending = append(res.Pending, PendingLibro{Set: s.Set, Reason: "the file has no SET GUIA DE DESPACHO, whose guías the Libro de Guías lists"})
				continue
			}
			o, err = guiasOptions(o, s.Set, src, res)
			if err != nil {
				res.Pending = append(res.Pending, PendingLibro{Set: s.Set, Reason: err.Error()})
				continue
			}
			xml, err = libro.Guias(o, cert, src.Envelope)
		case SetBoleta:
			if s.Envelope == nil {
				continue
			}
			kind = LibroRCOF
			xml, err = consumoFolios(o, cert, s.Envelope)
		default:
			continue
		}
		if err != nil {
			return fmt.Errorf("certificacion: %s of %s: %w", kind, s.Set.Name, err)
		}
		lr := &LibroResult{Kind: kind, Set: s.Set, XML: xml, FolioNotificacion: o.FolioNotificacion}
		if kind == LibroRCOF {
			lr.FolioNotificacion, lr.SecEnvio = 0, 1
		}
		res.Libros = append(res.Libros, lr)
	}
	return nil
}

// consumoFolios signs the RCOF of the boleta set's envelope with the
// amounts the SII's rule gives (Res. Ex. SII N° 74/2020, annex "Listado
// resumen de campos RVD", sii-wave3-notes §4.1): a type's MntIva is its
// MntNeto times the IVA rate, rounded half up to the peso (not the sum of
// each boleta's IVA, which can differ from it by a peso per boleta), and
// MntTotal is MntNeto + MntIva + MntExento.
func consumoFolios(o libro.Options, cert *signer.Certificate, envelope []byte) ([]byte, error) {
	c, err := libro.NewConsumo(o, envelope)
	if err != nil {
		return nil, err
	}
	for i := range c.Resumen {
		r := &c.Resumen[i]
		if r.TipoDocumento == int(dte.BoletaExentaElectronica) || r.MntNeto == 0 {
			continue
		}
		r.MntIva = ivaDe(r.MntNeto)
		r.MntTotal = r.MntNeto + r.MntIva + r.MntExento
	}
	return c.Sign(cert)
}

// ivaDe returns 19 % of neto rounded half up to the peso.
func ivaDe(neto int64) int64 { return (neto*19 + 50) / 100 }

// SetFacturaGuias is the kind of the envelope of the facturas that invoice
// the guías SET LIBRO DE GUIAS names as invoiced in the period: documents
// of the company, not cases of a set.
const SetFacturaGuias SetKind = "FACTURA DE GUIAS"

// facturaDeGuias returns the SET LIBRO DE GUIAS when it names guías
// invoiced in the period and the file has the guía set they belong to (the
// kit then emits the facturas that invoice them), else nil.
func (p *Plan) facturaDeGuias() *Set {
	var lg, gd *Set
	for _, s := range p.Sets {
		switch s.Kind {
		case SetLibroGuias:
			if lg == nil {
				lg = s
			}
		case SetGuiaDespacho:
			if gd == nil {
				gd = s
			}
		}
	}
	if lg == nil || gd == nil || len(lg.GuiasFacturadas) == 0 {
		return nil
	}
	for _, n := range lg.GuiasFacturadas {
		found := false
		for _, c := range gd.Cases {
			found = found || c.N == n
		}
		if !found {
			return nil // guiasOptions says which case is missing
		}
	}
	return lg
}

// facturasDeGuias emits, for each guía SET LIBRO DE GUIAS names as
// invoiced in the period, the factura electrónica that invoices it: to the
// guía's receptor, its lines at its prices, referring to it (TpoDocRef 52,
// its folio and date), dated the same day. The set names no factura, and
// the Libro de Guías must link each invoiced guía to the factura that
// invoiced it (sii-wave3-notes §3.4): a factura of another case, to
// another customer for other goods, is not that factura. They go in one
// envelope of their own (they are not cases of a set, so they carry no SET
// reference and are not declared), uploaded before the libro.
func (g *generator) facturasDeGuias(ctx context.Context, em *dte.Emitter, lg *Set, res *Result) (*SetResult, error) {
	var src *SetResult
	for _, s := range res.Sets {
		if src == nil && s.Set.Kind == SetGuiaDespacho {
			src = s
		}
	}
	// No número de atención: the envelope is not declared in the avance.
	set := &Set{Kind: SetFacturaGuias, Name: "FACTURAS DE LAS GUIAS FACTURADAS (" + lg.Name + ")"}
	sr := &SetResult{Set: set}
	var emitted []*dte.Emitted
	for _, n := range lg.GuiasFacturadas {
		var guia *Doc
		for _, d := range src.Docs {
			if d.Case.N == n {
				guia = d
			}
		}
		if guia == nil {
			return nil, fmt.Errorf("certificacion: %s names case %d as invoiced; the guía set has no such case", lg.Name, n)
		}
		req := &dte.EmitirDTERequest{TipoDTE: dte.FacturaElectronica, FechaEmision: g.fecha, Receptor: guia.Request.Receptor,
			Detalle:            append([]dte.LineaDetalle(nil), guia.Request.Detalle...),
			DescuentosGlobales: append([]dte.DscRcgGlobal(nil), guia.Request.DescuentosGlobales...),
			Referencias: []dte.Referencia{{TipoDocRef: dte.RefTipo(guia.Emitted.Tipo), FolioRef: guia.Emitted.Folio, FechaRef: guia.Emitted.FechaEmision,
				RazonRef: fmt.Sprintf("FACTURA LA GUIA DE DESPACHO N %d", guia.Emitted.Folio)}}}
		c := &Case{ID: fmt.Sprintf("FACTURA-GUIA-%s", guia.Case.ID), N: n, Tipo: dte.FacturaElectronica, Documento: "FACTURA ELECTRONICA",
			Line: guia.Case.Line}
		out, err := em.Emit(ctx, req)
		if err != nil {
			return nil, caseError(c, "the factura of the guía of case %s: %v", guia.Case.ID, err)
		}
		set.Cases = append(set.Cases, c)
		sr.Docs = append(sr.Docs, &Doc{Case: c, Request: req, Emitted: out, Guia: guia})
		emitted = append(emitted, out)
	}
	env, err := dte.BuildEnvioEmitted(dte.EnvioOptions{Emisor: g.cfg.Emisor, At: g.at}, g.cfg.Cert, emitted...)
	if err != nil {
		return nil, fmt.Errorf("certificacion: the envelope of the facturas of the guías: %w", err)
	}
	sr.Envelope = env
	return sr, nil
}

// guiasOptions marks the guías SET LIBRO DE GUIAS names: the invoiced ones
// get the factura the kit emitted for each (facturasDeGuias), the
// annulled ones AnuladoDespues (sent, then annulled: sii-wave3-notes §3.4).
func guiasOptions(o libro.Options, s *Set, src *SetResult, res *Result) (libro.Options, error) {
	byN := map[int]*Doc{}
	for _, d := range src.Docs {
		byN[d.Case.N] = d
	}
	if len(s.GuiasFacturadas) > 0 {
		facturas := map[*Doc]*Doc{}
		for _, sr := range res.Sets {
			if sr.Set.Kind == SetFacturaGuias {
				for _, d := range sr.Docs {
					facturas[d.Guia] = d
				}
			}
		}
		o.Facturas = map[int64]libro.DocRef{}
		for _, n := range s.GuiasFacturadas {
			d := byN[n]
			if d == nil {
				return o, fmt.Errorf("%s names case %d as invoiced; the guía set has no such case", s.Name, n)
			}
			f := facturas[d]
			if f == nil {
				return o, fmt.Errorf("%s names case %d as invoiced, and no factura invoices it", s.Name, n)
			}
			o.Facturas[d.Emitted.Folio] = libro.DocRef{Tipo: f.Emitted.Tipo, Folio: f.Emitted.Folio, Fecha: f.Emitted.FechaEmision}
		}
	}
	if len(s.GuiasAnuladas) > 0 {
		o.Anuladas = map[int64]int{}
		for _, n := range s.GuiasAnuladas {
			d := byN[n]
			if d == nil {
				return o, fmt.Errorf("%s names case %d as annulled; the guía set has no such case", s.Name, n)
			}
			o.Anuladas[d.Emitted.Folio] = libro.AnuladoDespues
		}
	}
	return o, nil
}
