package dte

import (
	"fmt"
	"strconv"
	"time"
)

// This file builds the unsigned <DTE> of every supported type in the order
// of the SII's schemas: DTE_v10.xsd (Documento for 33, 34, 46, 52, 56, 61;
// Liquidacion for 43; Exportaciones for 110-112) and EnvioBOLETA_v11.xsd
// (the boleta Documento of 39 and 41).
//
// Text fields longer than the schema allows are cut to its limit (for
// example GiroRecep to 40 characters and RazonRef to 90), as the SII's own
// documentation of the printed sample does; the item name goes through
// LineaDetalle.ItemName, which keeps a long name whole in DscItem.

// xmlnsDTE holds the namespace declarations of a standalone <DTE>. Besides
// the SII namespace it declares the xsi prefix, which every envelope root
// declares too: inclusive C14N renders all the namespaces in scope on the
// signed Documento, so declaring xsi on the DTE itself keeps its canonical
// form — and so its signature — identical standalone and pasted into an
// EnvioDTE/EnvioBOLETA (checked with xmlsec1 in the tests).
const xmlnsDTE = ` xmlns="` + NamespaceSiiDte + `" xmlns:xsi="` + namespaceXSI + `"`

// DocumentID returns the ID attribute dtekit gives a document and the
// Reference its signature points to, e.g. "T33F1001".
func DocumentID(t TipoDTE, folio int64) string {
	return "T" + strconv.Itoa(int(t)) + "F" + strconv.FormatInt(folio, 10)
}

// docElement returns the name of the element a type's document lives in.
func docElement(t TipoDTE) string {
	switch {
	case t == LiquidacionFacturaElectronica:
		return "Liquidacion"
	case t.IsExport():
		return "Exportaciones"
	}
	return "Documento"
}

// docInput gathers what one document's XML is made of.
type docInput struct {
	req   *EmitirDTERequest
	tot   *Totals
	em    *Emisor
	fecha string // FchEmis, YYYY-MM-DD
}

// docPrepared is a document written up to what depends on its folio: the
// pipeline builds it before taking a folio, so a request that cannot be
// written never consumes one.
type docPrepared struct {
	tipo  TipoDTE
	fecha string
	// mid is the XML from after FchEmis to just before the TED.
	mid []byte
	// rutEmisor, rr, rsr, it1 and mnt are the TED's RE, RR, RSR, IT1 and
	// MNT.
	rutEmisor, rr, rsr, it1 string
	mnt                     Decimal
}

// docReceptorRUT returns the RUTRecep (and the DD's RR): the request's
// receptor in canonical form, or 66666666-6 for a boleta without one.
func docReceptorRUT(req *EmitirDTERequest) (string, error) {
	if req.TipoDTE.IsBoleta() && req.Receptor.Rut == "" {
		return RUTSinReceptor().String(), nil
	}
	r, err := ParseRUT(req.Receptor.Rut)
	if err != nil {
		return "", &ValidationError{Details: []FieldError{{Field: "receptor.rut", Code: CodeInvalidRUT, Message: err.Error()}}}
	}
	return r.String(), nil
}

// docItemName returns the NmbItem and DscItem of a line.
func docItemName(l LineaDetalle) (nmb, dsc string) { return l.ItemName() }

// docSizeHint estimates the bytes prepareDoc writes for in: the markup of
// each part plus the text it carries, generously, so that the buffer
// seldom grows (a growth costs only a copy).
func docSizeHint(in *docInput) int {
	req, em := in.req, in.em
	n := 1024 + len(em.RazonSocial) + len(em.Giro) + len(em.Direccion) + len(em.Comuna) + len(em.Ciudad) +
		len(req.Receptor.RazonSocial) + len(req.Receptor.Giro) + len(req.Receptor.Direccion) +
		len(req.Receptor.Comuna) + len(req.Receptor.Ciudad)
	for i := range req.Detalle {
		n += 256 + len(req.Detalle[i].Nombre) + len(req.Detalle[i].DscItem)
	}
	n += 256 * (len(req.Referencias) + len(req.Comisiones) + len(req.DescuentosGlobales) + len(req.ImpuestosRetenciones))
	if req.ExportData != nil {
		n += 1024
	}
	return n
}

// prepareDoc writes everything of a document that does not depend on its
// folio, and the TED's data.
func prepareDoc(in *docInput) (*docPrepared, error) {
	req, tot, t := in.req, in.tot, in.req.TipoDTE
	if !t.Valid() {
		return nil, fmt.Errorf("dte: unsupported tipo_dte %d", int(t))
	}
	if len(req.Detalle) == 0 {
		return nil, &ValidationError{Details: []FieldError{{Field: "detalle", Code: CodeRequired, Message: "a document needs at least one detail line"}}}
	}
	if len(tot.Detalle) != len(req.Detalle) {
		return nil, fmt.Errorf("dte: totals carry %d lines for %d detail lines", len(tot.Detalle), len(req.Detalle))
	}
	rutEm, err := ParseRUT(in.em.Rut)
	if err != nil {
		return nil, &ValidationError{Details: []FieldError{{Field: "emisor.rut", Code: CodeInvalidRUT, Message: err.Error()}}}
	}
	rutRecep, err := docReceptorRUT(req)
	if err != nil {
		return nil, err
	}
	if _, err := time.Parse(clockDateLayout, in.fecha); err != nil {
		return nil, &ValidationError{Details: []FieldError{{Field: "fecha_emision", Code: CodeInvalidFormat, Message: "fecha_emision must be a YYYY-MM-DD date"}}}
	}
	w := &xw{buf: make([]byte, 0, docSizeHint(in))}
	docIdDoc(w, in)
	docEmisor(w, in, rutEm.String())
	docReceptor(w, in, rutRecep)
	docTransporte(w, req)
	docTotales(w, in)
	w.close("Encabezado")
	for i := range req.Detalle {
		docDetalle(w, in, i)
	}
	docDscRcg(w, in)
	docReferencias(w, in)
	docComisiones(w, in)
	if w.err != nil {
		return nil, w.err
	}
	p := &docPrepared{tipo: t, fecha: in.fecha, mid: w.buf, rutEmisor: rutEm.String(), rr: rutRecep, mnt: tot.Totales.MntTotal}
	// RSR and IT1 are cut to the DD's 40 characters; a boleta may leave
	// RSR empty.
	p.rsr = xwClip(req.Receptor.RazonSocial, 40)
	nmb, _ := docItemName(req.Detalle[0])
	p.it1 = xwClip(nmb, 40)
	return p, nil
}

// signatureRoom is the spare capacity assemble leaves after the document
// for the enveloped Signature that Stamp inserts in place: 2.6 kB with a
// 2048-bit key and its certificate. A larger one only costs a copy.
const signatureRoom = 3072

// assemble writes the whole unsigned DTE, declaration included, for a folio,
// its flattened TED and the signing time, with signatureRoom to spare.
func (p *docPrepared) assemble(folio int64, ted []byte, at time.Time) []byte {
	el := docElement(p.tipo)
	w := &xw{buf: make([]byte, 0, len(p.mid)+len(ted)+512+signatureRoom)}
	w.raw(xmlDeclaration)
	w.raw(`<DTE` + xmlnsDTE + ` version="1.0"><` + el + ` ID="`)
	w.raw(DocumentID(p.tipo, folio))
	w.raw(`"><Encabezado><IdDoc>`)
	w.int("TipoDTE", int64(p.tipo))
	w.int("Folio", folio)
	w.plain("FchEmis", p.fecha)
	w.buf = append(w.buf, p.mid...)
	w.buf = append(w.buf, ted...)
	w.plain("TmstFirma", xwTimestamp(at))
	w.close(el)
	w.raw(`</DTE>`)
	return w.buf
}

func docIdDoc(w *xw, in *docInput) {
	req, t := in.req, in.req.TipoDTE
	switch {
	case t.IsBoleta():
		// IndServicio is required in a boleta; 3 is "ventas y servicios".
		ind := 3
		if req.IndServicio != nil {
			ind = *req.IndServicio
		}
		w.int("IndServicio", int64(ind))
	case t == LiquidacionFacturaElectronica:
		w.intPtr("IndServicio", req.IndServicio)
	case t.IsExport():
		w.intPtr("TipoDespacho", req.TipoDespacho)
		w.intPtr("IndServicio", req.IndServicio)
		if req.ExportData != nil {
			w.intPtr("FmaPagExp", req.ExportData.FormaPagoExp)
		}
	default:
		w.intPtr("TipoDespacho", req.TipoDespacho)
		w.intPtr("IndTraslado", req.IndTraslado)
		w.intPtr("IndServicio", req.IndServicio)
	}
	w.close("IdDoc")
}

func docEmisor(w *xw, in *docInput, rut string) {
	em, t := in.em, in.req.TipoDTE
	w.open("Emisor")
	w.plain("RUTEmisor", rut)
	if t.IsBoleta() {
		w.text("RznSocEmisor", "emisor.razon_social", em.RazonSocial, maxRznSocEmisor)
		w.text("GiroEmisor", "emisor.giro", em.Giro, maxGiroEmisor)
		if em.SucursalSII != nil {
			w.int("CdgSIISucur", int64(*em.SucursalSII))
		}
		w.text("DirOrigen", "emisor.direccion", em.Direccion, maxDirOrigen)
		w.text("CmnaOrigen", "emisor.comuna", em.Comuna, maxCmnaOrigen)
		w.text("CiudadOrigen", "emisor.ciudad", em.Ciudad, maxCiudadOrigen)
		w.close("Emisor")
		return
	}
	w.textReq("RznSoc", "emisor.razon_social", em.RazonSocial, maxRznSocEmisor)
	w.textReq("GiroEmis", "emisor.giro", em.Giro, maxGiroEmisor)
	if len(em.Acteco) == 0 {
		w.fail(&ValidationError{Details: []FieldError{{Field: "emisor.acteco", Code: CodeRequired,
			Message: "the emisor needs at least one SII economic activity code (Acteco)"}}})
	}
	for i, a := range em.Acteco {
		if i == maxActeco {
			break // the schema allows four
		}
		w.int("Acteco", int64(a))
	}
	if em.SucursalSII != nil {
		w.int("CdgSIISucur", int64(*em.SucursalSII))
	}
	if t == LiquidacionFacturaElectronica {
		w.textReq("DirOrigen", "emisor.direccion", em.Direccion, maxDirOrigen)
	} else {
		w.text("DirOrigen", "emisor.direccion", em.Direccion, maxDirOrigen)
	}
	w.text("CmnaOrigen", "emisor.comuna", em.Comuna, maxCmnaOrigen)
	w.text("CiudadOrigen", "emisor.ciudad", em.Ciudad, maxCiudadOrigen)
	w.close("Emisor")
}

func docReceptor(w *xw, in *docInput, rut string) {
	r, t := &in.req.Receptor, in.req.TipoDTE
	w.open("Receptor")
	w.plain("RUTRecep", rut)
	switch {
	case t.IsBoleta():
		w.text("RznSocRecep", "receptor.razon_social", r.RazonSocial, MaxRazonSocialReceptor)
		w.text("DirRecep", "receptor.direccion", r.Direccion, MaxDireccionReceptor)
		w.text("CmnaRecep", "receptor.comuna", r.Comuna, MaxComunaReceptor)
		w.text("CiudadRecep", "receptor.ciudad", r.Ciudad, MaxCiudadReceptor)
	case t == LiquidacionFacturaElectronica:
		w.text("RznSocRecep", "receptor.razon_social", r.RazonSocial, MaxRazonSocialReceptor)
		w.textReq("GiroRecep", "receptor.giro", r.Giro, MaxGiroReceptor)
		w.textReq("DirRecep", "receptor.direccion", r.Direccion, MaxDireccionReceptor)
		w.textReq("CmnaRecep", "receptor.comuna", r.Comuna, MaxComunaReceptor)
		w.text("CiudadRecep", "receptor.ciudad", r.Ciudad, MaxCiudadReceptor)
	default:
		w.text("RznSocRecep", "receptor.razon_social", r.RazonSocial, MaxRazonSocialReceptor)
		if x := in.req.ExportData; t.IsExport() && x != nil && (xwClip(x.NumID, maxNumID) != "" || xwClip(x.Nacionalidad, maxNacionalidad) != "") {
			w.open("Extranjero")
			w.text("NumId", "export_data.num_id", x.NumID, maxNumID)
			w.text("Nacionalidad", "export_data.nacionalidad", x.Nacionalidad, maxNacionalidad)
			w.close("Extranjero")
		}
		w.text("GiroRecep", "receptor.giro", r.Giro, MaxGiroReceptor)
		w.text("DirRecep", "receptor.direccion", r.Direccion, MaxDireccionReceptor)
		w.text("CmnaRecep", "receptor.comuna", r.Comuna, MaxComunaReceptor)
		w.text("CiudadRecep", "receptor.ciudad", r.Ciudad, MaxCiudadReceptor)
	}
	w.close("Receptor")
}

func docTotales(w *xw, in *docInput) {
	tt, t := &in.tot.Totales, in.req.TipoDTE
	w.open("Totales")
	switch {
	case t.IsExport():
		moneda := tt.TpoMoneda
		if moneda == "" && in.req.ExportData != nil {
			moneda = in.req.ExportData.TpoMoneda
		}
		w.textReq("TpoMoneda", "export_data.tpo_moneda", moneda, 15)
		mntExe := tt.MntExe
		if !mntExe.IsSet() {
			mntExe = "0"
		}
		w.dec("MntExe", mntExe)
		w.dec("MntTotal", tt.MntTotal)
	case t.IsBoleta():
		w.dec("MntNeto", tt.MntNeto)
		w.dec("MntExe", tt.MntExe)
		w.decPos("IVA", tt.IVA) // MntImpType: a zero IVA is left out
		w.dec("MntTotal", tt.MntTotal)
		w.dec("MontoNF", tt.MontoNF)
	default:
		w.dec("MntNeto", tt.MntNeto)
		w.dec("MntExe", tt.MntExe)
		w.decPos("TasaIVA", tt.TasaIVA)
		w.dec("IVA", tt.IVA)
		for _, im := range tt.ImptoReten {
			if t != LiquidacionFacturaElectronica && xwSign(im.MontoImp) <= 0 {
				continue // MntImpType is positive: a zero tax line is omitted
			}
			w.open("ImptoReten")
			w.int("TipoImp", int64(im.TipoImp))
			w.decPos("TasaImp", im.TasaImp)
			w.dec("MontoImp", im.MontoImp)
			w.close("ImptoReten")
		}
		if t != LiquidacionFacturaElectronica {
			w.dec("IVANoRet", tt.IVANoRet)
		}
		if c := tt.Comisiones; c != nil {
			w.open("Comisiones")
			w.dec("ValComNeto", c.ValComNeto)
			w.dec("ValComExe", c.ValComExe)
			w.dec("ValComIVA", c.ValComIVA)
			w.close("Comisiones")
		}
		w.dec("MntTotal", tt.MntTotal)
		if t != LiquidacionFacturaElectronica {
			w.dec("MontoNF", tt.MontoNF)
		}
	}
	w.close("Totales")
	if om := in.tot.OtraMoneda; om != nil && !t.IsBoleta() && t != LiquidacionFacturaElectronica {
		w.open("OtraMoneda")
		w.text("TpoMoneda", "export_data.tpo_moneda", om.TpoMoneda, 15)
		w.decPos("TpoCambio", om.TpoCambio)
		w.decPos("MntExeOtrMnda", om.MntExeOtrMnda)
		w.dec("MntTotOtrMnda", om.MntTotOtrMnda)
		w.close("OtraMoneda")
	}
}

func docDetalle(w *xw, in *docInput, i int) {
	l, lt, t := &in.req.Detalle[i], &in.tot.Detalle[i], in.req.TipoDTE
	field := "detalle[" + strconv.Itoa(i) + "]"
	nro := lt.NroLinDet
	if nro == 0 {
		nro = i + 1
	}
	w.open("Detalle")
	w.int("NroLinDet", int64(nro))
	if t == LiquidacionFacturaElectronica {
		w.textReq("TpoDocLiq", field+".tipo_doc_liq", l.TipoDocLiq, maxTpoDocRef)
	}
	if lt.IndExe != 0 {
		w.int("IndExe", int64(lt.IndExe))
	}
	if l.Retenedor && !t.IsBoleta() {
		w.open("Retenedor")
		w.text("IndAgente", field+".retenedor", "R", 1)
		w.close("Retenedor")
	}
	nmb, dsc := docItemName(*l)
	w.textReq("NmbItem", field+".nombre", nmb, maxNmbItem)
	w.text("DscItem", field+".dsc_item", dsc, maxDscItem)
	w.decPos("QtyItem", l.Cantidad)
	w.text("UnmdItem", field+".unidad", l.Unidad, maxUnmdItem)
	w.decPos("PrcItem", l.Precio)
	if t != LiquidacionFacturaElectronica {
		w.decPos("DescuentoPct", l.DescuentoPct)
		w.decPos("DescuentoMonto", lt.DescuentoMonto)
		w.decPos("RecargoPct", l.RecargoPct)
		w.decPos("RecargoMonto", lt.RecargoMonto)
	}
	if l.CodImpAdic != nil && !t.IsBoleta() && !t.IsExport() {
		w.int("CodImpAdic", int64(*l.CodImpAdic))
	}
	w.dec("MontoItem", lt.MontoItem)
	w.close("Detalle")
}

func docDscRcg(w *xw, in *docInput) {
	req := in.req
	if len(req.DescuentosGlobales) == 0 {
		return
	}
	if req.TipoDTE == LiquidacionFacturaElectronica {
		w.fail(&ValidationError{Details: []FieldError{{Field: "descuentos_globales", Code: CodeNotAllowed,
			Message: "a liquidación-factura (43) has no global discounts or surcharges in the SII schema"}}})
		return
	}
	for i, d := range req.DescuentosGlobales {
		field := "descuentos_globales[" + strconv.Itoa(i) + "]"
		nro, ind := i+1, 0
		if d.NroLinDR != nil {
			nro = *d.NroLinDR
		}
		if d.IndExeDR != nil {
			ind = *d.IndExeDR
		}
		if i < len(in.tot.DscRcgGlobal) {
			g := in.tot.DscRcgGlobal[i]
			if g.NroLinDR != 0 {
				nro = g.NroLinDR
			}
			ind = g.IndExeDR
		}
		w.open("DscRcgGlobal")
		w.int("NroLinDR", int64(nro))
		w.text("TpoMov", field+".tpo_mov", d.TpoMov, 1)
		w.text("GlosaDR", field+".glosa_dr", d.GlosaDR, maxGlosaDR)
		w.text("TpoValor", field+".tpo_valor", d.TpoValor, 1)
		w.dec("ValorDR", d.ValorDR)
		if ind == 1 || ind == 2 {
			w.int("IndExeDR", int64(ind))
		}
		w.close("DscRcgGlobal")
	}
}

func docReferencias(w *xw, in *docInput) {
	t := in.req.TipoDTE
	for i, r := range in.req.Referencias {
		field := "referencias[" + strconv.Itoa(i) + "]"
		w.open("Referencia")
		w.int("NroLinRef", int64(i+1))
		if t.IsBoleta() && r.TipoDocRef.Codigo == RefCodigoSET {
			// The boleta schema's reference to the SII's test set:
			// CodRef SET and the case, no TpoDocRef, FolioRef or FchRef
			// (which DTEUpload refuses on a boleta with HED-3-211).
			w.plain("CodRef", RefCodigoSET)
			w.text("RazonRef", field+".razon_ref", r.RazonRefXML(), maxRazonRef)
			w.close("Referencia")
			continue
		}
		w.text("TpoDocRef", field+".tipo_doc_ref", r.TipoDocRef.String(), maxTpoDocRef)
		if r.FolioRefTexto != "" {
			w.text("FolioRef", field+".folio_ref", r.FolioRefTexto, maxFolioRefTexto)
		} else {
			w.int("FolioRef", r.FolioRef)
		}
		if !t.IsBoleta() {
			w.plain("FchRef", r.FechaRef)
		}
		w.intPtr("CodRef", r.CodigoRef)
		w.text("RazonRef", field+".razon_ref", r.RazonRefXML(), maxRazonRef)
		w.close("Referencia")
	}
}

// docComisiones writes a liquidación-factura's commission lines. A line's
// ValComIVA, when the request leaves it out, is round(ValComNeto × 19%),
// the same rule the header's Comisiones/ValComIVA follows.
func docComisiones(w *xw, in *docInput) {
	if in.req.TipoDTE != LiquidacionFacturaElectronica {
		return
	}
	for i, c := range in.req.Comisiones {
		field := "comisiones[" + strconv.Itoa(i) + "]"
		w.open("Comisiones")
		w.int("NroLinCom", int64(i+1))
		w.text("TipoMovim", field+".tipo_movim", c.TipoMovim, 1)
		w.textReq("Glosa", field+".glosa", c.Glosa, maxGlosaComision)
		w.decPos("TasaComision", c.TasaComision)
		w.int("ValComNeto", c.ValComNeto)
		w.int("ValComExe", c.ValComExe)
		iva := docComisionIVA(c)
		w.int("ValComIVA", iva)
		w.close("Comisiones")
	}
}

// docComisionIVA returns a commission line's IVA: as given, or
// round(ValComNeto × 19 / 100) half away from zero.
func docComisionIVA(c ComisionDTE) int64 {
	if c.ValComIVA != nil {
		return *c.ValComIVA
	}
	n := c.ValComNeto * 19
	if n < 0 {
		return -((-n + 50) / 100)
	}
	return (n + 50) / 100
}
