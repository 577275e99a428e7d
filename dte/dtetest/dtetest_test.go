package dtetest_test

import (
	"errors"
	"testing"

	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/signer"
)

func TestNew(t *testing.T) {
	c, err := dtetest.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, rut := range []string{dtetest.EmisorRUT, dtetest.SignerRUT} {
		if _, err := dte.ParseRUT(rut); err != nil {
			t.Errorf("%s: %v", rut, err)
		}
	}
	if len(c.CAFs) != len(dte.Tipos()) {
		t.Fatalf("%d CAFs, want %d", len(c.CAFs), len(dte.Tipos()))
	}
	for _, tipo := range dte.Tipos() {
		cf := c.CAFs[tipo]
		if cf.Tipo != int(tipo) || cf.RutEmisor != dtetest.EmisorRUT || cf.IDK != 100 || cf.Desde != 1 || cf.Hasta != 1000 {
			t.Errorf("tipo %d: %s", tipo, cf)
		}
		if err := cf.Verify(c.Keys); err != nil {
			t.Errorf("tipo %d: CAF does not verify with the authority's keys: %v", tipo, err)
		}
		// Test CAFs must never pass for the SII's.
		if err := cf.Verify(caf.SIIKeys()); !errors.Is(err, caf.ErrSignature) && !errors.Is(err, caf.ErrUntrustedIDK) {
			t.Errorf("tipo %d: CAF verified against the SII's keys alone: %v", tipo, err)
		}
		if err := cf.CheckKeyPair(); err != nil {
			t.Errorf("tipo %d: %v", tipo, err)
		}
	}
	for name, p12 := range map[string][]byte{"modern": c.P12, "legacy": c.P12Legacy} {
		cert, err := signer.Load(p12, c.Password)
		if err != nil {
			t.Fatalf("%s PKCS#12: %v", name, err)
		}
		if rut, ok := cert.RUT(); !ok || rut != dtetest.SignerRUT {
			t.Errorf("%s PKCS#12: RUT %q", name, rut)
		}
	}
	if len(c.AuthorityPEM) == 0 || c.Emisor.Rut != dtetest.EmisorRUT || len(c.Emisor.Acteco) == 0 {
		t.Errorf("incomplete set: %+v", c.Emisor)
	}
}
