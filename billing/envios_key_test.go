package billing

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/store"
)

// TestEnvioKeysOfEveryVersion: an envelope request's Idempotency-Key is
// recorded under billing's operation names, and a key recorded before
// them, under the route that reached the operation, still replays its
// first answer within its window. The fingerprints are written out by
// hand, as each version stores them; a fingerprint of another operation
// or other documents is a mismatch. No document exists: a replay answers
// before any document is read.
func TestEnvioKeysOfEveryVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newService(t, backends[0].name, backends[0].dsn(t), Config{TrustedKeys: caf.SIIKeys()})
	e := &store.Empresa{Rut: "76192083-9", RazonSocial: "Comercial Los Andes SpA", Ambiente: "certificacion"}
	if err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertEmpresa(ctx, e) }); err != nil {
		t.Fatal(err)
	}
	const a, b = "0190f1a2-0000-7000-8000-00000000000a", "0190f1a2-0000-7000-8000-00000000000b"
	fp := func(s string) []byte { h := sha256.Sum256([]byte(s)); return h[:] }
	at := time.Now().UTC().Truncate(time.Microsecond)
	record := func(t *testing.T, hash []byte, envio string) string {
		t.Helper()
		key := newKey()
		body, _ := json.Marshal(api.Envio{ID: envio, Tipo: "EnvioDTE", Estado: api.EnvioPendiente})
		rec := &store.Idempotency{EmpresaID: e.ID, Ambiente: "certificacion", Key: key, BodyHash: hash,
			State: store.IdempotencyDone, ResponseStatus: 201, ResponseBody: body, CreatedAt: at, UpdatedAt: at}
		if err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertIdempotency(ctx, rec) }); err != nil {
			t.Fatal(err)
		}
		return key
	}
	// The server passes the routes that reached each operation before
	// they had names (server.legacyEnvioOperation and
	// legacySubmitOperation); a caller that passes none matches only keys
	// of this version.
	envios := func(key string) (*api.Envio, bool, error) {
		return s.Envelopes.Create(ctx, e.ID, api.EnvioRequest{IdempotencyKey: key, DTEIDs: []string{a, b},
			LegacyOperation: "POST /api/v1/billing/envios"})
	}
	enviar := func(key string) (*api.Envio, bool, error) {
		return s.Envelopes.Submit(ctx, e.ID, a, api.SubmitParams{IdempotencyKey: key,
			LegacyOperation: "POST /api/v1/billing/dte/" + a + "/enviar"})
	}
	enviosNoLegacy := func(key string) (*api.Envio, bool, error) {
		return s.Envelopes.Create(ctx, e.ID, api.EnvioRequest{IdempotencyKey: key, DTEIDs: []string{a, b}})
	}
	enviarNoLegacy := func(key string) (*api.Envio, bool, error) {
		return s.Envelopes.Submit(ctx, e.ID, a, api.SubmitParams{IdempotencyKey: key})
	}
	for _, c := range []struct {
		name   string
		stored string // what the fingerprint hashed when the key was recorded
		call   func(key string) (*api.Envio, bool, error)
		replay bool
	}{
		{"envios, this version", "envios.create\n" + a + "\n" + b, envios, true},
		{"envios, before operation names", "POST /api/v1/billing/envios\n" + a + "\n" + b, envios, true},
		{"enviar, this version", "dte.enviar\n" + a, enviar, true},
		{"enviar, before operation names", "POST /api/v1/billing/dte/" + a + "/enviar\n" + a, enviar, true},
		{"envios with other documents", "envios.create\n" + b + "\n" + a, envios, false},
		{"envios with an old key of enviar", "POST /api/v1/billing/dte/" + a + "/enviar\n" + a, envios, false},
		{"enviar with a key of envios", "envios.create\n" + a, enviar, false},
		{"enviar with an old key of another document", "POST /api/v1/billing/dte/" + b + "/enviar\n" + a, enviar, false},
		{"envios without a legacy name, this version", "envios.create\n" + a + "\n" + b, enviosNoLegacy, true},
		{"envios without a legacy name, an old key", "POST /api/v1/billing/envios\n" + a + "\n" + b, enviosNoLegacy, false},
		{"enviar without a legacy name, this version", "dte.enviar\n" + a, enviarNoLegacy, true},
		{"enviar without a legacy name, an old key", "POST /api/v1/billing/dte/" + a + "/enviar\n" + a, enviarNoLegacy, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			key := record(t, fp(c.stored), "0190f1a2-0000-7000-8000-0000000000e1")
			got, replayed, err := c.call(key)
			if !c.replay {
				if fault.KindOf(err) != fault.KindIdempotencyMismatch {
					t.Fatalf("got %+v, %v, %v; want %s", got, replayed, err, fault.IdempotencyMismatch)
				}
				return
			}
			if err != nil || !replayed || got == nil || got.ID != "0190f1a2-0000-7000-8000-0000000000e1" {
				t.Fatalf("got %+v, %v, %v; want the stored answer replayed", got, replayed, err)
			}
		})
	}
}
