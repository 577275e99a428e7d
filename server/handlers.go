package server

import (
	"context"
	"net/http"

	"github.com/dtekit/dtekit/api"
)

// The shapes most routes share, over billing's method values: every
// billing call takes the context and the credential's company first.

// ofTenant answers fn(company) with 200.
func ofTenant[T any](fn func(context.Context, string) (*T, error)) apiHandler {
	return func(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
		v, err := fn(r.Context(), p.EmpresaID)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, v)
		return nil
	}
}

// withBody decodes the JSON body strictly into In and answers
// fn(company, in) with status.
func withBody[In, Out any](limit int64, status int, fn func(context.Context, string, In) (*Out, error)) apiHandler {
	return func(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
		var in In
		if err := decodeJSON(w, r, limit, &in); err != nil {
			return err
		}
		v, err := fn(r.Context(), p.EmpresaID, in)
		if err != nil {
			return err
		}
		writeJSON(w, status, v)
		return nil
	}
}

// byID answers fn(company, {id}) with status.
func byID[T any](status int, fn func(context.Context, string, string) (*T, error)) apiHandler {
	return func(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
		id, err := pathID(r, "id")
		if err != nil {
			return err
		}
		v, err := fn(r.Context(), p.EmpresaID, id)
		if err != nil {
			return err
		}
		writeJSON(w, status, v)
		return nil
	}
}

// byIDWithBody decodes the JSON body strictly into In and answers
// fn(company, {id}, in) with 200: the updates.
func byIDWithBody[In, Out any](fn func(context.Context, string, string, In) (*Out, error)) apiHandler {
	return func(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
		id, err := pathID(r, "id")
		if err != nil {
			return err
		}
		var in In
		if err := decodeJSON(w, r, maxJSONBody, &in); err != nil {
			return err
		}
		v, err := fn(r.Context(), p.EmpresaID, id, in)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, v)
		return nil
	}
}

// deleteByID runs fn(company, {id}) and answers {"status":"deleted"}.
func deleteByID(fn func(context.Context, string, string) error) apiHandler {
	return func(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
		id, err := pathID(r, "id")
		if err != nil {
			return err
		}
		if err := fn(r.Context(), p.EmpresaID, id); err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, deleted)
		return nil
	}
}

// byDelivery answers fn(company, {delivery_id}, the webhook {id}) with
// status.
func byDelivery[T any](status int, fn func(context.Context, string, string, api.DeliveryParams) (*T, error)) apiHandler {
	return func(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
		id, err := pathID(r, "id")
		if err != nil {
			return err
		}
		did, err := pathID(r, "delivery_id")
		if err != nil {
			return err
		}
		v, err := fn(r.Context(), p.EmpresaID, did, api.DeliveryParams{WebhookID: id})
		if err != nil {
			return err
		}
		writeJSON(w, status, v)
		return nil
	}
}

// catalogPage answers a page of a catalog (clientes, productos): the
// list, or with search the required q; params makes the list's options of
// the page asked and q.
func catalogPage[P, T any](search bool, params func(api.ListParams, string) P, fn func(context.Context, string, P) (*api.Page[T], error)) apiHandler {
	return func(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
		lp, q, err := listParams(r, search)
		if err != nil {
			return err
		}
		page, err := fn(r.Context(), p.EmpresaID, params(lp, q))
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, page)
		return nil
	}
}

// clienteParams and productoParams are the options of the catalogs' lists.
func clienteParams(lp api.ListParams, q string) api.ClienteListParams {
	return api.ClienteListParams{ListParams: lp, Q: q}
}

func productoParams(lp api.ListParams, q string) api.ProductoListParams {
	return api.ProductoListParams{ListParams: lp, Q: q}
}
