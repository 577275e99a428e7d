package cesion_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/cesion"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/oracle"
	"github.com/dtekit/dtekit/signer"
)

// realFiles are the two AECs the SII's registry recorded (testdata/real/SOURCES.md).
var realFiles = []string{"AEC--76399752-9--33--25568--SEQ-1.xml", "AEC--76354771-K--33--170--SEQ-2.xml"}

func readReal(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "real", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// realOpts trusts the SII's own CAF keys only: the files' DTEs carry
// production CAFs.
func realOpts(p cesion.Policy) cesion.VerifyOptions {
	return cesion.VerifyOptions{DTE: dte.VerifyOptions{Keys: caf.SIIKeys()}, Policy: p}
}

// TestRealFiles: both real files pass under both policies, every
// signature verifying (the inner ones with their parent cut out, which
// xmlsec1 confirms on the cut-out parts with no namespace declaration);
// the portal's RUTAutorizado (the company's RUT, signed by a person) is a
// warning, not a refusal.
func TestRealFiles(t *testing.T) {
	t.Parallel()
	oracle.Tool(t, "xmlsec1")
	oracle.Tool(t, "xmllint")
	for _, name := range realFiles {
		data := readReal(t, name)
		for _, p := range []cesion.Policy{cesion.PolicyRegistry, cesion.PolicyStrict} {
			rep, err := cesion.Verify(data, realOpts(p))
			if err != nil {
				t.Fatalf("%s policy %d: %v", name, p, err)
			}
			want := 4
			if strings.Contains(name, "SEQ-2") {
				want = 5
			}
			if len(rep.Firmas) != want {
				t.Errorf("%s: %d signatures, want %d", name, len(rep.Firmas), want)
			}
			for _, s := range rep.Firmas {
				if !s.OK {
					t.Errorf("%s: %s: %s", name, s.Nivel, s.Error)
				}
			}
			if len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "Cesion[1].Cedente.RUTAutorizado[1].RUT") {
				t.Errorf("%s: warnings %q", name, rep.Warnings)
			}
			if rep.DTE.Documents[0].CAFAmbiente != "produccion" {
				t.Errorf("%s: CAF %s", name, rep.DTE.Documents[0].CAFAmbiente)
			}
		}
		// xmlsec1: the file's signature in place; the portal's inner
		// signatures with their parent cut out as is.
		dir := t.TempDir()
		file := filepath.Join(dir, "aec.xml")
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := xmlsec(t, file, xpAEC, ""); err != nil {
			t.Error(err)
		}
		for part, el := range map[string]string{"cedido.xml": "DTECedido", "cesion.xml": "Cesion"} {
			i := bytes.Index(data, []byte("<"+el+" "))
			j := bytes.Index(data, []byte("</"+el+">")) + len("</"+el+">")
			f := filepath.Join(dir, part)
			if err := os.WriteFile(f, append([]byte(`<?xml version="1.0" encoding="ISO-8859-1"?>`+"\n"), data[i:j]...), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := xmlsec(t, f, "/*/*[local-name()='Signature']", ""); err != nil {
				t.Error(err)
			}
		}
	}
}

// TestRealFilesEditedByAByte: the real files edited at one byte (one in
// every 37 of the root element) are refused, with two exceptions no
// signature of the SII's profile covers, left out: comments (canonical XML
// drops them from every digest) and the X509Certificate beside the file's
// own signature, whose bytes outside the public key (serial, names,
// extensions, the authority's signature) only a check against the issuing
// authority's certificate would catch, and neither the file nor the SII
// carries it. An edit of the key there is still refused, and so is an
// edited self-signed certificate (TestEveryByteEdited).
func TestRealFilesEditedByAByte(t *testing.T) {
	t.Parallel()
	comment := regexp.MustCompile(`(?s)<!--.*?-->`)
	for _, name := range realFiles {
		data := readReal(t, name)
		skip := comment.FindAllIndex(data, -1)
		i := bytes.LastIndex(data, []byte("<X509Certificate>"))
		skip = append(skip, []int{i, bytes.LastIndex(data, []byte("</X509Certificate>"))})
		start := bytes.Index(data, []byte("<AEC"))
		end := bytes.LastIndex(data, []byte("</AEC>")) + len("</AEC>")
		tried, accepted := 0, []int(nil)
		stride := 37
		if testing.Short() {
			stride = 151
		}
	next:
		for i := start; i < end; i += stride {
			for _, s := range skip {
				if i >= s[0] && i < s[1] {
					continue next
				}
			}
			d := bytes.Clone(data)
			if d[i] == 'A' {
				d[i] = 'B'
			} else {
				d[i] = 'A'
			}
			tried++
			if _, err := cesion.Verify(d, realOpts(cesion.PolicyRegistry)); err == nil {
				accepted = append(accepted, i)
			}
		}
		if len(accepted) > 0 {
			t.Errorf("%s: %d of %d edited files accepted, at offsets %v", name, len(accepted), tried, accepted)
		}
	}
}

// TestRecederOnARealFile: a re-cession appended to the registry's file
// keeps its earlier parts byte for byte, validates against AEC_v10.xsd,
// and its new cesión and file signature verify with xmlsec1 in place;
// Verify accepts it, the earlier signatures still verifying.
func TestRecederOnARealFile(t *testing.T) {
	t.Parallel()
	f := fix(t)
	data := readReal(t, realFiles[0])
	out, err := cesion.Receder(data, cesion.Cesion{Cesionario: factoring, Firmantes: []*signer.Certificate{f.f1},
		Cedente: cesion.Parte{Email: "ops@cesionario.cl"}}, cesion.Options{At: f.at})
	if err != nil {
		t.Fatal(err)
	}
	for _, el := range []string{"DTECedido", "Cesion"} {
		i := bytes.Index(data, []byte("<"+el+" "))
		j := bytes.Index(data, []byte("</"+el+">")) + len("</"+el+">")
		if !bytes.Contains(out, data[i:j]) {
			t.Errorf("the earlier %s is not kept byte for byte", el)
		}
	}
	dir := writeFiles(t, map[string][]byte{"re.xml": out, "f1.pem": f.f1.CertificatePEM()})
	file := filepath.Join(dir, "re.xml")
	xmllint(t, file)
	for _, xp := range []string{xpAEC, xpCesion(2, 1)} {
		if err := xmlsec(t, file, xp, filepath.Join(dir, "f1.pem")); err != nil {
			t.Error(err)
		}
	}
	rep, err := cesion.Verify(out, realOpts(cesion.PolicyStrict))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Cesiones) != 2 || rep.Cesiones[1].Cedente.RUT != "76389992-6" || rep.Cesiones[1].Cedente.Email != "ops@cesionario.cl" ||
		rep.Cesiones[1].Cedente.RazonSocial != rep.Cesiones[0].Cesionario.RazonSocial || rep.RutCesionario != rutF {
		t.Errorf("cesiones %+v, carátula cesionario %s", rep.Cesiones, rep.RutCesionario)
	}
}
