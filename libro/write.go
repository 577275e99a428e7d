package libro

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/signer"
)

// maxRznSoc is the length of RznSoc in the libros' schemas.
const maxRznSoc = 50

// rutEnvia returns the carátula's RutEnvia, or the certificate's RUT when
// it is empty.
func rutEnvia(given string, cert *signer.Certificate) (string, error) {
	if given != "" {
		return given, nil
	}
	if cert == nil {
		return "", errors.New("libro: no signing certificate")
	}
	r, ok := cert.RUT()
	if !ok {
		return "", errors.New("libro: the certificate carries no RUT: set options.RutEnvia")
	}
	return r, nil
}

// Sign writes the libro as a LibroCompraVenta, in the schema's order, and
// signs EnvioLibro with cert in the SII profile. An empty RutEnvia is the
// certificate's RUT. Sign writes the values as they are: the builders
// (NewVentas, NewCompras) make them consistent.
func (l *Libro) Sign(cert *signer.Certificate) ([]byte, error) {
	envia, err := rutEnvia(l.Caratula.RutEnvia, cert)
	if err != nil {
		return nil, err
	}
	x, err := dte.NewSignedXML(RootCompraVenta, SchemaCompraVenta, "EnvioLibro", l.ID)
	if err != nil {
		return nil, fmt.Errorf("libro: %w", err)
	}
	writeCaratula(x, &l.Caratula, envia, true)
	for _, part := range []struct {
		name, row string
		rows      []Totales
	}{{"ResumenSegmento", "TotalesSegmento", l.ResumenSegmento}, {"ResumenPeriodo", "TotalesPeriodo", l.ResumenPeriodo}} {
		if part.rows == nil {
			continue
		}
		x.Open(part.name)
		for i := range part.rows {
			writeTotales(x, part.row, &part.rows[i])
		}
		x.Close(part.name)
	}
	for i := range l.Detalle {
		writeDetalle(x, i, &l.Detalle[i])
	}
	x.Timestamp("TmstFirma", l.TmstFirma)
	return x.Sign(cert)
}

// writeCaratula writes a libro's Carátula; cv adds the fields of the
// LibroCompraVenta.
func writeCaratula(x *dte.SignedXML, c *Caratula, envia string, cv bool) {
	x.Open("Caratula")
	x.Text("RutEmisorLibro", "caratula.rut_emisor_libro", c.RutEmisorLibro, 10)
	x.Text("RutEnvia", "caratula.rut_envia", envia, 10)
	x.Text("PeriodoTributario", "caratula.periodo_tributario", c.PeriodoTributario, 7)
	x.Text("FchResol", "caratula.fch_resol", c.FchResol, 10)
	x.Int("NroResol", int64(c.NroResol))
	if cv {
		x.Text("TipoOperacion", "caratula.tipo_operacion", c.TipoOperacion, 0)
	}
	x.Text("TipoLibro", "caratula.tipo_libro", c.TipoLibro, 0)
	x.Text("TipoEnvio", "caratula.tipo_envio", c.TipoEnvio, 0)
	if c.NroSegmento > 0 {
		x.Int("NroSegmento", int64(c.NroSegmento))
	}
	if c.FolioNotificacion > 0 {
		x.Int("FolioNotificacion", c.FolioNotificacion)
	}
	if cv {
		x.Text("CodAutRec", "caratula.cod_aut_rec", c.CodAutRec, 10)
	}
	x.Close("Caratula")
}

// writeTotales writes one TotalesPeriodo or TotalesSegmento row.
func writeTotales(x *dte.SignedXML, name string, t *Totales) {
	x.Open(name)
	x.Int("TpoDoc", int64(t.TpoDoc))
	x.Int("TotDoc", int64(t.TotDoc))
	if t.TotAnulado > 0 {
		x.Int("TotAnulado", int64(t.TotAnulado))
	}
	x.Int("TotMntExe", t.TotMntExe)
	x.Int("TotMntNeto", t.TotMntNeto)
	x.Int("TotMntIVA", t.TotMntIVA)
	for _, n := range t.TotIVANoRec {
		x.Open("TotIVANoRec")
		x.Int("CodIVANoRec", int64(n.CodIVANoRec))
		if n.TotOpIVANoRec > 0 {
			x.Int("TotOpIVANoRec", int64(n.TotOpIVANoRec))
		}
		x.Int("TotMntIVANoRec", n.TotMntIVANoRec)
		x.Close("TotIVANoRec")
	}
	if t.TotOpIVAUsoComun > 0 {
		x.Int("TotOpIVAUsoComun", int64(t.TotOpIVAUsoComun))
	}
	if t.TotOpIVAUsoComun > 0 || t.TotIVAUsoComun != 0 {
		x.Int("TotIVAUsoComun", t.TotIVAUsoComun)
	}
	if t.FctProp.IsSet() {
		x.Decimal("FctProp", t.FctProp)
		x.Int("TotCredIVAUsoComun", t.TotCredIVAUsoComun)
	}
	for _, o := range t.TotOtrosImp {
		x.Open("TotOtrosImp")
		x.Int("CodImp", int64(o.CodImp))
		x.Int("TotMntImp", o.TotMntImp)
		x.Close("TotOtrosImp")
	}
	if t.TotOpIVARetTotal > 0 {
		x.Int("TotOpIVARetTotal", int64(t.TotOpIVARetTotal))
	}
	if t.TotOpIVARetTotal > 0 || t.TotIVARetTotal != 0 {
		x.Int("TotIVARetTotal", t.TotIVARetTotal)
	}
	if t.TotOpIVARetParcial > 0 {
		x.Int("TotOpIVARetParcial", int64(t.TotOpIVARetParcial))
	}
	if t.TotOpIVARetParcial > 0 || t.TotIVARetParcial != 0 {
		x.Int("TotIVARetParcial", t.TotIVARetParcial)
	}
	x.Int("TotMntTotal", t.TotMntTotal)
	x.Close(name)
}

// writeDetalle writes one Detalle row of a LibroCompraVenta.
func writeDetalle(x *dte.SignedXML, i int, d *Detalle) {
	field := func(name string) string { return "detalle[" + strconv.Itoa(i) + "]." + name }
	x.Open("Detalle")
	x.Int("TpoDoc", int64(d.TpoDoc))
	x.Int("NroDoc", d.NroDoc)
	if d.Anulado {
		x.Text("Anulado", field("anulado"), "A", 0)
		x.Close("Detalle")
		return
	}
	x.Decimal("TasaImp", d.TasaImp)
	x.Text("FchDoc", field("fch_doc"), d.FchDoc, 10)
	x.Text("RUTDoc", field("rut_doc"), d.RUTDoc, 10)
	x.Text("RznSoc", field("razon_social"), d.RznSoc, maxRznSoc)
	if d.TpoDocRef != 0 {
		x.Int("TpoDocRef", int64(d.TpoDocRef))
		x.Int("FolioDocRef", d.FolioDocRef)
	}
	if d.MntExe != 0 {
		x.Int("MntExe", d.MntExe)
	}
	if d.MntNeto != 0 || d.MntIVA != 0 {
		x.Int("MntNeto", d.MntNeto)
		x.Int("MntIVA", d.MntIVA)
	}
	for _, n := range d.IVANoRec {
		x.Open("IVANoRec")
		x.Int("CodIVANoRec", int64(n.CodIVANoRec))
		x.Int("MntIVANoRec", n.MntIVANoRec)
		x.Close("IVANoRec")
	}
	if d.IVAUsoComun != 0 {
		x.Int("IVAUsoComun", d.IVAUsoComun)
	}
	for _, o := range d.OtrosImp {
		x.Open("OtrosImp")
		x.Int("CodImp", int64(o.CodImp))
		x.Decimal("TasaImp", o.TasaImp)
		x.Int("MntImp", o.MntImp)
		x.Close("OtrosImp")
	}
	if d.IVARetTotal != 0 {
		x.Int("IVARetTotal", d.IVARetTotal)
	}
	if d.IVARetParcial != 0 {
		x.Int("IVARetParcial", d.IVARetParcial)
	}
	x.Int("MntTotal", d.MntTotal)
	x.Close("Detalle")
}

// Sign writes the libro as a LibroGuia and signs EnvioLibro with cert in
// the SII profile. An empty RutEnvia is the certificate's RUT.
func (l *LibroGuia) Sign(cert *signer.Certificate) ([]byte, error) {
	envia, err := rutEnvia(l.Caratula.RutEnvia, cert)
	if err != nil {
		return nil, err
	}
	x, err := dte.NewSignedXML(RootGuia, SchemaGuia, "EnvioLibro", l.ID)
	if err != nil {
		return nil, fmt.Errorf("libro: %w", err)
	}
	writeCaratula(x, &l.Caratula, envia, false)
	for _, part := range []struct {
		name string
		r    *ResumenGuias
	}{{"ResumenSegmento", l.ResumenSegmento}, {"ResumenPeriodo", l.ResumenPeriodo}} {
		if part.r == nil {
			continue
		}
		r := part.r
		x.Open(part.name)
		if r.TotFolAnulado > 0 {
			x.Int("TotFolAnulado", int64(r.TotFolAnulado))
		}
		if r.TotGuiaAnulada > 0 {
			x.Int("TotGuiaAnulada", int64(r.TotGuiaAnulada))
		}
		x.Int("TotGuiaVenta", int64(r.TotGuiaVenta))
		x.Int("TotMntGuiaVta", r.TotMntGuiaVta)
		if r.TotMntModificado != 0 {
			x.Int("TotMntModificado", r.TotMntModificado)
		}
		for _, t := range r.TotTraslado {
			x.Open("TotTraslado")
			x.Int("TpoTraslado", int64(t.TpoTraslado))
			x.Int("CantGuia", int64(t.CantGuia))
			x.Int("MntGuia", t.MntGuia)
			x.Close("TotTraslado")
		}
		x.Close(part.name)
	}
	for i := range l.Detalle {
		d := &l.Detalle[i]
		field := func(name string) string { return "detalle[" + strconv.Itoa(i) + "]." + name }
		x.Open("Detalle")
		x.Int("Folio", d.Folio)
		if d.Anulado > 0 {
			x.Int("Anulado", int64(d.Anulado))
		}
		if d.Anulado == AnuladoAntes || d.Anulado == AnuladoDespues {
			x.Close("Detalle")
			continue
		}
		if d.TpoOper > 0 {
			x.Int("TpoOper", int64(d.TpoOper))
		}
		x.Text("FchDoc", field("fch_doc"), d.FchDoc, 10)
		x.Text("RUTDoc", field("rut_doc"), d.RUTDoc, 10)
		x.Text("RznSoc", field("razon_social"), d.RznSoc, maxRznSoc)
		if d.MntNeto != 0 {
			x.Int("MntNeto", d.MntNeto)
		}
		x.Decimal("TasaImp", d.TasaImp)
		if d.IVA != 0 {
			x.Int("IVA", d.IVA)
		}
		x.Int("MntTotal", d.MntTotal)
		if d.MntModificado != 0 {
			x.Int("MntModificado", d.MntModificado)
		}
		if d.TpoDocRef != 0 {
			x.Int("TpoDocRef", int64(d.TpoDocRef))
			x.Int("FolioDocRef", d.FolioDocRef)
			x.Text("FchDocRef", field("fch_doc_ref"), d.FchDocRef, 10)
		}
		x.Close("Detalle")
	}
	x.Timestamp("TmstFirma", l.TmstFirma)
	return x.Sign(cert)
}

// Sign writes the report as a ConsumoFolios and signs
// DocumentoConsumoFolios with cert in the SII profile. An empty RutEnvia
// is the certificate's RUT.
func (c *Consumo) Sign(cert *signer.Certificate) ([]byte, error) {
	envia, err := rutEnvia(c.Caratula.RutEnvia, cert)
	if err != nil {
		return nil, err
	}
	x, err := dte.NewSignedXML(RootConsumo, SchemaConsumo, "DocumentoConsumoFolios", c.ID)
	if err != nil {
		return nil, fmt.Errorf("libro: %w", err)
	}
	cr := &c.Caratula
	x.OpenVersion("Caratula")
	x.Text("RutEmisor", "caratula.rut_emisor", cr.RutEmisor, 10)
	x.Text("RutEnvia", "caratula.rut_envia", envia, 10)
	x.Text("FchResol", "caratula.fch_resol", cr.FchResol, 10)
	x.Int("NroResol", int64(cr.NroResol))
	x.Text("FchInicio", "caratula.fch_inicio", cr.FchInicio, 10)
	x.Text("FchFinal", "caratula.fch_final", cr.FchFinal, 10)
	if cr.Correlativo > 0 {
		x.Int("Correlativo", int64(cr.Correlativo))
	}
	x.Int("SecEnvio", int64(cr.SecEnvio))
	x.Timestamp("TmstFirmaEnv", cr.TmstFirmaEnv)
	x.Close("Caratula")
	for _, r := range c.Resumen {
		x.Open("Resumen")
		x.Int("TipoDocumento", int64(r.TipoDocumento))
		x.Int("MntNeto", r.MntNeto)
		x.Int("MntIva", r.MntIva)
		x.Decimal("TasaIVA", r.TasaIVA)
		x.Int("MntExento", r.MntExento)
		x.Int("MntTotal", r.MntTotal)
		x.Int("FoliosEmitidos", int64(r.FoliosEmitidos))
		x.Int("FoliosAnulados", int64(r.FoliosAnulados))
		x.Int("FoliosUtilizados", int64(r.FoliosUtilizados))
		for _, g := range r.RangoUtilizados {
			x.Open("RangoUtilizados")
			x.Int("Inicial", g.Inicial)
			x.Int("Final", g.Final)
			x.Close("RangoUtilizados")
		}
		for _, g := range r.RangoAnulados {
			x.Open("RangoAnulados")
			x.Int("Inicial", g.Inicial)
			x.Int("Final", g.Final)
			x.Close("RangoAnulados")
		}
		x.Close("Resumen")
	}
	return x.Sign(cert)
}
