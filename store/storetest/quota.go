package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/dtekit/dtekit/store"
)

// testInboxSettings: a company has no inbox settings until it records
// them; PutInboxSettings replaces every field (nil stays nil); a missing
// company is not found.
func (h *harness) testInboxSettings(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "75500000-5")
	_, err := s.GetInboxSettings(ctx, a.ID)
	wantErr(t, err, store.ErrNotFound, "inbox settings of a company without any")
	n, d := int64(500), int64(30)
	in := &store.InboxSettings{EmpresaID: a.ID, MaxRecepciones: &n, RetencionDias: &d}
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.PutInboxSettings(ctx, in) })
	got, err := s.GetInboxSettings(ctx, a.ID)
	if err != nil {
		t.Fatalf("GetInboxSettings: %v", err)
	}
	same(t, "inbox settings", got, in)
	b := int64(1 << 30)
	in = &store.InboxSettings{EmpresaID: a.ID, MaxRecepcionBytes: &b}
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.PutInboxSettings(ctx, in) })
	got, err = s.GetInboxSettings(ctx, a.ID)
	if err != nil || got.MaxRecepciones != nil || got.RetencionDias != nil || got.MaxRecepcionBytes == nil || *got.MaxRecepcionBytes != b {
		t.Errorf("inbox settings replaced: %+v, %v", got, err)
	}
	err = s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.PutInboxSettings(ctx, &store.InboxSettings{EmpresaID: "no-such-company"})
	})
	wantErr(t, err, store.ErrNotFound, "PutInboxSettings of a missing company")
}

// testInboxUsagePurge: InboxUsage counts each company's files, the
// bytes each keeps (XML and report, counted by hand here) and its mails;
// PurgeInbox deletes, in batches, the refused files received before the
// cut (with their documents) but never the company's highest-numbered
// file, nor a file kept whole, nor another company's, and the mails read
// before the cut; the next file's number is not one a deleted file had.
// A Stored given by the caller is what the usage counts.
func (h *harness) testInboxUsagePurge(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "75600000-6")
	b := empresa(t, s, "75700000-7")
	now := time.Now().UTC().Truncate(time.Second)
	old := now.Add(-48 * time.Hour)
	ins := func(e *store.Empresa, digest string, descartado bool, at time.Time, size int64) *store.Recepcion {
		r := &store.Recepcion{EmpresaID: e.ID, Digest: digest, Origen: "upload", Estado: "rechazada", Tipo: "envio",
			XML: []byte("<x>" + digest + "</x>"), Report: []byte(`{"n":1}`), Size: size, Descartado: descartado, CreatedAt: at}
		write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertRecepcion(ctx, r) })
		return r
	}
	d1 := ins(a, "d1", true, old, 15<<20)
	ins(a, "k2", false, old, 0)
	d3 := ins(a, "d3", true, old, 0)
	d4 := ins(a, "d4", true, old, 0)
	d5 := ins(a, "d5", true, old, 0) // the highest number: kept
	ins(b, "d1", true, old, 0)
	// "<x>d1</x>" is 9 bytes, `{"n":1}` 7: 16 per file.
	if d1.Size != 15<<20 || d1.Stored != 16 || d3.Size != 9 {
		t.Errorf("Size and Stored as inserted: %d, %d, %d; want %d, 16, 9", d1.Size, d1.Stored, d3.Size, 15<<20)
	}
	got, err := s.GetRecepcion(ctx, a.ID, d1.ID)
	if err != nil || got.Size != 15<<20 || !got.Descartado || got.Stored != 16 {
		t.Errorf("a refused file read back: %+v, %v", got, err)
	}
	rd := recibidoSpec(d1, "doc-of-d1")
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertRecibido(ctx, rd) })
	for i, at := range []time.Time{old, old, now} {
		m := &store.Mensaje{EmpresaID: a.ID, Digest: string(rune('a' + i)), Estado: "rechazado", CreatedAt: at}
		write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertMensaje(ctx, m) })
	}
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertMensaje(ctx, &store.Mensaje{EmpresaID: b.ID, Digest: "a", CreatedAt: old})
	})
	usage := func(e *store.Empresa) store.InboxUsage {
		u, err := s.InboxUsage(ctx, e.ID)
		if err != nil {
			t.Fatalf("InboxUsage: %v", err)
		}
		return *u
	}
	same(t, "usage of a", usage(a), store.InboxUsage{Recepciones: 5, RecepcionBytes: 5 * 16, Mensajes: 3})
	same(t, "usage of b", usage(b), store.InboxUsage{Recepciones: 1, RecepcionBytes: 16, Mensajes: 1})

	purge := func(before time.Time, limit int) (int, int) {
		var r, m int
		write(t, s, func(ctx context.Context, tx store.Tx) error {
			var err error
			r, m, err = tx.PurgeInbox(ctx, a.ID, before, limit)
			return err
		})
		return r, m
	}
	if r, m := purge(old, 10); r != 0 || m != 0 {
		t.Errorf("purge before the oldest: %d files, %d mails deleted", r, m)
	}
	if r, m := purge(now.Add(-time.Hour), 2); r != 2 || m != 2 {
		t.Errorf("first batch of 2: %d files, %d mails deleted", r, m)
	}
	if r, m := purge(now.Add(-time.Hour), 2); r != 1 || m != 0 {
		t.Errorf("second batch: %d files, %d mails deleted; want 1, 0", r, m)
	}
	if r, m := purge(now.Add(-time.Hour), 2); r != 0 || m != 0 {
		t.Errorf("third batch: %d files, %d mails deleted; want none", r, m)
	}
	for _, r := range []*store.Recepcion{d1, d3, d4} {
		_, err := s.GetRecepcion(ctx, a.ID, r.ID)
		wantErr(t, err, store.ErrNotFound, "a purged file")
	}
	_, err = s.GetRecibido(ctx, a.ID, rd.ID)
	wantErr(t, err, store.ErrNotFound, "the document of a purged file")
	if _, err := s.GetRecepcion(ctx, a.ID, d5.ID); err != nil {
		t.Errorf("the highest-numbered file: %v", err)
	}
	same(t, "usage of a after the purge", usage(a), store.InboxUsage{Recepciones: 2, RecepcionBytes: 2 * 16, Mensajes: 1})
	same(t, "usage of b after a's purge", usage(b), store.InboxUsage{Recepciones: 1, RecepcionBytes: 16, Mensajes: 1})
	// A caller that counts more than the record (its documents) is
	// taken at its word.
	more := &store.Recepcion{EmpresaID: b.ID, Digest: "more", Origen: "upload", XML: []byte("<x/>"), Stored: 1000}
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertRecepcion(ctx, more) })
	same(t, "usage of b with a file counted by its caller", usage(b), store.InboxUsage{Recepciones: 2, RecepcionBytes: 1016, Mensajes: 1})
	next := ins(a, "d6", true, now, 0)
	if next.Numero != d5.Numero+1 {
		t.Errorf("the next file after the purge is number %d, want %d", next.Numero, d5.Numero+1)
	}
}
