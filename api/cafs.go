package api

import (
	"time"

	"github.com/dtekit/dtekit/dte"
)

// CAF is a registered folio range (contract §2.8).
type CAF struct {
	ID                string      `json:"id"`
	TipoDTE           dte.TipoDTE `json:"tipo_dte"`
	FolioDesde        int64       `json:"folio_desde"`
	FolioHasta        int64       `json:"folio_hasta"`
	FoliosDisponibles int64       `json:"folios_disponibles"`
	Ambiente          string      `json:"ambiente"`
	FechaAutorizacion string      `json:"fecha_autorizacion"`
	// IsActive marks, for each type, the CAF emission takes folios from.
	IsActive  bool      `json:"is_active"`
	CreatedAt time.Time `json:"created_at"`
}

// CAFInput registers a CAF (contract §4.2): the CAF file as raw XML or
// base64.
type CAFInput struct {
	TipoDTE dte.TipoDTE `json:"tipo_dte"`
	CAFXML  string      `json:"caf_xml"`
}

// CAFListParams pages the company's CAFs, in the order they were
// registered.
type CAFListParams struct {
	ListParams
	// Ambiente keeps the CAFs of one environment: "" the company's
	// current one, or AmbienteTodos for both.
	Ambiente string
	// TipoDTE keeps the CAFs of one type; 0 keeps every type.
	TipoDTE dte.TipoDTE
}
