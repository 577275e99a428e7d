package server

import (
	"context"
	"net/http"

	"github.com/dtekit/dtekit/billing"
)

// The shapes most routes share, over billing's method values: every
// billing call takes the context and the credential's company first.

// ofTenant answers fn(company) with 200.
func ofTenant[T any](fn func(context.Context, string) (*T, error)) apiHandler {
	return func(w http.ResponseWriter, r *http.Request, p *billing.Principal) error {
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
	return func(w http.ResponseWriter, r *http.Request, p *billing.Principal) error {
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
	return func(w http.ResponseWriter, r *http.Request, p *billing.Principal) error {
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
	return func(w http.ResponseWriter, r *http.Request, p *billing.Principal) error {
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
	return func(w http.ResponseWriter, r *http.Request, p *billing.Principal) error {
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

// byDelivery answers fn(company, {id}, {delivery_id}) with status.
func byDelivery[T any](status int, fn func(context.Context, string, string, string) (*T, error)) apiHandler {
	return func(w http.ResponseWriter, r *http.Request, p *billing.Principal) error {
		id, err := pathID(r, "id")
		if err != nil {
			return err
		}
		did, err := pathID(r, "delivery_id")
		if err != nil {
			return err
		}
		v, err := fn(r.Context(), p.EmpresaID, id, did)
		if err != nil {
			return err
		}
		writeJSON(w, status, v)
		return nil
	}
}

// catalog answers a page of a catalog (clientes, productos): the list, or
// with search the required q.
func catalog[P any](search bool, fn func(context.Context, string, billing.ListParams) (*P, error)) apiHandler {
	return func(w http.ResponseWriter, r *http.Request, p *billing.Principal) error {
		lp, err := listParams(r, search)
		if err != nil {
			return err
		}
		page, err := fn(r.Context(), p.EmpresaID, lp)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, page)
		return nil
	}
}
