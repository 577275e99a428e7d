package billing

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/textclip"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/store"
)

// contribuyentesBatch is how many companies one transaction of an import
// adds: short enough that the service keeps writing meanwhile.
const contribuyentesBatch = 500

// contribuyentesPurgeBatch is how many rows of an older list one
// transaction deletes.
const contribuyentesPurgeBatch = 5000

// ImportContribuyentes loads the SII's list of authorized electronic
// issuers, p.Archivo (sii.ReadContribuyentes reads it within p's bounds,
// zero for the defaults), as the list the service mails documents by when
// a receptor's cliente has no e-mail. The new list replaces the current one whole, and
// only once it is complete: until then, and when the file is refused, the
// service reads the previous one. It is written in short transactions, so
// it may run while the server runs; importing the same file again gives
// the same list. A file that is not the list, or exceeds a bound, is
// refused (fault.KindValidation on "archivo", naming its line); a RUT the
// file repeats keeps its first line, with a warning.
//
// It is the operator's, not a company's: the list is the whole service's.
func (m *MailService) ImportContribuyentes(ctx context.Context, p api.ContribuyentesImportParams) (*api.ContribuyentesImport, error) {
	s := m.s
	start := time.Now()
	lim := sii.ContribuyentesLimits{MaxBytes: p.MaxBytes, MaxLine: p.MaxLine, MaxRows: p.MaxRows, MaxWarnings: p.MaxWarnings}
	origen := textclip.Clip(p.Origen, 200)
	var lista *store.ContribuyentesLista
	if err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) (err error) {
		lista, err = tx.BeginContribuyentes(ctx, origen)
		return err
	}); err != nil {
		return nil, storeErr(err, "starting the import", "contribuyentes", origen)
	}
	out := &api.ContribuyentesImport{Lista: lista.ID, Origen: origen, Advertencias: []api.ContribuyentesAdvertencia{}}
	// The RUTs the file repeats, found by the store batch by batch.
	dups := &sii.ContribuyentesReport{}
	batch := make([]store.Contribuyente, 0, contribuyentesBatch)
	lines := make([]int, 0, contribuyentesBatch)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		var repeated []int
		if err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) (err error) {
			repeated, err = tx.AddContribuyentes(ctx, lista.ID, batch)
			return err
		}); err != nil {
			return err
		}
		skip := make(map[int]bool, len(repeated))
		for _, i := range repeated {
			skip[i] = true
			dups.Warn(lim, lines[i], "RUT %s appears on an earlier line; the first is kept", batch[i].Rut)
		}
		for i := range batch {
			if !skip[i] && batch[i].Correo != "" {
				out.ConCorreo++
			}
		}
		batch, lines = batch[:0], lines[:0]
		return nil
	}
	var storeErrSeen error
	rep, err := sii.ReadContribuyentes(p.Archivo, lim, func(c sii.Contribuyente) error {
		batch = append(batch, store.Contribuyente{Rut: c.Rut.String(), RazonSocial: c.RazonSocial, NumeroResolucion: c.NumeroResolucion,
			FechaResolucion: c.FechaResolucion, Correo: c.Correo, URL: c.URL})
		lines = append(lines, c.Line)
		if len(batch) < contribuyentesBatch {
			return nil
		}
		if err := flush(); err != nil {
			storeErrSeen = err
			return err
		}
		return nil
	})
	if err == nil {
		if err = flush(); err != nil {
			storeErrSeen = err
		}
	}
	if err != nil {
		// The incomplete list stays behind, never read, and goes with
		// the next import's purge.
		switch {
		case storeErrSeen != nil:
			return nil, storeErr(storeErrSeen, "importing the list", "contribuyentes", origen)
		case errors.Is(err, sii.ErrNotContribuyentes):
			e := fault.Invalid("archivo", dte.CodeInvalidFormat, err.Error())
			e.Message = "the file is not the SII's list of contribuyentes"
			return nil, e
		default:
			return nil, fault.Failed("reading the list", err)
		}
	}
	if err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) (err error) {
		lista, err = tx.CompleteContribuyentes(ctx, lista.ID)
		return err
	}); err != nil {
		return nil, storeErr(err, "completing the import", "contribuyentes", origen)
	}
	out.Lineas, out.Contribuyentes = rep.Lines, lista.Filas
	out.TotalAdvertencias = rep.WarningCount + dups.WarningCount
	for _, w := range append(rep.Warnings, dups.Warnings...) {
		out.Advertencias = append(out.Advertencias, api.ContribuyentesAdvertencia{Linea: w.Line, Mensaje: w.Message})
	}
	slices.SortStableFunc(out.Advertencias, func(a, b api.ContribuyentesAdvertencia) int { return a.Linea - b.Linea })
	if max := lim.Defaults().MaxWarnings; len(out.Advertencias) > max {
		out.Advertencias = out.Advertencias[:max]
	}
	for {
		var n int64
		if err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) (err error) {
			n, err = tx.PurgeContribuyentes(ctx, contribuyentesPurgeBatch)
			return err
		}); err != nil {
			// The new list is in place; what is left of the old one goes
			// with the next import.
			s.log.Warn("billing: purging the older lists of contribuyentes failed", "error", err.Error())
			break
		}
		out.Eliminados += n
		if n < contribuyentesPurgeBatch {
			break
		}
	}
	out.Duracion = time.Since(start).Round(time.Millisecond).String()
	s.log.Info("billing: the SII's list of contribuyentes was imported", "lista", out.Lista, "origen", origen,
		"contribuyentes", out.Contribuyentes, "advertencias", out.TotalAdvertencias)
	return out, nil
}
