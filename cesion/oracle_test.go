package cesion_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/cesion"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/oracle"
)

// Signatures of an AEC by level, as XPath for xmlsec1's --node-xpath.
const (
	xpAEC    = "/*/*[local-name()='Signature']"
	xpCedido = "//*[local-name()='DTECedido']/*[local-name()='Signature']"
	xpDTE    = "//*[local-name()='DTE']/*[local-name()='Signature']"
)

func xpCesion(seq, n int) string {
	return fmt.Sprintf("(//*[local-name()='Cesion'])[%d]/*[local-name()='Signature'][%d]", seq, n)
}

// TestAECPassesTheOracles: the AEC of a first cesión of each cedible type,
// and a re-cession signed by two people, validate against AEC_v10.xsd with
// xmllint; every signature of the three levels (and the DTE's own) verifies
// in place with xmlsec1, with its KeyValue and with only its signer's
// certificate trusted; openssl verifies the pasted DTE's stamp with the
// CAF's key; and Verify accepts them under the strict policy.
func TestAECPassesTheOracles(t *testing.T) {
	t.Parallel()
	oracle.Tool(t, "xmllint")
	oracle.Tool(t, "xmlsec1")
	oracle.Tool(t, "openssl")
	f := fix(t)
	files := map[string][]byte{"a.pem": f.a.Cert.CertificatePEM(), "f1.pem": f.f1.CertificatePEM(), "f2.pem": f.f2.CertificatePEM()}
	for _, tipo := range []dte.TipoDTE{33, 34, 43, 46} {
		files[fmt.Sprintf("aec%d.xml", tipo)] = f.ceder(t, tipo, cesion.Cesion{})
	}
	files["reaec.xml"] = f.receder(t, files["aec33.xml"])
	dir := writeFiles(t, files)
	pem := func(n string) string { return filepath.Join(dir, n) }
	for name, b := range files {
		if !strings.HasSuffix(name, ".xml") {
			continue
		}
		file := filepath.Join(dir, name)
		xmllint(t, file)
		checks := map[string]string{xpAEC: pem("a.pem"), xpCedido: pem("a.pem"), xpDTE: pem("a.pem"), xpCesion(1, 1): pem("a.pem")}
		if name == "reaec.xml" {
			checks[xpAEC] = pem("f1.pem")
			checks[xpCesion(2, 1)] = pem("f1.pem")
			checks[xpCesion(2, 2)] = pem("f2.pem")
		}
		for xp, cert := range checks {
			if err := xmlsec(t, file, xp, cert); err != nil {
				t.Error(err)
			}
		}
		rep, err := cesion.Verify(b, f.opts(cesion.PolicyStrict))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if len(rep.Warnings) != 0 {
			t.Errorf("%s: warnings %v", name, rep.Warnings)
		}
		wantSigs := 4
		if name == "reaec.xml" {
			wantSigs = 6
		}
		if len(rep.Firmas) != wantSigs {
			t.Errorf("%s: %d signatures reported, want %d", name, len(rep.Firmas), wantSigs)
		}
		for _, s := range rep.Firmas {
			if !s.OK || s.Standalone && s.Nivel != "DTE" {
				t.Errorf("%s: signature %s: ok %v standalone %v %s", name, s.Nivel, s.OK, s.Standalone, s.Error)
			}
		}
		// The stamp, with openssl and the CAF's key.
		tipo := rep.Documento.Tipo
		dd := regexp.MustCompile(`(?s)<DD>.*</DD>`).Find(b)
		frmt := regexp.MustCompile(`<FRMT algoritmo="SHA1withRSA">([^<]*)</FRMT>`).FindSubmatch(b)
		pub := regexp.MustCompile(`(?s)<RSAPUBK>(.*)</RSAPUBK>`).FindSubmatch(f.a.CAFFiles[tipo])
		sig, err := base64.StdEncoding.DecodeString(string(frmt[1]))
		if err != nil {
			t.Fatal(err)
		}
		sub := writeFiles(t, map[string][]byte{"dd": dd, "sig": sig, "pub": pub[1]})
		out, err := oracle.Command(t, "openssl", "dgst", "-sha1", "-verify", filepath.Join(sub, "pub"), "-signature",
			filepath.Join(sub, "sig"), filepath.Join(sub, "dd")).CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte("Verified OK")) {
			t.Errorf("%s: openssl TED: %v %s", name, err, out)
		}
	}
}
