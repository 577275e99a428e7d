package server

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/billingtest"
	"github.com/dtekit/dtekit/internal/oracle"
)

// TestIncludeXMLSavesAsUTF8: the xml_documento of ?include_xml=true,
// saved as UTF-8 text (what any JSON client has), is the signed document:
// xmlsec1 verifies it and its Ñ and accents read as written. The XML
// download keeps the exact ISO-8859-1 bytes, which verify too, and both
// hold the same characters.
func TestIncludeXMLSavesAsUTF8(t *testing.T) {
	t.Parallel()
	be := billingtest.Backends()[0]
	f := newFixture(t, be.NewStore(t), RateLimit{PerSecond: -1})
	body := factura(1)
	body["receptor"].(map[string]any)["razon_social"] = "Comercial Ñandú & Cía. Ltda."
	id, _ := f.emit(f.A, body)

	r := f.do("GET", "/api/v1/billing/dte/"+id+"?include_xml=true", nil, f.A.readHdr...)
	want(t, r, 200)
	var d api.DTE
	r.JSON(t, &d)
	if !strings.HasPrefix(d.XMLDocumento, `<?xml version="1.0" encoding="UTF-8"?>`) {
		t.Errorf("xml_documento starts %.60q, want a UTF-8 declaration", d.XMLDocumento)
	}
	if !strings.Contains(d.XMLDocumento, "Comercial Ñandú &amp; Cía. Ltda.") {
		t.Errorf("xml_documento does not read the receptor's name as written")
	}
	dir := t.TempDir()
	text := filepath.Join(dir, "from-json.xml")
	if err := os.WriteFile(text, []byte(d.XMLDocumento), 0o600); err != nil {
		t.Fatal(err)
	}
	verify := func(file string) {
		t.Helper()
		out, err := oracle.Command(t, "xmlsec1", "--verify", "--id-attr:ID", "Documento",
			"--enabled-key-data", "key-value", "--enabled-key-data", "rsa", file).CombinedOutput()
		if err != nil {
			t.Errorf("xmlsec1 rejects %s: %v\n%s", filepath.Base(file), err, out)
		}
	}
	verify(text)

	r = f.do("GET", "/api/v1/billing/dte/"+id+"/xml", nil, f.A.readHdr...)
	want(t, r, 200)
	if !bytes.HasPrefix(r.Body, []byte(`<?xml version="1.0" encoding="ISO-8859-1"?>`)) || !bytes.Contains(r.Body, []byte("Comercial \xd1and\xfa &amp; C\xeda. Ltda.")) {
		t.Errorf("the XML download is not the ISO-8859-1 bytes: %.80q", r.Body)
	}
	raw := filepath.Join(dir, "download.xml")
	if err := os.WriteFile(raw, r.Body, 0o600); err != nil {
		t.Fatal(err)
	}
	verify(raw)
	_, afterDecl, _ := strings.Cut(d.XMLDocumento, "?>")
	_, rawAfter, _ := bytes.Cut(r.Body, []byte("?>"))
	latin1 := make([]rune, len(rawAfter))
	for i, c := range rawAfter {
		latin1[i] = rune(c)
	}
	if afterDecl != string(latin1) {
		t.Error("xml_documento and the download differ beyond their declarations")
	}
}
