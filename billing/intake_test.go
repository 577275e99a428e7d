package billing

import (
	"bytes"
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/caf/caftest"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/signer/signertest"
)

var (
	credsOnce sync.Once
	credsVal  *dtetest.Creds
	credsErr  error
)

// creds returns the package's shared test credentials (one RSA-2048 key).
func creds(tb testing.TB) *dtetest.Creds {
	tb.Helper()
	credsOnce.Do(func() { credsVal, credsErr = dtetest.New(nil) })
	if credsErr != nil {
		tb.Fatalf("dtetest: %v", credsErr)
	}
	return credsVal
}

func testKeyring(t testing.TB) *Keyring {
	t.Helper()
	k, err := NewKeyring(bytes.Repeat([]byte{7}, KEKSize))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestKeyringSealOpen(t *testing.T) {
	t.Parallel()
	k := testKeyring(t)
	secret := []byte("-----BEGIN PRIVATE KEY----- not really")
	aad := secretAAD("certificado", "emp-1", "cert-1")
	a, err := k.Seal(secret, aad)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := k.Seal(secret, aad)
	if bytes.Equal(a, b) {
		t.Error("two seals of the same secret are equal: the nonce is not random")
	}
	if bytes.Contains(a, secret[:16]) {
		t.Error("the sealed blob holds the plaintext")
	}
	if len(a) != 1+12+len(secret)+16 {
		t.Errorf("sealed length %d, want version+nonce+plaintext+tag = %d", len(a), 1+12+len(secret)+16)
	}
	got, err := k.Open(a, aad)
	if err != nil || !bytes.Equal(got, secret) {
		t.Fatalf("Open = %q, %v", got, err)
	}
	if _, err := k.Open(a, secretAAD("certificado", "emp-2", "cert-1")); !errors.Is(err, ErrSealed) {
		t.Errorf("Open under another company's AAD: %v, want ErrSealed", err)
	}
	bad := bytes.Clone(a)
	bad[len(bad)-1] ^= 1
	if _, err := k.Open(bad, aad); !errors.Is(err, ErrSealed) {
		t.Errorf("Open of a damaged blob: %v, want ErrSealed", err)
	}
	other, _ := NewKeyring(bytes.Repeat([]byte{8}, KEKSize))
	if _, err := other.Open(a, aad); !errors.Is(err, ErrSealed) {
		t.Errorf("Open under another KEK: %v, want ErrSealed", err)
	}
	if _, err := NewKeyring(make([]byte, 16)); err == nil {
		t.Error("NewKeyring accepted a 16-byte key")
	}
}

func TestParseKEK(t *testing.T) {
	t.Parallel()
	hex := "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	b64 := "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
	for _, s := range []string{hex, b64, " " + hex + "\n"} {
		k, err := ParseKEK(s)
		if err != nil || k[0] != 0 || k[31] != 31 {
			t.Errorf("ParseKEK(%q) = %x, %v", s, k, err)
		}
	}
	for _, s := range []string{"", "abc", hex[:62], "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHg=="} {
		if _, err := ParseKEK(s); err == nil {
			t.Errorf("ParseKEK(%q) accepted", s)
		}
	}
}

func TestCheckCertificate(t *testing.T) {
	t.Parallel()
	c := creds(t)
	now := time.Now()
	cert, e := checkCertificate(c.P12, c.Password, dtetest.SignerRUT, now)
	if e != nil {
		t.Fatal(e)
	}
	if _, e := checkCertificate(c.P12Legacy, c.Password, "13.567.890-2", now); e != nil {
		t.Errorf("legacy PKCS#12 with a dotted RUT: %v", e)
	}
	pem, err := encodeCredential(cert)
	if err != nil {
		t.Fatal(err)
	}
	back, err := decodeCredential(pem)
	if err != nil || !back.Key.(*rsa.PrivateKey).Equal(c.Cert.Key) || !bytes.Equal(back.Leaf.Raw, c.Cert.Leaf.Raw) {
		t.Fatalf("decodeCredential: %v", err)
	}
	for _, tc := range []struct {
		name      string
		p12       []byte
		pass, rut string
		field     string
		code      dte.DetailCode
	}{
		{"empty file", nil, c.Password, dtetest.SignerRUT, "file", dte.CodeRequired},
		{"too large", make([]byte, MaxCertificateSize+1), c.Password, dtetest.SignerRUT, "file", fault.DetailCertTooLarge},
		{"garbage", []byte("not a pfx"), c.Password, dtetest.SignerRUT, "file", fault.DetailCertInvalid},
		{"wrong password", c.P12, "nope", dtetest.SignerRUT, "password", fault.DetailCertPassword},
		{"no password", c.P12, "", dtetest.SignerRUT, "password", dte.CodeRequired},
		{"bad rut", c.P12, c.Password, "13567890-3", "rut_firmante", dte.CodeInvalidRUT},
		{"other rut", c.P12, c.Password, dtetest.EmisorRUT, "rut_firmante", fault.DetailRutMismatch},
	} {
		_, e := checkCertificate(tc.p12, tc.pass, tc.rut, now)
		if e == nil || e.Kind != fault.KindValidation || len(e.Details) != 1 || e.Details[0].Field != tc.field || e.Details[0].Code != tc.code {
			t.Errorf("%s: got %v, want validation on %s (%s)", tc.name, e, tc.field, tc.code)
		}
	}
	if _, e := checkCertificate(c.P12, c.Password, dtetest.SignerRUT, now.AddDate(3, 0, 0)); e == nil || e.Details[0].Code != fault.DetailCertExpired {
		t.Errorf("expired certificate: %v", e)
	}
	// A key under 2048 bits is refused at upload (issue 20, point 11):
	// the SII's certificates are at least 2048-bit RSA.
	weak, err := signertest.NewCertificate(nil, signertest.CertOptions{RUT: dtetest.SignerRUT, Bits: 1024})
	if err != nil {
		t.Fatal(err)
	}
	weakP12, err := signertest.EncodePKCS12(weak, "pw", signertest.Modern)
	if err != nil {
		t.Fatal(err)
	}
	if _, e := checkCertificate(weakP12, "pw", dtetest.SignerRUT, now); e == nil || e.Details[0].Field != "file" || e.Details[0].Code != fault.DetailCertWeakKey {
		t.Errorf("1024-bit certificate: %v, want a validation error on file (%s)", e, fault.DetailCertWeakKey)
	}
}

func TestCheckCAF(t *testing.T) {
	t.Parallel()
	c := creds(t)
	now := time.Now()
	emp := &api.Empresa{Rut: dtetest.EmisorRUT, Ambiente: dte.AmbienteCertificacion}
	in := api.CAFInput{TipoDTE: 33, CAFXML: string(c.CAFFiles[33])}
	got, e := checkCAF(in, emp, c.Keys, now)
	if e != nil {
		t.Fatal(e)
	}
	if got.Desde != 1 || got.Hasta != 1000 || got.Tipo != 33 {
		t.Errorf("parsed %s", got)
	}
	other, err := c.Authority.Issue(caftest.IssueRequest{RutEmisor: "11111111-1", RazonSocial: "Otra", Tipo: 33,
		Desde: 1, Hasta: 10, FechaAutorizacion: now.AddDate(0, 0, -1)})
	if err != nil {
		t.Fatal(err)
	}
	old, err := c.Authority.Issue(caftest.IssueRequest{RutEmisor: dtetest.EmisorRUT, RazonSocial: "X", Tipo: 33,
		Desde: 1, Hasta: 10, FechaAutorizacion: now.AddDate(-1, 0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	prod := &api.Empresa{Rut: dtetest.EmisorRUT, Ambiente: dte.AmbienteProduccion}
	for _, tc := range []struct {
		name  string
		in    api.CAFInput
		emp   *api.Empresa
		keys  caf.TrustedKeys
		field string
		code  dte.DetailCode
	}{
		{"missing", api.CAFInput{TipoDTE: 33}, emp, c.Keys, "caf_xml", dte.CodeRequired},
		{"garbage", api.CAFInput{TipoDTE: 33, CAFXML: "<AUTORIZACION/>"}, emp, c.Keys, "caf_xml", fault.DetailInvalidCAF},
		{"bad tipo", api.CAFInput{TipoDTE: 35, CAFXML: in.CAFXML}, emp, c.Keys, "tipo_dte", dte.CodeInvalidValue},
		{"other tipo", api.CAFInput{TipoDTE: 34, CAFXML: in.CAFXML}, emp, c.Keys, "tipo_dte", fault.DetailTipoMismatch},
		{"untrusted", in, emp, caf.SIIKeys(), "caf_xml", fault.DetailCAFSignature},
		{"production company", in, prod, c.Keys, "caf_xml", fault.DetailAmbienteMismatch},
		{"other rut", api.CAFInput{TipoDTE: 33, CAFXML: string(other)}, emp, c.Keys, "caf_xml", fault.DetailRutMismatch},
		{"expired", api.CAFInput{TipoDTE: 33, CAFXML: string(old)}, emp, c.Keys, "caf_xml", fault.DetailCAFExpired},
	} {
		_, e := checkCAF(tc.in, tc.emp, tc.keys, now)
		if e == nil || e.Kind != fault.KindValidation || e.Details[0].Field != tc.field || e.Details[0].Code != tc.code {
			t.Errorf("%s: got %v, want validation on %s (%s)", tc.name, e, tc.field, tc.code)
		}
	}
}

func TestDecodeAndHash(t *testing.T) {
	t.Parallel()
	a := []byte(`{"tipo_dte":33,"receptor":{"rut":"77777777-7","razon_social":"X"},"detalle":[{"nombre":"a","cantidad":1,"precio":100}],"metadata":{"b":1,"a":2}}`)
	b := []byte(`{ "metadata":{"a":2,"b":1}, "detalle":[{"precio":100,"cantidad":1,"nombre":"a"}],"receptor":{"razon_social":"X","rut":"77777777-7"},"tipo_dte":33 }`)
	c := []byte(`{"tipo_dte":33,"receptor":{"rut":"77777777-7","razon_social":"X"},"detalle":[{"nombre":"a","cantidad":2,"precio":100}]}`)
	hash := func(body []byte) string {
		t.Helper()
		req, e := decodeBody(body)
		if e != nil {
			t.Fatal(e)
		}
		_, h, err := requestHash(req)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	if hash(a) != hash(b) {
		t.Error("the same request written differently hashes differently")
	}
	if hash(a) == hash(c) {
		t.Error("different requests hash alike")
	}
	for body, field := range map[string]string{
		`{"tipo_dte":33,"bogus":1}`: "bogus",
		`{"tipo_dte":"33"}`:         "tipo_dte",
		`{"tipo_dte":33} {}`:        "",
		``:                          "",
		`[1]`:                       "",
	} {
		_, e := decodeBody([]byte(body))
		if e == nil || e.Details[0].Field != field {
			t.Errorf("decode %q: %v, want an error on %s", body, e, field)
		}
	}
	if _, e := ParseIdempotencyKey("not-a-uuid"); e == nil {
		t.Error("accepted a non-UUID idempotency key")
	}
	if k, e := ParseIdempotencyKey("{0B6F3C1E-5D7A-4C8E-9F10-2A3B4C5D6E7F}"); e != nil || k != "0b6f3c1e-5d7a-4c8e-9f10-2a3b4c5d6e7f" {
		t.Error(e)
	}
}

// decodeBody reads a request body strictly, as an HTTP layer does.
func decodeBody(body []byte) (*dte.EmitirDTERequest, *fault.Error) {
	req, err := dte.DecodeRequest(bytes.NewReader(body))
	if err != nil {
		return nil, fault.As(err)
	}
	return req, nil
}

// TestRawCAFWithEñe: a CAF pasted as text (its ISO-8859-1 bytes read as
// characters, so the JSON string holds them in UTF-8 under the file's
// ISO-8859-1 declaration) whose razón social has Ñ registers, like its
// base64 form (issue 20, point 11).
func TestRawCAFWithEñe(t *testing.T) {
	t.Parallel()
	c := creds(t)
	file, err := c.Authority.Issue(caftest.IssueRequest{RutEmisor: dtetest.EmisorRUT, RazonSocial: "Comercial Ñandú Ltda.",
		Tipo: 33, Desde: 1, Hasta: 10, FechaAutorizacion: time.Now().AddDate(0, 0, -1)})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(file, []byte{0xD1}) {
		t.Fatal("the issued CAF does not hold Ñ in ISO-8859-1")
	}
	text := make([]rune, 0, len(file)) // ISO-8859-1 byte b is the character U+00b
	for _, b := range file {
		text = append(text, rune(b))
	}
	emp := &api.Empresa{Rut: dtetest.EmisorRUT, Ambiente: dte.AmbienteCertificacion}
	for name, in := range map[string]string{"raw text": string(text), "base64": base64.StdEncoding.EncodeToString(file)} {
		got, e := checkCAF(api.CAFInput{TipoDTE: 33, CAFXML: in}, emp, c.Keys, time.Now())
		if e != nil {
			t.Errorf("%s: %v", name, e)
			continue
		}
		if got.Desde != 1 || got.Hasta != 10 {
			t.Errorf("%s: parsed %s", name, got)
		}
	}
}
