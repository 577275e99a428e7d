package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte"
	"github.com/google/uuid"
)

// The cesiones of a factura to factoring companies (issue 35): a
// document's page lists them with the state the SII's registry of credit
// transfers gives each, and offers the form that cedes the document while
// it may be ceded. Who may cede is who may write: the console asks what
// POST /dte/{id}/cesiones asks (a key that may write, a company's admin,
// the operator acting for the company it switched to); a read-only
// session sees the list and no form.

// maxCesionesShown bounds the cesiones a document's page lists (the
// newest first); a document has at most one not rechazada, so more than
// a few are refusals retried.
const maxCesionesShown = 50

// cesionesView is the Cesiones section of a cedible document's page.
type cesionesView struct {
	// Filas are its cesiones, newest first; Total counts them all.
	Filas []cesionFila
	Total int64
	// Cedida is the cesión the registry recorded; EnCurso the one on its
	// way there (at most one of both).
	Cedida, EnCurso *api.Cesion
	// Espera says why the document cannot be ceded yet, if so.
	Espera string
	// Ceder is the form, when the document may be ceded and the session
	// may write.
	Ceder *cederForm
	// Errores are the refusals of the form just sent that name no field
	// of it, shown whether or not the form is.
	Errores []string
}

// cesionFila is one cesión of the list with its number: the order in
// which the company made the document's cesiones, the first 1. (The
// AEC's own sequence is 1 for each of them: every one is the emisor's
// first cesión of the document.)
type cesionFila struct {
	N int64
	api.Cesion
}

// cederForm is the form that cedes a document, as typed, with the
// face's errors beside their fields (Errores, by form field) and those
// of no field (Otros).
type cederForm struct {
	Clave                                       string
	Rut, RazonSocial, Direccion, Email          string
	Monto, UltimoVencimiento, EmailNotificacion string
	Errores                                     map[string]string
	Otros                                       []string
}

// cederFields maps the face's field names to the form's.
var cederFields = map[string]string{
	"cesionario.rut": "cesionario_rut", "cesionario.razon_social": "cesionario_razon_social",
	"cesionario.direccion": "cesionario_direccion", "cesionario.email": "cesionario_email",
	"monto": "monto", "ultimo_vencimiento": "ultimo_vencimiento", "email_notificacion": "email_notificacion",
}

// cesionesOf reads the Cesiones section of document d for the session;
// nil for a type the registry does not take. form is the form as posted
// (nil: a new one, its amount the document's total).
func cesionesOf(q *request, d *api.DTE, form *cederForm) (*cesionesView, error) {
	if !d.TipoDTE.Transferable() {
		return nil, nil
	}
	page, err := q.c.b.Cesiones.List(q.r.Context(), q.p.EmpresaID, d.ID, api.CesionListParams{ListParams: api.ListParams{Limit: maxCesionesShown}})
	if err != nil {
		return nil, err
	}
	v := &cesionesView{Total: page.TotalCount}
	if form != nil {
		v.Errores = form.Otros
	}
	for i, c := range page.Data {
		v.Filas = append(v.Filas, cesionFila{N: page.TotalCount - int64(i), Cesion: c})
	}
	switch c := d.Cesion; {
	case c != nil && c.Estado == api.CesionAceptada:
		v.Cedida = c
	case c != nil:
		v.EnCurso = c
	case d.Estado != dte.EstadoAceptado && d.Estado != dte.EstadoConReparos:
		v.Espera = "Se podrá ceder cuando el SII acepte la factura."
	case q.p.Write:
		if form == nil {
			form = &cederForm{Clave: uuid.NewString(), Monto: strconv.FormatInt(d.MontoTotal, 10)}
		}
		v.Ceder = form
	}
	return v, nil
}

// readCeder reads the posted form; an amount that is not a number is
// refused beside its field, before the face is asked.
func readCeder(form url.Values) (*cederForm, api.CesionParams) {
	get := func(name string) string { return strings.TrimSpace(form.Get(name)) }
	f := &cederForm{Clave: form.Get("clave"), Rut: get("cesionario_rut"), RazonSocial: get("cesionario_razon_social"),
		Direccion: get("cesionario_direccion"), Email: get("cesionario_email"), Monto: get("monto"),
		UltimoVencimiento: get("ultimo_vencimiento"), EmailNotificacion: get("email_notificacion"), Errores: map[string]string{}}
	p := api.CesionParams{Cesionario: api.Cesionario{Rut: f.Rut, RazonSocial: f.RazonSocial, Direccion: f.Direccion, Email: f.Email},
		UltimoVencimiento: f.UltimoVencimiento, EmailNotificacion: f.EmailNotificacion, IdempotencyKey: f.Clave}
	// People write amounts as they read them: $1.190.
	if m := strings.NewReplacer("$", "", ".", "", " ", "").Replace(f.Monto); m != "" {
		n, err := strconv.ParseInt(m, 10, 64)
		if err != nil || n <= 0 {
			f.Errores["monto"] = "el monto es un número entero de pesos mayor que 0, sin decimales"
		}
		p.Monto = n
	}
	return f, p
}

// ceder cedes the page's document as the form asks, under the form's
// Idempotency-Key: a form sent twice makes one cesión. The face's
// refusals come back on the document's page, beside their fields.
func ceder(q *request) error {
	id, err := q.id()
	if err != nil {
		return err
	}
	f, p := readCeder(q.r.PostForm)
	if len(f.Errores) > 0 {
		return showDocumento(q, id, http.StatusBadRequest, f, "")
	}
	// The same form sent twice at once answers the first one's cesión:
	// the form's key goes with it (Cesiones.Create looks the key up again
	// before refusing a document already in cesión).
	_, _, err = q.c.b.Cesiones.Create(q.r.Context(), q.p.EmpresaID, id, p)
	if err != nil {
		fe := fault.As(err)
		if fe == nil {
			return err
		}
		switch {
		case fe.Kind == fault.KindValidation:
			placeCesionErrors(f, fe.Details)
			return showDocumento(q, id, http.StatusBadRequest, f, "")
		case fe.Code == fault.AlreadyCeded:
			f.Otros = append(f.Otros, "La factura ya está cedida o en cesión: no se puede ceder de nuevo.")
			return showDocumento(q, id, http.StatusConflict, f, "")
		case fe.Kind == fault.KindConflict:
			f.Otros = append(f.Otros, "Solo se puede ceder una factura que el SII aceptó.")
			return showDocumento(q, id, http.StatusConflict, f, "")
		case fe.Kind == fault.KindIdempotencyMismatch || fe.Kind == fault.KindIdempotencyInProgress:
			// The form's key went with another request: a fresh form.
			f.Clave = uuid.NewString()
			f.Otros = append(f.Otros, "Este formulario ya se usó para otra solicitud. Revise los datos y envíelo de nuevo.")
			return showDocumento(q, id, http.StatusConflict, f, "")
		}
		return err
	}
	http.Redirect(q.w, q.r, Prefix+"documentos/"+id+"?hecho=cedida#cesiones", http.StatusSeeOther)
	return nil
}

// placeCesionErrors puts each of the face's field errors beside its
// field of the form, in Spanish; those of no field go above the form.
func placeCesionErrors(f *cederForm, details []dte.FieldError) {
	for _, d := range details {
		name, ok := cederFields[d.Field]
		if !ok {
			f.Otros = append(f.Otros, mensajeCesion(d))
			continue
		}
		if prev := f.Errores[name]; prev != "" {
			f.Errores[name] = prev + "; " + mensajeCesion(d)
			continue
		}
		f.Errores[name] = mensajeCesion(d)
	}
}

// mensajeCesion says in Spanish what is wrong with a field of a cesión,
// by its stable code and the bounds of the AEC (api.Cesionario).
func mensajeCesion(d dte.FieldError) string {
	switch d.Field + " " + string(d.Code) {
	case "cesionario.rut " + string(fault.DetailSameParty):
		return "es el RUT del emisor: la factura se cede a otra empresa"
	case "cesionario.razon_social " + string(dte.CodeTooLong):
		return "tiene de 1 a 100 caracteres"
	case "cesionario.direccion " + string(dte.CodeTooLong):
		return "tiene de 5 a 60 caracteres"
	case "cesionario.email " + string(dte.CodeTooLong), "email_notificacion " + string(dte.CodeTooLong):
		return "tiene de 6 a 40 caracteres"
	case "cesionario.email " + string(dte.CodeInvalidFormat), "email_notificacion " + string(dte.CodeInvalidFormat):
		return "no es una dirección de correo, como finanzas@empresa.cl"
	case "monto " + string(dte.CodeOutOfRange):
		return "el monto va de 1 peso al total de la factura"
	case "ultimo_vencimiento " + string(dte.CodeInvalidFormat):
		return "la fecha se escribe AAAA-MM-DD, hasta 2050-12-31"
	case "ultimo_vencimiento " + string(dte.CodeOutOfRange):
		return "el vencimiento no puede ser anterior a la fecha de emisión"
	case "tipo_dte " + string(fault.DetailNotCedible):
		return "Solo se ceden facturas (33, 34, 43 y 46)."
	case "estado " + string(fault.DetailNotAccepted):
		return "Solo se puede ceder una factura que el SII aceptó."
	case "Idempotency-Key " + string(dte.CodeRequired), "Idempotency-Key " + string(dte.CodeInvalidFormat), "Idempotency-Key " + string(dte.CodeTooLong):
		return "El formulario no trae su clave. Vuelva a la página del documento y reintente."
	}
	if _, ok := cederFields[d.Field]; ok {
		return mensajeCampo(d)
	}
	return fmt.Sprintf("%s: %s", d.Field, mensajeCampo(d))
}

// cesionEstadoNombre is the Spanish name of a cesión's state.
func cesionEstadoNombre(e api.EstadoCesion) string {
	switch e {
	case api.CesionPendiente:
		return "Pendiente de envío al SII"
	case api.CesionEnviada:
		return "En revisión en el SII"
	case api.CesionAceptada:
		return "Aceptada: cedida"
	case api.CesionRechazada:
		return "Rechazada"
	}
	return string(e)
}
