package intercambio_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/intercambio"
	"github.com/dtekit/dtekit/internal/oracle"
	"github.com/dtekit/dtekit/signer"
	"github.com/dtekit/dtekit/signer/signertest"
)

// The two companies of the tests: A (dtetest's demo company, 76192083-9)
// issues, B receives. C is a third company documents can be misaddressed
// to.
const (
	rutA       = dtetest.EmisorRUT
	rutB       = "76086428-5"
	rutC       = "96790240-3"
	signerBRUT = "15111111-4" // the person who signs B's answers
)

// fixture is A's credentials, B's certificate and the documents A issued
// to B (and one to C), built once per test binary.
type fixture struct {
	a     *dtetest.Creds
	certB *signer.Certificate
	// docs are A's signed DTEs to B by type (33, 34, 46, 52, 56, 61) and
	// a 43, which RespuestaDTE cannot name.
	docs map[dte.TipoDTE][]byte
	// toC is a factura from A to C.
	toC []byte
}

var (
	fixOnce sync.Once
	fixVal  *fixture
	fixErr  error
)

// fix returns the shared fixture.
func fix(t testing.TB) *fixture {
	t.Helper()
	fixOnce.Do(func() { fixVal, fixErr = newFixture(oracle.RepoRoot(t)) })
	if fixErr != nil {
		t.Fatal(fixErr)
	}
	return fixVal
}

// requestFile reads one of the repository's sample requests, addressed to
// receptor.
func requestFile(root, name, receptor string) (*dte.EmitirDTERequest, error) {
	f, err := os.Open(filepath.Join(root, "testdata", "requests", name))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	req, err := dte.DecodeRequest(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	req.Receptor.Rut = receptor
	return req, nil
}

func newFixture(root string) (*fixture, error) {
	a, err := dtetest.New(nil)
	if err != nil {
		return nil, err
	}
	certB, err := signertest.NewCertificate(nil, signertest.CertOptions{CommonName: "Bernardita Receptora", RUT: signerBRUT})
	if err != nil {
		return nil, err
	}
	em, err := a.Emitter(nil)
	if err != nil {
		return nil, err
	}
	f := &fixture{a: a, certB: certB, docs: map[dte.TipoDTE][]byte{}}
	for tipo, name := range map[dte.TipoDTE]string{33: "factura.json", 34: "factura_exenta.json", 46: "factura_compra.json",
		52: "guia_despacho.json", 56: "nota_debito.json", 61: "nota_credito.json", 43: "liquidacion_factura.json"} {
		req, err := requestFile(root, name, rutB)
		if err != nil {
			return nil, err
		}
		out, err := em.Emit(context.Background(), req)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		f.docs[tipo] = out.XML
	}
	req, err := requestFile(root, "factura.json", rutC)
	if err != nil {
		return nil, err
	}
	out, err := em.Emit(context.Background(), req)
	if err != nil {
		return nil, err
	}
	f.toC = out.XML
	return f, nil
}

// envio packs DTEs into an EnvioDTE from A to receptor.
func (f *fixture) envio(t testing.TB, receptor string, docs ...[]byte) []byte {
	t.Helper()
	env, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: f.a.Emisor, RutReceptor: receptor}, f.a.Cert, docs...)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// respondible are the types of the fixture's documents that the answers
// name, in envelope order.
var respondible = []dte.TipoDTE{33, 34, 46, 52, 56, 61}

// all returns the fixture's documents to B, the 43 last.
func (f *fixture) all() [][]byte {
	var out [][]byte
	for _, t := range respondible {
		out = append(out, f.docs[t])
	}
	return append(out, f.docs[43])
}

// opts are B's reception options.
func (f *fixture) opts() intercambio.Options {
	return intercambio.Options{Empresa: rutB, Verify: dte.VerifyOptions{Keys: f.a.Keys}, CodEnvio: 17,
		NmbEnvio: "EnvioDTE_76192083-9.xml", At: time.Date(2026, 3, 2, 10, 0, 0, 0, dte.SantiagoLocation())}
}

// receive runs Receive with B's options.
func (f *fixture) receive(t testing.TB, data []byte) *intercambio.Recepcion {
	t.Helper()
	r, err := intercambio.Receive(data, f.opts())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// answerAt is the signing time of the tests' answers.
var answerAt = time.Date(2026, 3, 2, 10, 5, 0, 0, dte.SantiagoLocation())

// resign replaces the DTE's signature with a fresh one by A's certificate,
// so an edited document is signed again (as a fraudster holding the key
// would).
func (f *fixture) resign(t testing.TB, doc []byte) []byte {
	t.Helper()
	sig := regexp.MustCompile(`(?s)<Signature xmlns="http://www.w3.org/2000/09/xmldsig#">.*</Signature>`)
	stripped := sig.ReplaceAll(doc, nil)
	id := regexp.MustCompile(`<Documento ID="([^"]+)"`).FindSubmatch(stripped)
	if id == nil || bytes.Equal(stripped, doc) {
		t.Fatal("resign: no Documento ID or no Signature")
	}
	out, err := f.a.Cert.SignEnveloped(stripped, string(id[1]))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// replaceOnce replaces the first old in doc, failing when it is absent.
func replaceOnce(t testing.TB, doc []byte, old, new string) []byte {
	t.Helper()
	if !bytes.Contains(doc, []byte(old)) {
		t.Fatalf("%q not found", old)
	}
	return bytes.Replace(doc, []byte(old), []byte(new), 1)
}

// field returns the text of the first <name> in doc.
func field(t testing.TB, doc []byte, name string) string {
	t.Helper()
	m := regexp.MustCompile(`<` + name + `>([^<]*)</` + name + `>`).FindSubmatch(doc)
	if m == nil {
		t.Fatalf("no <%s> in the document", name)
	}
	return string(m[1])
}

// oracleFiles writes answers to a directory for the tools.
func oracleFiles(t testing.TB, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// xmllint validates file against schema (a file of ../shared/sii/schemas).
func xmllint(t testing.TB, schema, file string) {
	t.Helper()
	cmd := oracle.Command(t, "xmllint", "--noout", "--schema", schema, file)
	cmd.Dir = oracle.Schemas(t)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), " validates") {
		t.Errorf("xmllint %s %s: %v\n%s", schema, filepath.Base(file), err, out)
	}
}

// xmlsec verifies the signature at xpath in file with xmlsec1: once with
// the key in the signature's KeyValue, once with only the X509 certificate
// given as trusted (certPEM).
func xmlsec(t testing.TB, file, xpath, certPEM string) {
	t.Helper()
	base := []string{"--verify", "--id-attr:ID", "Resultado", "--id-attr:ID", "SetRecibos", "--id-attr:ID", "DocumentoRecibo",
		"--node-xpath", xpath}
	for _, keys := range [][]string{
		{"--enabled-key-data", "key-value", "--enabled-key-data", "rsa"},
		{"--enabled-key-data", "x509", "--trusted-pem", certPEM},
	} {
		args := append(append(append([]string{}, base...), keys...), file)
		out, err := oracle.Command(t, "xmlsec1", args...).CombinedOutput()
		if err != nil || !strings.HasPrefix(strings.TrimSpace(string(out)), "OK") {
			t.Errorf("xmlsec1 %s %s (%s): %v\n%s", filepath.Base(file), xpath, keys[1], err, out)
		}
	}
}
