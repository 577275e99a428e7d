package billing

import (
	"context"
	"fmt"

	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/store"
)

func dteTipo(n int) dte.TipoDTE { return dte.TipoDTE(n) }

// RegisterCAF registers a CAF file for the company: it must parse, carry
// the SII's valid signature (certification keys for a certification
// company), be issued to the company's RUT, match the company's
// environment and the declared type, and not overlap a registered range
// of the same type (fault.KindConflict, CAF_RANGE_CONFLICT). Emission takes
// folios from the active CAF with the lowest range that still has folios,
// moving to the next one when it runs out. The CAF's private key is stored
// sealed by the Keyring, apart from its public document.
func (s *Service) RegisterCAF(ctx context.Context, empresaID string, in CAFInput) (*CAF, error) {
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
	if err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertCAF(ctx, rec) }); err != nil {
		return nil, storeErr(err, "registering the CAF", "caf", rec.ID)
	}
	s.cafs.Store(rec.ID, c)
	s.log.Info("billing: CAF registered", "empresa_id", empresaID, "caf_id", rec.ID, "tipo", c.Tipo,
		"desde", c.Desde, "hasta", c.Hasta)
	return s.GetCAF(ctx, empresaID, rec.ID)
}

// ListCAF lists the company's CAFs, by type then range; tipo 0 lists every
// type.
func (s *Service) ListCAF(ctx context.Context, empresaID string, tipo dte.TipoDTE) ([]CAF, error) {
	if tipo != 0 && !tipo.Valid() {
		return nil, fault.Invalid("tipo_dte", dte.CodeInvalidValue, fmt.Sprintf("tipo_dte %d is not one of the twelve DTE types", tipo))
	}
	if _, err := s.st.GetEmpresa(ctx, empresaID); err != nil {
		return nil, storeErr(err, "reading the company", "empresa", empresaID)
	}
	recs, err := s.st.ListCAFs(ctx, empresaID, int(tipo))
	if err != nil {
		return nil, storeErr(err, "listing CAFs", "empresa", empresaID)
	}
	return cafsInUse(recs), nil
}

// cafsInUse converts a company's CAFs, marking is_active only on the one
// emission takes folios from for each type: the enabled CAF with folios
// left and the lowest range (as store.Tx.TakeFolio chooses).
func cafsInUse(recs []store.CAF) []CAF {
	out := make([]CAF, len(recs))
	inUse := map[int]string{}
	for i := range recs {
		r := &recs[i]
		if cur, ok := inUse[r.TipoDTE]; r.IsActive && r.FoliosDisponibles() > 0 && (!ok || r.FolioDesde < lowest(recs, cur)) {
			inUse[r.TipoDTE] = r.ID
		}
	}
	for i := range recs {
		out[i] = cafFromStore(&recs[i])
		out[i].IsActive = inUse[recs[i].TipoDTE] == recs[i].ID
	}
	return out
}

func lowest(recs []store.CAF, id string) int64 {
	for i := range recs {
		if recs[i].ID == id {
			return recs[i].FolioDesde
		}
	}
	return 0
}

// GetCAF returns one CAF.
func (s *Service) GetCAF(ctx context.Context, empresaID, id string) (*CAF, error) {
	rec, err := s.st.GetCAF(ctx, empresaID, id)
	if err != nil {
		return nil, storeErr(err, "reading the CAF", "caf", id)
	}
	recs, err := s.st.ListCAFs(ctx, empresaID, rec.TipoDTE)
	if err != nil {
		return nil, storeErr(err, "reading the CAF", "caf", id)
	}
	for _, c := range cafsInUse(recs) {
		if c.ID == id {
			return &c, nil
		}
	}
	return nil, fault.Missing("caf", id)
}
