package mailer

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/email"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/backendtest"
)

// TestDocumentNeverSilent: the document job, over a store alone of each
// backend, records the mail of a document it cannot address as
// sin_direccion and one whose company has no sender as sin_remitente
// (each with why, once, however often the job runs), queues the others
// pendiente, and reports each document's outcome to Counted once.
func TestDocumentNeverSilent(t *testing.T) {
	t.Parallel()
	backendtest.Each(t, testDocumentNeverSilent)
}

func testDocumentNeverSilent(t *testing.T, b backendtest.Backend) {
	ctx := context.Background()
	st, e := storeWithEmpresa(t, b)
	var ids []string
	for folio := range int64(3) {
		d := &store.DTE{EmpresaID: e.ID, TipoDTE: 33, Folio: folio + 1, Estado: "aceptado", RutReceptor: "96790240-3", FechaEmision: "2026-03-02"}
		if err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertDTE(ctx, d) }); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, d.ID)
	}
	unaddressed, noSender, mailed := ids[0], ids[1], ids[2]
	counter := &fakeCounter{}
	sender := &Settings{Direccion: "dte@losandes.cl", SMTP: &email.SMTPConfig{Host: "127.0.0.1", Port: 1}}
	m := New(Config{Store: st, Now: time.Now, Logger: slog.New(slog.DiscardHandler),
		Tenants: fakeTenants{settings: func(string) (*Settings, error) { return sender, nil },
			document: func(dteID string) (*Outgoing, error) {
				if dteID == unaddressed {
					return nil, nil
				}
				return &Outgoing{EmpresaID: e.ID, Tipo: "dte", DTEID: dteID, To: "compras@cliente.cl", Subject: "DTE", Text: "Adjunto.", Via: ViaCliente}, nil
			}},
		Counted: counter})
	if err := m.Register(st.Jobs()); err != nil {
		t.Fatal(err)
	}
	run := func(id string) {
		t.Helper()
		if err := m.document(ctx, documentArgs{EmpresaID: e.ID, DTEID: id}); err != nil {
			t.Fatal(err)
		}
	}
	run(unaddressed)
	run(unaddressed)
	run(mailed)
	sender = nil
	run(noSender)

	for _, c := range []struct{ id, estado, para, why string }{
		{unaddressed, SinDireccion, "", "no address"},
		{noSender, SinRemitente, "compras@cliente.cl", "no mail settings"},
		{mailed, Pendiente, "compras@cliente.cl", ""},
	} {
		page, err := st.ListCorreos(ctx, e.ID, store.CorreoFilter{DTEID: c.id})
		if err != nil || len(page.Items) != 1 {
			t.Fatalf("the mails of %s: %v, %v", c.id, page, err)
		}
		got := page.Items[0]
		if got.Estado != c.estado || got.Para != c.para || !strings.Contains(got.LastError, c.why) || got.ID != MailID("dte", c.id) {
			t.Errorf("the mail of %s: %+v, want %s to %q (%s)", c.id, got, c.estado, c.para, c.why)
		}
	}
	want := []string{SinDireccion, ViaCliente, SinRemitente}
	if counted := counter.labels; !slices.Equal(counted, want) {
		t.Errorf("counted %v, want %v", counted, want)
	}
}
