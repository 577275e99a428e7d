package billing

import "github.com/dtekit/dtekit/dte"

// The response types below carry the JSON names of the API contract (§2),
// so the HTTP server encodes them as they are. DTE, EmitirDTEResponse,
// TrackingInfo and SIIStatusInfo are dte's own types.

// DTEPage is a page of the DTE list (contract §4.1).
type DTEPage struct {
	Items      []DTE   `json:"items"`
	NextCursor *string `json:"next_cursor"`
	TotalCount int64   `json:"total_count"`
}

// DTEFilter selects documents for ListDTE (contract §4.1). Zero fields do
// not filter, but for Ambiente (see api.AmbienteTodos).
type DTEFilter struct {
	Ambiente    string
	TipoDTE     dte.TipoDTE
	Estado      dte.Estado
	FechaDesde  string // YYYY-MM-DD, inclusive
	FechaHasta  string // YYYY-MM-DD, inclusive
	RutReceptor string
	Cursor      string // next_cursor of the previous page
	Limit       int    // 0 means 20; 1 to 100
}

// ListParams pages and searches a catalog. Q, when set, matches the name,
// the rut (clientes) or the codigo (productos).
type ListParams struct {
	Q      string
	Cursor string
	Limit  int // 0 means 20; 1 to 100
}

// PDFOptions chooses the printed form: the cedible copy and the paper
// format ("carta", the default, or "80mm").
type PDFOptions struct {
	Cedible bool
	Formato string
}
