package billing

import (
	"context"
	"fmt"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/store"
)

func dteTipo(n int) dte.TipoDTE { return dte.TipoDTE(n) }

// Register registers a CAF file for the company: it must parse, carry
// the SII's valid signature (certification keys for a certification
// company), be issued to the company's RUT, match the company's
// environment and the declared type, and not overlap a registered range
// of the same type and environment (fault.KindConflict,
// CAF_RANGE_CONFLICT): the SII numbers folios from 1 in each environment,
// so a company's first production CAF (1–N) lies beside its certification
// ones; a company holds at most Limits.CAFs (LIMIT_EXCEEDED). Emission takes
// folios from the active CAF with the lowest range that still has folios,
// moving to the next one when it runs out. The CAF's private key is stored
// sealed by the Keyring, apart from its public document.
func (r *CAFService) Register(ctx context.Context, empresaID string, in api.CAFInput) (*api.CAF, error) {
	s := r.s
	emp, err := s.st.GetEmpresa(ctx, empresaID)
	if err != nil {
		return nil, storeErr(err, "reading the company", "empresa", empresaID)
	}
	c, e := checkCAF(in, empresaFromStore(emp), s.trust, s.now())
	if e != nil {
		return nil, e
	}
	rec := &store.CAF{ID: newID(), EmpresaID: empresaID, TipoDTE: c.Tipo, FolioDesde: c.Desde, FolioHasta: c.Hasta,
		NextFolio: c.Desde, Ambiente: c.Ambiente(), FechaAutorizacion: c.FA, IsActive: true}
	if rec.XML, rec.SealedKey, err = sealCAF(s.keys, c, empresaID, rec.ID); err != nil {
		return nil, fault.Failed("sealing the CAF's key", err)
	}
	err = s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := s.roomForCAF(ctx, tx, empresaID); err != nil {
			return err
		}
		return tx.InsertCAF(ctx, rec)
	})
	if err != nil {
		return nil, storeErr(err, "registering the CAF", "caf", rec.ID)
	}
	s.cafs.Store(rec.ID, c)
	s.log.Info("billing: CAF registered", "empresa_id", empresaID, "caf_id", rec.ID, "tipo", c.Tipo,
		"desde", c.Desde, "hasta", c.Hasta)
	return r.Get(ctx, empresaID, rec.ID)
}

// RegisterFile registers a CAF file as Register does, its type
// read from the file itself: the operator's path (dtekit admin caf
// upload), where no request declares it.
func (r *CAFService) RegisterFile(ctx context.Context, empresaID string, file []byte) (*api.CAF, error) {
	c, e := parseCAF(string(file))
	if e != nil {
		return nil, e
	}
	return r.Register(ctx, empresaID, api.CAFInput{TipoDTE: dte.TipoDTE(c.Tipo), CAFXML: string(file)})
}

// List pages through the company's CAFs in the order they were
// registered, like every other list: a company gathers CAFs for as long as
// it issues documents, so the list has no end of its own. IsActive marks,
// for each type, the CAF emission takes folios from.
func (r *CAFService) List(ctx context.Context, empresaID string, p api.CAFListParams) (*api.Page[api.CAF], error) {
	s := r.s
	limit, e := pageLimit(p.Limit)
	if e != nil {
		return nil, e
	}
	if p.TipoDTE != 0 && !p.TipoDTE.Valid() {
		return nil, fault.Invalid("tipo_dte", dte.CodeInvalidValue, fmt.Sprintf("tipo_dte %d is not one of the twelve DTE types", p.TipoDTE))
	}
	amb, err := s.listAmbiente(ctx, empresaID, p.Ambiente)
	if err != nil {
		return nil, err
	}
	page, err := s.st.ListCAFPage(ctx, empresaID, store.CAFFilter{Ambiente: amb, TipoDTE: int(p.TipoDTE), Cursor: p.Cursor, Limit: limit})
	if err != nil {
		return nil, storeErr(err, "listing CAFs", "empresa", empresaID)
	}
	inUse, err := s.st.CAFsInUse(ctx, empresaID)
	if err != nil {
		return nil, storeErr(err, "listing CAFs", "empresa", empresaID)
	}
	out := &api.Page[api.CAF]{Data: make([]api.CAF, 0, len(page.Items)), NextCursor: cursorPtr(page.NextCursor), TotalCount: page.TotalCount}
	for i := range page.Items {
		out.Data = append(out.Data, cafInUse(&page.Items[i], inUse))
	}
	return out, nil
}

// cafInUse converts a CAF, marking IsActive only on the one emission takes
// folios from for its type (store.Reader.CAFsInUse).
func cafInUse(r *store.CAF, inUse map[int]string) api.CAF {
	c := cafFromStore(r)
	c.IsActive = inUse[r.TipoDTE] == r.ID
	return c
}

// Get returns one CAF.
func (r *CAFService) Get(ctx context.Context, empresaID, id string) (*api.CAF, error) {
	s := r.s
	rec, err := s.st.GetCAF(ctx, empresaID, id)
	if err != nil {
		return nil, storeErr(err, "reading the CAF", "caf", id)
	}
	inUse, err := s.st.CAFsInUse(ctx, empresaID)
	if err != nil {
		return nil, storeErr(err, "reading the CAF", "caf", id)
	}
	c := cafInUse(rec, inUse)
	return &c, nil
}
