package dte_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/oracle"
)

// Every document Emit writes is sealed, and its seal (the span the
// envelope's digest steps over, the declarations it leaves out, the
// element count and the identity) is what the envelope's strict scan finds
// in the same bytes: the proof by construction agrees with the proof by
// scanning on every type, names with ñ, accents, &, <, ' and " included.
// A document whose text holds the word "xmlns" is left unsealed (the seal
// could not tell a declaration from it) and is scanned instead.
func TestSealedSpanIsScanned(t *testing.T) {
	t.Parallel()
	docs, reqs := emitAll(t)
	for _, tipo := range dte.Tipos() {
		if msg := dte.SealedAgainstScan(docs[tipo]); msg != "" {
			t.Errorf("tipo %d: %s", tipo, msg)
		}
	}
	em, err := creds(t).Emitter(nil)
	if err != nil {
		t.Fatal(err)
	}
	req := *reqs[33]
	req.Receptor.Giro = `xmlns="urn:x"`
	e, err := em.Emit(context.Background(), &req)
	if err != nil {
		t.Fatal(err)
	}
	if dte.EnvioSealed(e, dte.DefaultSetID) {
		t.Error("a DTE whose text holds xmlns was sealed")
	}
	if !dte.EnvioFastPath(e.XML) {
		t.Error("a DTE whose text holds xmlns does not take the scanned fast path")
	}
}

// BuildEnvioEmitted pastes sealed documents without reading them and reads
// the rest as BuildEnvio does; over the same documents both write the same
// envelope byte for byte, its SetDTE digest is SHA-1 over what the general
// canonicalizer renders, and xmlsec1 verifies its signature. A sealed
// document whose XML the caller edited in place, or replaced with other
// bytes, loses its seal: with a carriage return in its text (which C14N
// writes &#xD;) an envelope that trusted the seal would paste Stamp's copy
// and digest it without the escape.
func TestEnvioEmittedMixed(t *testing.T) {
	t.Parallel()
	oracle.Tool(t, "xmlsec1")
	c := creds(t)
	em, err := c.Emitter(nil)
	if err != nil {
		t.Fatal(err)
	}
	_, reqs := emitAll(t)
	emit := func(tipo dte.TipoDTE) *dte.Emitted {
		e, err := em.Emit(context.Background(), reqs[tipo])
		if err != nil {
			t.Fatal(err)
		}
		if !dte.EnvioSealed(e, dte.DefaultSetID) {
			t.Fatalf("tipo %d: the emitted DTE is not sealed", tipo)
		}
		return e
	}
	var facturas, boletas []*dte.Emitted
	for _, tipo := range dte.Tipos() {
		if tipo.IsBoleta() {
			boletas = append(boletas, emit(tipo), emit(tipo))
		} else {
			facturas = append(facturas, emit(tipo))
		}
	}
	edited := emit(33)
	nmb := bytes.Index(edited.XML, []byte("<NmbItem>")) + len("<NmbItem>")
	edited.XML[nmb] = '\r' // in place: same slice, same length
	replaced := emit(33)
	replaced.XML = bytes.Replace(replaced.XML, []byte("<NmbItem>"), []byte("<NmbItem>Z"), 1)
	unsealed := &dte.Emitted{XML: emit(34).XML}
	copied := *emit(61) // a copy of the value keeps the seal while XML is untouched
	for _, e := range []*dte.Emitted{edited, replaced} {
		if dte.EnvioSealed(e, dte.DefaultSetID) {
			t.Fatalf("folio %d: an edited DTE kept its seal", e.Folio)
		}
	}
	if dte.EnvioSealed(unsealed, dte.DefaultSetID) || !dte.EnvioSealed(&copied, dte.DefaultSetID) {
		t.Fatal("a caller's Emitted is sealed, or a copied one is not")
	}
	if dte.EnvioSealed(facturas[0], facturas[0].ID) {
		t.Fatal("a DTE whose ID is the SetDTE's kept its seal")
	}
	at := time.Date(2026, 3, 2, 14, 5, 9, 0, dte.SantiagoLocation())
	for _, tc := range []struct {
		name  string
		docs  []*dte.Emitted
		setID string
	}{
		{"sealed", facturas, ""},
		{"boletas", boletas, ""},
		{"mixed", append([]*dte.Emitted{edited, unsealed}, append(append([]*dte.Emitted{}, facturas[1:]...), replaced, &copied)...), ""},
		{"set-id-of-a-dte", facturas, facturas[0].ID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			opts := dte.EnvioOptions{Emisor: c.Emisor, At: at, SetID: tc.setID}
			xmls := make([][]byte, len(tc.docs))
			for i, d := range tc.docs {
				xmls[i] = d.XML
			}
			want, wantErr := dte.BuildEnvio(opts, c.Cert, xmls...)
			env, err := dte.BuildEnvioEmitted(opts, c.Cert, tc.docs...)
			if (err != nil) != (wantErr != nil) || !bytes.Equal(env, want) {
				t.Fatalf("BuildEnvioEmitted (%v) differs from BuildEnvio (%v)", err, wantErr)
			}
			if err != nil {
				return
			}
			if tc.name == "mixed" && !bytes.Contains(env, edited.XML[len(`<?xml version="1.0" encoding="ISO-8859-1"?>`+"\n"):]) {
				t.Fatal("the envelope does not hold the edited DTE's bytes")
			}
			id := tc.setID
			if id == "" {
				id = dte.DefaultSetID
			}
			checkSetDigest(t, env, id)
			file := filepath.Join(t.TempDir(), "envio.xml")
			if err := os.WriteFile(file, env, 0o600); err != nil {
				t.Fatal(err)
			}
			if msg, ok := xmlsecVerify(t, file, `/*/*[local-name()='Signature']`, keyValueArgs()...); !ok {
				t.Errorf("xmlsec1 SetDTE: %s", msg)
			}
		})
	}
	if _, err := dte.BuildEnvioEmitted(dte.EnvioOptions{Emisor: c.Emisor, At: at}, c.Cert, facturas[0], nil); err == nil {
		t.Error("a nil document was packed")
	}
}

// FuzzEnvioEmittedEdit changes one byte of a copy of a sealed document's
// XML in place (anywhere: declaration, tags, text, signature) and packs it
// both ways: BuildEnvioEmitted must answer what BuildEnvio answers over
// the same bytes (the same envelope, or an error for both), so no edit
// reaches the envelope on the seal. A byte set to its own value keeps the
// seal, and the envelopes still agree.
func FuzzEnvioEmittedEdit(f *testing.F) {
	docs, _ := emitAll(f)
	base := docs[33]
	nmb := bytes.Index(base.XML, []byte("<NmbItem>")) + len("<NmbItem>")
	f.Add(uint16(nmb), byte('\r'))
	f.Add(uint16(50), byte('x'))              // inside the <DTE> start tag
	f.Add(uint16(len(base.XML)-3), byte('X')) // the end tag
	f.Add(uint16(nmb), base.XML[nmb])         // no change
	f.Add(uint16(bytes.Index(base.XML, []byte("<Folio>"))+7), byte('9'))
	c := creds(f)
	opts := dte.EnvioOptions{Emisor: c.Emisor, At: time.Date(2026, 3, 2, 14, 5, 9, 0, dte.SantiagoLocation())}
	f.Fuzz(func(t *testing.T, pos uint16, b byte) {
		e := *base
		e.XML = bytes.Clone(base.XML)
		i := int(pos) % len(e.XML)
		same := e.XML[i] == b
		e.XML[i] = b
		if got := dte.EnvioSealed(&e, dte.DefaultSetID); got != same {
			t.Fatalf("byte %d set to %q: sealed %v", i, b, got)
		}
		want, wantErr := dte.BuildEnvio(opts, c.Cert, e.XML)
		got, err := dte.BuildEnvioEmitted(opts, c.Cert, &e)
		if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
			t.Fatalf("byte %d set to %q: BuildEnvioEmitted (%v) differs from BuildEnvio (%v)", i, b, err, wantErr)
		}
	})
}
