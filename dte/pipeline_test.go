package dte_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/caf/caftest"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/internal/oracle"
	"github.com/dtekit/dtekit/internal/smallrsa"
	"github.com/dtekit/dtekit/signer"
)

// One credential set per test binary: generating it costs a 2048-bit key.
var (
	credsOnce sync.Once
	credsVal  *dtetest.Creds
	credsErr  error
)

func creds(tb testing.TB) *dtetest.Creds {
	tb.Helper()
	credsOnce.Do(func() { credsVal, credsErr = dtetest.New(nil) })
	if credsErr != nil {
		tb.Fatalf("dtetest: %v", credsErr)
	}
	return credsVal
}

// emitted holds the documents of the oracle run, emitted once and shared by
// the tests that check them.
var (
	emitOnce sync.Once
	emitDocs map[dte.TipoDTE]*dte.Emitted
	emitReqs map[dte.TipoDTE]*dte.EmitirDTERequest
	emitErr  error
)

func emitAll(t testing.TB) (map[dte.TipoDTE]*dte.Emitted, map[dte.TipoDTE]*dte.EmitirDTERequest) {
	t.Helper()
	c := creds(t)
	emitOnce.Do(func() {
		em, err := c.Emitter(nil)
		if err != nil {
			emitErr = err
			return
		}
		emitReqs = dte.OracleRequests()
		emitDocs = map[dte.TipoDTE]*dte.Emitted{}
		for _, tipo := range dte.Tipos() {
			out, err := em.Emit(context.Background(), emitReqs[tipo])
			if err != nil {
				emitErr = fmt.Errorf("tipo %d: %w", tipo, err)
				return
			}
			emitDocs[tipo] = out
		}
	})
	if emitErr != nil {
		t.Fatal(emitErr)
	}
	return emitDocs, emitReqs
}

// runIn runs an oracle program in dir and returns its combined output and
// whether it exited with status 0.
func runIn(t *testing.T, dir, name string, args ...string) (string, bool) {
	t.Helper()
	cmd := oracle.Command(t, name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err == nil
}

// xmlsecVerify runs xmlsec1 --verify with the given key options on the
// signature node selected by xpath ("" for the first one).
func xmlsecVerify(t *testing.T, file, xpath string, keyArgs ...string) (string, bool) {
	t.Helper()
	args := []string{"--verify", "--id-attr:ID", "Documento", "--id-attr:ID", "Liquidacion",
		"--id-attr:ID", "Exportaciones", "--id-attr:ID", "SetDTE"}
	args = append(args, keyArgs...)
	if xpath != "" {
		args = append(args, "--node-xpath", xpath)
	}
	return runIn(t, filepath.Dir(file), "xmlsec1", append(args, file)...)
}

// The key sources xmlsec1 is told to trust: the RSAKeyValue in the
// signature, or only the X509 certificate (KeyValue disabled), checked
// against the signer's certificate given as trusted.
func keyValueArgs() []string {
	return []string{"--enabled-key-data", "key-value", "--enabled-key-data", "rsa"}
}

func x509Args(certPEM string) []string {
	return []string{"--enabled-key-data", "x509", "--trusted-pem", certPEM}
}

var (
	reDD   = regexp.MustCompile(`(?s)<DD>.*</DD>`)
	reFRMT = regexp.MustCompile(`<FRMT algoritmo="SHA1withRSA">([^<]*)</FRMT>`)
	reRSAP = regexp.MustCompile(`(?s)<RSAPUBK>(.*)</RSAPUBK>`)
)

// TestOracleEmitAllTypes emits one document of each type (names with ñ,
// accents, &, <, ' and ") and checks each with the independent tools:
// xmllint against the SII schema, xmlsec1 with the KeyValue key and with the
// X509 certificate, and openssl over the TED's flattened DD.
func TestOracleEmitAllTypes(t *testing.T) {
	schemas := oracle.Schemas(t)
	oracle.Tool(t, "xmllint")
	oracle.Tool(t, "xmlsec1")
	oracle.Tool(t, "openssl")
	docs, reqs := emitAll(t)
	c := creds(t)
	dir := t.TempDir()
	certPEM := filepath.Join(dir, "signer.pem")
	if err := os.WriteFile(certPEM, c.Cert.CertificatePEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	// Schema validation, one xmllint run per schema for all its files.
	files := map[dte.TipoDTE]string{}
	batches := map[string][]string{}
	for _, tipo := range dte.Tipos() {
		file := filepath.Join(dir, docs[tipo].ID+".xml")
		if err := os.WriteFile(file, docs[tipo].XML, 0o600); err != nil {
			t.Fatal(err)
		}
		files[tipo] = file
		schema := "DTE_v10.xsd"
		if tipo.IsBoleta() {
			schema = "BoletaDTE_wrapper.xsd"
		}
		batches[schema] = append(batches[schema], file)
	}
	for schema, fs := range batches {
		msg, ok := runIn(t, schemas, "xmllint", append([]string{"--noout", "--schema", schema}, fs...)...)
		for _, f := range fs {
			if !strings.Contains(msg, f+" validates") {
				t.Errorf("xmllint %s: %s does not validate", schema, filepath.Base(f))
			}
		}
		if !ok {
			t.Errorf("xmllint %s: %s", schema, msg)
		}
	}
	for _, tipo := range dte.Tipos() {
		out, req := docs[tipo], reqs[tipo]
		t.Run(tipo.String(), func(t *testing.T) {
			file := files[tipo]
			if !bytes.HasPrefix(out.XML, []byte(`<?xml version="1.0" encoding="ISO-8859-1"?>`)) {
				t.Errorf("missing ISO-8859-1 declaration: %.60q", out.XML)
			}
			// The names travel as single ISO-8859-1 bytes, escaped.
			wantName := latin1(t, escapeText(req.Receptor.RazonSocial))
			if !bytes.Contains(out.XML, wantName) {
				t.Errorf("the receptor's name is not in the file as %q", wantName)
			}
			if msg, ok := xmlsecVerify(t, file, "", keyValueArgs()...); !ok {
				t.Errorf("xmlsec1 (KeyValue): %s", msg)
			}
			if msg, ok := xmlsecVerify(t, file, "", x509Args(certPEM)...); !ok {
				t.Errorf("xmlsec1 (X509 certificate): %s", msg)
			}

			// FRMT: openssl over the flattened DD, with the CAF's RSAPUBK.
			dd := reDD.Find(out.XML)
			frmt := reFRMT.FindSubmatch(out.XML)
			pub := reRSAP.FindSubmatch(c.CAFFiles[tipo])
			if dd == nil || frmt == nil || pub == nil {
				t.Fatalf("DD, FRMT or the CAF's RSAPUBK not found")
			}
			sig, err := base64.StdEncoding.DecodeString(string(frmt[1]))
			if err != nil {
				t.Fatalf("FRMT is not base64: %v", err)
			}
			ddFile, sigFile, pubFile := filepath.Join(dir, out.ID+".dd"), filepath.Join(dir, out.ID+".sig"), filepath.Join(dir, out.ID+".pub")
			for f, b := range map[string][]byte{ddFile: dd, sigFile: sig, pubFile: pub[1]} {
				if err := os.WriteFile(f, b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if msg, ok := runIn(t, dir, "openssl", "dgst", "-sha1", "-verify", pubFile, "-signature", sigFile, ddFile); !ok || !strings.Contains(msg, "Verified OK") {
				t.Errorf("openssl FRMT: %s", msg)
			}
			// The DD names the right document and receptor.
			rr := req.Receptor.Rut
			for _, want := range []string{"<TD>" + tipo.String() + "</TD>", fmt.Sprintf("<F>%d</F>", out.Folio), "<RR>" + rr + "</RR>",
				"<RE>" + dtetest.EmisorRUT + "</RE>", "<MNT>" + string(out.MontoTotal) + "</MNT>"} {
				if !bytes.Contains(dd, []byte(want)) {
					t.Errorf("DD lacks %s", want)
				}
			}
		})
	}
}

// TestOracleTamperedFails shows the oracles can fail: one changed byte in a
// signed name breaks both the XML signature (xmlsec1) and the stamp.
func TestOracleTamperedFails(t *testing.T) {
	oracle.Tool(t, "xmlsec1")
	docs, _ := emitAll(t)
	out := docs[dte.FacturaElectronica]
	bad := bytes.Replace(out.XML, []byte("Hijos"), []byte("Hijas"), 1)
	if bytes.Equal(bad, out.XML) {
		t.Fatal("nothing to tamper with")
	}
	file := filepath.Join(t.TempDir(), "bad.xml")
	if err := os.WriteFile(file, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	if msg, ok := xmlsecVerify(t, file, "", keyValueArgs()...); ok {
		t.Fatalf("xmlsec1 accepted a tampered document: %s", msg)
	}
}

// TestGoldenTotals checks amounts worked out by hand from the requests.
func TestGoldenTotals(t *testing.T) {
	docs, _ := emitAll(t)
	// 33: 2 × 15990 = 31980, −10 % = −3198 → 28782; 1.5 × 20000 = 30000;
	// 58782 − 5 % (2939.1 → 2939) = 55843; IVA 19 % = 10610.17 → 10610.
	// 39: 3 × 1190 = 3570; 990 − 5 % (49.5 → 50) = 940; gross 4510;
	// neto 4510 / 1.19 = 3789.9 → 3790; IVA 4510 − 3790 = 720.
	// 110: 10 × 12.5 + 12 × 8.75 = 230 USD; × 950.25 = 218557.5 → 218558 CLP.
	for _, g := range []struct {
		tipo                      dte.TipoDTE
		neto, exe, iva, total, om dte.Decimal
	}{
		{33, "55843", "", "10610", "66453", ""},
		{39, "3790", "", "720", "4510", ""},
		{110, "", "230", "", "230", "218558"},
	} {
		doc, err := dte.ParseDTE(docs[g.tipo].XML)
		if err != nil {
			t.Fatalf("%d: %v", g.tipo, err)
		}
		tt := doc.Totales
		if tt.MntNeto != g.neto || tt.MntExe != g.exe || tt.IVA != g.iva || tt.MntTotal != g.total {
			t.Errorf("%d: Totales %+v, want neto %s exe %s iva %s total %s", g.tipo, tt, g.neto, g.exe, g.iva, g.total)
		}
		if g.om != "" && (doc.OtraMoneda == nil || doc.OtraMoneda.MntTotOtrMnda != g.om) {
			t.Errorf("%d: OtraMoneda %+v, want MntTotOtrMnda %s", g.tipo, doc.OtraMoneda, g.om)
		}
	}
}

func TestEmitParseBack(t *testing.T) {
	docs, reqs := emitAll(t)
	for _, tipo := range dte.Tipos() {
		out, req := docs[tipo], reqs[tipo]
		doc, err := dte.ParseDTE(out.XML)
		if err != nil {
			t.Fatalf("%d: ParseDTE: %v", tipo, err)
		}
		if doc.Tipo != tipo || doc.Folio != out.Folio || doc.ID != out.ID {
			t.Errorf("%d: parsed %d/%d/%s, emitted %d/%d/%s", tipo, doc.Tipo, doc.Folio, doc.ID, tipo, out.Folio, out.ID)
		}
		if doc.Totales.MntTotal != out.MontoTotal || doc.FechaEmision != out.FechaEmision {
			t.Errorf("%d: parsed total %s date %s, emitted %s %s", tipo, doc.Totales.MntTotal, doc.FechaEmision, out.MontoTotal, out.FechaEmision)
		}
		if doc.Receptor.RazonSocial != req.Receptor.RazonSocial {
			t.Errorf("%d: receptor %q, want %q", tipo, doc.Receptor.RazonSocial, req.Receptor.RazonSocial)
		}
		if doc.Emisor.RazonSocial != dtetest.EmisorRazonSocial || doc.Emisor.Rut != dtetest.EmisorRUT {
			t.Errorf("%d: emisor %q %q", tipo, doc.Emisor.Rut, doc.Emisor.RazonSocial)
		}
		if len(doc.Detalle) != len(req.Detalle) {
			t.Fatalf("%d: %d lines, want %d", tipo, len(doc.Detalle), len(req.Detalle))
		}
		for i, l := range doc.Detalle {
			if l.Nombre != req.Detalle[i].Nombre {
				t.Errorf("%d line %d: %q, want %q", tipo, i, l.Nombre, req.Detalle[i].Nombre)
			}
			if l.MontoItem != out.Totals.Detalle[i].MontoItem {
				t.Errorf("%d line %d: MontoItem %s, want %s", tipo, i, l.MontoItem, out.Totals.Detalle[i].MontoItem)
			}
		}
		if !bytes.Equal(doc.TED, out.TED) || !bytes.Equal(doc.Raw, out.XML) {
			t.Errorf("%d: TED or raw bytes differ from the emitted ones", tipo)
		}
		if doc.TmstFirma != dte.ChileTime(out.SignedAt).Format("2006-01-02T15:04:05") {
			t.Errorf("%d: TmstFirma %s", tipo, doc.TmstFirma)
		}
		if len(doc.Referencias) != len(req.Referencias) {
			t.Errorf("%d: %d references, want %d", tipo, len(doc.Referencias), len(req.Referencias))
		}
		if tipo.IsExport() {
			if doc.Export == nil || doc.Export.TpoMoneda != "DOLAR USA" || doc.Export.ClausulaVenta != "5" || doc.Export.Marcas != req.ExportData.Marcas {
				t.Errorf("%d: export data %+v", tipo, doc.Export)
			}
		}
	}
}

// TestOracleEnvelopes packs the ten non-boleta documents into an EnvioDTE
// and both boletas into an EnvioBOLETA; each envelope must validate, its
// SetDTE signature must verify with xmlsec1 and every inner DTE signature
// must still verify where it sits.
func TestOracleEnvelopes(t *testing.T) {
	schemas := oracle.Schemas(t)
	oracle.Tool(t, "xmllint")
	oracle.Tool(t, "xmlsec1")
	docs, _ := emitAll(t)
	c := creds(t)
	var facturas, boletas [][]byte
	for _, tipo := range dte.Tipos() {
		if tipo.IsBoleta() {
			boletas = append(boletas, docs[tipo].XML)
		} else {
			facturas = append(facturas, docs[tipo].XML)
		}
	}
	dir := t.TempDir()
	certPEM := filepath.Join(dir, "signer.pem")
	if err := os.WriteFile(certPEM, c.Cert.CertificatePEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 2, 14, 5, 9, 0, dte.SantiagoLocation())
	for _, tc := range []struct {
		name, schema string
		dtes         [][]byte
		boleta       bool
	}{
		{"EnvioDTE", "EnvioDTE_v10.xsd", facturas, false},
		{"EnvioBOLETA", "EnvioBOLETA_v11.xsd", boletas, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: c.Emisor, At: at}, c.Cert, tc.dtes...)
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(dir, tc.name+".xml")
			if err := os.WriteFile(file, env, 0o600); err != nil {
				t.Fatal(err)
			}
			if msg, ok := runIn(t, schemas, "xmllint", "--noout", "--schema", tc.schema, file); !ok {
				t.Errorf("xmllint: %s", msg)
			}
			// The SetDTE signature is the root's last child.
			setSig := `/*/*[local-name()='Signature']`
			if msg, ok := xmlsecVerify(t, file, setSig, keyValueArgs()...); !ok {
				t.Errorf("xmlsec1 SetDTE (KeyValue): %s", msg)
			}
			if msg, ok := xmlsecVerify(t, file, setSig, x509Args(certPEM)...); !ok {
				t.Errorf("xmlsec1 SetDTE (X509): %s", msg)
			}
			for i := range tc.dtes {
				xp := fmt.Sprintf("(//*[local-name()='DTE']/*[local-name()='Signature'])[%d]", i+1)
				if msg, ok := xmlsecVerify(t, file, xp, keyValueArgs()...); !ok {
					t.Errorf("xmlsec1 DTE %d inside the envelope: %s", i+1, msg)
				}
			}
			// Each DTE is pasted byte for byte (declaration left out).
			for i, d := range tc.dtes {
				body := d[bytes.Index(d, []byte("<DTE ")):]
				if !bytes.Contains(env, body) {
					t.Errorf("DTE %d is not pasted verbatim", i+1)
				}
			}
			res, err := signer.Verify(env)
			if err != nil {
				t.Fatalf("signer.Verify: %v", err)
			}
			if len(res) != len(tc.dtes)+1 {
				t.Errorf("signer.Verify saw %d signatures, want %d", len(res), len(tc.dtes)+1)
			}
			for _, r := range res {
				if r.Standalone {
					t.Errorf("signature %s verified only standalone; it must verify inside the envelope", r.URI)
				}
			}
			parsed, err := dte.ParseEnvio(env)
			if err != nil {
				t.Fatal(err)
			}
			cr := parsed.Caratula
			if parsed.Boleta != tc.boleta || parsed.SetID != "SetDoc" || len(parsed.Documentos) != len(tc.dtes) ||
				cr.RutEmisor != dtetest.EmisorRUT || cr.RutEnvia != dtetest.SignerRUT || cr.RutReceptor != "60803000-K" ||
				cr.FchResol != c.Emisor.FechaResolucion || cr.NroResol != 0 || cr.TmstFirmaEnv != "2026-03-02T14:05:09" {
				t.Errorf("envelope read back as %+v / %+v", parsed, cr)
			}
			n := 0
			for _, s := range cr.SubTotDTE {
				n += s.Cantidad
				if s.Cantidad != 1 {
					t.Errorf("SubTotDTE %+v, want one of each type", s)
				}
			}
			if n != len(tc.dtes) {
				t.Errorf("SubTotDTE counts %d documents, want %d", n, len(tc.dtes))
			}
			for i, d := range parsed.Documentos {
				body := tc.dtes[i][bytes.Index(tc.dtes[i], []byte("<DTE ")):]
				if !bytes.Equal(d.Raw, bytes.TrimRight(body, "\n")) {
					t.Errorf("document %d: Raw is not the pasted DTE", i+1)
				}
			}
		})
	}
}

func TestBuildEnvioRefusals(t *testing.T) {
	docs, _ := emitAll(t)
	c := creds(t)
	opts := dte.EnvioOptions{Emisor: c.Emisor}
	f33, b39 := docs[dte.FacturaElectronica].XML, docs[dte.BoletaElectronica].XML
	if _, err := dte.BuildEnvio(opts, c.Cert, f33, b39); err == nil || !strings.Contains(err.Error(), "EnvioBOLETA") {
		t.Errorf("mixing a boleta with a factura: got %v", err)
	}
	if _, err := dte.BuildEnvio(opts, c.Cert, f33, f33); err == nil || !strings.Contains(err.Error(), "folio") {
		t.Errorf("the same document twice: got %v", err)
	}
	other := opts
	other.Emisor.Rut = "96790240-3"
	if _, err := dte.BuildEnvio(other, c.Cert, f33); err == nil {
		t.Error("a DTE of another emisor was accepted")
	}
	unsigned := f33[:bytes.Index(f33, []byte("<Signature"))]
	unsigned = append(unsigned[:len(unsigned):len(unsigned)], "</DTE>"...)
	if _, err := dte.BuildEnvio(opts, c.Cert, unsigned); err == nil || !strings.Contains(err.Error(), "not signed") {
		t.Errorf("an unsigned DTE: got %v", err)
	}
	if _, err := dte.BuildEnvio(opts, c.Cert); err == nil {
		t.Error("an empty envelope was accepted")
	}
}

func TestEmitErrors(t *testing.T) {
	c := creds(t)
	ctx := context.Background()
	reqs := dte.OracleRequests()

	// A request problem is a *ValidationError and takes no folio.
	em, err := c.Emitter(nil)
	if err != nil {
		t.Fatal(err)
	}
	folios := em.Folios.(*dte.MemoryFolios)
	bad := *reqs[33]
	bad.Receptor.RazonSocial = "Precio en € euros"
	before := folios.Next(33)
	_, err = em.Emit(ctx, &bad)
	var ve *dte.ValidationError
	if !errors.As(err, &ve) || ve.Details[0].Field != "receptor.razon_social" {
		t.Fatalf("non-Latin-1 name: got %v", err)
	}
	if folios.Next(33) != before {
		t.Error("a rejected request consumed a folio")
	}

	// A CAF for another company is refused at the CAF step.
	stranger, err := c.Authority.Issue(caftest.IssueRequest{RutEmisor: "96790240-3", RazonSocial: "Otra Empresa S.A.", Tipo: 33,
		Desde: 1, Hasta: 5, FechaAutorizacion: time.Now().AddDate(0, 0, -1)})
	if err != nil {
		t.Fatal(err)
	}
	em2, err := emitterWith(c, stranger, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = em2.Emit(ctx, reqs[33])
	var ee *dte.EmitError
	if !errors.As(err, &ee) || ee.Step != dte.StepCAF || ee.Folio != 1 {
		t.Fatalf("CAF of another emisor: got %v", err)
	}

	// The six-month rule: a factura CAF authorized seven months ago.
	old, err := c.Authority.Issue(caftest.IssueRequest{RutEmisor: dtetest.EmisorRUT, RazonSocial: dtetest.EmisorRazonSocial,
		Tipo: 33, Desde: 1, Hasta: 5, FechaAutorizacion: time.Now().AddDate(0, -7, 0)})
	if err != nil {
		t.Fatal(err)
	}
	em3, err := emitterWith(c, old, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err = em3.Emit(ctx, reqs[33]); !errors.Is(err, caf.ErrExpired) {
		t.Fatalf("expired CAF: got %v", err)
	}
	// ... which does not apply to a boleta.
	oldBoleta, err := c.Authority.Issue(caftest.IssueRequest{RutEmisor: dtetest.EmisorRUT, RazonSocial: dtetest.EmisorRazonSocial,
		Tipo: 39, Desde: 1, Hasta: 1, FechaAutorizacion: time.Now().AddDate(0, -7, 0)})
	if err != nil {
		t.Fatal(err)
	}
	em4, err := emitterWith(c, oldBoleta, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := em4.Emit(ctx, reqs[39]); err != nil {
		t.Fatalf("boleta with a seven-month-old CAF: %v", err)
	}
	// Its only folio is now used.
	if _, err := em4.Emit(ctx, reqs[39]); !errors.Is(err, dte.ErrFoliosExhausted) {
		t.Fatalf("exhausted CAF: got %v", err)
	}
	// An untrusted CAF authority is refused when TrustedKeys is set.
	em5, err := emitterWith(c, c.CAFFiles[33], caf.SIIKeys())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := em5.Emit(ctx, reqs[33]); !errors.Is(err, caf.ErrUntrustedIDK) && !errors.Is(err, caf.ErrSignature) {
		t.Fatalf("CAF signed by an untrusted authority: got %v", err)
	}
}

func emitterWith(c *dtetest.Creds, cafFile []byte, keys caf.TrustedKeys) (*dte.Emitter, error) {
	parsed, err := caf.Parse(cafFile)
	if err != nil {
		return nil, err
	}
	f, err := dte.NewMemoryFolios(parsed)
	if err != nil {
		return nil, err
	}
	return &dte.Emitter{Emisor: c.Emisor, Cert: c.Cert, Folios: f, TrustedKeys: keys}, nil
}

// escapeText escapes element text the way the SII's canonical form does.
func escapeText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// latin1 encodes Latin-1 text as ISO-8859-1 bytes.
func latin1(t *testing.T, s string) []byte {
	t.Helper()
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xFF {
			t.Fatalf("%q is not Latin-1", s)
		}
		out = append(out, byte(r))
	}
	return out
}

// benchRequest is a 10-line factura.
func benchRequest() *dte.EmitirDTERequest {
	req := &dte.EmitirDTERequest{TipoDTE: 33, Receptor: dte.Receptor{Rut: "77777777-7",
		RazonSocial: "Pérez & Hijos Ltda.", Giro: "Comercio", Direccion: "Av. Providencia 1234", Comuna: "Providencia", Ciudad: "Santiago"}}
	for i := 0; i < 10; i++ {
		req.Detalle = append(req.Detalle, dte.LineaDetalle{Nombre: fmt.Sprintf("Artículo Ñandú n° %d", i+1),
			Cantidad: dte.Decimal(fmt.Sprint(i + 1)), Unidad: "UN", Precio: "1990", DescuentoPct: "5"})
	}
	return req
}

// cycleFolios hands out the CAF's folios over and over, so a benchmark can
// run any number of iterations (uniqueness doesn't matter here).
type cycleFolios struct {
	c *caf.CAF
	n int64
}

func (f *cycleFolios) NextFolio(ctx context.Context, tipo dte.TipoDTE) (int64, *caf.CAF, error) {
	f.n++
	return f.c.Desde + (f.n-1)%(f.c.Hasta-f.c.Desde+1), f.c, nil
}

// BenchmarkEmit measures one 10-line factura end to end (validate, totals,
// XML, TED, XML-DSig signature). Compare with BenchmarkRSA2048Sign, the bare
// RSA-2048 PKCS#1 v1.5 signature with the same key by the same code (Go's,
// or OpenSSL's in the build with the tag openssl), run in the same process.
// It also reports emit/rsa: the ratio of the two, timed in alternating
// batches of 8 inside this benchmark (the RSA batches outside the
// benchmark's timer), so a busy machine skews both sides alike, and
// emit/rsa-cpu, the same ratio in process CPU time (steadier when other
// programs share the cores; not measured where cpuTime is not).
func BenchmarkEmit(b *testing.B) {
	c := creds(b)
	em := &dte.Emitter{Emisor: c.Emisor, Cert: c.Cert, Folios: &cycleFolios{c: c.CAFs[33]}}
	req := benchRequest()
	ctx := context.Background()
	if _, err := em.Emit(ctx, req); err != nil {
		b.Fatal(err)
	}
	digest := sha1.Sum([]byte("dtekit benchmark baseline"))
	key := smallrsa.Signer(c.Cert.Key)
	var emitTime, rsaTime, emitCPU, rsaCPU time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; {
		start, cpu := time.Now(), cpuTime(b)
		n := 0
		for ; n < 8 && i < b.N; n, i = n+1, i+1 {
			if _, err := em.Emit(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
		emitTime += time.Since(start)
		emitCPU += cpuTime(b) - cpu
		b.StopTimer()
		start, cpu = time.Now(), cpuTime(b)
		for j := 0; j < n; j++ {
			if _, err := key.Sign(nil, digest[:], crypto.SHA1); err != nil {
				b.Fatal(err)
			}
		}
		rsaTime += time.Since(start)
		rsaCPU += cpuTime(b) - cpu
		b.StartTimer()
	}
	if rsaTime > 0 {
		b.ReportMetric(float64(emitTime)/float64(rsaTime), "emit/rsa")
	}
	if rsaCPU > 0 {
		b.ReportMetric(float64(emitCPU)/float64(rsaCPU), "emit/rsa-cpu")
	}
}

// BenchmarkRSA2048Sign is the baseline: a PKCS#1 v1.5 signature with SHA-1
// over a 20-byte digest, with the signing certificate's 2048-bit key, by
// the code that signs in this build (smallrsa.Signer): crypto/rsa by
// default, OpenSSL's bare sign with the tag openssl.
func BenchmarkRSA2048Sign(b *testing.B) {
	c := creds(b)
	digest := sha1.Sum([]byte("dtekit benchmark baseline"))
	key := smallrsa.Signer(c.Cert.Key)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := key.Sign(nil, digest[:], crypto.SHA1); err != nil {
			b.Fatal(err)
		}
	}
}

func TestMemoryFolios(t *testing.T) {
	c := creds(t)
	issue := func(desde, hasta int64) *caf.CAF {
		file, err := c.Authority.Issue(caftest.IssueRequest{RutEmisor: dtetest.EmisorRUT, RazonSocial: dtetest.EmisorRazonSocial,
			Tipo: 61, Desde: desde, Hasta: hasta, FechaAutorizacion: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		parsed, err := caf.Parse(file)
		if err != nil {
			t.Fatal(err)
		}
		return parsed
	}
	second, first := issue(11, 12), issue(1, 2)
	m, err := dte.NewMemoryFolios(second, first)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var got []int64
	for {
		f, cf, err := m.NextFolio(ctx, 61)
		if errors.Is(err, dte.ErrFoliosExhausted) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !cf.Contains(f) {
			t.Errorf("folio %d returned with %s", f, cf)
		}
		got = append(got, f)
	}
	if fmt.Sprint(got) != "[1 2 11 12]" {
		t.Errorf("folios %v, want [1 2 11 12]", got)
	}
	if _, _, err := m.NextFolio(ctx, 33); !errors.Is(err, dte.ErrNoFolios) {
		t.Errorf("type without CAF: %v", err)
	}
	if err := m.SetNext(61, 12); err != nil || m.Next(61) != 12 {
		t.Errorf("SetNext(12): %v, Next = %d", err, m.Next(61))
	}
	if err := m.SetNext(61, 5); !errors.Is(err, caf.ErrFolioOutOfRange) {
		t.Errorf("SetNext(5) outside the CAFs: %v", err)
	}
	if _, err := dte.NewMemoryFolios(issue(1, 10), issue(5, 20)); err == nil {
		t.Error("overlapping CAFs were accepted")
	}

	// Concurrent callers never get the same folio.
	m2, err := dte.NewMemoryFolios(issue(1, 200))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[int64]bool{}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				f, _, err := m2.NextFolio(ctx, 61)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if seen[f] {
					t.Errorf("folio %d handed out twice", f)
				}
				seen[f] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != 200 {
		t.Errorf("%d distinct folios, want 200", len(seen))
	}
}

// TestOracleEdgeCases emits documents off the beaten path and checks them
// with xmllint and xmlsec1: a text-correction credit note whose line has no
// amounts, and a factura whose item name exceeds NmbItem's 80 characters.
func TestOracleEdgeCases(t *testing.T) {
	schemas := oracle.Schemas(t)
	oracle.Tool(t, "xmllint")
	oracle.Tool(t, "xmlsec1")
	c := creds(t)
	em, err := c.Emitter(nil)
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat(`Ñandú&<é"'`, 12) // 120 characters, no spaces
	recep := dte.OracleRequests()[33].Receptor
	cases := map[string]*dte.EmitirDTERequest{
		"text-correction": {TipoDTE: 61, Receptor: recep,
			Detalle: []dte.LineaDetalle{{Nombre: "Corrige giro del receptor", DscItem: `Donde dice "Comercio" debe decir "Comercio & <Servicios>"`}},
			Referencias: []dte.Referencia{{TipoDocRef: dte.RefTipo(33), FolioRef: 1001, FechaRef: "2026-01-15",
				CodigoRef: func() *int { n := 2; return &n }(), RazonRef: "Corrige texto"}}},
		"long-name": {TipoDTE: 33, Receptor: recep,
			Detalle: []dte.LineaDetalle{{Nombre: long, Cantidad: "1", Precio: "1000"}}},
	}
	dir := t.TempDir()
	for name, req := range cases {
		out, err := em.Emit(context.Background(), req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		file := filepath.Join(dir, name+".xml")
		if err := os.WriteFile(file, out.XML, 0o600); err != nil {
			t.Fatal(err)
		}
		if msg, ok := runIn(t, schemas, "xmllint", "--noout", "--schema", "DTE_v10.xsd", file); !ok {
			t.Errorf("%s: xmllint: %s", name, msg)
		}
		if msg, ok := xmlsecVerify(t, file, "", keyValueArgs()...); !ok {
			t.Errorf("%s: xmlsec1: %s", name, msg)
		}
		doc, err := dte.ParseDTE(out.XML)
		if err != nil {
			t.Fatal(err)
		}
		switch name {
		case "text-correction":
			l := doc.Detalle[0]
			if doc.Totales.MntTotal != "0" || l.Cantidad != "" || l.Precio != "" || l.MontoItem != "0" || !bytes.Contains(out.TED, []byte("<MNT>0</MNT>")) {
				t.Errorf("text correction: total %s, line %+v", doc.Totales.MntTotal, l)
			}
		case "long-name":
			// NmbItem holds the first 80 characters, DscItem the whole name.
			l := doc.Detalle[0]
			if l.Nombre != string([]rune(long)[:80]) || l.Descripcion != long {
				t.Errorf("long name: NmbItem %q, DscItem %q", l.Nombre, l.Descripcion)
			}
		}
	}
}

// TestFileFormIsCanonical checks the writer's design rule: apart from the
// namespace declarations C14N moves onto it, the signed element's bytes as
// written (read as ISO-8859-1) are already its canonical form — compact,
// explicit end tags, only &, < and > escaped.
func TestFileFormIsCanonical(t *testing.T) {
	docs, _ := emitAll(t)
	for _, tipo := range dte.Tipos() {
		out := docs[tipo]
		c14n, err := signer.Canonicalize(out.XML, out.ID)
		if err != nil {
			t.Fatal(err)
		}
		el := "Documento"
		switch {
		case tipo == 43:
			el = "Liquidacion"
		case tipo.IsExport():
			el = "Exportaciones"
		}
		start := bytes.Index(out.XML, []byte("<"+el+" "))
		end := bytes.Index(out.XML, []byte("</"+el+">")) + len("</"+el+">")
		body := out.XML[start:end]
		body = body[bytes.IndexByte(body, '>')+1:]
		want := `<` + el + ` xmlns="http://www.sii.cl/SiiDte" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" ID="` + out.ID + `">` + latin1ToUTF8(body)
		if string(c14n) != want {
			t.Errorf("%d: canonical form differs from the file form", tipo)
		}
	}
}

// TestSignatureDigestIsCanonical cross-checks the signer's fast path, which
// digests the signed element straight from the bytes the writer produced:
// every emitted DigestValue must be the SHA-1 of the element's canonical
// form as signer.Canonicalize (the full parse) renders it from the document
// without its Signature. xmlsec1 checks the same signatures in
// TestOracleEmitAllTypes.
func TestSignatureDigestIsCanonical(t *testing.T) {
	docs, _ := emitAll(t)
	for _, tipo := range dte.Tipos() {
		out := docs[tipo]
		s := bytes.Index(out.XML, []byte("<Signature "))
		e := bytes.Index(out.XML, []byte("</Signature>"))
		if s < 0 || e < s {
			t.Fatalf("%d: no Signature", tipo)
		}
		unsigned := append(append([]byte{}, out.XML[:s]...), out.XML[e+len("</Signature>"):]...)
		c14n, err := signer.Canonicalize(unsigned, out.ID)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha1.Sum(c14n)
		want := "<DigestValue>" + base64.StdEncoding.EncodeToString(sum[:]) + "</DigestValue>"
		if !bytes.Contains(out.XML[s:e], []byte(want)) {
			t.Errorf("%d: the DigestValue is not the SHA-1 of the canonical form (want %s)", tipo, want)
		}
	}
}

// TestPrepareStampDeterministic checks what a crash-recovering service relies
// on: the same request, instant, folio and CAF give the same signed bytes,
// and those are the bytes Emit gives for that folio at that instant.
func TestPrepareStampDeterministic(t *testing.T) {
	c := creds(t)
	at := c.CAFs[33].FechaAutorizacion.Add(50*time.Hour + 4*time.Minute + 5*time.Second)
	cf := c.CAFs[33]
	em := &dte.Emitter{Emisor: c.Emisor, Cert: c.Cert, Folios: &cycleFolios{c: cf}, Now: func() time.Time { return at }}
	req := benchRequest()
	want, err := em.Emit(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		p, err := em.Prepare(req, at)
		if err != nil {
			t.Fatal(err)
		}
		got, err := em.Stamp(p, want.Folio, cf)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.XML, want.XML) {
			t.Fatalf("run %d: Prepare+Stamp gave different bytes from Emit for folio %d", i, want.Folio)
		}
	}
	p, err := em.Prepare(req, at)
	if err != nil {
		t.Fatal(err)
	}
	var ee *dte.EmitError
	if _, err := em.Stamp(p, cf.Hasta+1, cf); !errors.As(err, &ee) || ee.Step != dte.StepCAF || ee.Folio != cf.Hasta+1 {
		t.Errorf("Stamp with a folio outside the CAF: %v, want an EmitError at step caf", err)
	}
	if _, err := em.Prepare(&dte.EmitirDTERequest{TipoDTE: 33}, at); err == nil {
		t.Error("Prepare accepted a request without receptor and detalle")
	}
}
