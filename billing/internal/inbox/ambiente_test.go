package inbox

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/intercambio"
	"github.com/dtekit/dtekit/sii/siitest"
	"github.com/dtekit/dtekit/store"
)

// TestRefreshPerEnvironment, on both backends: A received a supplier's
// certificación folio 1 and, after moving to producción, its production
// folio 1. Each registry (two fakes) received its own folio 1 on another
// day: the refresh takes each document's window from its own
// environment's registry, and the "por vencer" warning of the
// certificación one (its window closes within a day) names its
// environment. Then the certification registry is down: the refresh
// reports it, and still gives a new production document its window and
// its warning.
func TestRefreshPerEnvironment(t *testing.T) {
	t.Parallel()
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			ans := fixtureAnswers(t)
			fakes := map[string]*siitest.Fake{}
			for _, amb := range ambientes {
				f := siitest.New(siitest.Options{}).Start()
				t.Cleanup(f.Close)
				f.Register(dtetest.SignerRUT, dtetest.EmisorRUT)
				fakes[amb] = f
			}
			registry := newFakeRegistry(ans.creds.Cert, fakes)
			rm := newRoom(t, be.open(t), ans.creds, Config{Registry: registry})
			add := func(amb string, folio int64) *store.Recibido {
				t.Helper()
				rec := &store.Recepcion{EmpresaID: rm.empresa, Ambiente: amb, Digest: fmt.Sprint(amb, folio), Tipo: TipoEnvio,
					Origen: OrigenUpload, XML: []byte("<x/>")}
				r := &store.Recibido{EmpresaID: rm.empresa, RutEmisor: rutSupplier, TipoDTE: 33, Folio: folio, Estado: Pendiente,
					DedupeKey: keyIn(amb, fmt.Sprintf("dte:%s:33:%d", rutSupplier, folio))}
				err := rm.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
					if err := tx.InsertRecepcion(ctx, rec); err != nil {
						return err
					}
					r.RecepcionID = rec.ID
					return tx.InsertRecibido(ctx, r)
				})
				if err != nil {
					t.Fatal(err)
				}
				if r.Ambiente != amb {
					t.Fatalf("recorded in %q, want %q", r.Ambiente, amb)
				}
				return r
			}
			cert := add("certificacion", 1)
			emp, err := rm.st.GetEmpresa(ctx, rm.empresa)
			if err != nil {
				t.Fatal(err)
			}
			emp.Ambiente = "produccion"
			if err := rm.st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.UpdateEmpresa(ctx, emp) }); err != nil {
				t.Fatal(err)
			}
			prod := add("produccion", 1)
			now := time.Now()
			soon := now.Add(-8*24*time.Hour + 12*time.Hour).Truncate(time.Second) // its window closes in 12 hours
			later := now.Add(-2 * 24 * time.Hour).Truncate(time.Second)
			seed := func(amb string, folio int64, at time.Time) {
				fakes[amb].SeedRCV(siitest.RCVSeed{RutEmisor: rutSupplier, RutReceptor: dtetest.EmisorRUT, Tipo: 33, Folio: folio, Received: at, FmaPago: 2})
			}
			seed("certificacion", 1, soon)
			seed("produccion", 1, later)
			if err := rm.ib.Refresh(ctx, rm.empresa); err != nil {
				t.Fatal(err)
			}
			warned := func(r *store.Recibido, at time.Time, amb string) {
				t.Helper()
				got, err := rm.st.GetRecibido(ctx, rm.empresa, r.ID)
				if err != nil {
					t.Fatal(err)
				}
				if !got.FechaRecepcionSII.Equal(at) || got.Ambiente != amb {
					t.Errorf("%s folio %d: received by the SII %v, ambiente %q; want %v (its own registry's), %q",
						r.Ambiente, r.Folio, got.FechaRecepcionSII, got.Ambiente, at, amb)
				}
			}
			warned(cert, soon, "certificacion")
			warned(prod, later, "produccion")
			events := func() []store.Event {
				t.Helper()
				p, err := rm.st.ListEvents(ctx, rm.empresa, store.ListFilter{Limit: store.MaxLimit})
				if err != nil {
					t.Fatal(err)
				}
				return p.Items
			}
			ev := events()
			if len(ev) != 1 || !bytes.Contains(ev[0].Payload, []byte(cert.ID)) || !bytes.Contains(ev[0].Payload, []byte(`"ambiente":"certificacion"`)) {
				t.Errorf("the warnings: %d events, want one for the certificación folio 1 naming its environment", len(ev))
			}

			// The certification registry down holds up no production
			// document.
			registry.down.Store(true)
			prod2 := add("produccion", 2)
			seed("produccion", 2, soon)
			err = rm.ib.Refresh(ctx, rm.empresa)
			if err == nil || !strings.Contains(err.Error(), "certificacion") {
				t.Errorf("the refresh with the certification registry down: %v, want its error", err)
			}
			warned(prod2, soon, "produccion")
			ev = events()
			if len(ev) != 2 || !bytes.Contains(ev[0].Payload, []byte(prod2.ID)) || !bytes.Contains(ev[0].Payload, []byte(`"ambiente":"produccion"`)) {
				t.Errorf("after the second refresh: %d events, want the production folio 2's warning too", len(ev))
			}
		})
	}
}

// TestAmbienteOfReceived: a document's environment is its stamp's when
// the stamp verified (IDK 100 certificación, 300 producción), else the
// company's at reception; a file's is its verified stamps' when they
// agree, else the company's. Keys by emitter, type and folio name the
// environment; keys by digest do not.
func TestAmbienteOfReceived(t *testing.T) {
	t.Parallel()
	doc := func(ok bool, amb string) intercambio.DocumentoRecibido {
		var d intercambio.DocumentoRecibido
		d.Verificacion.TED.OK, d.Verificacion.CAFAmbiente = ok, amb
		return d
	}
	const cert, prod = "certificacion", "produccion"
	for _, tc := range []struct {
		name          string
		docs          []intercambio.DocumentoRecibido
		company, file string
		each          []string
	}{
		{"a test document in producción", []intercambio.DocumentoRecibido{doc(true, cert)}, prod, cert, []string{cert}},
		{"a real document in certificación", []intercambio.DocumentoRecibido{doc(true, prod)}, cert, prod, []string{prod}},
		{"a stamp that failed", []intercambio.DocumentoRecibido{doc(false, cert)}, prod, prod, []string{prod}},
		{"a stamp of a test authority", []intercambio.DocumentoRecibido{doc(true, "")}, prod, prod, []string{prod}},
		{"stamps of both", []intercambio.DocumentoRecibido{doc(true, cert), doc(true, prod), doc(false, "")}, cert, cert, []string{cert, prod, cert}},
		{"no document", nil, prod, prod, nil},
	} {
		rec := &intercambio.Recepcion{Documentos: tc.docs}
		if got := fileAmbiente(rec, tc.company); got != tc.file {
			t.Errorf("%s: the file is of %q, want %q", tc.name, got, tc.file)
		}
		for i := range tc.docs {
			if got := docAmbiente(&tc.docs[i], tc.company); got != tc.each[i] {
				t.Errorf("%s: document %d is of %q, want %q", tc.name, i, got, tc.each[i])
			}
		}
	}
	if got := keyIn(prod, "dte:76086428-5:33:1"); got != "produccion:dte:76086428-5:33:1" {
		t.Errorf("keyIn of an identity: %q", got)
	}
	if got := keyIn(prod, "sha256:ab"); got != "sha256:ab" {
		t.Errorf("keyIn of a digest: %q", got)
	}
}
