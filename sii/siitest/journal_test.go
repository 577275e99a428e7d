package siitest_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/sii/siitest"
)

// TestPersistAcrossRestart: a fake that persists to a journal, stopped and
// started again on it, goes on numbering track ids after the last one,
// still knows the envelope, its document and the acceptance registered on
// it (a second acceptance is code 7, a claim 11, as the registry answers
// for a document accepted before); a journal cut in the middle of its last
// line loses only that line, and one damaged before is refused.
func TestPersistAcrossRestart(t *testing.T) {
	t.Parallel()
	c, err := creds()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "sii.journal")
	opts := siitest.Options{AnySigner: true, Steps: []string{"SOK"}, StepEvery: time.Millisecond}
	start := func() *siitest.Fake {
		t.Helper()
		f := siitest.New(opts)
		if err := f.Persist(path); err != nil {
			t.Fatal(err)
		}
		return f.Start()
	}
	em, err := c.Emitter(nil)
	if err != nil {
		t.Fatal(err)
	}
	upload := func(f *siitest.Fake) (string, *sii.Client, int64) {
		t.Helper()
		res, err := em.Emit(context.Background(), &dte.EmitirDTERequest{TipoDTE: 33, Receptor: dte.Receptor{Rut: "76086428-5", RazonSocial: "Cliente",
			Giro: "Comercio", Direccion: "Calle 1", Comuna: "Santiago"}, Detalle: []dte.LineaDetalle{{Nombre: "Item", Cantidad: "1", Precio: "1000"}}})
		if err != nil {
			t.Fatal(err)
		}
		env, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: c.Emisor}, c.Cert, res.XML)
		if err != nil {
			t.Fatal(err)
		}
		client, err := sii.New(sii.Config{Endpoints: f.Endpoints(), Certificate: c.Cert})
		if err != nil {
			t.Fatal(err)
		}
		up, err := client.UploadClassic(context.Background(), c.Emisor.Rut, env)
		if err != nil || !up.Accepted() {
			t.Fatalf("upload: %+v, %v", up, err)
		}
		return up.TrackID, client, res.Folio
	}

	f1 := start()
	track1, client, folio1 := upload(f1)
	doc1 := sii.RCVDocument{RutEmisor: c.Emisor.Rut, Tipo: 33, Folio: folio1}
	time.Sleep(5 * time.Millisecond) // the review's one step
	if a, err := client.RegisterRCV(context.Background(), doc1, sii.RCVAccept); err != nil || a.Code != 0 {
		t.Fatalf("accepting before the restart: %+v, %v", a, err)
	}
	f1.Close()

	f2 := start()
	track2, client, _ := upload(f2)
	if track2 <= track1 {
		t.Errorf("track id %s after a restart, the first was %s", track2, track1)
	}
	e, ok := f2.Envelope(track1)
	if !ok || len(e.Docs) != 1 || e.Docs[0].Folio != folio1 || e.Final != "EPR" {
		t.Fatalf("the first envelope after a restart: %+v, %v", e, ok)
	}
	if a, err := client.RegisterRCV(context.Background(), doc1, sii.RCVAccept); err != nil || a.Code != 7 {
		t.Errorf("accepting again after the restart: %+v, %v; want code 7", a, err)
	}
	if a, err := client.RegisterRCV(context.Background(), doc1, sii.RCVClaimContent); err != nil || a.Code != 11 {
		t.Errorf("claiming after the restart: %+v, %v; want code 11", a, err)
	}
	f2.Close()

	// A last line cut short is dropped; the rest stays.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, append(data, []byte(`{"envelope":{"track_id":"00`)...), 0o600)
	f3 := start()
	if _, ok := f3.Envelope(track2); !ok {
		t.Error("the journal lost a complete line")
	}
	f3.Close()
	if after, _ := os.ReadFile(path); string(after) != string(data) {
		t.Errorf("the cut line was not dropped: %d bytes, want %d", len(after), len(data))
	}
	// A damaged line before the last is refused.
	os.WriteFile(path, append([]byte("not json\n"), data...), 0o600)
	if err := siitest.New(opts).Persist(path); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("a damaged journal: %v", err)
	}
}
