package caf_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/caf/caftest"
	"github.com/dtekit/dtekit/internal/chile"
	"github.com/dtekit/dtekit/internal/oracle"
	"github.com/dtekit/dtekit/internal/smallrsa"
	"github.com/dtekit/dtekit/internal/xmlflat"
)

// The 12 document types the SII authorizes electronically.
var allTipos = []int{33, 34, 39, 41, 43, 46, 52, 56, 61, 110, 111, 112}

func newAuthority(t testing.TB) *caftest.Authority {
	t.Helper()
	a, err := caftest.NewAuthority(nil, caf.IDKCertificacion)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func issue(t testing.TB, a *caftest.Authority, req caftest.IssueRequest) []byte {
	t.Helper()
	b, err := a.Issue(req)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sampleRequest() caftest.IssueRequest {
	return caftest.IssueRequest{
		RutEmisor:         "76192083-9",
		RazonSocial:       "COMERCIAL ÑANDÚ & CÍA LTDA",
		Tipo:              33,
		Desde:             1,
		Hasta:             100,
		FechaAutorizacion: time.Date(2024, 1, 15, 0, 0, 0, 0, time.UTC),
	}
}

func mustParse(t testing.TB, data []byte) *caf.CAF {
	t.Helper()
	c, err := caf.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// sampleCAFElement returns the CAF element of the SII's official sample DTE,
// as it sits in the file (indented with tabs, CRLF line ends).
func sampleCAFElement(t testing.TB) []byte {
	t.Helper()
	doc, err := os.ReadFile(oracle.SharedFile(t, "sii", "samples", "F60T33-ejemplo-oficial-SII.xml"))
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(doc, []byte("<CAF version"))
	j := bytes.Index(doc, []byte("</CAF>"))
	if i < 0 || j < i {
		t.Fatal("sample has no CAF element")
	}
	return doc[i : j+len("</CAF>")]
}

// vectorBlocks returns the code blocks of ../shared/sii/vectors/ted-instructivo.md:
// the signed DD, the CAF private key and the FRMT.
func vectorBlocks(t testing.TB) []string {
	t.Helper()
	b, err := os.ReadFile(oracle.SharedFile(t, "sii", "vectors", "ted-instructivo.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile("(?s)```\n(.*?)\n```").FindAllStringSubmatch(string(b), -1) {
		out = append(out, m[1])
	}
	if len(out) < 3 {
		t.Fatalf("ted-instructivo.md: %d code blocks, want 3", len(out))
	}
	return out
}

func TestSIIKeysMatchShared(t *testing.T) {
	keys := caf.SIIKeys()
	for idk, file := range map[int]string{100: "sii-idk100-certificacion.pub.pem", 300: "sii-idk300-produccion.pub.pem"} {
		data, err := os.ReadFile(oracle.SharedFile(t, "sii", "keys", file))
		if err != nil {
			t.Fatal(err)
		}
		want, err := smallrsa.ParsePublicKeyPEM(data)
		if err != nil {
			t.Fatal(err)
		}
		if len(keys[idk]) != 1 || !smallrsa.EqualPublicKeys(keys[idk][0], want) {
			t.Errorf("embedded IDK %d key differs from %s", idk, file)
		}
	}
	if len(keys) != 2 {
		t.Errorf("SIIKeys has %d IDKs, want 2", len(keys))
	}
	// Each call returns a fresh map: changing one must not change another.
	keys[100] = nil
	if len(caf.SIIKeys()[100]) != 1 {
		t.Error("SIIKeys shares state between calls")
	}
}

func TestOfficialSampleCAF(t *testing.T) {
	c := mustParse(t, sampleCAFElement(t))
	if c.RutEmisor != "97975000-5" || c.RazonSocial != "RUT DE PRUEBA" || c.Tipo != 33 ||
		c.Desde != 1 || c.Hasta != 200 || c.FA != "2003-09-04" || c.IDK != 100 {
		t.Errorf("fields: %+v", c)
	}
	if c.Ambiente() != caf.AmbienteCertificacion {
		t.Errorf("Ambiente() = %q", c.Ambiente())
	}
	if c.PublicKey.N.BitLen() != 512 || c.PublicKey.E != 3 {
		t.Errorf("RSAPK: %d bits, e=%d", c.PublicKey.N.BitLen(), c.PublicKey.E)
	}
	if err := c.Verify(caf.SIIKeys()); err != nil {
		t.Fatalf("FRMA of the SII's sample with the IDK 100 key: %v", err)
	}
	// The flattened element must be exactly the copy inside the SII manual's
	// signed DD (same CAF).
	dd := vectorBlocks(t)[0]
	want := dd[strings.Index(dd, "<CAF ") : strings.Index(dd, "</CAF>")+len("</CAF>")]
	if c.ElementXML() != want {
		t.Errorf("ElementXML\n got %s\nwant %s", c.ElementXML(), want)
	}
	if !strings.HasPrefix(want, "<CAF version=\"1.0\">"+c.DAXML()) {
		t.Errorf("DAXML %s is not the DA of the manual's copy", c.DAXML())
	}
	if err := c.CheckKeyPair(); !errors.Is(err, caf.ErrNoPrivateKey) {
		t.Errorf("CheckKeyPair on a bare CAF element: %v, want ErrNoPrivateKey", err)
	}
	// Wrong key for IDK 100 and no key for IDK 100.
	wrong := caf.TrustedKeys{100: caf.SIIKeys()[300]}
	if err := c.Verify(wrong); !errors.Is(err, caf.ErrSignature) {
		t.Errorf("with the IDK 300 key filed under 100: %v, want ErrSignature", err)
	}
	if err := c.Verify(caf.TrustedKeys{300: caf.SIIKeys()[300]}); !errors.Is(err, caf.ErrUntrustedIDK) {
		t.Errorf("without an IDK 100 key: %v, want ErrUntrustedIDK", err)
	}
	if err := c.Verify(nil); !errors.Is(err, caf.ErrUntrustedIDK) {
		t.Errorf("nil keys: %v, want ErrUntrustedIDK", err)
	}
	// Parsing the flattened copy gives the same CAF.
	again := mustParse(t, []byte(c.ElementXML()))
	if again.ElementXML() != c.ElementXML() || again.Verify(caf.SIIKeys()) != nil {
		t.Error("re-parsing the flattened element changed it")
	}
}

// TestManualCAFWithKey wraps the manual's CAF and its RSASK in an
// AUTORIZACION file, as the SII delivers it, without a declaration.
func TestManualCAFWithKey(t *testing.T) {
	blocks := vectorBlocks(t)
	elem := sampleCAFElement(t)
	file := "<AUTORIZACION>\r\n" + string(elem) + "\r\n<RSASK>" + blocks[1] + "\r\n</RSASK>\r\n</AUTORIZACION>\r\n"
	c := mustParse(t, []byte(file))
	if c.PrivateKey == nil {
		t.Fatal("RSASK not read")
	}
	if err := c.Validate(time.Date(2003, 10, 13, 9, 33, 20, 0, time.UTC), caf.SIIKeys()); err != nil {
		t.Fatalf("Validate on the manual's CAF: %v", err)
	}
	if err := c.Validate(time.Date(2004, 3, 4, 12, 0, 0, 0, time.UTC), caf.SIIKeys()); !errors.Is(err, caf.ErrExpired) {
		t.Fatalf("six months after 2003-09-04: %v, want ErrExpired", err)
	}
	// Someone else's key.
	other, err := smallrsa.GenerateKey(nil, 512, 3)
	if err != nil {
		t.Fatal(err)
	}
	otherPEM, _ := smallrsa.MarshalPrivateKeyPEM(other)
	bad := strings.Replace(file, blocks[1], string(otherPEM), 1)
	if err := mustParse(t, []byte(bad)).CheckKeyPair(); !errors.Is(err, caf.ErrKeyMismatch) {
		t.Fatalf("foreign RSASK: %v, want ErrKeyMismatch", err)
	}
}

func TestIssueAllTypes(t *testing.T) {
	a := newAuthority(t)
	for _, tipo := range allTipos {
		req := sampleRequest()
		req.Tipo = tipo
		req.Desde, req.Hasta = int64(tipo)*10, int64(tipo)*10+49
		c := mustParse(t, issue(t, a, req))
		if c.Tipo != tipo || c.Desde != req.Desde || c.Hasta != req.Hasta || c.RutEmisor != req.RutEmisor ||
			c.RazonSocial != req.RazonSocial || c.FA != "2024-01-15" || c.IDK != 100 {
			t.Errorf("tipo %d: fields %v / %q", tipo, c, c.RazonSocial)
		}
		if err := c.Validate(time.Date(2024, 2, 1, 12, 0, 0, 0, time.UTC), a.Keys()); err != nil {
			t.Errorf("tipo %d: %v", tipo, err)
		}
		if c.PrivateKey.N.BitLen() != 512 || c.PrivateKey.E != 3 {
			t.Errorf("tipo %d: CAF key %d bits e=%d, want 512 e=3", tipo, c.PrivateKey.N.BitLen(), c.PrivateKey.E)
		}
		// Real SII keys do not accept a test authority's CAF.
		if err := c.Verify(caf.SIIKeys()); !errors.Is(err, caf.ErrSignature) {
			t.Errorf("tipo %d: verified with the real SII keys: %v", tipo, err)
		}
	}
}

// TestIssueWithOracles checks an issued CAF with independent tools:
// xmllint reads it as well-formed ISO-8859-1 XML, openssl verifies the FRMA
// over the DA (flattened here by deleting line breaks), accepts RSASK and
// finds in it the modulus written in RSAPK.
func TestIssueWithOracles(t *testing.T) {
	oracle.Tool(t, "openssl")
	oracle.Tool(t, "xmllint")
	a := newAuthority(t)
	file := issue(t, a, sampleRequest())
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cafFile := write("caf.xml", file)
	utf8Doc := oracle.Run(t, "xmllint", "--encode", "UTF-8", cafFile)
	if !bytes.Contains(utf8Doc, []byte("<RS>COMERCIAL ÑANDÚ &amp; CÍA LTDA</RS>")) {
		t.Fatalf("xmllint does not read RS as ISO-8859-1:\n%s", utf8Doc)
	}
	s := string(file)
	da := strings.ReplaceAll(s[strings.Index(s, "<DA>"):strings.Index(s, "</DA>")+5], "\n", "")
	frma := regexp.MustCompile(`<FRMA algoritmo="SHA1withRSA">([^<]+)</FRMA>`).FindStringSubmatch(s)[1]
	sig, err := base64.StdEncoding.DecodeString(frma)
	if err != nil {
		t.Fatal(err)
	}
	pubPEM, err := a.PublicKeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	out := oracle.Run(t, "openssl", "dgst", "-sha1", "-verify", write("auth.pem", pubPEM), "-signature", write("frma.bin", sig), write("da.bin", []byte(da)))
	if !bytes.Contains(out, []byte("Verified OK")) {
		t.Fatalf("openssl: %s", out)
	}
	rsask := s[strings.Index(s, "<RSASK>")+7 : strings.Index(s, "</RSASK>")]
	keyFile := write("rsask.pem", []byte(rsask))
	if out := oracle.Run(t, "openssl", "rsa", "-check", "-noout", "-in", keyFile); !bytes.Contains(out, []byte("RSA key ok")) {
		t.Fatalf("openssl rsa -check: %s", out)
	}
	modOut := strings.TrimSpace(string(oracle.Run(t, "openssl", "rsa", "-noout", "-modulus", "-in", keyFile)))
	m := regexp.MustCompile(`<M>([^<]+)</M>`).FindStringSubmatch(s)[1]
	mb, _ := base64.StdEncoding.DecodeString(m)
	if want := "Modulus=" + strings.ToUpper(fmt.Sprintf("%x", mb)); modOut != want {
		t.Fatalf("RSASK modulus %s, RSAPK %s", modOut, want)
	}
	if e := regexp.MustCompile(`<E>([^<]+)</E>`).FindStringSubmatch(s)[1]; e != "Aw==" {
		t.Errorf("RSAPK/E = %s, want Aw== (3)", e)
	}
	pubFile := filepath.Join(dir, "rsapub.pem")
	oracle.Run(t, "openssl", "rsa", "-in", keyFile, "-pubout", "-out", pubFile)
	pubOut, err := os.ReadFile(pubFile)
	if err != nil {
		t.Fatal(err)
	}
	rsapubk := s[strings.Index(s, "<RSAPUBK>")+9 : strings.Index(s, "</RSAPUBK>")]
	if string(pubOut) != rsapubk {
		t.Errorf("RSAPUBK differs from openssl's public key of RSASK:\n%q\n%q", rsapubk, pubOut)
	}
}

// TestFlattenAgainstXmllint compares ElementXML with libxml2's canonical
// form of the same file after dropping blank text nodes.
func TestFlattenAgainstXmllint(t *testing.T) {
	oracle.Tool(t, "xmllint")
	a := newAuthority(t)
	req := sampleRequest()
	req.RazonSocial = `O'HIGGINS "EL <MEJOR>" & CÍA`
	file := issue(t, a, req)
	p := filepath.Join(t.TempDir(), "caf.xml")
	if err := os.WriteFile(p, file, 0o600); err != nil {
		t.Fatal(err)
	}
	noblanks := oracle.Run(t, "xmllint", "--noblanks", p)
	cmd := oracle.Command(t, "xmllint", "--c14n", "-")
	cmd.Stdin = bytes.NewReader(noblanks)
	c14n, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	s := string(c14n)
	want := s[strings.Index(s, "<CAF ") : strings.Index(s, "</CAF>")+6]
	c := mustParse(t, file)
	if c.ElementXML() != want {
		t.Fatalf("ElementXML\n got %s\nwant %s (xmllint --c14n)", c.ElementXML(), want)
	}
	if c.RazonSocial != req.RazonSocial {
		t.Errorf("RazonSocial %q", c.RazonSocial)
	}
	if err := c.Verify(a.Keys()); err != nil {
		t.Fatal(err)
	}
}

// TestEncodings reads the same CAF in every form a user may upload.
func TestEncodings(t *testing.T) {
	a := newAuthority(t)
	latin1 := issue(t, a, sampleRequest())
	if !bytes.Contains(latin1, []byte("\xd1AND\xda")) {
		t.Fatal("issued file is not ISO-8859-1")
	}
	decl := []byte(`<?xml version="1.0" encoding="ISO-8859-1"?>`)
	noDecl := bytes.Replace(latin1, decl, nil, 1)
	plainDecl := bytes.Replace(latin1, decl, []byte(`<?xml version="1.0"?>`), 1)
	utf8Doc := []byte(strings.Replace(xmlflat.Latin1ToString(latin1), "ISO-8859-1", "UTF-8", 1))
	utf8NoDecl := bytes.Replace(utf8Doc, []byte(`<?xml version="1.0" encoding="UTF-8"?>`), nil, 1)
	crlf := bytes.ReplaceAll(noDecl, []byte("\n"), []byte("\r\n"))
	lowerDecl := bytes.Replace(latin1, []byte("ISO-8859-1"), []byte("iso-8859-1"), 1)
	singleQuote := bytes.Replace(latin1, []byte(`encoding="ISO-8859-1"`), []byte(`encoding='latin1'`), 1)
	forms := map[string][]byte{
		"latin1 with declaration":              latin1,
		"latin1 without declaration":           noDecl,
		"latin1, declaration without encoding": plainDecl,
		"latin1 CRLF":                          crlf,
		"lower-case label":                     lowerDecl,
		"label latin1":                         singleQuote,
		"utf-8 with declaration":               utf8Doc,
		"utf-8 without declaration":            utf8NoDecl,
		"utf-8 with BOM":                       append([]byte{0xef, 0xbb, 0xbf}, utf8NoDecl...),
	}
	for name, doc := range maps(forms) {
		forms[name+", base64"] = []byte(base64.StdEncoding.EncodeToString(doc))
		forms[name+", base64 wrapped"] = wrap76(base64.StdEncoding.EncodeToString(doc))
	}
	forms["base64 without padding"] = []byte(base64.RawStdEncoding.EncodeToString(noDecl))
	var first string
	for name, doc := range forms {
		c, err := caf.Parse(doc)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if c.RazonSocial != "COMERCIAL ÑANDÚ & CÍA LTDA" {
			t.Errorf("%s: RazonSocial %q", name, c.RazonSocial)
		}
		if err := c.Validate(time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), a.Keys()); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if first == "" {
			first = c.ElementXML()
		} else if c.ElementXML() != first {
			t.Errorf("%s: ElementXML differs", name)
		}
	}
}

func maps(m map[string][]byte) map[string][]byte {
	out := make(map[string][]byte, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func wrap76(s string) []byte {
	var b bytes.Buffer
	for len(s) > 76 {
		b.WriteString(s[:76] + "\r\n")
		s = s[76:]
	}
	b.WriteString(s + "\n")
	return b.Bytes()
}

// TestRawFallback: a DA whose text the signer escaped differently from the
// canonical form (&apos;) still verifies, while the copy for TEDs is
// canonical.
func TestRawFallback(t *testing.T) {
	authKey, err := smallrsa.GenerateKey(nil, 512, 65537)
	if err != nil {
		t.Fatal(err)
	}
	authPEM, err := smallrsa.MarshalPrivateKeyPEM(authKey)
	if err != nil {
		t.Fatal(err)
	}
	a, err := caftest.LoadAuthority(nil, authPEM, caf.IDKCertificacion)
	if err != nil {
		t.Fatal(err)
	}
	key, err := smallrsa.GenerateKey(nil, 512, 3)
	if err != nil {
		t.Fatal(err)
	}
	m := base64.StdEncoding.EncodeToString(key.N.Bytes())
	da := "<DA><RE>76192083-9</RE><RS>O&apos;HIGGINS SPA</RS><TD>39</TD><RNG><D>1</D><H>9</H></RNG><FA>2024-01-15</FA><RSAPK><M>" + m + "</M><E>Aw==</E></RSAPK><IDK>100</IDK></DA>"
	sig, err := smallrsa.SignSHA1(authKey, []byte(da))
	if err != nil {
		t.Fatal(err)
	}
	doc := "<CAF version=\"1.0\">\n  " + da + "\n  <FRMA algoritmo=\"SHA1withRSA\">" + base64.StdEncoding.EncodeToString(sig) + "</FRMA>\n</CAF>"
	c := mustParse(t, []byte(doc))
	if c.RazonSocial != "O'HIGGINS SPA" {
		t.Errorf("RazonSocial %q", c.RazonSocial)
	}
	if err := c.Verify(a.Keys()); err != nil {
		t.Fatalf("raw-form fallback: %v", err)
	}
	if !strings.Contains(c.ElementXML(), "<RS>O'HIGGINS SPA</RS>") {
		t.Errorf("ElementXML is not canonical: %s", c.ElementXML())
	}
}

func TestUsability(t *testing.T) {
	a := newAuthority(t)
	chileTZ := chile.Location()
	mkCAF := func(tipo int, fa time.Time) *caf.CAF {
		req := sampleRequest()
		req.Tipo, req.FechaAutorizacion = tipo, fa
		return mustParse(t, issue(t, a, req))
	}
	jan15 := time.Date(2024, 1, 15, 0, 0, 0, 0, time.UTC)
	c33 := mkCAF(33, jan15)
	if exp, ok := c33.ExpiresAt(); !ok || exp.Format(time.DateOnly) != "2024-07-15" {
		t.Errorf("ExpiresAt = %v, %v; want 2024-07-15", exp, ok)
	}
	cases := []struct {
		name string
		c    *caf.CAF
		at   time.Time
		want error
	}{
		{"FA day", c33, time.Date(2024, 1, 15, 0, 0, 0, 0, chileTZ), nil},
		{"day before FA", c33, time.Date(2024, 1, 14, 23, 59, 59, 0, chileTZ), caf.ErrNotYetValid},
		{"last usable day", c33, time.Date(2024, 7, 14, 23, 59, 59, 0, chileTZ), nil},
		{"six months later", c33, time.Date(2024, 7, 15, 0, 0, 0, 0, chileTZ), caf.ErrExpired},
		// 03:30 UTC on 15 July is 23:30 on 14 July in Chile (UTC-4 in winter).
		{"UTC instant still the 14th in Chile", c33, time.Date(2024, 7, 15, 3, 30, 0, 0, time.UTC), nil},
		{"UTC instant already the 15th in Chile", c33, time.Date(2024, 7, 15, 4, 30, 0, 0, time.UTC), caf.ErrExpired},
		{"boleta 39 never expires", mkCAF(39, jan15), time.Date(2030, 1, 1, 0, 0, 0, 0, chileTZ), nil},
		{"guía 52 never expires", mkCAF(52, jan15), time.Date(2030, 1, 1, 0, 0, 0, 0, chileTZ), nil},
		{"NC 61 expires", mkCAF(61, jan15), time.Date(2024, 8, 1, 0, 0, 0, 0, chileTZ), caf.ErrExpired},
		{"ND 56 expires", mkCAF(56, jan15), time.Date(2024, 8, 1, 0, 0, 0, 0, chileTZ), caf.ErrExpired},
		{"43 expires", mkCAF(43, jan15), time.Date(2024, 8, 1, 0, 0, 0, 0, chileTZ), caf.ErrExpired},
		{"46 expires", mkCAF(46, jan15), time.Date(2024, 8, 1, 0, 0, 0, 0, chileTZ), caf.ErrExpired},
		{"34 does not", mkCAF(34, jan15), time.Date(2024, 8, 1, 0, 0, 0, 0, chileTZ), nil},
		{"Aug 31 + 6 months: Feb 27 usable", mkCAF(33, time.Date(2024, 8, 31, 0, 0, 0, 0, time.UTC)), time.Date(2025, 2, 27, 12, 0, 0, 0, chileTZ), nil},
		{"Aug 31 + 6 months: Feb 28 expired", mkCAF(33, time.Date(2024, 8, 31, 0, 0, 0, 0, time.UTC)), time.Date(2025, 2, 28, 12, 0, 0, 0, chileTZ), caf.ErrExpired},
	}
	for _, tc := range cases {
		err := tc.c.CheckUsable(tc.at)
		if (tc.want == nil && err != nil) || (tc.want != nil && !errors.Is(err, tc.want)) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
	}
	if _, ok := mkCAF(39, jan15).ExpiresAt(); ok {
		t.Error("a boleta CAF has an expiry")
	}
}

func TestFolios(t *testing.T) {
	a := newAuthority(t)
	req := sampleRequest()
	req.Desde, req.Hasta = 101, 200
	c := mustParse(t, issue(t, a, req))
	for folio, want := range map[int64]bool{100: false, 101: true, 150: true, 200: true, 201: false, 0: false, -1: false} {
		if c.Contains(folio) != want {
			t.Errorf("Contains(%d) = %v", folio, !want)
		}
		err := c.CheckFolio(folio)
		if want && err != nil || !want && !errors.Is(err, caf.ErrFolioOutOfRange) {
			t.Errorf("CheckFolio(%d) = %v", folio, err)
		}
	}
}

func TestAuthority(t *testing.T) {
	a := newAuthority(t)
	if a.IDK() != 100 || a.PublicKey().N.BitLen() != 512 || a.PublicKey().E != 65537 {
		t.Errorf("authority: IDK %d, %d bits, e=%d", a.IDK(), a.PublicKey().N.BitLen(), a.PublicKey().E)
	}
	pemKey, err := a.PrivateKeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	b, err := caftest.LoadAuthority(nil, pemKey, 300)
	if err != nil {
		t.Fatal(err)
	}
	c := mustParse(t, issue(t, b, sampleRequest()))
	if c.IDK != 300 || c.Ambiente() != caf.AmbienteProduccion {
		t.Errorf("IDK %d, ambiente %q", c.IDK, c.Ambiente())
	}
	// Same key, other IDK: a's trust list (IDK 100) does not cover it.
	if err := c.Verify(a.Keys()); !errors.Is(err, caf.ErrSignature) {
		t.Errorf("IDK 300 CAF against a's keys: %v, want ErrSignature (SII IDK 300 key only)", err)
	}
	if err := c.Verify(b.Keys()); err != nil {
		t.Error(err)
	}
	odd, err := caftest.NewAuthority(nil, 777)
	if err != nil {
		t.Fatal(err)
	}
	oc := mustParse(t, issue(t, odd, sampleRequest()))
	if oc.Ambiente() != "" {
		t.Errorf("IDK 777 ambiente %q", oc.Ambiente())
	}
	if err := oc.Verify(caf.SIIKeys()); !errors.Is(err, caf.ErrUntrustedIDK) {
		t.Errorf("IDK 777 with SII keys: %v, want ErrUntrustedIDK", err)
	}
	if _, err := caftest.NewAuthority(nil, 0); err == nil {
		t.Error("IDK 0 accepted")
	}
	if _, err := caftest.LoadAuthority(nil, []byte("junk"), 100); err == nil {
		t.Error("junk key accepted")
	}
	if k := caf.SIIKeys().With(100, nil); len(k[100]) != 1 {
		t.Error("With(nil) added a key")
	}
	var none caf.TrustedKeys
	if k := none.With(5, a.PublicKey()); len(k[5]) != 1 {
		t.Error("With on a nil TrustedKeys")
	}

	bad := []struct {
		name string
		edit func(*caftest.IssueRequest)
	}{
		{"bad check digit", func(r *caftest.IssueRequest) { r.RutEmisor = "76192083-8" }},
		{"no dash", func(r *caftest.IssueRequest) { r.RutEmisor = "761920839" }},
		{"empty name", func(r *caftest.IssueRequest) { r.RazonSocial = "  " }},
		{"name outside Latin-1", func(r *caftest.IssueRequest) { r.RazonSocial = "EURO € SPA" }},
		{"control character", func(r *caftest.IssueRequest) { r.RazonSocial = "A\x01B" }},
		{"tipo 0", func(r *caftest.IssueRequest) { r.Tipo = 0 }},
		{"desde 0", func(r *caftest.IssueRequest) { r.Desde = 0 }},
		{"hasta < desde", func(r *caftest.IssueRequest) { r.Desde, r.Hasta = 10, 9 }},
		{"11 digits", func(r *caftest.IssueRequest) { r.Hasta = 10000000000 }},
		{"no date", func(r *caftest.IssueRequest) { r.FechaAutorizacion = time.Time{} }},
	}
	for _, tc := range bad {
		req := sampleRequest()
		tc.edit(&req)
		if _, err := a.Issue(req); err == nil {
			t.Errorf("Issue accepted %s", tc.name)
		}
	}
	long := sampleRequest()
	long.RazonSocial = strings.Repeat("Ñ", 45)
	if c := mustParse(t, issue(t, a, long)); c.RazonSocial != strings.Repeat("Ñ", 40) {
		t.Errorf("RS not cut to 40 characters: %q", c.RazonSocial)
	}
}

// TestParseErrors edits a valid CAF file in one place at a time; every edit
// must fail with the expected sentinel error.
func TestParseErrors(t *testing.T) {
	a := newAuthority(t)
	good := xmlflat.Latin1ToString(issue(t, a, sampleRequest()))
	other := xmlflat.Latin1ToString(issue(t, a, sampleRequest()))
	between := func(s, from, to string) string {
		return s[strings.Index(s, from) : strings.Index(s, to)+len(to)]
	}
	re := func(pattern, repl string) func(string) string {
		return func(s string) string { return regexp.MustCompile(pattern).ReplaceAllString(s, repl) }
	}
	parseCases := []struct {
		name string
		edit func(string) string
	}{
		{"empty", func(string) string { return "" }},
		{"not XML nor base64", func(string) string { return "hello, world!" }},
		{"base64 of non-XML", func(string) string { return base64.StdEncoding.EncodeToString([]byte("hello")) }},
		{"truncated", func(s string) string { return s[:len(s)/2] }},
		{"wrong root", re(`AUTORIZACION`, "AUTORIZACIONES")},
		{"two CAFs", func(s string) string {
			c := between(s, "<CAF ", "</CAF>")
			return strings.Replace(s, c, c+c, 1)
		}},
		{"no DA", re(`(?s)<DA>.*</DA>`, "")},
		{"no FRMA", re(`<FRMA[^>]*>[^<]*</FRMA>`, "")},
		{"FRMA algorithm", re(`SHA1withRSA`, "SHA256withRSA")},
		{"FRMA base64", re(`(<FRMA[^>]*>)[^<]*`, "${1}@@@")},
		{"FRMA empty", re(`(<FRMA[^>]*>)[^<]*`, "${1}")},
		{"no RE", re(`<RE>[^<]*</RE>`, "")},
		{"RE check digit", re(`76192083-9`, "76192083-1")},
		{"no RS", re(`<RS>[^<]*</RS>`, "")},
		{"empty RS", re(`<RS>[^<]*</RS>`, "<RS> </RS>")},
		{"TD letters", re(`<TD>33</TD>`, "<TD>3a</TD>")},
		{"TD zero", re(`<TD>33</TD>`, "<TD>0</TD>")},
		{"no RNG", re(`<RNG>.*</RNG>`, "")},
		{"D > H", re(`<D>1</D>`, "<D>101</D>")},
		{"H negative", re(`<H>100</H>`, "<H>-100</H>")},
		{"D 11 digits", re(`<D>1</D>`, "<D>12345678901</D>")},
		{"bad FA", re(`<FA>[^<]*</FA>`, "<FA>2024-02-30</FA>")},
		{"DSA key", re(`<RSAPK>.*</RSAPK>`, "<DSAPK><P>AA==</P><Q>AA==</Q><G>AA==</G><Y>AA==</Y></DSAPK>")},
		{"no RSAPK", re(`<RSAPK>.*</RSAPK>`, "")},
		{"bad modulus", re(`<M>[^<]*</M>`, "<M>AAAA</M>")},
		{"modulus not base64", re(`<M>[^<]*</M>`, "<M>*</M>")},
		{"exponent even", re(`<E>Aw==</E>`, "<E>BA==</E>")},
		{"exponent huge", re(`<E>Aw==</E>`, "<E>AQAAAAAAAAAAAQ==</E>")},
		{"IDK text", re(`<IDK>100</IDK>`, "<IDK>cien</IDK>")},
		{"RSASK garbage", re(`(?s)<RSASK>.*</RSASK>`, "<RSASK>not a key</RSASK>")},
		{"RSAPUBK garbage", re(`(?s)<RSAPUBK>.*</RSAPUBK>`, "<RSAPUBK>not a key</RSAPUBK>")},
		{"two RSASK", func(s string) string {
			k := between(s, "<RSASK>", "</RSASK>")
			return strings.Replace(s, k, k+k, 1)
		}},
		{"DOCTYPE", func(s string) string {
			return strings.Replace(s, "<AUTORIZACION>", "<!DOCTYPE AUTORIZACION [<!ENTITY x \"y\">]><AUTORIZACION>", 1)
		}},
		{"mixed content", re(`<DA>`, "<DA>text")},
		{"mismatched tags", re(`</DA>`, "</DB>")},
		{"unknown entity", re(`<RS>`, "<RS>&nbsp;")},
		{"text after root", func(s string) string { return s + "trailing" }},
		{"unsupported encoding", re(`ISO-8859-1`, "EBCDIC-US")},
		{"UTF-8 declared, Latin-1 bytes", re(`ISO-8859-1`, "UTF-8")},
		{"UTF-16", func(s string) string { return "\xff\xfe<\x00" }},
		{"char outside Latin-1", func(s string) string {
			return strings.Replace(strings.Replace(s, "ISO-8859-1", "UTF-8", 1), "CÍA", "C€A", 1)
		}},
		{"too large", func(s string) string { return s + strings.Repeat(" ", 1<<20) }}, // Parse accepts at most 1 MiB
		{"too deep", func(s string) string {
			return strings.Replace(s, "<IDK>", strings.Repeat("<x>", 40)+strings.Repeat("</x>", 40)+"<IDK>", 1)
		}},
		{"repeated attribute", re(`<CAF version="1.0">`, `<CAF version="1.0" version="1.0">`)},
		{"CAF version", re(`<CAF version="1.0">`, `<CAF version="2.0">`)},
	}
	for _, tc := range parseCases {
		edited := tc.edit(good)
		var data []byte
		if strings.Contains(tc.name, "UTF-8") || strings.Contains(tc.name, "Latin-1") || tc.name == "UTF-16" {
			data = []byte(edited)
			if tc.name == "UTF-8 declared, Latin-1 bytes" {
				data, _ = xmlflat.ToLatin1(edited)
			}
		} else {
			var err error
			if data, err = xmlflat.ToLatin1(edited); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
		}
		if string(data) == good {
			t.Fatalf("%s: edit changed nothing", tc.name)
		}
		_, err := caf.Parse(data)
		if !errors.Is(err, caf.ErrMalformed) {
			t.Errorf("%s: got %v, want ErrMalformed", tc.name, err)
		}
	}

	// Files that parse but fail a check.
	checkCases := []struct {
		name  string
		edit  func(string) string
		check func(*caf.CAF) error
		want  error
	}{
		{"RS changed after signing", re(`ÑANDÚ`, "NANDU"), func(c *caf.CAF) error { return c.Verify(a.Keys()) }, caf.ErrSignature},
		{"range widened", re(`<H>100</H>`, "<H>1000</H>"), func(c *caf.CAF) error { return c.Verify(a.Keys()) }, caf.ErrSignature},
		{"FRMA from another CAF", func(s string) string {
			return strings.Replace(s, between(s, "<FRMA", "</FRMA>"), between(other, "<FRMA", "</FRMA>"), 1)
		}, func(c *caf.CAF) error { return c.Verify(a.Keys()) }, caf.ErrSignature},
		{"RSASK from another CAF", func(s string) string {
			return strings.Replace(s, between(s, "<RSASK>", "</RSASK>"), between(other, "<RSASK>", "</RSASK>"), 1)
		}, (*caf.CAF).CheckKeyPair, caf.ErrKeyMismatch},
		{"RSAPUBK from another CAF", func(s string) string {
			return strings.Replace(s, between(s, "<RSAPUBK>", "</RSAPUBK>"), between(other, "<RSAPUBK>", "</RSAPUBK>"), 1)
		}, (*caf.CAF).CheckKeyPair, caf.ErrKeyMismatch},
		{"no RSASK", re(`(?s)<RSASK>.*</RSASK>`, ""), (*caf.CAF).CheckKeyPair, caf.ErrNoPrivateKey},
		{"IDK not trusted", re(`<IDK>100</IDK>`, "<IDK>200</IDK>"), func(c *caf.CAF) error { return c.Verify(a.Keys()) }, caf.ErrUntrustedIDK},
		{"Validate reports the signature first", re(`ÑANDÚ`, "NANDU"), func(c *caf.CAF) error { return c.Validate(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), a.Keys()) }, caf.ErrSignature},
		{"Validate reports the key pair", re(`(?s)<RSASK>.*</RSASK>`, ""), func(c *caf.CAF) error { return c.Validate(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), a.Keys()) }, caf.ErrNoPrivateKey},
		{"Validate reports the expiry", func(s string) string { return s }, func(c *caf.CAF) error { return c.Validate(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), a.Keys()) }, caf.ErrExpired},
	}
	for _, tc := range checkCases {
		data, err := xmlflat.ToLatin1(tc.edit(good))
		if err != nil {
			t.Fatal(err)
		}
		c, err := caf.Parse(data)
		if err != nil {
			t.Errorf("%s: Parse: %v", tc.name, err)
			continue
		}
		if err := tc.check(c); !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
	}
}

// TestKeyPairCorrupted covers a key pair whose public halves agree but whose
// private exponent is wrong.
func TestKeyPairCorrupted(t *testing.T) {
	c := mustParse(t, issue(t, newAuthority(t), sampleRequest()))
	c.PrivateKey.D = new(big.Int).Add(c.PrivateKey.D, big.NewInt(2))
	c.PrivateKey.Precomputed.Dp = nil
	if err := c.CheckKeyPair(); !errors.Is(err, caf.ErrKeyMismatch) {
		t.Fatalf("corrupted D: %v, want ErrKeyMismatch", err)
	}
}

func TestErrorMessagesNameTheInput(t *testing.T) {
	c := mustParse(t, issue(t, newAuthority(t), sampleRequest()))
	err := c.CheckFolio(500)
	for _, part := range []string{"500", "1-100", "76192083-9", "tipo 33"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("%q lacks %q", err, part)
		}
	}
	_, err = caf.Parse([]byte("<AUTORIZACION><CAF version=\"1.0\"><DA></DA><FRMA algoritmo=\"SHA1withRSA\">AA==</FRMA></CAF></AUTORIZACION>"))
	if err == nil || !strings.Contains(err.Error(), "DA/RE is missing") {
		t.Errorf("missing RE: %v", err)
	}
}

// FuzzParse: whatever the bytes, Parse answers a CAF or an error wrapping
// ErrMalformed, and a CAF it answers is a fixed point of its flattened
// element. Seeds: a test authority's file (raw, base64, without its
// declaration), the CAF of every XML sample of ../shared (the SII's own,
// as it sits in its DTE, and wrapped in an AUTORIZACION with the private
// key of the TED vectors), the CAF in the vectors' signed DD, and small
// broken files. Inputs reach past the parser: with edit > 0 the data gets
// one structural edit (oracle.EditXML: an element's text, removed,
// repeated or renamed) before Parse, so the XML stays well-formed and the
// field checks behind the parser run.
func FuzzParse(f *testing.F) {
	a, err := caftest.NewAuthority(nil, caf.IDKCertificacion)
	if err != nil {
		f.Fatal(err)
	}
	good, err := a.Issue(sampleRequest())
	if err != nil {
		f.Fatal(err)
	}
	seeds := [][]byte{good, []byte(base64.StdEncoding.EncodeToString(good)),
		bytes.Replace(good, []byte(`<?xml version="1.0" encoding="ISO-8859-1"?>`), nil, 1)}
	element := func(doc []byte) []byte {
		i, j := bytes.Index(doc, []byte("<CAF ")), bytes.Index(doc, []byte("</CAF>"))
		if i < 0 || j < i {
			return nil
		}
		return doc[i : j+len("</CAF>")]
	}
	blocks := vectorBlocks(f)
	for _, sample := range oracle.SharedXML(f) {
		if el := element(sample); el != nil {
			seeds = append(seeds, el, []byte("<AUTORIZACION>"+string(el)+"<RSASK>"+blocks[1]+"</RSASK></AUTORIZACION>"))
		}
	}
	for _, b := range blocks {
		if el := element([]byte(b)); el != nil {
			seeds = append(seeds, el)
		}
	}
	seeds = append(seeds, []byte("<CAF version=\"1.0\"><DA/><FRMA/></CAF>"), []byte("PENBRj48L0NBRj4="),
		[]byte("<?xml version='1.0' encoding='latin1'?><AUTORIZACION><CAF>\xd1</CAF></AUTORIZACION>"))
	for _, seed := range seeds {
		f.Add(seed, uint8(0), uint(0), "")
	}
	for i, field := range []string{"RE", "RS", "TD", "D", "H", "FA", "M", "E", "IDK", "FRMA", "RSASK", "RSAPUBK"} {
		f.Add(good, uint8(1+i%4), uint(3+2*i), field)
	}
	keys := a.Keys()
	at := time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte, edit uint8, n uint, text string) {
		if edit > 0 {
			data = oracle.EditXML(data, n, edit-1, text)
		}
		c, err := caf.Parse(data)
		if err != nil {
			if !errors.Is(err, caf.ErrMalformed) {
				t.Fatalf("Parse error without ErrMalformed: %v", err)
			}
			return
		}
		_ = c.Validate(at, keys)
		_ = c.CheckKeyPair()
		_ = c.CheckFolio(c.Desde)
		_, _ = c.ExpiresAt()
		_ = c.Ambiente()
		_ = c.String()
		// The flattened element is a fixed point of Parse.
		again, err := caf.Parse([]byte(c.ElementXML()))
		if err != nil {
			t.Fatalf("re-parsing ElementXML %q: %v", c.ElementXML(), err)
		}
		if again.ElementXML() != c.ElementXML() || again.DAXML() != c.DAXML() {
			t.Fatalf("ElementXML not stable:\n%q\n%q", c.ElementXML(), again.ElementXML())
		}
		if c.Verify(keys) == nil && again.Verify(keys) != nil {
			t.Fatal("flattened copy of a verified CAF does not verify")
		}
	})
}

func BenchmarkParse(b *testing.B) {
	a := newAuthority(b)
	data := issue(b, a, sampleRequest())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := caf.Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerify(b *testing.B) {
	a := newAuthority(b)
	c := mustParse(b, issue(b, a, sampleRequest()))
	keys := a.Keys()
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Verify(keys); err != nil {
			b.Fatal(err)
		}
	}
}
