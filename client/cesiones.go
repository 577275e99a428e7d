package client

import (
	"context"
	"net/http"

	"github.com/dtekit/dtekit/api"
)

// CesionService calls the routes of the cesiones of the company's
// documents to factoring companies (/dte/{id}/cesiones).
type CesionService struct{ c *Client }

// Create cedes a document to a factoring company (POST
// /dte/{id}/cesiones) under p.IdempotencyKey, or a key the client makes:
// the answer is the cesión recorded pendiente, which the server uploads
// to the SII's registry and follows in the background.
func (s *CesionService) Create(ctx context.Context, dteID string, p api.CesionParams) (*api.Cesion, error) {
	return into[api.Cesion](ctx, s.c, request{method: http.MethodPost, path: "/dte/" + seg(dteID) + "/cesiones", body: p,
		idempotencyKey: p.IdempotencyKey})
}

// List returns one page of a document's cesiones (GET
// /dte/{id}/cesiones), newest first, with the registry's state.
func (s *CesionService) List(ctx context.Context, dteID string, p api.CesionListParams) (*api.Page[api.Cesion], error) {
	return page[api.Cesion](ctx, s.c, "/dte/"+seg(dteID)+"/cesiones", paging(nil, p.ListParams))
}
