package storetest

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/dtekit/dtekit/store"
)

// testEmpresaSettings: a company's SII office round-trips; its logo is
// set, replaced, read and deleted apart from the company's row; TakeFolio
// draws only from CAFs of the company's current ambiente.
func (h *harness) testEmpresaSettings(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "76333333-3")

	a.OficinaSII = "SANTIAGO ORIENTE"
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.UpdateEmpresa(ctx, a) })
	if got, err := s.GetEmpresa(ctx, a.ID); err != nil || got.OficinaSII != "SANTIAGO ORIENTE" {
		t.Fatalf("oficina_sii after update: %+v, %v", got, err)
	}

	if _, err := s.GetEmpresaLogo(ctx, a.ID); !isNotFound(err) {
		t.Errorf("logo of a company without one: %v, want ErrNotFound", err)
	}
	png := []byte("\x89PNG\r\n\x1a\n one")
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.SetEmpresaLogo(ctx, a.ID, &store.Logo{ContentType: "image/png", Data: png})
	})
	jpeg := []byte("\xff\xd8\xff two")
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.SetEmpresaLogo(ctx, a.ID, &store.Logo{ContentType: "image/jpeg", Data: jpeg})
	})
	if l, err := s.GetEmpresaLogo(ctx, a.ID); err != nil || l.ContentType != "image/jpeg" || !bytes.Equal(l.Data, jpeg) {
		t.Errorf("logo after replacing it: %+v, %v", l, err)
	}
	err := s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.SetEmpresaLogo(ctx, "no-such-empresa", &store.Logo{ContentType: "image/png", Data: png})
	})
	if !isNotFound(err) {
		t.Errorf("logo of an unknown company: %v, want ErrNotFound", err)
	}
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.DeleteEmpresaLogo(ctx, a.ID) })
	if _, err := s.GetEmpresaLogo(ctx, a.ID); !isNotFound(err) {
		t.Errorf("logo after deleting it: %v, want ErrNotFound", err)
	}
	err = s.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.DeleteEmpresaLogo(ctx, a.ID) })
	if !isNotFound(err) {
		t.Errorf("deleting a logo twice: %v, want ErrNotFound", err)
	}

	// CAFs are per environment: folios come from the current one only.
	for _, c := range []*store.CAF{
		{EmpresaID: a.ID, TipoDTE: 33, FolioDesde: 1, FolioHasta: 10, Ambiente: "certificacion", FechaAutorizacion: "2025-01-02", XML: []byte("<A/>"), IsActive: true},
		{EmpresaID: a.ID, TipoDTE: 33, FolioDesde: 500, FolioHasta: 510, Ambiente: "produccion", FechaAutorizacion: "2025-01-02", XML: []byte("<A/>"), IsActive: true},
	} {
		write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertCAF(ctx, c) })
	}
	take := func() (int64, string) {
		var n int64
		var amb string
		write(t, s, func(ctx context.Context, tx store.Tx) error {
			c, f, err := tx.TakeFolio(ctx, a.ID, 33)
			if err == nil {
				n, amb = f, c.Ambiente
			}
			return err
		})
		return n, amb
	}
	if n, amb := take(); n != 1 || amb != "certificacion" {
		t.Errorf("take in certificacion: folio %d of %s, want 1 of certificacion", n, amb)
	}
	a.Ambiente = "produccion"
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.UpdateEmpresa(ctx, a) })
	if n, amb := take(); n != 500 || amb != "produccion" {
		t.Errorf("take after moving to produccion: folio %d of %s, want 500 of produccion", n, amb)
	}
	inUse, err := s.CAFsInUse(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	cafs, _ := s.ListCAFs(ctx, a.ID, 33)
	for _, c := range cafs {
		if (c.ID == inUse[33]) != (c.Ambiente == "produccion") {
			t.Errorf("CAFsInUse names %s for tipo 33; the %s CAF %s is not the one TakeFolio draws from", inUse[33], c.Ambiente, c.ID)
		}
	}
}

func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }
