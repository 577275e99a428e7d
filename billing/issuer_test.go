package billing

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/testcreds"
)

// TestIssuerSnapshot checks the issuer snapshot built around the cached
// company JSON against json.Marshal of the emission record it stands for,
// which recoverDTE and the submission decode.
func TestIssuerSnapshot(t *testing.T) {
	e := Empresa(testcreds.DemoEmisor())
	suc := 12
	e.ID, e.SucursalSII, e.OficinaSII, e.InboundEmail = "0190b6f2-3c4d-7e8f-9a0b-1c2d3e4f5a6b", &suc, "SANTIAGO <CENTRO> & SUR", "dte@example.cl"
	js, err := json.Marshal(&e)
	if err != nil {
		t.Fatal(err)
	}
	c := &cachedIssuer{em: &dte.Emitter{Emisor: e.Emisor()}, empresaJSON: js}
	for _, key := range []string{"0b6f3c1e-5d7a-4c8e-9f10-2a3b4c5d6e7f", "{0b6f3c1e-5d7a-4c8e-9f10-2a3b4c5d6e7f}", ""} {
		want, err := json.Marshal(emission{Empresa: e, IdempotencyKey: key})
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.snapshot(key)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("key %q:\n got %s (%v)\nwant %s", key, got, err, want)
		}
		var back emission
		if err := json.Unmarshal(got, &back); err != nil || back.Empresa.Rut != e.Rut || back.IdempotencyKey != key {
			t.Errorf("key %q: the snapshot reads back as %+v (%v)", key, back, err)
		}
	}
}
