package cesion_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/cesion"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/internal/oracle"
	"github.com/dtekit/dtekit/signer"
	"github.com/dtekit/dtekit/signer/signertest"
)

// The parties: A (dtetest's demo company) issues to B and cedes to the
// factoring company F, whose representative re-cedes to G.
const (
	rutB       = "76086428-5"
	rutF       = "96790240-3"
	rutG       = "77777777-7"
	signerF1   = "15111111-4"
	signerF2   = "9876543-3"
	cesionDate = "2026-03-02"
)

type fixture struct {
	a      *dtetest.Creds
	f1, f2 *signer.Certificate
	docs   map[dte.TipoDTE][]byte
	at     time.Time
}

var (
	fixOnce sync.Once
	fixVal  *fixture
	fixErr  error
)

func fix(t testing.TB) *fixture {
	t.Helper()
	fixOnce.Do(func() { fixVal, fixErr = newFixture(oracle.RepoRoot(t)) })
	if fixErr != nil {
		t.Fatal(fixErr)
	}
	return fixVal
}

func newFixture(root string) (*fixture, error) {
	a, err := dtetest.New(nil)
	if err != nil {
		return nil, err
	}
	f := &fixture{a: a, docs: map[dte.TipoDTE][]byte{}, at: time.Now()}
	if f.f1, err = signertest.NewCertificate(nil, signertest.CertOptions{CommonName: "Fernanda Factoring", RUT: signerF1}); err != nil {
		return nil, err
	}
	if f.f2, err = signertest.NewCertificate(nil, signertest.CertOptions{CommonName: "Felipe Apoderado", RUT: signerF2}); err != nil {
		return nil, err
	}
	em, err := a.Emitter(nil)
	if err != nil {
		return nil, err
	}
	for tipo, name := range map[dte.TipoDTE]string{33: "factura.json", 34: "factura_exenta.json", 46: "factura_compra.json",
		43: "liquidacion_factura.json", 39: "boleta.json", 61: "nota_credito.json"} {
		r, err := os.Open(filepath.Join(root, "testdata", "requests", name))
		if err != nil {
			return nil, err
		}
		req, err := dte.DecodeRequest(r)
		r.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if tipo != 39 {
			req.Receptor.Rut = rutB
		}
		out, err := em.Emit(context.Background(), req)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		f.docs[tipo] = out.XML
	}
	return f, nil
}

// factoring is the cesionario F.
var factoring = cesion.Parte{RUT: rutF, RazonSocial: "Factoring Ñandú & Cía. S.A.", Direccion: "Av. Apoquindo 3000, Las Condes", Email: "cesiones@factoring.cl"}

// segundo is G, who buys from F.
var segundo = cesion.Parte{RUT: rutG, RazonSocial: "Fondo de Inversión Segundo", Direccion: "Huérfanos 1234, Santiago", Email: "ops@segundo.cl"}

// ceder makes A's first cesión of its document of type tipo to F.
func (f *fixture) ceder(t testing.TB, tipo dte.TipoDTE, c cesion.Cesion) []byte {
	t.Helper()
	if c.Cesionario.RUT == "" {
		c.Cesionario = factoring
	}
	if c.Cedente.Email == "" {
		c.Cedente.Email = "finanzas@nunoa.cl"
	}
	if len(c.Firmantes) == 0 {
		c.Firmantes = []*signer.Certificate{f.a.Cert}
	}
	aec, err := cesion.Ceder(cesion.Cedido{DTE: f.docs[tipo], Firmante: f.a.Cert}, c, cesion.Options{At: f.at, NmbContacto: "María José", MailContacto: "mj@nunoa.cl"})
	if err != nil {
		t.Fatal(err)
	}
	return aec
}

// receder appends F's cesión to G, signed by F's two representatives.
func (f *fixture) receder(t testing.TB, aec []byte) []byte {
	t.Helper()
	out, err := cesion.Receder(aec, cesion.Cesion{Cesionario: segundo, Firmantes: []*signer.Certificate{f.f1, f.f2}, Monto: 1000},
		cesion.Options{At: f.at})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (f *fixture) opts(p cesion.Policy) cesion.VerifyOptions {
	return cesion.VerifyOptions{DTE: dte.VerifyOptions{Keys: f.a.Keys}, Policy: p}
}

// writeFiles writes files into a fresh directory for the tools.
func writeFiles(t testing.TB, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// xmllint validates file against AEC_v10.xsd.
func xmllint(t testing.TB, file string) {
	t.Helper()
	cmd := oracle.Command(t, "xmllint", "--noout", "--schema", "AEC_v10.xsd", file)
	cmd.Dir = oracle.Schemas(t)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), " validates") {
		t.Errorf("xmllint %s: %v\n%s", filepath.Base(file), err, out)
	}
}

// idAttrs are the elements whose ID attribute xmlsec1 must know.
var idAttrs = []string{"--id-attr:ID", "DocumentoAEC", "--id-attr:ID", "DocumentoDTECedido", "--id-attr:ID", "DocumentoCesion", "--id-attr:ID", "Documento", "--id-attr:ID", "Liquidacion", "--id-attr:ID", "DocumentoRecibo"}

// xmlsec reports whether xmlsec1 verifies the signature at xpath in file
// with the key in its KeyValue and, when certPEM is set, with only that
// certificate trusted.
func xmlsec(t testing.TB, file, xpath, certPEM string) error {
	t.Helper()
	keys := [][]string{{"--enabled-key-data", "key-value", "--enabled-key-data", "rsa"}}
	if certPEM != "" {
		keys = append(keys, []string{"--enabled-key-data", "x509", "--trusted-pem", certPEM})
	}
	for _, k := range keys {
		args := append(append(append([]string{"--verify"}, idAttrs...), "--node-xpath", xpath), k...)
		out, err := oracle.Command(t, "xmlsec1", append(args, file)...).CombinedOutput()
		if err != nil || !strings.HasPrefix(strings.TrimSpace(string(out)), "OK") {
			return fmt.Errorf("xmlsec1 %s %s (%s): %v\n%s", filepath.Base(file), xpath, k[1], err, out)
		}
	}
	return nil
}
