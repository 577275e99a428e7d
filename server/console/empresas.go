package console

import (
	"net/http"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte"
	"github.com/google/uuid"
)

// maxEmpresasShown bounds the companies the operator's list shows.
const maxEmpresasShown = 1000

// empresasView is the operator's list of companies.
type empresasView struct {
	Empresas []api.Empresa
	Mas      bool
	// Actual is the company the session acts for.
	Actual string
}

// operatorOnly is the page of a credential without the operator's role:
// a company's own admin stays in its company.
func operatorOnly(q *request) {
	q.c.fail(q.w, q.r, q.sess, http.StatusForbidden, "Solo el operador del servidor puede cambiar de empresa.")
}

// empresas lists every company to the server's operator, who may switch
// to one.
func empresas(q *request) error {
	if !q.p.Operator {
		operatorOnly(q)
		return nil
	}
	all, err := q.c.b.Company.List(q.r.Context(), api.EmpresaListParams{})
	if err != nil {
		return err
	}
	v := empresasView{Empresas: all, Actual: q.p.EmpresaID}
	if len(all) > maxEmpresasShown {
		v.Empresas, v.Mas = all[:maxEmpresasShown], true
	}
	var note string
	if q.r.URL.Query().Get("hecho") == "cambiada" {
		note = "Ahora trabaja en esta empresa."
	}
	return q.show(http.StatusOK, "empresas", "Empresas", "empresas", v, note)
}

// cambiarEmpresa makes the operator's session act for another company
// (or its own again).
func cambiarEmpresa(q *request) error {
	if !q.p.Operator {
		operatorOnly(q)
		return nil
	}
	id := q.r.PostForm.Get("empresa")
	if len(id) != 36 || uuid.Validate(id) != nil {
		return fault.Invalid("empresa", dte.CodeInvalidValue, "elija una empresa de la lista")
	}
	if _, err := q.c.b.Company.Get(q.r.Context(), id); err != nil {
		return err
	}
	if err := q.c.sessions.switchTo(q.r.Context(), cookieValue(q.r, sessionCookieName), id); err != nil {
		return err
	}
	http.Redirect(q.w, q.r, Prefix+"resumen", http.StatusSeeOther)
	return nil
}
