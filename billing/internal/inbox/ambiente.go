package inbox

import (
	"context"
	"errors"

	"github.com/dtekit/dtekit/intercambio"
	"github.com/dtekit/dtekit/store"
)

// ambientes are the two environments whose folios the SII numbers apart.
var ambientes = [...]string{"certificacion", "produccion"}

// answeredDocument finds the company's document an answer names. The SII
// numbers folios from 1 in each environment, so after the move to
// producción a type and folio may name a document of each. The answer
// carries no environment, but it repeats the document's date, receptor
// and total: the one whose data match is meant. When both or neither
// match, the document of the company's current environment is taken (and
// a mismatch is then the caller's to judge). ErrNotFound when neither
// environment has the type and folio.
func (ib *Inbox) answeredDocument(ctx context.Context, emp *store.Empresa, doc *intercambio.DocRef) (*store.DTE, error) {
	var found []*store.DTE
	for _, amb := range ambientes {
		d, err := ib.st.GetDTEByFolio(ctx, emp.ID, amb, int(doc.Tipo), doc.Folio)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		found = append(found, d)
	}
	switch len(found) {
	case 0:
		return nil, store.ErrNotFound
	case 1:
		return found[0], nil
	}
	var current, matching []*store.DTE
	for _, d := range found {
		if d.Ambiente == emp.Ambiente {
			current = append(current, d)
		}
		if d.FechaEmision == doc.FchEmis && d.MontoTotal == doc.MntTotal && (doc.RUTRecep == "" || d.RutReceptor == doc.RUTRecep) {
			matching = append(matching, d)
		}
	}
	if len(matching) == 1 {
		return matching[0], nil
	}
	if len(current) == 1 {
		return current[0], nil
	}
	return found[0], nil
}
