package storetest

import (
	"context"
	"slices"
	"testing"

	"github.com/dtekit/dtekit/store"
)

// testRecibidosAmbiente: received files and documents keep the
// environment they belong to (migration 00015). A file given none takes
// the company's current environment and a document given none its
// file's; both keep theirs after the company moves to produccion, where
// a file and a document of produccion are recorded beside them (the
// service's dedupe keys name the environment, so the same emitter, type
// and folio is one record per environment). The lists filter by
// environment ("" lists both), with totals to match, and the filter
// composes with the others (estado); another company sees nothing.
func (h *harness) testRecibidosAmbiente(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "76310000-4")
	b := empresa(t, s, "76320000-0")
	insert := func(r *store.Recepcion, docs ...*store.Recibido) {
		t.Helper()
		write(t, s, func(ctx context.Context, tx store.Tx) error {
			if err := tx.InsertRecepcion(ctx, r); err != nil {
				return err
			}
			for _, d := range docs {
				d.EmpresaID, d.RecepcionID = a.ID, r.ID
				if err := tx.InsertRecibido(ctx, d); err != nil {
					return err
				}
			}
			return nil
		})
	}
	doc := func(ambiente, key, estado string) *store.Recibido {
		return &store.Recibido{Ambiente: ambiente, DedupeKey: key, RutEmisor: "76543210-3", TipoDTE: 33, Folio: 1,
			FechaEmision: "2026-04-01", Estado: estado}
	}

	// In certificacion: the file takes the company's environment, its
	// documents the file's unless they say otherwise.
	certFile := &store.Recepcion{EmpresaID: a.ID, Digest: "cert", Origen: "upload", XML: []byte("<a/>")}
	certDoc := doc("", "certificacion:dte:76543210-3:33:1", "pendiente")
	prodEarly := doc(store.AmbienteProduccion, "produccion:dte:76543210-3:33:2", "pendiente")
	insert(certFile, certDoc, prodEarly)
	if certFile.Ambiente != store.AmbienteCertificacion || certDoc.Ambiente != store.AmbienteCertificacion ||
		prodEarly.Ambiente != store.AmbienteProduccion {
		t.Fatalf("inserted in certificacion: file %q, document %q, produccion document %q", certFile.Ambiente, certDoc.Ambiente, prodEarly.Ambiente)
	}

	// The move, then a produccion file with the same emitter, type and
	// folio as the certificacion document.
	a.Ambiente = store.AmbienteProduccion
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.UpdateEmpresa(ctx, a) })
	prodFile := &store.Recepcion{EmpresaID: a.ID, Digest: "prod", Origen: "upload", XML: []byte("<b/>")}
	prodDoc := doc("", "produccion:dte:76543210-3:33:1", "aceptado")
	insert(prodFile, prodDoc)
	if prodFile.Ambiente != store.AmbienteProduccion || prodDoc.Ambiente != store.AmbienteProduccion {
		t.Fatalf("inserted in produccion: file %q, document %q", prodFile.Ambiente, prodDoc.Ambiente)
	}
	// An explicit environment is kept whatever the company's.
	lateCert := &store.Recepcion{EmpresaID: a.ID, Ambiente: store.AmbienteCertificacion, Digest: "late", Origen: "correo", XML: []byte("<c/>")}
	insert(lateCert)
	if lateCert.Ambiente != store.AmbienteCertificacion {
		t.Fatalf("a certificacion file recorded after the move: %q", lateCert.Ambiente)
	}

	// Each record reads back with its environment, after the move too.
	for _, r := range []*store.Recepcion{certFile, prodFile, lateCert} {
		got, err := s.GetRecepcion(ctx, a.ID, r.ID)
		if err != nil || got.Ambiente != r.Ambiente {
			t.Errorf("GetRecepcion %s: %+v, %v; want ambiente %s", r.Digest, got, err, r.Ambiente)
		}
	}
	for _, d := range []*store.Recibido{certDoc, prodEarly, prodDoc} {
		got, err := s.GetRecibido(ctx, a.ID, d.ID)
		if err != nil || got.Ambiente != d.Ambiente {
			t.Errorf("GetRecibido %s: %+v, %v; want ambiente %s", d.DedupeKey, got, err, d.Ambiente)
		}
		byKey, err := s.GetRecibidoByKey(ctx, a.ID, d.DedupeKey)
		if err != nil || byKey.ID != d.ID || byKey.Ambiente != d.Ambiente {
			t.Errorf("GetRecibidoByKey %s: %+v, %v", d.DedupeKey, byKey, err)
		}
	}
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		got, err := tx.GetRecibidoForUpdate(ctx, a.ID, certDoc.ID)
		if err != nil {
			return err
		}
		if got.Ambiente != store.AmbienteCertificacion {
			t.Errorf("GetRecibidoForUpdate: ambiente %q", got.Ambiente)
		}
		// An update keeps the environment.
		got.Estado = "reclamado"
		return tx.UpdateRecibido(ctx, got)
	})
	if got, err := s.GetRecibido(ctx, a.ID, certDoc.ID); err != nil || got.Ambiente != store.AmbienteCertificacion || got.Estado != "reclamado" {
		t.Errorf("after UpdateRecibido: %+v, %v", got, err)
	}

	// The lists, by environment.
	// Walked one item a page, each page's total checked.
	recibidos := func(f store.RecibidoFilter, total int) []string {
		t.Helper()
		f.Limit = 1
		return pageIDs(t, int64(total), func(cursor string) (*store.Page[store.Recibido], error) {
			f.Cursor = cursor
			return s.ListRecibidos(ctx, a.ID, f)
		}, func(r store.Recibido) string { return r.ID })
	}
	for _, tc := range []struct {
		f    store.RecibidoFilter
		want []string
	}{
		{store.RecibidoFilter{}, []string{prodDoc.ID, prodEarly.ID, certDoc.ID}},
		{store.RecibidoFilter{Ambiente: store.AmbienteCertificacion}, []string{certDoc.ID}},
		{store.RecibidoFilter{Ambiente: store.AmbienteProduccion}, []string{prodDoc.ID, prodEarly.ID}},
		{store.RecibidoFilter{Ambiente: store.AmbienteProduccion, Estado: "pendiente"}, []string{prodEarly.ID}},
	} {
		if got := recibidos(tc.f, len(tc.want)); !slices.Equal(got, tc.want) {
			t.Errorf("ListRecibidos %+v = %v, want %v", tc.f, got, tc.want)
		}
	}
	for _, tc := range []struct {
		ambiente string
		want     []string
	}{
		{"", []string{lateCert.ID, prodFile.ID, certFile.ID}},
		{store.AmbienteCertificacion, []string{lateCert.ID, certFile.ID}},
		{store.AmbienteProduccion, []string{prodFile.ID}},
	} {
		p, err := s.ListRecepciones(ctx, a.ID, store.RecepcionFilter{Ambiente: tc.ambiente, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range p.Items {
			got = append(got, r.ID)
			if r.Ambiente == "" || (tc.ambiente != "" && r.Ambiente != tc.ambiente) {
				t.Errorf("ListRecepciones %q lists %s of %q", tc.ambiente, r.Digest, r.Ambiente)
			}
		}
		if !slices.Equal(got, tc.want) || p.TotalCount != int64(len(tc.want)) {
			t.Errorf("ListRecepciones %q = %v (total %d), want %v", tc.ambiente, got, p.TotalCount, tc.want)
		}
	}
	// Another company lists nothing, in either environment.
	for _, amb := range []string{"", store.AmbienteCertificacion, store.AmbienteProduccion} {
		if p, err := s.ListRecibidos(ctx, b.ID, store.RecibidoFilter{Ambiente: amb}); err != nil || len(p.Items) != 0 {
			t.Errorf("company B lists recibidos of %q: %v, %v", amb, p, err)
		}
		if p, err := s.ListRecepciones(ctx, b.ID, store.RecepcionFilter{Ambiente: amb}); err != nil || len(p.Items) != 0 {
			t.Errorf("company B lists recepciones of %q: %v, %v", amb, p, err)
		}
	}
}
