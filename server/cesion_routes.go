package server

import (
	"net/http"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing"
)

// cesionRoutes registers the cesiones of a document to factoring
// companies (issue 35): POST cedes it, GET lists its cesiones.
func (s *Server) cesionRoutes(base string) {
	s.handle("POST "+base+"/dte/{id}/cesiones", write, s.createCesion)
	s.handle("GET "+base+"/dte/{id}/cesiones", read, s.listCesiones)
}

// createCesion cedes one of the company's documents, under an
// Idempotency-Key, and answers the cesión recorded (202: the registry's
// review follows in the background), or the first answer of its key with
// X-Idempotency-Replay.
func (s *Server) createCesion(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	key, err := billing.ParseIdempotencyKey(r.Header.Get("Idempotency-Key"))
	if err != nil {
		return err
	}
	var in api.CesionParams
	if err := decodeJSON(w, r, maxJSONBody, &in); err != nil {
		return err
	}
	in.IdempotencyKey = key
	c, replayed, err := s.billing.Cesiones.Create(r.Context(), p.EmpresaID, id, in)
	if err != nil {
		return err
	}
	if replayed {
		w.Header().Set("X-Idempotency-Replay", "true")
	}
	writeJSON(w, http.StatusAccepted, c)
	return nil
}

// listCesiones answers a page of a document's cesiones, newest first.
func (s *Server) listCesiones(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	var f api.CesionListParams
	if f.Limit, err = queryLimit(r); err != nil {
		return err
	}
	f.Cursor = r.URL.Query().Get("cursor")
	page, err := s.billing.Cesiones.List(r.Context(), p.EmpresaID, id, f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}
