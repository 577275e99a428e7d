package billing

import (
	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/billing/internal/inbox"
)

// maxRecinto bounds a receipt's place of reception: Recibos_v10.xsd
// allows 80 characters in Recinto.
const maxRecinto = 80

// checkDecision refuses, before the SII's registry is called, a decision
// whose texts its XML answer could not carry: the reason (ResultadoDTE's
// EstadoDTEGlosa, at most inbox.MaxMotivo characters) and the place of a
// receipt (Recinto), by the text rules of emission (dte.CheckText: no
// control character, nothing outside ISO-8859-1, the schema's length). A
// decision the registry took but whose answer cannot be built would
// never be mailed, and the API would not say so.
func checkDecision(in api.DecisionInput) *fault.Error {
	details := checkText(nil, "motivo", in.Motivo, false, inbox.MaxMotivo)
	return invalid(checkText(details, "recinto", in.Recinto, false, maxRecinto))
}
