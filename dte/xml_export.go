package dte

import (
	"strconv"
	"strings"
)

// This file writes the Encabezado's Transporte: the transport data of any
// document that carries them (docTransporte) and an export document's
// Aduana block from the contract's ExportData (docAduana). The schema wants numeric customs codes where the
// contract carries strings; the mapping is:
//
//   - clausula_venta → CodClauVenta through ClausulaVentaCodigo (a code such
//     as "5" or a label such as "FOB").
//   - puerto_embarque / puerto_desembarque → CodPtoEmbarque / CodPtoDesemb,
//     pais_recep / pais_dest → CodPaisRecep / CodPaisDestin, and tipo_bulto
//     → TipoBultos/CodTpoBultos: the numeric codes of the customs tables
//     (ports up to 4 digits, e.g. "906"; countries and package types up to
//     3, e.g. "225"), as Validate requires; other text is refused with
//     INVALID_FORMAT naming the field.
//   - total_bultos → TotBultos and, with tipo_bulto or marcas, the
//     TipoBultos line's CantBultos; marcas → TipoBultos/Marcas.
//   - modalidad_venta → CodModVenta, via_transporte → CodViaTransp,
//     total_clausula → TotClauVenta, tara/peso_bruto/peso_neto with their
//     units, mnt_flete → MntFlete, mnt_seguro → MntSeguro.
//
// forma_pago_exp goes to IdDoc/FmaPagExp and num_id / nacionalidad to
// Receptor/Extranjero (see xml_doc.go).

// docTransporte writes the Encabezado's <Transporte> in the schema's order:
// the transport data of the request's transporte (Patente, RUTTrans,
// Chofer, DirDest, CmnaDest, CiudadDest), then, on an export, the Aduana
// block when the export data carries any customs field. It writes nothing
// when there is nothing to put in it.
func docTransporte(w *xw, req *EmitirDTERequest) {
	tr := &xw{buf: make([]byte, 0, 256)}
	if t := req.Transporte; t != nil && req.TipoDTE.CarriesTransporte() {
		tr.text("Patente", "transporte.patente", t.Patente, maxPatente)
		if s := strings.TrimSpace(t.RutTransportista); s != "" {
			if r, err := ParseRUT(s); err == nil {
				tr.plain("RUTTrans", r.String())
			} else {
				tr.fail(&ValidationError{Details: []FieldError{{Field: "transporte.rut_transportista", Code: CodeInvalidFormat, Message: err.Error()}}})
			}
		}
		if c := t.Chofer; c != nil {
			r, err := ParseRUT(c.Rut)
			if err != nil {
				tr.fail(&ValidationError{Details: []FieldError{{Field: "transporte.chofer.rut", Code: CodeInvalidFormat, Message: err.Error()}}})
			}
			tr.open("Chofer")
			tr.plain("RUTChofer", r.String())
			tr.textReq("NombreChofer", "transporte.chofer.nombre", c.Nombre, maxNombreChofer)
			tr.close("Chofer")
		}
		tr.text("DirDest", "transporte.direccion_destino", t.DireccionDestino, maxDirDest)
		tr.text("CmnaDest", "transporte.comuna_destino", t.ComunaDestino, maxCmnaDest)
		tr.text("CiudadDest", "transporte.ciudad_destino", t.CiudadDestino, maxCiudadDest)
	}
	if req.TipoDTE.IsExport() {
		docAduana(tr, req.ExportData)
	}
	if tr.err != nil {
		w.fail(tr.err)
		return
	}
	if len(tr.buf) == 0 {
		return
	}
	w.open("Transporte")
	w.buf = append(w.buf, tr.buf...)
	w.close("Transporte")
}

// docAduana writes <Aduana>…</Aduana> when the export data carries any
// customs field.
func docAduana(w *xw, x *ExportData) {
	if x == nil {
		return
	}
	a := &xw{buf: make([]byte, 0, 512)}
	a.intPtr("CodModVenta", x.ModalidadVenta)
	if s := strings.TrimSpace(x.ClausulaVenta); s != "" {
		if code, ok := ClausulaVentaCodigo(s); ok {
			a.int("CodClauVenta", int64(code))
		} else {
			a.fail(exportCodeError("export_data.clausula_venta", "a sale-clause code (1-99) or a label such as FOB, CIF, EXW"))
		}
	}
	a.decPos("TotClauVenta", x.TotalClausula)
	a.intPtr("CodViaTransp", x.ViaTransporte)
	exportCode(a, "CodPtoEmbarque", "export_data.puerto_embarque", x.PuertoEmbarque, 4)
	exportCode(a, "CodPtoDesemb", "export_data.puerto_desembarque", x.PuertoDesembarque, 4)
	if x.Tara != nil && *x.Tara > 0 {
		a.int("Tara", *x.Tara)
	}
	a.intPtr("CodUnidMedTara", x.UnidadTara)
	a.decPos("PesoBruto", x.PesoBruto)
	a.intPtr("CodUnidPesoBruto", x.UnidadPesoBruto)
	a.decPos("PesoNeto", x.PesoNeto)
	a.intPtr("CodUnidPesoNeto", x.UnidadPesoNeto)
	if x.TotalBultos != nil && *x.TotalBultos > 0 {
		a.int("TotBultos", *x.TotalBultos)
	}
	tipo, marcas := strings.TrimSpace(x.TipoBulto), xwClip(x.Marcas, 255)
	if tipo != "" || marcas != "" {
		a.open("TipoBultos")
		if tipo != "" {
			if n, ok := exportNumCode(tipo, 3); ok {
				a.int("CodTpoBultos", n)
			} else {
				a.fail(exportCodeError("export_data.tipo_bulto", "the customs package-type code (1 to 3 digits)"))
			}
		}
		if x.TotalBultos != nil && *x.TotalBultos > 0 {
			a.int("CantBultos", *x.TotalBultos)
		}
		a.text("Marcas", "export_data.marcas", marcas, 255)
		a.close("TipoBultos")
	}
	a.decPos("MntFlete", x.MntFlete)
	a.decPos("MntSeguro", x.MntSeguro)
	exportCode(a, "CodPaisRecep", "export_data.pais_recep", x.PaisRecep, 3)
	exportCode(a, "CodPaisDestin", "export_data.pais_dest", x.PaisDest, 3)
	if a.err != nil {
		w.fail(a.err)
		return
	}
	if len(a.buf) == 0 {
		return
	}
	w.open("Aduana")
	w.buf = append(w.buf, a.buf...)
	w.close("Aduana")
}

// exportCode writes a numeric customs code of at most digits digits.
func exportCode(w *xw, name, field, s string, digits int) {
	s = strings.TrimSpace(s)
	if s == "" {
		return
	}
	if n, ok := exportNumCode(s, digits); ok {
		w.int(name, n)
		return
	}
	w.fail(exportCodeError(field, "a numeric customs code of at most "+strconv.Itoa(digits)+" digits"))
}

// exportNumCode reads a positive code of at most digits digits.
func exportNumCode(s string, digits int) (int64, bool) {
	if !allDigits(s) || len(strings.TrimLeft(s, "0")) > digits {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n > 0
}

// exportCodeError reports an export field that is not the code the schema
// needs.
func exportCodeError(field, want string) error {
	return &ValidationError{Details: []FieldError{{Field: field, Code: CodeInvalidFormat,
		Message: "the SII schema needs " + want}}}
}
