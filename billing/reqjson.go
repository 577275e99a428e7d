package billing

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/dtekit/dtekit/dte"
)

// The canonical JSON of an emission request: what DTE rows keep as their
// request (the recovery job decodes it again) and what the idempotency hash
// covers. It is, byte for byte, what encoding/json's Marshal writes for
// the request: the hashes of keys recorded by earlier versions depend on
// it, so it must never change. appendRequest writes it without reflection
// (json.Marshal took a few µs and a dozen allocations per emission);
// TestRequestJSONMatchesMarshal fills every field of every type by
// reflection, so a field added to the request and forgotten here fails it,
// and FuzzRequestJSON compares the two on decoded bodies.

// errNotEncodable is appendRequest's error for a value json.Marshal
// refuses too (a Decimal that is not a plain number).
var errNotEncodable = errors.New("billing: the request holds a value JSON cannot encode")

// jsonWriter appends JSON to buf and remembers the first failure. Besides
// the request it writes the other fixed shapes an emission stores: the
// issuer snapshot, the totals and the response.
type jsonWriter struct {
	buf []byte
	err error
}

// appendRequest appends the canonical JSON of req to b.
func appendRequest(b []byte, req *dte.EmitirDTERequest) ([]byte, error) {
	w := &jsonWriter{buf: b}
	w.raw(`{"tipo_dte":`)
	w.int(int64(req.TipoDTE))
	if req.FechaEmision != "" {
		w.key(`"fecha_emision":`)
		w.str(req.FechaEmision)
	}
	w.raw(`,"receptor":`)
	w.receptor(&req.Receptor)
	w.raw(`,"detalle":`)
	if req.Detalle == nil {
		w.raw("null")
	} else {
		w.raw("[")
		for i := range req.Detalle {
			if i > 0 {
				w.raw(",")
			}
			w.linea(&req.Detalle[i])
		}
		w.raw("]")
	}
	if len(req.Comisiones) > 0 {
		w.key(`"comisiones":[`)
		for i := range req.Comisiones {
			if i > 0 {
				w.raw(",")
			}
			w.comision(&req.Comisiones[i])
		}
		w.raw("]")
	}
	if len(req.ImpuestosRetenciones) > 0 {
		w.key(`"impuestos_retenciones":[`)
		for i, x := range req.ImpuestosRetenciones {
			if i > 0 {
				w.raw(",")
			}
			w.raw(`{"tipo_imp":`)
			w.int(int64(x.TipoImp))
			w.optDec(`"tasa_imp":`, x.TasaImp)
			w.optInt64(`"monto_imp":`, x.MontoImp)
			w.raw("}")
		}
		w.raw("]")
	}
	if len(req.Referencias) > 0 {
		w.key(`"referencias":[`)
		for i := range req.Referencias {
			if i > 0 {
				w.raw(",")
			}
			w.referencia(&req.Referencias[i])
		}
		w.raw("]")
	}
	w.optInt(`"ind_traslado":`, req.IndTraslado)
	w.optInt(`"tipo_despacho":`, req.TipoDespacho)
	w.optInt(`"ind_servicio":`, req.IndServicio)
	if len(req.DescuentosGlobales) > 0 {
		w.key(`"descuentos_globales":[`)
		for i := range req.DescuentosGlobales {
			if i > 0 {
				w.raw(",")
			}
			w.global(&req.DescuentosGlobales[i])
		}
		w.raw("]")
	}
	if req.AutoSend != nil {
		w.key(`"auto_send":`)
		w.raw(strconv.FormatBool(*req.AutoSend))
	}
	if req.ExportData != nil {
		w.key(`"export_data":`)
		w.export(req.ExportData)
	}
	if len(req.Metadata) > 0 {
		w.key(`"metadata":`)
		w.anyMap(req.Metadata)
	}
	w.raw("}")
	return w.buf, w.err
}

func (w *jsonWriter) receptor(r *dte.Receptor) {
	w.raw(`{"rut":`)
	w.str(r.Rut)
	w.raw(`,"razon_social":`)
	w.str(r.RazonSocial)
	w.optStr(`"giro":`, r.Giro)
	w.optStr(`"direccion":`, r.Direccion)
	w.optStr(`"comuna":`, r.Comuna)
	w.optStr(`"ciudad":`, r.Ciudad)
	w.raw("}")
}

func (w *jsonWriter) linea(l *dte.LineaDetalle) {
	w.raw("{")
	w.optStr(`"tipo_doc_liq":`, l.TipoDocLiq)
	w.optInt(`"ind_exe":`, l.IndExe)
	w.optInt(`"cod_imp_adic":`, l.CodImpAdic)
	w.key(`"nombre":`)
	w.str(l.Nombre)
	w.optStr(`"dsc_item":`, l.DscItem)
	w.optDec(`"cantidad":`, l.Cantidad)
	w.optStr(`"unidad":`, l.Unidad)
	w.optDec(`"precio":`, l.Precio)
	w.optDec(`"monto_item":`, l.MontoItem)
	w.optDec(`"descuento_pct":`, l.DescuentoPct)
	w.optDec(`"recargo_pct":`, l.RecargoPct)
	w.raw("}")
}

func (w *jsonWriter) comision(c *dte.ComisionDTE) {
	w.raw(`{"tipo_movim":`)
	w.str(c.TipoMovim)
	w.raw(`,"glosa":`)
	w.str(c.Glosa)
	w.optDec(`"tasa_comision":`, c.TasaComision)
	w.raw(`,"val_com_neto":`)
	w.int(c.ValComNeto)
	w.raw(`,"val_com_exe":`)
	w.int(c.ValComExe)
	w.optInt64(`"val_com_iva":`, c.ValComIVA)
	w.raw("}")
}

func (w *jsonWriter) referencia(r *dte.Referencia) {
	w.raw(`{"tipo_doc_ref":`)
	switch {
	case r.TipoDocRef.Codigo != "":
		w.str(r.TipoDocRef.Codigo)
	case r.TipoDocRef.Tipo == 0:
		w.raw("null")
	default:
		w.int(int64(r.TipoDocRef.Tipo))
	}
	w.raw(`,"folio_ref":`)
	w.int(r.FolioRef)
	w.raw(`,"fecha_ref":`)
	w.str(r.FechaRef)
	w.optInt(`"codigo_ref":`, r.CodigoRef)
	w.raw(`,"razon_ref":`)
	w.str(r.RazonRef)
	w.raw("}")
}

func (w *jsonWriter) global(g *dte.DscRcgGlobal) {
	w.raw("{")
	w.optInt(`"nro_lin_dr":`, g.NroLinDR)
	w.key(`"tpo_mov":`)
	w.str(g.TpoMov)
	w.raw(`,"tpo_valor":`)
	w.str(g.TpoValor)
	w.raw(`,"valor_dr":`)
	w.dec(g.ValorDR)
	w.optStr(`"glosa_dr":`, g.GlosaDR)
	w.optInt(`"ind_exe_dr":`, g.IndExeDR)
	w.raw("}")
}

func (w *jsonWriter) export(e *dte.ExportData) {
	w.raw(`{"tpo_moneda":`)
	w.str(e.TpoMoneda)
	w.optDec(`"tpo_cambio":`, e.TpoCambio)
	w.optDec(`"mnt_export":`, e.MntExport)
	w.optStr(`"nacionalidad":`, e.Nacionalidad)
	w.optStr(`"num_id":`, e.NumID)
	w.optInt(`"tipo_doc_id":`, e.TipoDocID)
	w.optInt(`"forma_pago_exp":`, e.FormaPagoExp)
	w.optInt(`"modalidad_venta":`, e.ModalidadVenta)
	w.optStr(`"clausula_venta":`, e.ClausulaVenta)
	w.optDec(`"total_clausula":`, e.TotalClausula)
	w.optInt(`"via_transporte":`, e.ViaTransporte)
	w.optStr(`"puerto_embarque":`, e.PuertoEmbarque)
	w.optStr(`"puerto_desembarque":`, e.PuertoDesembarque)
	w.optInt64(`"tara":`, e.Tara)
	w.optInt(`"unidad_tara":`, e.UnidadTara)
	w.optDec(`"peso_bruto":`, e.PesoBruto)
	w.optInt(`"unidad_peso_bruto":`, e.UnidadPesoBruto)
	w.optDec(`"peso_neto":`, e.PesoNeto)
	w.optInt(`"unidad_peso_neto":`, e.UnidadPesoNeto)
	w.optStr(`"tipo_bulto":`, e.TipoBulto)
	w.optInt64(`"total_bultos":`, e.TotalBultos)
	w.optStr(`"marcas":`, e.Marcas)
	w.optDec(`"mnt_flete":`, e.MntFlete)
	w.optDec(`"mnt_seguro":`, e.MntSeguro)
	w.optStr(`"pais_recep":`, e.PaisRecep)
	w.optStr(`"pais_dest":`, e.PaisDest)
	w.raw("}")
}

// appendTotals appends t as json.Marshal writes it.
func appendTotals(b []byte, t *storedTotals) ([]byte, error) {
	w := &jsonWriter{buf: b}
	w.raw(`{"monto_neto":`)
	w.nullInt64(t.MontoNeto)
	w.raw(`,"monto_exento":`)
	w.nullInt64(t.MontoExento)
	w.optDec(`"tasa_iva":`, t.TasaIVA)
	w.raw(`,"iva":`)
	w.nullInt64(t.IVA)
	w.raw(`,"monto_total":`)
	w.int(t.MontoTotal)
	w.raw("}")
	return w.buf, w.err
}

// appendResponse appends r as json.Marshal writes it.
func appendResponse(b []byte, r *dte.EmitirDTEResponse) ([]byte, error) {
	w := &jsonWriter{buf: b}
	w.raw(`{"id":`)
	w.str(r.ID)
	w.raw(`,"folio":`)
	w.int(r.Folio)
	w.raw(`,"tipo_dte":`)
	w.int(int64(r.TipoDTE))
	w.raw(`,"estado":`)
	w.str(string(r.Estado))
	w.raw(`,"monto_total":`)
	w.int(r.MontoTotal)
	w.raw(`,"created_at":`)
	t, err := r.CreatedAt.MarshalJSON()
	if err != nil {
		return nil, err
	}
	w.buf = append(w.buf, t...)
	w.raw("}")
	return w.buf, w.err
}

// appendEmission appends the issuer snapshot {"empresa":…,"idempotency_key":…}
// as json.Marshal writes it, from the company's JSON encoded beforehand.
func appendEmission(b, empresaJSON []byte, key string) []byte {
	b = append(b, `{"empresa":`...)
	b = append(b, empresaJSON...)
	if key != "" {
		b = append(b, `,"idempotency_key":`...)
		b = appendJSONString(b, key)
	}
	return append(b, '}')
}

func (w *jsonWriter) raw(s string) { w.buf = append(w.buf, s...) }

// nullInt64 writes *p, or null.
func (w *jsonWriter) nullInt64(p *int64) {
	if p == nil {
		w.raw("null")
		return
	}
	w.int(*p)
}

// key writes a member's quoted name and colon, after a comma unless it is
// the object's first member.
func (w *jsonWriter) key(k string) {
	if w.buf[len(w.buf)-1] != '{' {
		w.buf = append(w.buf, ',')
	}
	w.buf = append(w.buf, k...)
}

func (w *jsonWriter) int(n int64) { w.buf = strconv.AppendInt(w.buf, n, 10) }

func (w *jsonWriter) str(s string) { w.buf = appendJSONString(w.buf, s) }

// dec writes a Decimal as Decimal.MarshalJSON does: null when absent, the
// number when plain, a failure otherwise.
func (w *jsonWriter) dec(d dte.Decimal) {
	if d == "" {
		w.raw("null")
		return
	}
	if !jsonDecimal(d) {
		w.err = errNotEncodable
	}
	w.raw(string(d))
}

// jsonDecimal reports whether json.Marshal writes d: a plain decimal
// (Decimal.MarshalJSON's condition) that is also a JSON number (no plus
// sign, no leading zero), which json.Marshal checks of every
// MarshalJSON's output.
func jsonDecimal(d dte.Decimal) bool {
	if _, err := dte.ParseDecimal(string(d)); err != nil {
		return false
	}
	s := string(d)
	if s[0] == '+' {
		return false
	}
	if s[0] == '-' {
		s = s[1:]
	}
	return len(s) < 2 || s[0] != '0' || s[1] == '.'
}

// The optional members (omitempty): written after a comma when set.
func (w *jsonWriter) optStr(k, s string) {
	if s != "" {
		w.key(k)
		w.str(s)
	}
}

func (w *jsonWriter) optDec(k string, d dte.Decimal) {
	if d != "" {
		w.key(k)
		w.dec(d)
	}
}

func (w *jsonWriter) optInt(k string, p *int) {
	if p != nil {
		w.key(k)
		w.int(int64(*p))
	}
}

func (w *jsonWriter) optInt64(k string, p *int64) {
	if p != nil {
		w.key(k)
		w.int(*p)
	}
}

// anyMap writes metadata. Flat objects of strings, booleans, nulls and
// numbers json.Marshal writes in plain notation, the common case, are
// written here (keys sorted, as json.Marshal sorts them); anything else is
// left to json.Marshal.
func (w *jsonWriter) anyMap(m map[string]any) {
	keys := make([]string, 0, len(m))
	for k, v := range m {
		switch x := v.(type) {
		case string, bool, nil:
		case float64:
			if a := math.Abs(x); a != 0 && (a < 1e-6 || a >= 1e21) || math.IsNaN(x) {
				w.marshal(m)
				return
			}
		default:
			w.marshal(m)
			return
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	w.raw("{")
	for i, k := range keys {
		if i > 0 {
			w.raw(",")
		}
		w.str(k)
		w.raw(":")
		switch x := m[k].(type) {
		case string:
			w.str(x)
		case bool:
			w.raw(strconv.FormatBool(x))
		case nil:
			w.raw("null")
		case float64:
			w.buf = strconv.AppendFloat(w.buf, x, 'f', -1, 64)
		}
	}
	w.raw("}")
}

// marshal writes v with json.Marshal.
func (w *jsonWriter) marshal(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		w.err = err
		return
	}
	w.buf = append(w.buf, b...)
}

// appendJSONString appends s as a JSON string exactly as json.Marshal
// writes it: <, > and & escaped for HTML, control characters escaped
// (short forms for \b \f \n \r \t), invalid UTF-8 replaced by \ufffd, and
// U+2028 and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
