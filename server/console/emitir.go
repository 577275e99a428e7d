package console

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte"
	"github.com/google/uuid"
)

// emitirLineas is how many detail lines the form offers (a plain form,
// no script to add more).
const emitirLineas = 5

// emitirTipos are the types the first Emitir form issues: a factura and
// a factura exenta, which need no references or transport data.
var emitirTipos = []dte.TipoDTE{33, 34}

// emitirView is the Emitir form: what was typed, the field errors of the
// one gate beside their fields, and the totals the server computed.
type emitirView struct {
	Tipos   []dte.TipoDTE
	Tipo    string
	Clave   string
	Enviar  bool
	R       dte.Receptor
	Lineas  []emitirLinea
	Errores map[string]string
	// Otros are the errors of no field of the form.
	Otros   []string
	Totales *dte.Totales
}

type emitirLinea struct{ Nombre, Cantidad, Precio string }

func emitirForm(q *request) error {
	if !q.p.Write {
		q.c.fail(q.w, q.r, q.sess, http.StatusForbidden, "Esta clave es de solo lectura: puede ver, no emitir.")
		return nil
	}
	v := emitirView{Tipos: emitirTipos, Tipo: "33", Clave: uuid.NewString(), Enviar: true, Lineas: make([]emitirLinea, emitirLineas)}
	return q.show(http.StatusOK, "emitir", "Emitir", "emitir", v)
}

// readEmitir reads the form into the view and a request.
func readEmitir(q *request) (*emitirView, *dte.EmitirDTERequest) {
	f := q.r.PostForm
	v := &emitirView{Tipos: emitirTipos, Tipo: f.Get("tipo"), Clave: f.Get("clave"), Enviar: f.Get("enviar") == "si",
		R: dte.Receptor{Rut: strings.TrimSpace(f.Get("rut")), RazonSocial: strings.TrimSpace(f.Get("razon_social")),
			Giro: strings.TrimSpace(f.Get("giro")), Direccion: strings.TrimSpace(f.Get("direccion")), Comuna: strings.TrimSpace(f.Get("comuna"))},
		Errores: map[string]string{}}
	req := &dte.EmitirDTERequest{Receptor: v.R, AutoSend: &v.Enviar}
	var t int
	if _, err := fmt.Sscan(v.Tipo, &t); err == nil {
		req.TipoDTE = dte.TipoDTE(t)
	}
	for i := range emitirLineas {
		l := emitirLinea{Nombre: strings.TrimSpace(f.Get(fmt.Sprintf("nombre%d", i))),
			Cantidad: strings.TrimSpace(f.Get(fmt.Sprintf("cantidad%d", i))), Precio: strings.TrimSpace(f.Get(fmt.Sprintf("precio%d", i)))}
		v.Lineas = append(v.Lineas, l)
		if l == (emitirLinea{}) {
			continue
		}
		// The form's lines keep their numbers in the request, so that an
		// error of detalle[n] stands beside line n; empty lines between
		// are left out and renumbered below.
		req.Detalle = append(req.Detalle, dte.LineaDetalle{Nombre: l.Nombre, Cantidad: dte.Decimal(l.Cantidad), Precio: dte.Decimal(l.Precio)})
	}
	return v, req
}

// lineIndex maps the request's line numbers back to the form's rows.
func lineIndex(v *emitirView) []int {
	var idx []int
	for i, l := range v.Lineas {
		if l != (emitirLinea{}) {
			idx = append(idx, i)
		}
	}
	return idx
}

// placeErrors puts each field error beside its field of the form.
func placeErrors(v *emitirView, details []dte.FieldError) {
	idx := lineIndex(v)
	for _, d := range details {
		field := d.Field
		var n int
		var rest string
		if _, err := fmt.Sscanf(field, "detalle[%d].%s", &n, &rest); err == nil && n >= 0 && n < len(idx) {
			field = fmt.Sprintf("%s%d", rest, idx[n])
		} else if strings.HasPrefix(field, "receptor.") {
			field = strings.TrimPrefix(field, "receptor.")
		} else if field == "tipo_dte" {
			field = "tipo"
		}
		if _, shown := v.Errores[field]; shown || !slices.Contains(emitirFields(), field) {
			v.Otros = append(v.Otros, d.Field+": "+d.Message)
			continue
		}
		v.Errores[field] = d.Message
	}
}

// emitirFields are the form's field names.
func emitirFields() []string {
	out := []string{"tipo", "rut", "razon_social", "giro", "direccion", "comuna"}
	for i := range emitirLineas {
		out = append(out, fmt.Sprintf("nombre%d", i), fmt.Sprintf("cantidad%d", i), fmt.Sprintf("precio%d", i))
	}
	return out
}

// emitir previews (totals computed by the server, the gate's errors
// beside their fields) and, when the form says so, emits under the
// form's Idempotency-Key: a form sent twice emits once.
func emitir(q *request) error {
	v, req := readEmitir(q)
	if !slices.Contains(emitirTipos, req.TipoDTE) {
		v.Errores["tipo"] = "elija factura (33) o factura exenta (34)"
		return q.show(http.StatusBadRequest, "emitir", "Emitir", "emitir", v)
	}
	emp, err := q.c.b.Company.Get(q.r.Context(), q.p.EmpresaID)
	if err != nil {
		return err
	}
	warnings, err := dte.ValidateFor(req, q.c.now(), emp.Ambiente)
	if err != nil {
		if ve, ok := dte.AsValidationError(err); ok {
			placeErrors(v, ve.Details)
			return q.show(http.StatusBadRequest, "emitir", "Emitir", "emitir", v)
		}
		return err
	}
	placeErrors(v, warnings)
	tot, err := dte.ComputeTotals(req)
	if err != nil {
		return err
	}
	v.Totales = &tot.Totales
	if q.r.PostForm.Get("paso") != "emitir" {
		return q.show(http.StatusOK, "emitir", "Emitir: revise y confirme", "emitir", v)
	}
	out, _, err := q.c.b.Documents.Emit(q.r.Context(), q.p.EmpresaID, api.EmitParams{IdempotencyKey: v.Clave, Request: req})
	if err != nil {
		var fe *fault.Error
		if errors.As(err, &fe) && fe.Kind == fault.KindValidation {
			placeErrors(v, fe.Details)
			v.Totales = nil
			return q.show(http.StatusBadRequest, "emitir", "Emitir", "emitir", v)
		}
		return err
	}
	http.Redirect(q.w, q.r, Prefix+"documentos/"+out.ID+"?hecho=emitido", http.StatusSeeOther)
	return nil
}
