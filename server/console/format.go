package console

import (
	"strconv"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/chile"
)

// pesos writes an amount of Chilean pesos as people read it: a dollar
// sign and dots between thousands, no decimals ($1.190, -$25.000).
func pesos(n int64) string {
	neg := n < 0
	var u uint64
	if neg {
		u = uint64(-(n + 1)) + 1 // also right for the most negative int64
	} else {
		u = uint64(n)
	}
	digits := strconv.FormatUint(u, 10)
	out := make([]byte, 0, len(digits)+len(digits)/3+2)
	if neg {
		out = append(out, '-')
	}
	out = append(out, '$')
	return string(chile.AppendThousands(out, digits))
}

// fecha writes a date as DD-MM-YYYY. It takes the API's dates
// (YYYY-MM-DD text) and instants (time.Time or *time.Time, shown in the
// America/Santiago zone); anything else, or a text that is not a date,
// is shown as it came so that nothing is hidden.
func fecha(v any) string {
	switch x := v.(type) {
	case string:
		t, err := time.Parse(time.DateOnly, x)
		if err != nil {
			return x
		}
		return t.Format("02-01-2006")
	case time.Time:
		if x.IsZero() {
			return ""
		}
		return x.In(chile.Location()).Format("02-01-2006")
	case *time.Time:
		if x == nil {
			return ""
		}
		return fecha(*x)
	}
	return ""
}

// fechaHora is fecha with the time of day (HH:MM, America/Santiago).
func fechaHora(v any) string {
	switch x := v.(type) {
	case time.Time:
		if x.IsZero() {
			return ""
		}
		return x.In(chile.Location()).Format("02-01-2006 15:04")
	case *time.Time:
		if x == nil {
			return ""
		}
		return fechaHora(*x)
	}
	return fecha(v)
}

// tipoCorto names the document types in the console's lists.
var tipoCorto = map[dte.TipoDTE]string{
	33: "Factura", 34: "Factura exenta", 39: "Boleta", 41: "Boleta exenta",
	43: "Liquidación factura", 46: "Factura de compra", 52: "Guía de despacho",
	56: "Nota de débito", 61: "Nota de crédito", 110: "Factura de exportación",
	111: "Nota de débito de exportación", 112: "Nota de crédito de exportación",
}

// tipoNombre is a document type's short Spanish name, with its code.
func tipoNombre(t dte.TipoDTE) string {
	if n, ok := tipoCorto[t]; ok {
		return n + " (" + t.String() + ")"
	}
	return "Tipo " + t.String()
}

// estadoNombre is the Spanish label of a document's or a received
// document's state.
func estadoNombre(e string) string {
	switch e {
	case "borrador":
		return "Borrador"
	case "generado":
		return "Generado"
	case "firmado":
		return "Firmado"
	case "enviando":
		return "Enviando"
	case "procesando":
		return "En el SII"
	case "aceptado":
		return "Aceptado"
	case "rechazado":
		return "Rechazado"
	case "con_reparos":
		return "Con reparos"
	case "pendiente":
		return "Pendiente"
	case "procesado":
		return "Procesado"
	case "reclamado":
		return "Reclamado"
	}
	return e
}

// accionNombre is the Spanish label of a decision's action code.
func accionNombre(a string) string {
	switch a {
	case "ACD":
		return "Aceptación del contenido (ACD)"
	case "RCD":
		return "Reclamo al contenido (RCD)"
	case "RFP":
		return "Reclamo por falta parcial de mercaderías (RFP)"
	case "RFT":
		return "Reclamo por falta total de mercaderías (RFT)"
	case "ERM":
		return "Recibo de mercaderías o servicios (ERM)"
	case "acuse":
		return "Acuse de recibo"
	}
	return a
}

// diasNombre says how many days are left of a received document's window.
func diasNombre(d *int) string {
	switch {
	case d == nil:
		return "sin dato del SII"
	case *d <= 0:
		return "vence hoy"
	case *d == 1:
		return "1 día"
	}
	return strconv.Itoa(*d) + " días"
}

// entregaNombre is the Spanish name of a webhook delivery's state.
func entregaNombre(s api.DeliveryState) string {
	switch s {
	case api.DeliveryPending:
		return "Pendiente"
	case api.DeliverySucceeded:
		return "Entregada"
	case api.DeliveryFailed:
		return "Fallida"
	}
	return string(s)
}

// mensajeCampo says in Spanish what is wrong with a field, by the stable
// code of the face's refusal; a code without a sentence here keeps the
// face's own message.
func mensajeCampo(d dte.FieldError) string {
	if d.Field == "logo" && d.Code != dte.CodeRequired {
		return "el logo debe ser una imagen PNG o JPEG de hasta 256 KiB y 2000 píxeles por lado"
	}
	switch d.Code {
	case dte.CodeRequired:
		switch d.Field {
		case "numero_resolucion":
			return "producción exige el número de la resolución del SII que autoriza a emitir (mayor que 0)"
		case "fecha_resolucion":
			return "producción exige la fecha de la resolución del SII"
		}
		return "este dato es obligatorio"
	case fault.DetailCertRequired:
		return "producción exige el certificado de firma de la empresa: súbalo primero"
	case fault.DetailCertExpired:
		return "el certificado de firma de la empresa venció: suba uno vigente"
	case dte.CodeInvalidRUT:
		return "el dígito verificador no corresponde a este RUT"
	case dte.CodeInvalidFormat:
		return "el formato no es válido (números sin puntos; fechas AAAA-MM-DD; RUT con guion y dígito verificador)"
	case dte.CodeInvalidDecimals:
		return "tiene más decimales de los permitidos (los montos en pesos son enteros)"
	case dte.CodeOutOfRange:
		return "el valor está fuera del rango permitido"
	case dte.CodeTooLong:
		return "es más largo de lo que el SII admite en este campo"
	case dte.CodeNotLatin1:
		return "tiene caracteres que el SII no admite (emojis, comillas tipográficas, €…)"
	case dte.CodeInvalidCharacter:
		return "tiene caracteres de control que no se admiten"
	case dte.CodeNotAllowed:
		return "este dato no corresponde a este tipo de documento"
	}
	return d.Message
}

// ambienteNombre is the Spanish name of an environment.
func ambienteNombre(a string) string {
	switch a {
	case dte.AmbienteProduccion:
		return "producción"
	case dte.AmbienteCertificacion:
		return "certificación"
	}
	return a
}
