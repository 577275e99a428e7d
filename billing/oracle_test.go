package billing

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dtekit/dtekit/internal/oracle"
)

// xmlsecVerify checks a signed DTE's XML signature with xmlsec1, an
// independent implementation, trusting the RSAKeyValue it carries.
func xmlsecVerify(t testing.TB, name string, xml []byte) {
	t.Helper()
	oracle.Tool(t, "xmlsec1")
	file := filepath.Join(t.TempDir(), name+".xml")
	if err := os.WriteFile(file, xml, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := oracle.Command(t, "xmlsec1", "--verify", "--id-attr:ID", "Documento",
		"--enabled-key-data", "key-value", "--enabled-key-data", "rsa", file).CombinedOutput()
	if err != nil {
		t.Errorf("xmlsec1 rejects %s: %v\n%s", name, err, out)
	}
}

// pdfText extracts a PDF's text with pdftotext.
func pdfText(t testing.TB, pdf []byte) string {
	t.Helper()
	oracle.Tool(t, "pdftotext")
	file := filepath.Join(t.TempDir(), "doc.pdf")
	if err := os.WriteFile(file, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	return string(oracle.Run(t, "pdftotext", "-layout", file, "-"))
}
