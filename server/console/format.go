package console

import (
	"strconv"
	"time"

	"github.com/dtekit/dtekit/api"
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
	for i := 0; i < len(digits); i++ {
		if i > 0 && (len(digits)-i)%3 == 0 {
			out = append(out, '.')
		}
		out = append(out, digits[i])
	}
	return string(out)
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
