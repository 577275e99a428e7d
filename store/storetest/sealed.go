package storetest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/store"
)

// testSealed checks the sealed secrets of every company as ListSealed
// finds them (mailbox passwords included), ReplaceSealed and SealCAF, the
// erasing of a deleted webhook's secret, and the settings of the
// database.
func (h *harness) testSealed(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "76555555-5")
	b := empresa(t, s, "76666666-6")
	certA := &store.Certificado{EmpresaID: a.ID, RutFirmante: "11111111-1", Sealed: []byte("cert-a"), IsActive: true}
	certB := &store.Certificado{EmpresaID: b.ID, RutFirmante: "22222222-2", Sealed: []byte("cert-b"), IsActive: true}
	caf := func(e *store.Empresa, desde int64, xml, key string) *store.CAF {
		c := &store.CAF{EmpresaID: e.ID, TipoDTE: 33, FolioDesde: desde, FolioHasta: desde + 9, Ambiente: "certificacion",
			FechaAutorizacion: "2025-01-02", XML: []byte(xml), IsActive: true}
		if key != "" {
			c.SealedKey = []byte(key)
		}
		return c
	}
	cafA := caf(a, 1, "<CAF/>", "key-a")
	legacy := caf(a, 11, "<AUTORIZACION><RSASK>clear</RSASK></AUTORIZACION>", "") // written before keys were sealed
	cafB := caf(b, 1, "<CAF/>", "key-b")
	hookA := &store.Webhook{EmpresaID: a.ID, URL: "https://example.com/a", Events: []string{"dte.created"}, Secret: []byte("hook-a"), IsActive: true}
	gone := &store.Webhook{EmpresaID: a.ID, URL: "https://example.com/gone", Events: []string{"dte.created"}, Secret: []byte("hook-gone"), IsActive: true}
	bare := &store.Webhook{EmpresaID: b.ID, URL: "https://example.com/bare", Events: []string{"dte.created"}, IsActive: true}
	hookB := &store.Webhook{EmpresaID: b.ID, URL: "https://example.com/b", Events: []string{"dte.created"}, Secret: []byte("hook-b"), IsActive: true}
	// Mailbox settings: a's with both passwords, b's with the IMAP one
	// alone, c's with none.
	c := empresa(t, s, "76777777-7")
	mailA := &store.CorreoConfig{EmpresaID: a.ID, Config: []byte(`{"a":1}`), SealedIMAP: []byte("imap-a"), SealedSMTP: []byte("smtp-a")}
	mailB := &store.CorreoConfig{EmpresaID: b.ID, Config: []byte(`{"b":1}`), SealedIMAP: []byte("imap-b")}
	mailC := &store.CorreoConfig{EmpresaID: c.ID, Config: []byte(`{"c":1}`)}
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		return errors.Join(tx.PutCertificado(ctx, certA), tx.PutCertificado(ctx, certB),
			tx.InsertCAF(ctx, cafA), tx.InsertCAF(ctx, legacy), tx.InsertCAF(ctx, cafB),
			tx.InsertWebhook(ctx, hookA), tx.InsertWebhook(ctx, gone), tx.InsertWebhook(ctx, bare), tx.InsertWebhook(ctx, hookB),
			tx.PutCorreoConfig(ctx, mailA), tx.PutCorreoConfig(ctx, mailB), tx.PutCorreoConfig(ctx, mailC))
	})
	// A console session of b, its credential sealed.
	sessB := &store.ConsoleSession{ID: strings.Repeat("ab", 32), EmpresaID: b.ID, SealedCredential: []byte("session-b"), CSRF: "t"}
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertConsoleSession(ctx, sessB, store.ConsoleSessionBounds{PerCompany: 1, Total: 1})
	})
	got, err := s.GetCAF(ctx, a.ID, cafA.ID)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "GetCAF with a sealed key", got, cafA)
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.DeleteWebhook(ctx, a.ID, gone.ID) })

	// Every secret of a kind, ordered by company then id, page by page:
	// the legacy CAF (no sealed key), the webhook without secret and the
	// deleted one (its secret erased) are not among them.
	order := func(list []store.Sealed) []store.Sealed {
		slices.SortFunc(list, func(x, y store.Sealed) int {
			if c := strings.Compare(x.EmpresaID, y.EmpresaID); c != 0 {
				return c
			}
			return strings.Compare(x.ID, y.ID)
		})
		return list
	}
	want := map[string][]store.Sealed{
		store.SealedCertificado: order([]store.Sealed{
			{Kind: store.SealedCertificado, EmpresaID: a.ID, Data: []byte("cert-a")},
			{Kind: store.SealedCertificado, EmpresaID: b.ID, Data: []byte("cert-b")}}),
		store.SealedCAFKey: order([]store.Sealed{
			{Kind: store.SealedCAFKey, EmpresaID: a.ID, ID: cafA.ID, Data: []byte("key-a")},
			{Kind: store.SealedCAFKey, EmpresaID: b.ID, ID: cafB.ID, Data: []byte("key-b")}}),
		store.SealedWebhook: order([]store.Sealed{
			{Kind: store.SealedWebhook, EmpresaID: a.ID, ID: hookA.ID, Data: []byte("hook-a")},
			{Kind: store.SealedWebhook, EmpresaID: b.ID, ID: hookB.ID, Data: []byte("hook-b")}}),
		store.SealedCorreoIMAP: order([]store.Sealed{
			{Kind: store.SealedCorreoIMAP, EmpresaID: a.ID, Data: []byte("imap-a")},
			{Kind: store.SealedCorreoIMAP, EmpresaID: b.ID, Data: []byte("imap-b")}}),
		store.SealedCorreoSMTP: {
			{Kind: store.SealedCorreoSMTP, EmpresaID: a.ID, Data: []byte("smtp-a")}},
		store.SealedConsoleSession: {
			{Kind: store.SealedConsoleSession, EmpresaID: b.ID, ID: sessB.ID, Data: []byte("session-b")}},
	}
	for _, kind := range store.SealedKinds {
		if want[kind] == nil {
			t.Errorf("the suite has no secret of kind %q: add one", kind)
		}
	}
	listAll := func(r store.Reader, kind string) []store.Sealed {
		t.Helper()
		var out []store.Sealed
		var afterE, afterID string
		for range 10 {
			page, err := r.ListSealed(ctx, kind, afterE, afterID, 1)
			if err != nil {
				t.Fatalf("ListSealed(%s): %v", kind, err)
			}
			if len(page) == 0 {
				return out
			}
			out = append(out, page...)
			afterE, afterID = page[len(page)-1].EmpresaID, page[len(page)-1].ID
		}
		t.Fatalf("ListSealed(%s) never ends", kind)
		return nil
	}
	for _, kind := range store.SealedKinds {
		same(t, "ListSealed("+kind+") one by one", listAll(s, kind), want[kind])
		all, err := s.ListSealed(ctx, kind, "", "", 0)
		if err != nil {
			t.Fatal(err)
		}
		same(t, "ListSealed("+kind+") in one page", all, want[kind])
	}
	if _, err := s.ListSealed(ctx, "password", "", "", 0); err == nil {
		t.Error("ListSealed of an unknown kind: no error")
	}

	// SealCAF moves the legacy CAF's key out of its document.
	legacy.XML, legacy.SealedKey = []byte("<CAF/>"), []byte("key-legacy")
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.SealCAF(ctx, legacy) })
	got, _ = s.GetCAF(ctx, a.ID, legacy.ID)
	same(t, "GetCAF after SealCAF", got, legacy)
	if n := len(listAll(s, store.SealedCAFKey)); n != 3 {
		t.Errorf("ListSealed(caf_key) after SealCAF: %d secrets, want 3", n)
	}
	err = s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.SealCAF(ctx, &store.CAF{EmpresaID: b.ID, ID: legacy.ID, XML: []byte("x"), SealedKey: []byte("y")})
	})
	wantErr(t, err, store.ErrNotFound, "SealCAF of another company's CAF")

	// ReplaceSealed rewrites the secret alone, every record's other
	// fields (update time included) as they were; within the
	// transaction, reads see the new bytes.
	time.Sleep(2 * time.Millisecond) // a rewritten update time would differ
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		for _, kind := range store.SealedKinds {
			for _, sec := range listAll(tx, kind) {
				sec.Data = append([]byte("new-"), sec.Data...)
				if err := tx.ReplaceSealed(ctx, &sec); err != nil {
					return err
				}
			}
		}
		if c, err := tx.GetCertificado(ctx, a.ID); err != nil || string(c.Sealed) != "new-cert-a" {
			t.Errorf("GetCertificado in the transaction: %+v, %v", c, err)
		}
		return nil
	})
	gotCert, _ := s.GetCertificado(ctx, a.ID)
	certA.Sealed = []byte("new-cert-a")
	same(t, "GetCertificado after ReplaceSealed", gotCert, certA)
	got, _ = s.GetCAF(ctx, b.ID, cafB.ID)
	cafB.SealedKey = []byte("new-key-b")
	same(t, "GetCAF after ReplaceSealed", got, cafB)
	gotHook, _ := s.GetWebhook(ctx, a.ID, hookA.ID)
	hookA.Secret = []byte("new-hook-a")
	same(t, "GetWebhook after ReplaceSealed", gotHook, hookA)
	if got, err := s.GetConsoleSession(ctx, sessB.ID); err != nil || string(got.SealedCredential) != "new-session-b" || got.CSRF != "t" {
		t.Errorf("GetConsoleSession after ReplaceSealed: %+v, %v", got, err)
	}
	// The mailbox passwords change, the settings (and the update time)
	// stay.
	for _, m := range []struct{ cfg *store.CorreoConfig }{{mailA}, {mailB}, {mailC}} {
		gotMail, err := s.GetCorreoConfig(ctx, m.cfg.EmpresaID)
		if err != nil {
			t.Fatal(err)
		}
		want := *m.cfg
		if want.SealedIMAP != nil {
			want.SealedIMAP = append([]byte("new-"), want.SealedIMAP...)
		}
		if want.SealedSMTP != nil {
			want.SealedSMTP = append([]byte("new-"), want.SealedSMTP...)
		}
		same(t, "GetCorreoConfig after ReplaceSealed", gotMail, &want)
	}
	for _, sec := range []store.Sealed{
		{Kind: store.SealedWebhook, EmpresaID: a.ID, ID: gone.ID, Data: []byte("x")},  // deleted, secret erased
		{Kind: store.SealedWebhook, EmpresaID: b.ID, ID: bare.ID, Data: []byte("x")},  // never had one
		{Kind: store.SealedWebhook, EmpresaID: b.ID, ID: hookA.ID, Data: []byte("x")}, // another company's
		{Kind: store.SealedCAFKey, EmpresaID: a.ID, ID: "missing", Data: []byte("x")}, // no such CAF
		{Kind: store.SealedCertificado, EmpresaID: "missing", Data: []byte("x")},      // no such company
		{Kind: store.SealedCorreoSMTP, EmpresaID: b.ID, Data: []byte("x")},            // settings without it
		{Kind: store.SealedCorreoIMAP, EmpresaID: c.ID, Data: []byte("x")},            // settings without it
		{Kind: store.SealedCorreoIMAP, EmpresaID: "missing", Data: []byte("x")},       // no such company
	} {
		err := s.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.ReplaceSealed(ctx, &sec) })
		wantErr(t, err, store.ErrNotFound, "ReplaceSealed of "+sec.Kind+" "+sec.ID)
	}
	// A console session named with another company is not found.
	err = s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.ReplaceSealed(ctx, &store.Sealed{Kind: store.SealedConsoleSession, EmpresaID: a.ID, ID: sessB.ID, Data: []byte("x")})
	})
	wantErr(t, err, store.ErrNotFound, "ReplaceSealed of another company's console session")

	// Settings of the database.
	if v, ok, err := s.Setting(ctx, store.SettingKEKFingerprint); v != "" || ok || err != nil {
		t.Errorf("Setting never set = %q, %v, %v; want \"\", false, nil", v, ok, err)
	}
	for _, v := range []string{"one", "two"} {
		write(t, s, func(ctx context.Context, tx store.Tx) error {
			return tx.PutSetting(ctx, store.SettingKEKFingerprint, v)
		})
		if got, ok, err := s.Setting(ctx, store.SettingKEKFingerprint); got != v || !ok || err != nil {
			t.Errorf("Setting after PutSetting(%q) = %q, %v, %v", v, got, ok, err)
		}
	}
}
