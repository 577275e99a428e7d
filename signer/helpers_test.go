package signer

import (
	"bytes"
	"github.com/dtekit/dtekit/internal/testpki"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dtekit/dtekit/internal/oracle"
	"golang.org/x/text/encoding/charmap"
)

// Test credentials are generated once per test binary: RSA key generation
// dominates the package's test time otherwise.
var (
	testCertOnce = sync.OnceValues(func() (*Certificate, error) {
		return newTestCertificate(nil, testpki.CertOptions{CommonName: "Signer Prueba", RUT: "7.880.442-4"})
	})
	otherCertOnce = sync.OnceValues(func() (*Certificate, error) {
		return newTestCertificate(nil, testpki.CertOptions{CommonName: "Otro Firmante", RUT: "11111111-1"})
	})
)

func testCert(t testing.TB) *Certificate {
	t.Helper()
	c, err := testCertOnce()
	if err != nil {
		t.Fatalf("NewTestCertificate: %v", err)
	}
	return c
}

func otherCert(t testing.TB) *Certificate {
	t.Helper()
	c, err := otherCertOnce()
	if err != nil {
		t.Fatalf("NewTestCertificate: %v", err)
	}
	return c
}

// latin1 encodes s (which must be representable) in ISO-8859-1.
func latin1(t testing.TB, s string) []byte {
	t.Helper()
	b, err := charmap.ISO8859_1.NewEncoder().Bytes([]byte(s))
	if err != nil {
		t.Fatalf("encoding %q as ISO-8859-1: %v", s, err)
	}
	return b
}

// writeFile writes data into a file of the test's temporary directory.
func writeFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// dteDoc returns a small DTE-like document in ISO-8859-1 whose Documento has
// the given ID, with text that exercises escaping and Latin-1 characters.
func dteDoc(t testing.TB, id string, folio string) []byte {
	t.Helper()
	s := `<?xml version="1.0" encoding="ISO-8859-1"?>` + "\r\n" +
		`<DTE xmlns="http://www.sii.cl/SiiDte" version="1.0"><Documento ID="` + id + `">` + "\r\n" +
		"\t<Encabezado>\r\n" +
		"\t\t<IdDoc><TipoDTE>33</TipoDTE><Folio>" + folio + "</Folio><FchEmis>2024-05-06</FchEmis></IdDoc>\r\n" +
		"\t\t<Emisor><RUTEmisor>76543210-3</RUTEmisor><RznSoc>Compañía Ñandú &amp; Cía. Ltda.</RznSoc>" +
		"<GiroEmis>Artículos &lt;de&gt; oficina 'A' \"B\"</GiroEmis></Emisor>\r\n" +
		"\t\t<Totales><MntNeto>100000</MntNeto><IVA>19000</IVA><MntTotal>119000</MntTotal></Totales>\r\n" +
		"\t</Encabezado>\r\n" +
		"\t<Detalle><NroLinDet>1</NroLinDet><NmbItem>Café &#233;xtra &gt; 50%</NmbItem><DscItem/></Detalle>\r\n" +
		"\t<TmstFirma>2024-05-06T10:11:12</TmstFirma>\r\n" +
		"</Documento></DTE>\r\n"
	return latin1(t, s)
}

// envelope pastes signed DTE documents (their bytes after the XML
// declaration, verbatim) into an EnvioDTE-like envelope.
func envelope(t testing.TB, rootAttrs string, dtes ...[]byte) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="ISO-8859-1"?>` + "\r\n")
	b.WriteString(`<EnvioDTE ` + rootAttrs + ` version="1.0">` + "\r\n")
	b.WriteString(`<SetDTE ID="SetDoc">` + "\r\n<Caratula version=\"1.0\"><RutEmisor>76543210-3</RutEmisor><RutEnvia>7880442-4</RutEnvia></Caratula>\r\n")
	for _, d := range dtes {
		i := bytes.Index(d, []byte("<DTE"))
		if i < 0 {
			t.Fatal("no <DTE in document")
		}
		b.Write(bytes.TrimRight(d[i:], "\r\n"))
		b.WriteString("\r\n")
	}
	b.WriteString("</SetDTE></EnvioDTE>\r\n")
	return b.Bytes()
}

const (
	envRootNS    = `xmlns="http://www.sii.cl/SiiDte"`
	envRootNSXSI = `xmlns="http://www.sii.cl/SiiDte" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://www.sii.cl/SiiDte EnvioDTE_v10.xsd"`
)

// xmlsecVerify runs xmlsec1 --verify on file with the given extra flags and
// reports whether it printed OK.
func xmlsecVerify(t testing.TB, file string, extra ...string) (bool, string) {
	t.Helper()
	bin := oracle.Tool(t, "xmlsec1")
	args := append([]string{"--verify", "--id-attr:ID", "Documento", "--id-attr:ID", "SetDTE"}, extra...)
	args = append(args, file)
	out, err := runCmd(bin, args...)
	return err == nil && strings.HasPrefix(strings.TrimSpace(out), "OK"), out
}

// signatureElement cuts the n-th (0-based) <Signature ...>...</Signature>
// out of doc as a standalone document.
func signatureElement(t testing.TB, doc []byte, n int) []byte {
	t.Helper()
	rest := doc
	for i := 0; ; i++ {
		s := bytes.Index(rest, []byte(`<Signature xmlns="http://www.w3.org/2000/09/xmldsig#">`))
		if s < 0 {
			t.Fatalf("signature %d not found", n)
		}
		e := bytes.Index(rest[s:], []byte("</Signature>"))
		if i == n {
			return rest[s : s+e+len("</Signature>")]
		}
		rest = rest[s+e:]
	}
}

// runCmd runs a program and returns its combined output.
func runCmd(bin string, args ...string) (string, error) {
	out, err := oracle.CombinedOutput(bin, args...)
	return string(out), err
}
