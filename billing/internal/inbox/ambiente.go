package inbox

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/intercambio"
	"github.com/dtekit/dtekit/internal/chile"
	"github.com/dtekit/dtekit/store"
)

// ambientes are the two environments whose folios the SII numbers apart.
var ambientes = [...]string{store.AmbienteCertificacion, store.AmbienteProduccion}

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
		if d.FechaEmision == doc.FchEmis && d.MontoTotal == doc.MntTotal && (doc.RUTRecep == "" || chile.CanonRUT(d.RutReceptor) == chile.CanonRUT(doc.RUTRecep)) {
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

// The environment of what the company receives. The SII numbers folios
// from 1 in each environment, so a supplier's test document and its real
// one may share emitter, type and folio: received documents are kept,
// deduplicated, listed, asked about and answered within their own
// environment (store.Recibido.Ambiente), as the company's own documents
// are.
//
// A document's environment is its stamp's: the CAF inside its TED names
// the SII key that authorized it (IDK 100 certificación, 300
// producción), and that key verified it, so the stamp cannot lie about
// it. A document whose stamp did not verify (or was not read) takes the
// company's environment at reception. A file (store.Recepcion) takes the
// environment of its documents when every stamp that verified agrees,
// else the company's at reception. A document of the environment the
// company does not work in is recorded, not refused (a real invoice may
// reach a company still in certificación, a supplier's test a company
// in producción): it is logged, and the API shows its environment.

// docAmbiente is the environment of a received document; company is the
// company's environment at reception.
func docAmbiente(d *intercambio.DocumentoRecibido, company string) string {
	if v := d.Verificacion; v.TED.OK && (v.CAFAmbiente == dte.AmbienteCertificacion || v.CAFAmbiente == dte.AmbienteProduccion) {
		return v.CAFAmbiente
	}
	return company
}

// fileAmbiente is the environment of a received file: its documents'
// when the stamps that verified agree on one, else the company's.
func fileAmbiente(rec *intercambio.Recepcion, company string) string {
	found := ""
	for i := range rec.Documentos {
		v := rec.Documentos[i].Verificacion
		if !v.TED.OK || v.CAFAmbiente == "" {
			continue
		}
		if found != "" && found != v.CAFAmbiente {
			return company
		}
		found = v.CAFAmbiente
	}
	if found == dte.AmbienteCertificacion || found == dte.AmbienteProduccion {
		return found
	}
	return company
}

// keyIn is a document's DedupeKey within environment amb: the
// identity of a readable document (emitter, type, folio) is one per
// environment; a digest names the same bytes in either.
func keyIn(amb, key string) string {
	if strings.HasPrefix(key, "dte:") {
		return amb + ":" + key
	}
	return key
}

// place records the environment of a document read from a file received
// while the company worked in company, with its DedupeKey in it.
func (ib *Inbox) place(row *store.Recibido, d *intercambio.DocumentoRecibido, company string) {
	row.Ambiente = docAmbiente(d, company)
	row.DedupeKey = keyIn(row.Ambiente, row.DedupeKey)
	if row.Ambiente != company {
		ib.log.Warn("billing: a received document was stamped in the environment the company does not work in; it is kept there",
			"empresa_id", row.EmpresaID, "recepcion_id", row.RecepcionID, "ambiente", row.Ambiente, "empresa_ambiente", company,
			"tipo_dte", row.TipoDTE, "folio", row.Folio)
	}
}

// repeated reports whether a document of a file being received was
// received before, within its environment.
func (ib *Inbox) repeated(ctx context.Context, empresaID, company string, d *intercambio.DocumentoRecibido) bool {
	key := fmt.Sprintf("dte:%s:%d:%d", d.RUTEmisor, d.Tipo, d.Folio)
	_, err := ib.st.GetRecibidoByKey(ctx, empresaID, keyIn(docAmbiente(d, company), key))
	return err == nil
}

// recordOf finds the record of the i-th document of file r, received
// before: in the file's environment first, then in the other (a file's
// documents may be stamped in either).
func (ib *Inbox) recordOf(ctx context.Context, r *store.Recepcion, d *intercambio.DocumentoRecibido, i int) (*store.Recibido, error) {
	key := docKey(d, r.Digest, i)
	if !strings.HasPrefix(key, "dte:") {
		return ib.st.GetRecibidoByKey(ctx, r.EmpresaID, key)
	}
	order := []string{r.Ambiente}
	for _, a := range ambientes {
		if a != r.Ambiente {
			order = append(order, a)
		}
	}
	for _, a := range order {
		row, err := ib.st.GetRecibidoByKey(ctx, r.EmpresaID, keyIn(a, key))
		if !errors.Is(err, store.ErrNotFound) {
			return row, err
		}
	}
	return nil, fmt.Errorf("%w: recibido %s", store.ErrNotFound, key)
}
