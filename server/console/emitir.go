package console

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte"
	"github.com/google/uuid"
)

// emitirLineas is how many detail lines the form offers (a plain form,
// no script to add more).
const emitirLineas = 5

// emitirTipos are the types the Emitir form issues: the facturas, the
// boleta, the guía de despacho with its transport data and the nota de
// crédito with its reference.
var emitirTipos = []dte.TipoDTE{33, 34, 39, 52, 61}

// traslados are the kinds of transfer of a guía (IndTraslado) the form
// offers, with their names as the SII's forms give them.
var traslados = []opcion{{"1", "Operación constituye venta"}, {"2", "Ventas por efectuar"}, {"3", "Consignaciones"},
	{"4", "Entrega gratuita"}, {"5", "Traslado interno"}, {"6", "Otros traslados no venta"}, {"7", "Guía de devolución"}}

// codigosRef are a reference's codes (CodRef) the form offers.
var codigosRef = []opcion{{"1", "Anula el documento"}, {"2", "Corrige texto"}, {"3", "Corrige montos"}}

// opcion is one option of a select.
type opcion struct{ Valor, Nombre string }

// emitirTransporte is the transport block as typed (a guía's).
type emitirTransporte struct {
	Patente, RutTransportista, ChoferRut, ChoferNombre, Direccion, Comuna, Ciudad string
}

// emitirReferencia is the reference as typed (a nota de crédito's).
type emitirReferencia struct{ Tipo, Folio, Fecha, Codigo, Razon string }

// emitirView is the Emitir form: what was typed, the field errors of the
// one gate beside their fields, and the totals the server computed.
type emitirView struct {
	Tipos  []dte.TipoDTE
	Tipo   string
	Clave  string
	Enviar bool
	R      dte.Receptor
	Lineas []emitirLinea
	// Traslado, T and Ref are the guía's and the nota's fields.
	Traslado   string
	T          emitirTransporte
	Ref        emitirReferencia
	Traslados  []opcion
	CodigosRef []opcion
	Errores    map[string]string
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
	v := emitirView{Tipos: emitirTipos, Tipo: "33", Clave: uuid.NewString(), Enviar: true, Lineas: make([]emitirLinea, emitirLineas),
		Traslados: traslados, CodigosRef: codigosRef}
	title := "Emitir"
	if desde := q.r.URL.Query().Get("desde"); desde != "" {
		if err := notaDesde(q, &v, desde); err != nil {
			return err
		}
		title = "Emitir nota de crédito"
	}
	return q.show(http.StatusOK, "emitir", title, "emitir", v)
}

// notaDesde fills the form with a nota de crédito that references the
// company's document id: its receptor and lines, and a reference that
// cancels it (code 1), which the operator may change.
func notaDesde(q *request, v *emitirView, id string) error {
	if len(id) != 36 || uuid.Validate(id) != nil {
		return errNotFound
	}
	d, err := q.c.b.Documents.Get(q.r.Context(), q.p.EmpresaID, id, api.DTEGetParams{IncludeXML: true})
	if err != nil {
		return err
	}
	v.Tipo = "61"
	v.R = dte.Receptor{Rut: d.RutReceptor, RazonSocial: d.RazonSocialReceptor}
	// The receptor's giro and address are in the signed XML only.
	if doc, err := dte.ParseDTE([]byte(d.XMLDocumento)); err == nil {
		v.R = doc.Receptor
	}
	v.Ref = emitirReferencia{Tipo: d.TipoDTE.String(), Folio: strconv.FormatInt(d.Folio, 10), Fecha: d.FechaEmision, Codigo: "1",
		Razon: "Anula " + tipoNombre(d.TipoDTE) + " N° " + strconv.FormatInt(d.Folio, 10)}
	for i, l := range d.Detalle {
		if i == emitirLineas {
			break
		}
		v.Lineas[i] = emitirLinea{Nombre: l.Nombre, Cantidad: string(l.Cantidad), Precio: string(l.Precio)}
	}
	return nil
}

// readEmitir reads the form into the view and a request.
func readEmitir(q *request) (*emitirView, *dte.EmitirDTERequest) {
	f := q.r.PostForm
	v := &emitirView{Tipos: emitirTipos, Tipo: f.Get("tipo"), Clave: f.Get("clave"), Enviar: f.Get("enviar") == "si",
		R: dte.Receptor{Rut: strings.TrimSpace(f.Get("rut")), RazonSocial: strings.TrimSpace(f.Get("razon_social")),
			Giro: strings.TrimSpace(f.Get("giro")), Direccion: strings.TrimSpace(f.Get("direccion")), Comuna: strings.TrimSpace(f.Get("comuna"))},
		Traslado: f.Get("ind_traslado"), Traslados: traslados, CodigosRef: codigosRef, Errores: map[string]string{}}
	get := func(name string) string { return strings.TrimSpace(f.Get(name)) }
	v.T = emitirTransporte{Patente: get("t_patente"), RutTransportista: get("t_rut_transportista"), ChoferRut: get("t_chofer_rut"),
		ChoferNombre: get("t_chofer_nombre"), Direccion: get("t_direccion_destino"), Comuna: get("t_comuna_destino"), Ciudad: get("t_ciudad_destino")}
	v.Ref = emitirReferencia{Tipo: get("ref_tipo_doc"), Folio: get("ref_folio"), Fecha: get("ref_fecha"), Codigo: get("ref_codigo"), Razon: get("ref_razon")}
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
	// The guía's and the nota's fields go into the request only for
	// their types (a plain form shows them all); a number that does not
	// read is refused beside its field.
	if req.TipoDTE == 52 && v.Traslado != "" {
		if n, err := strconv.Atoi(v.Traslado); err == nil {
			req.IndTraslado = &n
		} else {
			v.Errores["ind_traslado"] = "elija el tipo de traslado"
		}
	}
	if req.TipoDTE == 52 && v.T != (emitirTransporte{}) {
		t := &dte.Transporte{Patente: v.T.Patente, RutTransportista: v.T.RutTransportista, DireccionDestino: v.T.Direccion,
			ComunaDestino: v.T.Comuna, CiudadDestino: v.T.Ciudad}
		if v.T.ChoferRut != "" || v.T.ChoferNombre != "" {
			t.Chofer = &dte.Chofer{Rut: v.T.ChoferRut, Nombre: v.T.ChoferNombre}
		}
		req.Transporte = t
	}
	if req.TipoDTE == 61 {
		r := dte.Referencia{FechaRef: v.Ref.Fecha, RazonRef: v.Ref.Razon}
		if n, err := strconv.Atoi(v.Ref.Tipo); err == nil {
			r.TipoDocRef = dte.RefTipo(dte.TipoDTE(n))
		} else if v.Ref.Tipo != "" {
			v.Errores["ref_tipo_doc"] = "el tipo del documento referido es un número (33, 34, 39, 52…)"
		}
		if n, err := strconv.ParseInt(v.Ref.Folio, 10, 64); err == nil {
			r.FolioRef = n
		} else if v.Ref.Folio != "" {
			v.Errores["ref_folio"] = "el folio es un número"
		}
		if n, err := strconv.Atoi(v.Ref.Codigo); err == nil {
			r.CodigoRef = &n
		}
		req.Referencias = []dte.Referencia{r}
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
		} else if strings.HasPrefix(field, "transporte.") {
			field = "t_" + strings.ReplaceAll(strings.TrimPrefix(field, "transporte."), ".", "_")
		} else if rest, ok := strings.CutPrefix(field, "referencias[0]."); ok {
			field = "ref_" + strings.TrimSuffix(rest, "_ref")
		} else if field == "tipo_dte" {
			field = "tipo"
		}
		if _, shown := v.Errores[field]; shown || !slices.Contains(emitirFields(), field) {
			v.Otros = append(v.Otros, d.Field+": "+d.Message)
			continue
		}
		v.Errores[field] = mensajeCampo(d)
	}
}

// emitirFields are the form's field names.
func emitirFields() []string {
	out := []string{"tipo", "rut", "razon_social", "giro", "direccion", "comuna", "ind_traslado",
		"t_patente", "t_rut_transportista", "t_chofer_rut", "t_chofer_nombre", "t_direccion_destino", "t_comuna_destino", "t_ciudad_destino",
		"ref_tipo_doc", "ref_folio", "ref_fecha", "ref_codigo", "ref_razon"}
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
		v.Errores["tipo"] = "elija factura (33), factura exenta (34), boleta (39), guía de despacho (52) o nota de crédito (61)"
		return q.show(http.StatusBadRequest, "emitir", "Emitir", "emitir", v)
	}
	if len(v.Errores) > 0 {
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
