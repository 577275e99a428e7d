package ted

import (
	"bytes"
	"crypto"
	"crypto/rsa"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"os"
	"os/exec"
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

var allTipos = []int{33, 34, 39, 41, 43, 46, 52, 56, 61, 110, 111, 112}

const rutEmisor = "76192083-9"

// fixture is a test authority and CAFs it issued, one per type.
type fixture struct {
	auth *caftest.Authority
	cafs map[int]*caf.CAF
	// files holds the issued CAF files (ISO-8859-1).
	files map[int][]byte
}

func newFixture(t testing.TB, tipos ...int) *fixture {
	t.Helper()
	a, err := caftest.NewAuthority(nil, caf.IDKCertificacion)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{auth: a, cafs: map[int]*caf.CAF{}, files: map[int][]byte{}}
	for _, tipo := range tipos {
		file, err := a.Issue(caftest.IssueRequest{
			RutEmisor: rutEmisor, RazonSocial: "FERRETERÍA ÑUÑOA & HIJOS LTDA", Tipo: tipo,
			Desde: 1, Hasta: 500, FechaAutorizacion: time.Date(2024, 1, 15, 0, 0, 0, 0, time.UTC),
		})
		if err != nil {
			t.Fatal(err)
		}
		c, err := caf.Parse(file)
		if err != nil {
			t.Fatal(err)
		}
		f.cafs[tipo], f.files[tipo] = c, file
	}
	return f
}

func santiago(t testing.TB) *time.Location {
	t.Helper()
	return chile.Location()
}

func (f *fixture) dd(t testing.TB, tipo int) DD {
	d := DD{
		RE: rutEmisor, TD: tipo, F: 42, FE: "2024-02-01", RR: "8414240-9",
		RSR: `JOSÉ "PEPE" O'HIGGINS <SPA> & CÍA`, MNT: "119000",
		IT1: "Café de Año Nuevo > 1 kg", CAF: f.cafs[tipo],
		TSTED: time.Date(2024, 2, 1, 10, 11, 12, 0, santiago(t)),
	}
	switch tipo {
	case 110, 111, 112:
		d.MNT = "1234.5678"
	case 43:
		d.MNT = "-1500"
	}
	return d
}

// vectorBlocks returns the DD, key and FRMT code blocks of
// ../shared/sii/vectors/ted-instructivo.md.
func vectorBlocks(t testing.TB) (dd, key, frmt string) {
	t.Helper()
	b, err := os.ReadFile(oracle.SharedFile(t, "sii", "vectors", "ted-instructivo.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```\n(.*?)\n```").FindAllStringSubmatch(string(b), -1)
	if len(m) < 3 {
		t.Fatalf("ted-instructivo.md: %d code blocks, want 3", len(m))
	}
	return m[0][1], m[1][1], m[2][1]
}

// TestSIIManualVector reproduces the manual's TED byte for byte, from the
// values printed in the manual and the CAF and key of the vector file.
func TestSIIManualVector(t *testing.T) {
	ddWant, key, frmtWant := vectorBlocks(t)
	cafXML := ddWant[strings.Index(ddWant, "<CAF ") : strings.Index(ddWant, "</CAF>")+len("</CAF>")]
	c, err := caf.Parse([]byte("<AUTORIZACION>" + cafXML + "<RSASK>" + key + "</RSASK></AUTORIZACION>"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Verify(caf.SIIKeys()); err != nil {
		t.Fatalf("vector CAF: %v", err)
	}
	dd := DD{
		RE: "97975000-5", TD: 33, F: 27, FE: "2003-09-08",
		RR: "8414240-9", RSR: "JORGE GONZALEZ LTDA", MNT: "502946", IT1: "Cajon AFECTO",
		CAF: c, TSTED: time.Date(2003, 9, 8, 12, 28, 31, 0, santiago(t)),
	}
	got, err := Sign(dd, nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(got.SignedDD) != ddWant {
		t.Fatalf("DD\n got %s\nwant %s", got.SignedDD, ddWant)
	}
	if b64 := base64.StdEncoding.EncodeToString(got.FRMT); b64 != frmtWant {
		t.Fatalf("FRMT\n got %s\nwant %s", b64, frmtWant)
	}
	wantTED := `<TED version="1.0">` + ddWant + `<FRMT algoritmo="SHA1withRSA">` + frmtWant + `</FRMT></TED>`
	if string(got.XML) != wantTED {
		t.Fatalf("TED\n got %s\nwant %s", got.XML, wantTED)
	}
	// A UTC instant is converted to Chile time: UTC-4 on 8 September 2003
	// (summer time began that year on 12 October).
	dd.TSTED = time.Date(2003, 9, 8, 16, 28, 31, 0, time.UTC)
	if b, err := Build(dd, c.PrivateKey); err != nil || string(b) != wantTED {
		t.Fatalf("TSTED given in UTC: %v\n%s", err, b)
	}
	v, err := Verify(got.XML, caf.SIIKeys())
	if err != nil {
		t.Fatalf("Verify of the manual's TED: %v", err)
	}
	if v.DD.MNT != "502946" || v.DD.F != 27 || !v.DD.TSTED.Equal(got.DD.TSTED) {
		t.Errorf("parsed DD: %+v", v.DD)
	}
}

// TestVectorProgram runs a separate program (testdata/vector) that builds
// the manual's TED through the public API with GODEBUG removed from its
// environment; the program also reports that crypto/rsa refused the 512-bit
// key in that process, so the result cannot come from a lowered minimum.
func TestVectorProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles a program")
	}
	goTool := oracle.Tool(t, "go")
	md := oracle.SharedFile(t, "sii", "vectors", "ted-instructivo.md")
	ddWant, _, frmtWant := vectorBlocks(t)
	cmd := exec.Command(goTool, "run", "./testdata/vector", md)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GODEBUG=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go run ./testdata/vector: %v\n%s", err, stderr.Bytes())
	}
	want := `<TED version="1.0">` + ddWant + `<FRMT algoritmo="SHA1withRSA">` + frmtWant + `</FRMT></TED>`
	if string(out) != want {
		t.Fatalf("program output\n got %s\nwant %s", out, want)
	}
	if !strings.Contains(stderr.String(), "crypto/rsa accepts 512-bit keys: false") {
		t.Fatalf("the program ran with a lowered RSA minimum: %s", stderr.Bytes())
	}
}

// TestNoGODEBUG checks that nothing in the module or in these packages
// lowers crypto/rsa's minimum: no godebug line in go.mod, no //go:debug
// directive, none in the environment, and crypto/rsa refuses 512 bits here.
func TestNoGODEBUG(t *testing.T) {
	if strings.Contains(os.Getenv("GODEBUG"), "rsa1024min") {
		t.Fatalf("GODEBUG=%q", os.Getenv("GODEBUG"))
	}
	root := oracle.RepoRoot(t)
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if regexp.MustCompile(`(?m)^\s*godebug\b`).Match(gomod) {
		t.Fatal("go.mod has a godebug line")
	}
	for _, dir := range []string{"caf", "ted", "internal/smallrsa", "ted/testdata/vector"} {
		files, _ := filepath.Glob(filepath.Join(root, dir, "*.go"))
		if len(files) == 0 {
			t.Fatalf("no Go files in %s", dir)
		}
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if regexp.MustCompile(`(?m)^//go:debug`).Match(src) {
				t.Errorf("%s has a //go:debug directive", f)
			}
		}
	}
	f := newFixture(t, 33)
	h := sha1.Sum([]byte("x"))
	if _, err := rsa.SignPKCS1v15(nil, f.cafs[33].PrivateKey, crypto.SHA1, h[:]); err == nil {
		t.Fatal("crypto/rsa accepted a 512-bit key: the minimum was lowered")
	}
	if _, err := Build(f.dd(t, 33), nil); err != nil {
		t.Fatalf("Build with the 512-bit CAF key: %v", err)
	}
}

// TestOfficialSample verifies the TED of the SII's signed example DTE, as it
// sits in the file (SII namespace, tabs, CRLF, FRMT base64 broken over two
// lines), both as the whole EnvioDTE and as the TED element alone.
func TestOfficialSample(t *testing.T) {
	doc, err := os.ReadFile(oracle.SharedFile(t, "sii", "samples", "F60T33-ejemplo-oficial-SII.xml"))
	if err != nil {
		t.Fatal(err)
	}
	elem := doc[bytes.Index(doc, []byte("<TED ")) : bytes.Index(doc, []byte("</TED>"))+len("</TED>")]
	withNS := bytes.Replace(elem, []byte(`<TED version="1.0">`), []byte(`<TED xmlns="http://www.sii.cl/SiiDte" version="1.0">`), 1)
	for name, input := range map[string][]byte{"whole EnvioDTE": doc, "TED element": elem, "TED with xmlns": withNS} {
		v, err := Verify(input, caf.SIIKeys())
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		d := v.DD
		if d.RE != "97975000-5" || d.TD != 33 || d.F != 60 || d.FE != "2003-10-13" || d.RR != "77777777-7" ||
			d.RSR != "EMPRESA  LTDA" || d.MNT != "119000" || d.IT1 != "Parlantes Multimedia 180W." ||
			d.TSTED.Format(tstedLayout) != "2003-10-13T09:33:20" {
			t.Errorf("%s: DD %+v", name, d)
		}
		if !bytes.HasPrefix(v.SignedDD, []byte("<DD><RE>97975000-5</RE><TD>33</TD><F>60</F>")) || bytes.ContainsAny(v.SignedDD, "\r\n\t") {
			t.Errorf("%s: SignedDD not flat: %s", name, v.SignedDD)
		}
		// The flat form re-verifies.
		if _, err := Verify(v.XML, caf.SIIKeys()); err != nil {
			t.Errorf("%s: flat form: %v", name, err)
		}
	}
	// The double space in RSR is signed; collapsing it breaks FRMT, while
	// re-indenting does not.
	tampered := map[string][]byte{
		"RSR single space": bytes.Replace(elem, []byte("EMPRESA  LTDA"), []byte("EMPRESA LTDA"), 1),
		"MNT changed":      bytes.Replace(elem, []byte("<MNT>119000</MNT>"), []byte("<MNT>119001</MNT>"), 1),
		"TSTED changed":    bytes.Replace(elem, []byte("T09:33:20</TSTED>"), []byte("T09:33:21</TSTED>"), 1),
	}
	for name, input := range tampered {
		if _, err := Verify(input, caf.SIIKeys()); !errors.Is(err, ErrSignature) {
			t.Errorf("%s: got %v, want ErrSignature", name, err)
		}
	}
	reindented := bytes.ReplaceAll(bytes.ReplaceAll(elem, []byte("\t"), []byte("  ")), []byte("\r\n"), []byte("\n"))
	if _, err := Verify(reindented, caf.SIIKeys()); err != nil {
		t.Errorf("re-indented: %v", err)
	}
}

// TestAllTypesOpenSSL builds a TED for each of the 12 types and has openssl
// verify FRMT over the DD cut out of the TED bytes, with the public key
// openssl derives from the CAF file's RSASK.
func TestAllTypesOpenSSL(t *testing.T) {
	if testing.Short() {
		t.Skip("rasterizes or runs the oracles on many documents; skipped under -short")
	}
	oracle.Tool(t, "openssl")
	f := newFixture(t, allTipos...)
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tipo := range allTipos {
		tedXML, err := Build(f.dd(t, tipo), nil)
		if err != nil {
			t.Fatalf("tipo %d: %v", tipo, err)
		}
		s := string(tedXML)
		ddBytes := tedXML[strings.Index(s, "<DD>") : strings.Index(s, "</DD>")+len("</DD>")]
		frmt := regexp.MustCompile(`<FRMT algoritmo="SHA1withRSA">([^<]+)</FRMT></TED>$`).FindStringSubmatch(s)
		if frmt == nil {
			t.Fatalf("tipo %d: no FRMT at the end of %s", tipo, s)
		}
		sig, err := base64.StdEncoding.DecodeString(frmt[1])
		if err != nil {
			t.Fatal(err)
		}
		file := string(f.files[tipo])
		key := write("rsask.pem", []byte(file[strings.Index(file, "<RSASK>")+7:strings.Index(file, "</RSASK>")]))
		pub := filepath.Join(dir, "pub.pem")
		oracle.Run(t, "openssl", "rsa", "-in", key, "-pubout", "-out", pub)
		out := oracle.Run(t, "openssl", "dgst", "-sha1", "-verify", pub, "-signature", write("sig.bin", sig), write("dd.bin", ddBytes))
		if !bytes.Contains(out, []byte("Verified OK")) {
			t.Fatalf("tipo %d: openssl: %s", tipo, out)
		}
		// openssl's own signature over the same DD is the same bytes.
		theirs := oracle.Run(t, "openssl", "dgst", "-sha1", "-sign", key, filepath.Join(dir, "dd.bin"))
		if !bytes.Equal(theirs, sig) {
			t.Fatalf("tipo %d: openssl signs the DD differently", tipo)
		}
		// Latin-1 on the wire: É is one byte 0xC9.
		if !bytes.Contains(ddBytes, []byte("JOS\xc9 \"PEPE\" O'HIGGINS &lt;SPA&gt; &amp; C\xcdA")) {
			t.Errorf("tipo %d: RSR not escaped/encoded as expected: %q", tipo, ddBytes)
		}
		if _, err := Verify(tedXML, f.auth.Keys()); err != nil {
			t.Errorf("tipo %d: Verify: %v", tipo, err)
		}
	}
}

// TestCanonicalForm checks with xmllint that the TED bytes are well-formed
// ISO-8859-1 XML and equal their own canonical form (C14N), so the DTE's
// XML signature sees exactly these bytes.
func TestCanonicalForm(t *testing.T) {
	oracle.Tool(t, "xmllint")
	f := newFixture(t, 33)
	tedXML, err := Build(f.dd(t, 33), nil)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "ted.xml")
	if err := os.WriteFile(p, append([]byte("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n"), tedXML...), 0o600); err != nil {
		t.Fatal(err)
	}
	c14n := oracle.Run(t, "xmllint", "--c14n", p)
	if string(c14n) != xmlflat.Latin1ToString(tedXML) {
		t.Fatalf("C14N differs\nc14n %s\nours %s", c14n, xmlflat.Latin1ToString(tedXML))
	}
}

func TestBoletaSinReceptor(t *testing.T) {
	f := newFixture(t, 39, 41)
	for _, tipo := range []int{39, 41} {
		d := f.dd(t, tipo)
		d.RR, d.RSR = "", ""
		got, err := Sign(d, nil)
		if err != nil {
			t.Fatalf("tipo %d: %v", tipo, err)
		}
		if !bytes.Contains(got.SignedDD, []byte("<RR>66666666-6</RR><RSR></RSR>")) || got.DD.RR != RutSinReceptor {
			t.Errorf("tipo %d: %s", tipo, got.SignedDD)
		}
		if _, err := Verify(got.XML, f.auth.Keys()); err != nil {
			t.Errorf("tipo %d: %v", tipo, err)
		}
	}
	// 66666666-6 is a valid RUT by the módulo-11 rule.
	if chile.CheckDigit(66666666) != '6' {
		t.Error("check digit of 66666666")
	}
}

func TestTruncation(t *testing.T) {
	f := newFixture(t, 33)
	d := f.dd(t, 33)
	d.RSR = strings.Repeat("Ñ", 39) + "ÁBCDEF"       // 45 characters, 90 UTF-8 bytes
	d.IT1 = strings.Repeat("a", 35) + "&&&&&<<<<<>>" // cut after the first five &
	got, err := Sign(d, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Repeat("Ñ", 39) + "Á"; got.DD.RSR != want {
		t.Errorf("RSR cut to %q", got.DD.RSR)
	}
	if !bytes.Contains(got.SignedDD, []byte("<RSR>"+strings.Repeat("\xd1", 39)+"\xc1</RSR>")) {
		t.Errorf("RSR bytes: %q", got.SignedDD)
	}
	if !bytes.Contains(got.SignedDD, []byte("<IT1>"+strings.Repeat("a", 35)+"&amp;&amp;&amp;&amp;&amp;</IT1>")) {
		t.Errorf("IT1: %q", got.SignedDD)
	}
	v, err := Verify(got.XML, f.auth.Keys())
	if err != nil {
		t.Fatal(err)
	}
	if v.DD.IT1 != strings.Repeat("a", 35)+"&&&&&" {
		t.Errorf("parsed IT1 %q", v.DD.IT1)
	}
}

func TestBuildErrors(t *testing.T) {
	f := newFixture(t, 33, 34, 110)
	other := newFixture(t, 33)
	bareCAF, err := caf.Parse([]byte(f.cafs[33].ElementXML()))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		edit func(*DD)
		key  *rsa.PrivateKey
		want error
	}{
		{"no CAF", func(d *DD) { d.CAF = nil }, nil, ErrInvalidDD},
		{"RE bad check digit", func(d *DD) { d.RE = "76192083-1" }, nil, ErrInvalidDD},
		{"RE other issuer", func(d *DD) { d.RE = "8414240-9" }, nil, ErrMismatch},
		{"TD other type", func(d *DD) { d.TD = 34 }, nil, ErrMismatch},
		{"TD zero", func(d *DD) { d.TD = 0 }, nil, ErrInvalidDD},
		{"folio zero", func(d *DD) { d.F = 0 }, nil, ErrInvalidDD},
		{"folio out of range", func(d *DD) { d.F = 501 }, nil, caf.ErrFolioOutOfRange},
		{"FE bad", func(d *DD) { d.FE = "01-02-2024" }, nil, ErrInvalidDD},
		{"RR empty on a factura", func(d *DD) { d.RR = "" }, nil, ErrInvalidDD},
		{"RR bad", func(d *DD) { d.RR = "8414240-K" }, nil, ErrInvalidDD},
		{"RSR empty on a factura", func(d *DD) { d.RSR = "" }, nil, ErrInvalidDD},
		{"RSR whitespace", func(d *DD) { d.RSR = "   " }, nil, ErrInvalidDD},
		{"RSR euro sign", func(d *DD) { d.RSR = "EURO € LTDA" }, nil, ErrNotLatin1},
		{"RSR emoji", func(d *DD) { d.RSR = "CAFÉ ☕" }, nil, ErrNotLatin1},
		{"RSR invalid UTF-8", func(d *DD) { d.RSR = "CAF\xc9" }, nil, ErrInvalidDD},
		{"RSR control char", func(d *DD) { d.RSR = "A\x00B" }, nil, ErrInvalidDD},
		{"RSR newline", func(d *DD) { d.RSR = "A\nB" }, nil, ErrInvalidDD},
		{"IT1 C1 control", func(d *DD) { d.IT1 = "A\u0085B" }, nil, ErrInvalidDD},
		{"IT1 curly quote", func(d *DD) { d.IT1 = "“Premium”" }, nil, ErrNotLatin1},
		{"IT1 empty", func(d *DD) { d.IT1 = "" }, nil, ErrInvalidDD},
		{"MNT empty", func(d *DD) { d.MNT = "" }, nil, ErrInvalidDD},
		{"MNT negative on 33", func(d *DD) { d.MNT = "-1" }, nil, ErrInvalidDD},
		{"MNT decimals on 33", func(d *DD) { d.MNT = "1.5" }, nil, ErrInvalidDD},
		{"MNT leading zero", func(d *DD) { d.MNT = "0100" }, nil, ErrInvalidDD},
		{"MNT thousands separator", func(d *DD) { d.MNT = "119.000,00" }, nil, ErrInvalidDD},
		{"MNT 19 digits", func(d *DD) { d.MNT = "1234567890123456789" }, nil, ErrInvalidDD},
		{"TSTED zero", func(d *DD) { d.TSTED = time.Time{} }, nil, ErrInvalidDD},
		{"TSTED 1999", func(d *DD) { d.TSTED = time.Date(1999, 1, 1, 0, 0, 0, 0, time.UTC) }, nil, ErrInvalidDD},
		{"key of another CAF", func(d *DD) {}, other.cafs[33].PrivateKey, caf.ErrKeyMismatch},
		{"CAF without RSASK", func(d *DD) { d.CAF = bareCAF }, nil, caf.ErrNoPrivateKey},
	}
	for _, tc := range cases {
		d := f.dd(t, 33)
		tc.edit(&d)
		_, err := Build(d, tc.key)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
	}
	// Accepted edge values.
	ok := []struct {
		name string
		tipo int
		edit func(*DD)
	}{
		{"zero total", 33, func(d *DD) { d.MNT = "0" }},
		{"export decimals", 110, func(d *DD) { d.MNT = "0.5" }},
		{"export integer", 110, func(d *DD) { d.MNT = "1000" }},
		{"exactly 40 characters", 34, func(d *DD) { d.RSR = strings.Repeat("x", 40) }},
		{"lower-case k", 33, func(d *DD) { d.RR = "11111111-1"; d.RE = strings.ToLower(rutEmisor) }},
		{"Latin-1 symbols", 33, func(d *DD) { d.IT1 = "½ kg «extra» ¿sí? ©®°±µ¶·ÿ" }},
	}
	for _, tc := range ok {
		d := f.dd(t, tc.tipo)
		tc.edit(&d)
		b, err := Build(d, nil)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if _, err := Verify(b, f.auth.Keys()); err != nil {
			t.Errorf("%s: Verify: %v", tc.name, err)
		}
	}
}

// resign replaces text in the DD of a TED and signs the result again with
// the CAF key, producing a TED whose FRMT is valid but whose content is not.
func resign(t *testing.T, tedXML []byte, key *rsa.PrivateKey, old, repl string) []byte {
	t.Helper()
	s := strings.Replace(xmlflat.Latin1ToString(tedXML), old, repl, 1)
	dd := s[strings.Index(s, "<DD>") : strings.Index(s, "</DD>")+5]
	ddBytes, err := xmlflat.ToLatin1(dd)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := smallrsa.SignSHA1(key, ddBytes)
	if err != nil {
		t.Fatal(err)
	}
	return assemble(ddBytes, sig)
}

func TestVerifyErrors(t *testing.T) {
	f := newFixture(t, 33)
	key := f.cafs[33].PrivateKey
	good, err := Build(f.dd(t, 33), nil)
	if err != nil {
		t.Fatal(err)
	}
	gs := xmlflat.Latin1ToString(good)
	edit := func(old, repl string) []byte {
		b, err := xmlflat.ToLatin1(strings.Replace(gs, old, repl, 1))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	frmt := regexp.MustCompile(`<FRMT algoritmo="SHA1withRSA">([^<]+)</FRMT>`).FindStringSubmatch(gs)[1]
	cases := []struct {
		name  string
		input []byte
		keys  caf.TrustedKeys
		want  error
	}{
		{"garbage", []byte("not xml"), f.auth.Keys(), ErrMalformed},
		{"empty", nil, f.auth.Keys(), ErrMalformed},
		{"two TEDs", append(append([]byte("<X>"), append(good, good...)...), "</X>"...), f.auth.Keys(), ErrMalformed},
		{"no TED", []byte("<DTE><Documento/></DTE>"), f.auth.Keys(), ErrMalformed},
		{"DSA", edit(`FRMT algoritmo="SHA1withRSA"`, `FRMT algoritmo="SHA1withDSA"`), f.auth.Keys(), ErrMalformed},
		{"FRMT not base64", edit(frmt, "***"), f.auth.Keys(), ErrMalformed},
		{"FRMT empty", edit(frmt, ""), f.auth.Keys(), ErrMalformed},
		{"DD child missing", edit("<IT1>", "<IT0>"), f.auth.Keys(), ErrMalformed},
		{"DD children swapped", edit("<RE>"+rutEmisor+"</RE><TD>33</TD>", "<TD>33</TD><RE>"+rutEmisor+"</RE>"), f.auth.Keys(), ErrMalformed},
		{"TD text", edit("<TD>33</TD><F>", "<TD>xx</TD><F>"), f.auth.Keys(), ErrMalformed},
		{"F text", edit("<F>42</F>", "<F>cuarenta</F>"), f.auth.Keys(), ErrMalformed},
		{"TSTED bad", edit("2024-02-01T10:11:12", "2024-02-01 10:11:12"), f.auth.Keys(), ErrMalformed},
		{"CAF broken", edit("<IDK>100</IDK>", ""), f.auth.Keys(), caf.ErrMalformed},
		{"TED version", edit(`<TED version="1.0">`, `<TED version="2.0">`), f.auth.Keys(), ErrMalformed},
		{"extra TED child", edit("</FRMT>", "</FRMT><X/>"), f.auth.Keys(), ErrMalformed},
		{"DD leaf with element", edit("<RSR>", "<RSR><b/>"), f.auth.Keys(), ErrMalformed},
		{"FRMA untrusted", good, caf.SIIKeys(), caf.ErrSignature},
		{"IDK unknown", good, caf.TrustedKeys{300: caf.SIIKeys()[300]}, caf.ErrUntrustedIDK},
		{"CAF tampered", edit("<H>500</H>", "<H>999</H>"), f.auth.Keys(), caf.ErrSignature},
		{"MNT tampered", edit("<MNT>119000</MNT>", "<MNT>119</MNT>"), f.auth.Keys(), ErrSignature},
		{"FRMT of another DD", edit("<F>42</F>", "<F>43</F>"), f.auth.Keys(), ErrSignature},
		{"FRMT truncated", edit(frmt, frmt[4:]), f.auth.Keys(), ErrSignature},
		{"RE re-signed", resign(t, good, key, "<RE>"+rutEmisor+"</RE><TD>", "<RE>8414240-9</RE><TD>"), f.auth.Keys(), ErrMismatch},
		{"TD re-signed", resign(t, good, key, "<TD>33</TD><F>", "<TD>34</TD><F>"), f.auth.Keys(), ErrMismatch},
		{"folio re-signed", resign(t, good, key, "<F>42</F>", "<F>501</F>"), f.auth.Keys(), caf.ErrFolioOutOfRange},
		{"non-Latin-1 in UTF-8 input", []byte(strings.Replace(gs, "Café", "Caf€", 1)), f.auth.Keys(), ErrNotLatin1},
	}
	for _, tc := range cases {
		if tc.input != nil && string(tc.input) == gs && tc.name != "FRMA untrusted" && tc.name != "IDK unknown" {
			t.Fatalf("%s: edit changed nothing", tc.name)
		}
		_, err := Verify(tc.input, tc.keys)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
	}
	if _, err := Verify(good, f.auth.Keys()); err != nil {
		t.Fatalf("unedited TED: %v", err)
	}
}

// TestParseIndentedUTF8 re-encodes a TED as indented UTF-8 inside a DTE-like
// envelope in the SII namespace; it must verify unchanged.
func TestParseIndentedUTF8(t *testing.T) {
	f := newFixture(t, 33)
	built, err := Sign(f.dd(t, 33), nil)
	if err != nil {
		t.Fatal(err)
	}
	pretty := strings.NewReplacer("><", ">\n\t<").Replace(built.UTF8())
	doc := "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<DTE xmlns=\"http://www.sii.cl/SiiDte\" version=\"1.0\">\n<Documento ID=\"F42T33\">\n" + pretty + "\n</Documento>\n</DTE>\n"
	v, err := Verify([]byte(doc), f.auth.Keys())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(v.XML, built.XML) || !bytes.Equal(v.SignedDD, built.SignedDD) {
		t.Errorf("parsed TED differs from the built one:\n%s\n%s", v.XML, built.XML)
	}
	if v.DD.RSR != built.DD.RSR || v.DD.IT1 != built.DD.IT1 {
		t.Errorf("text fields: %q %q", v.DD.RSR, v.DD.IT1)
	}
}

func FuzzVerify(f *testing.F) {
	fx := newFixture(f, 33, 39)
	keys := fx.auth.Keys()
	for _, tipo := range []int{33, 39} {
		d := fx.dd(f, tipo)
		b, err := Build(d, nil)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add([]byte(strings.ReplaceAll(xmlflat.Latin1ToString(b), "><", ">\n  <")))
	}
	if doc, err := os.ReadFile("../../shared/sii/samples/F60T33-ejemplo-oficial-SII.xml"); err == nil {
		i, j := bytes.Index(doc, []byte("<TED ")), bytes.Index(doc, []byte("</TED>"))
		if i >= 0 && j > i {
			f.Add(doc[i : j+6])
		}
	}
	f.Add([]byte(`<TED version="1.0"><DD/><FRMT algoritmo="SHA1withRSA">AA==</FRMT></TED>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Verify(data, keys)
		if err != nil {
			return
		}
		// A verified TED's flat form is a fixed point.
		again, err := Verify(v.XML, keys)
		if err != nil {
			t.Fatalf("flat form of a verified TED fails: %v\n%q", err, v.XML)
		}
		if !bytes.Equal(again.XML, v.XML) || !bytes.Equal(again.SignedDD, v.SignedDD) {
			t.Fatalf("flat form not stable")
		}
	})
}

func BenchmarkBuild(b *testing.B) {
	f := newFixture(b, 33)
	d := f.dd(b, 33)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Build(d, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerify(b *testing.B) {
	f := newFixture(b, 33)
	tedXML, err := Build(f.dd(b, 33), nil)
	if err != nil {
		b.Fatal(err)
	}
	keys := f.auth.Keys()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Verify(tedXML, keys); err != nil {
			b.Fatal(err)
		}
	}
}

// TestVerifyOtherEscaping: an emitter that wrote and signed the DD with
// &apos; and &quot; (not the canonical form) still gets its TED verified.
func TestVerifyOtherEscaping(t *testing.T) {
	f := newFixture(t, 33)
	good, err := Build(f.dd(t, 33), nil)
	if err != nil {
		t.Fatal(err)
	}
	odd := resign(t, good, f.cafs[33].PrivateKey, `JOSÉ "PEPE" O'HIGGINS`, `JOSÉ &quot;PEPE&quot; O&apos;HIGGINS`)
	v, err := Verify(odd, f.auth.Keys())
	if err != nil {
		t.Fatalf("DD signed with &apos;: %v", err)
	}
	if v.DD.RSR != f.dd(t, 33).RSR || !bytes.Contains(v.SignedDD, []byte("O&apos;HIGGINS")) {
		t.Errorf("RSR %q, SignedDD %s", v.DD.RSR, v.SignedDD)
	}
	if _, err := Verify(v.XML, f.auth.Keys()); err != nil {
		t.Errorf("re-verifying the returned XML: %v", err)
	}
	// The canonical form of that DD is not what was signed.
	if _, err := Verify(assemble(mustCanonicalDD(t, odd), v.FRMT), f.auth.Keys()); !errors.Is(err, ErrSignature) {
		t.Errorf("canonical DD with the other form's FRMT: %v", err)
	}
}

func mustCanonicalDD(t *testing.T, tedXML []byte) []byte {
	t.Helper()
	p, err := Parse(tedXML)
	if err != nil {
		t.Fatal(err)
	}
	return p.SignedDD
}
