package main

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

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/internal/oracle"
	"github.com/dtekit/dtekit/signer/signertest"
)

// The companies of the intercambio tests: A (the demo company) issues, B
// answers, C is someone else.
const (
	icRutA    = dtetest.EmisorRUT
	icRutB    = "76086428-5"
	icRutC    = "96790240-3"
	icSignerB = "15111111-4"
)

var (
	icOnce sync.Once
	icDir  string
	icErr  error
	// icFolios are the folios of the factura (33) and the nota de crédito
	// (61) A sent B.
	icFolios [2]string
)

// intercambioFiles writes, once, what the tests hand the binary: A's
// EnvioDTE to B (a factura, a nota de crédito and a liquidación-factura),
// an EnvioDTE to C, B's certificate (b.p12, password in b-password.txt)
// and A's test CAF authority (authority.pem).
func intercambioFiles(t *testing.T) string {
	t.Helper()
	root := oracle.RepoRoot(t)
	icOnce.Do(func() {
		icDir, icErr = os.MkdirTemp("", "dtekit-intercambio-")
		if icErr != nil {
			return
		}
		icErr = writeIntercambioFiles(root, icDir)
	})
	if icErr != nil {
		t.Fatal(icErr)
	}
	return icDir
}

func writeIntercambioFiles(root, dir string) error {
	a, err := dtetest.New(nil)
	if err != nil {
		return err
	}
	em, err := a.Emitter(nil)
	if err != nil {
		return err
	}
	emit := func(name, to string) ([]byte, error) {
		f, err := os.Open(filepath.Join(root, "testdata", "requests", name))
		if err != nil {
			return nil, err
		}
		defer f.Close()
		req, err := dte.DecodeRequest(f)
		if err != nil {
			return nil, err
		}
		req.Receptor.Rut = to
		out, err := em.Emit(context.Background(), req)
		if err != nil {
			return nil, err
		}
		return out.XML, nil
	}
	var toB [][]byte
	for i, name := range []string{"factura.json", "nota_credito.json", "liquidacion_factura.json"} {
		d, err := emit(name, icRutB)
		if err != nil {
			return err
		}
		if i < 2 {
			icFolios[i] = regexp.MustCompile(`<Folio>(\d+)</Folio>`).FindStringSubmatch(string(d))[1]
		}
		toB = append(toB, d)
	}
	toC, err := emit("factura.json", icRutC)
	if err != nil {
		return err
	}
	envB, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: a.Emisor, RutReceptor: icRutB}, a.Cert, toB...)
	if err != nil {
		return err
	}
	envC, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: a.Emisor, RutReceptor: icRutC}, a.Cert, toC)
	if err != nil {
		return err
	}
	// As the SII's certification step sends it: addressed to B, with one
	// document addressed to someone else.
	mixed, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: a.Emisor, RutReceptor: icRutB}, a.Cert, toB[0], toC)
	if err != nil {
		return err
	}
	certB, err := signertest.NewCertificate(nil, signertest.CertOptions{CommonName: "Bernardita Receptora", RUT: icSignerB})
	if err != nil {
		return err
	}
	p12, err := signertest.EncodePKCS12(certB, "clave-b", signertest.Modern)
	if err != nil {
		return err
	}
	for name, b := range map[string][]byte{"envio-b.xml": envB, "envio-c.xml": envC, "envio-mixto.xml": mixed, "b.p12": p12, "b-password.txt": []byte("clave-b\n"),
		"b.pem": certB.CertificatePEM(), "authority.pem": a.AuthorityPEM, "junk.xml": []byte("<EnvioDTE><SetDTE>")} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// responder runs "dtekit intercambio responder" as B, with extra flags.
func responder(t *testing.T, dir, out string, extra ...string) result {
	t.Helper()
	args := append([]string{"intercambio", "responder", "--empresa-rut", icRutB, "--cert", "b.p12", "--cert-password-file", "b-password.txt",
		"--trust", "authority.pem", "--out", out}, extra...)
	return runBin(t, dir, nil, args...)
}

// checkAnswerFile validates an answer the binary wrote against its schema
// and verifies each of its signatures with xmlsec1 (B's certificate
// trusted, and the KeyValue).
func checkAnswerFile(t *testing.T, dir, file string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	schema, sigs := "RespuestaEnvioDTE_v10.xsd", []string{"/*/*[local-name()='Signature']"}
	if bytes.Contains(data, []byte("<EnvioRecibos ")) {
		schema = "EnvioRecibos_v10.xsd"
		for i := 1; i <= bytes.Count(data, []byte("<Recibo ")); i++ {
			sigs = append(sigs, fmt.Sprintf("(//*[local-name()='Recibo']/*[local-name()='Signature'])[%d]", i))
		}
	}
	cmd := oracle.Command(t, "xmllint", "--noout", "--schema", schema, file)
	cmd.Dir = oracle.Schemas(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("xmllint %s: %v\n%s", filepath.Base(file), err, out)
	}
	for _, xp := range sigs {
		for _, keys := range [][]string{
			{"--enabled-key-data", "key-value", "--enabled-key-data", "rsa"},
			{"--enabled-key-data", "x509", "--trusted-pem", filepath.Join(dir, "b.pem")},
		} {
			args := append([]string{"--verify", "--id-attr:ID", "Resultado", "--id-attr:ID", "SetRecibos", "--id-attr:ID", "DocumentoRecibo",
				"--node-xpath", xp}, append(keys, file)...)
			if out, err := oracle.Command(t, "xmlsec1", args...).CombinedOutput(); err != nil {
				t.Errorf("xmlsec1 %s %s: %v\n%s", filepath.Base(file), xp, err, out)
			}
		}
	}
}

// leer runs "dtekit intercambio leer" as A.
func leer(t *testing.T, dir, file string, extra ...string) result {
	t.Helper()
	return runBin(t, dir, nil, append(append([]string{"intercambio", "leer"}, extra...), file)...)
}

// TestIntercambioRoundTrip: B answers A's envelope through the binary
// (acceptance with receipts, then a rejection), every file it writes
// passes xmllint and xmlsec1, and A reads each one back with the outcome
// B decided.
func TestIntercambioRoundTrip(t *testing.T) {
	oracle.Tool(t, "xmllint")
	oracle.Tool(t, "xmlsec1")
	dir := intercambioFiles(t)
	out := t.TempDir()
	r := responder(t, dir, out, "--aceptar", "--recibo", "--recinto", "Bodega Ñuñoa", "--cod-envio", "41", "--id-respuesta", "7", "envio-b.xml")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		`envio-b.xml: envelope "SetDoc" from ` + icRutA + `, CodEnvio 41: 0 Envio Recibido Conforme`,
		"  tipo 33 folio " + icFolios[0] + ": 0 DTE Recibido OK; EstadoDTE 0 ACEPTADO OK; receipt of goods or services",
		"  tipo 61 folio " + icFolios[1] + ": 0 DTE Recibido OK; EstadoDTE 0 ACEPTADO OK; receipt of goods or services",
		"  tipo 43 folio 1: 0 DTE Recibido OK (not named in the answers: RespuestaDTE has no tipo 43)",
		"wrote " + filepath.Join(out, "RecepcionEnvio-41.xml"),
		"wrote " + filepath.Join(out, "ResultadoDTE-41.xml"),
		"wrote " + filepath.Join(out, "EnvioRecibos-41.xml"),
	} {
		if !strings.Contains(r.stdout, want+"\n") {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	for _, name := range []string{"RecepcionEnvio-41.xml", "ResultadoDTE-41.xml", "EnvioRecibos-41.xml"} {
		checkAnswerFile(t, dir, filepath.Join(out, name))
	}
	if id := regexp.MustCompile(`<IdRespuesta>(\d+)</IdRespuesta>`); id.FindStringSubmatch(readString(t, filepath.Join(out, "ResultadoDTE-41.xml")))[1] != "8" {
		t.Error("the resultado's IdRespuesta is not the acuse's plus one")
	}

	for name, want := range map[string][]string{
		"RecepcionEnvio-41.xml": {"RecepcionEnvio from " + icRutB + " to " + icRutA + " (IdRespuesta 7), signed by " + icSignerB,
			"  tipo 33 folio " + icFolios[0] + " of " + icRutA + ": recibido\n"},
		"ResultadoDTE-41.xml": {"(IdRespuesta 8)", "  tipo 61 folio " + icFolios[1] + " of " + icRutA + ": aceptado\n"},
		"EnvioRecibos-41.xml": {"EnvioRecibos from " + icRutB, ": mercaderias_recibidas at \"Bodega Ñuñoa\", signed by " + icSignerB},
	} {
		r := leer(t, dir, filepath.Join(out, name), "--empresa-rut", icRutA)
		if r.code != 0 || r.stderr != "" {
			t.Errorf("leer %s: exit %d\n%s", name, r.code, r.stderr)
		}
		for _, w := range want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("leer %s: stdout lacks %q:\n%s", name, w, r.stdout)
			}
		}
	}

	// A rejection, in another folder.
	out2 := t.TempDir()
	r = responder(t, dir, out2, "--rechazar", "Ley 19.983: mercadería no solicitada", "--cod-envio", "42", "envio-b.xml")
	if r.code != 0 || !strings.Contains(r.stdout, "EstadoDTE 2 RECHAZADO: Ley 19.983: mercadería no solicitada") {
		t.Fatalf("--rechazar: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	checkAnswerFile(t, dir, filepath.Join(out2, "ResultadoDTE-42.xml"))
	r = leer(t, dir, filepath.Join(out2, "ResultadoDTE-42.xml"), "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"outcome": "rechazado"`) || !strings.Contains(r.stdout, `"motivo": "RECHAZADO: Ley 19.983: mercadería no solicitada"`) {
		t.Errorf("leer --json: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func readString(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestIntercambioCertificationStep: the SII's certification intercambio
// step (sii-wave3-notes.md §6.5) sends an envelope addressed to the
// applicant with a document addressed to another RUT; one run writes the
// three files it wants back: the acuse (NroDetalles 1, CodEnvio, EnvioDTEID
// and Digest of the envelope), the resultado (the other RUT's document
// rejected: EstadoRecepDTE 3, EstadoDTE 2, CodRchDsc -1) and the receipt
// (RutFirma the signer's RUT).
func TestIntercambioCertificationStep(t *testing.T) {
	oracle.Tool(t, "xmllint")
	oracle.Tool(t, "xmlsec1")
	dir := intercambioFiles(t)
	out := t.TempDir()
	r := responder(t, dir, out, "--aceptar", "--recibo", "--recinto", "Oficina central", "--cod-envio", "1", "envio-mixto.xml")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	env := readString(t, filepath.Join(dir, "envio-mixto.xml"))
	digests := regexp.MustCompile(`<DigestValue>([^<]+)</DigestValue>`).FindAllStringSubmatch(env, -1)
	for file, want := range map[string][]string{
		"RecepcionEnvio-1.xml": {"<NroDetalles>1</NroDetalles>", "<CodEnvio>1</CodEnvio><EnvioDTEID>SetDoc</EnvioDTEID><Digest>" + digests[len(digests)-1][1] + "</Digest>",
			"<EstadoRecepEnv>0</EstadoRecepEnv>", "<NroDTE>2</NroDTE>", "<RUTRecep>" + icRutC + "</RUTRecep><MntTotal>"},
		"ResultadoDTE-1.xml": {"<NroDetalles>2</NroDetalles>", "<EstadoDTE>0</EstadoDTE><EstadoDTEGlosa>ACEPTADO OK</EstadoDTEGlosa>",
			"<EstadoDTE>2</EstadoDTE><EstadoDTEGlosa>RECHAZADO: DTE No Recibido - Error en RUT Receptor", "<CodRchDsc>-1</CodRchDsc>"},
		"EnvioRecibos-1.xml": {"<Recinto>Oficina central</Recinto><RutFirma>" + icSignerB + "</RutFirma>"},
	} {
		got := readString(t, filepath.Join(out, file))
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s lacks %q", file, w)
			}
		}
		checkAnswerFile(t, dir, filepath.Join(out, file))
	}
	if n := strings.Count(readString(t, filepath.Join(out, "EnvioRecibos-1.xml")), "<Recibo "); n != 1 {
		t.Errorf("%d receipts, want 1 (the document addressed to us)", n)
	}
	if !strings.Contains(r.stdout, ": 3 DTE No Recibido - Error en RUT Receptor: RUTRecep "+icRutC+" is not "+icRutB+"; EstadoDTE 2 RECHAZADO") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
}

// TestIntercambioHostileAndMisaddressed: an unreadable file and an
// envelope to another company are answered with the SII's codes, and the
// answers pass the oracles; what cannot be answered is said, with its code.
func TestIntercambioHostileAndMisaddressed(t *testing.T) {
	oracle.Tool(t, "xmllint")
	oracle.Tool(t, "xmlsec1")
	dir := intercambioFiles(t)
	out := t.TempDir()

	r := responder(t, dir, out, "--acuse", "--rut-emisor", icRutA, "--cod-envio", "1", "junk.xml")
	if r.code != 0 || !strings.Contains(r.stdout, "CodEnvio 1: 91 Envio Rechazado - Archivo Ilegible: ") {
		t.Errorf("junk: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	checkAnswerFile(t, dir, filepath.Join(out, "RecepcionEnvio-1.xml"))

	r = responder(t, dir, out, "--acuse", "--cod-envio", "2", "junk.xml")
	if r.code != 1 || !strings.Contains(r.stderr, "give --rut-emisor (UNKNOWN_EMITTER)") {
		t.Errorf("junk without --rut-emisor: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	r = responder(t, dir, out, "--aceptar", "--cod-envio", "3", "envio-c.xml")
	if r.code != 0 || !strings.Contains(r.stdout, "CodEnvio 3: 3 Envio Rechazado - RUT Receptor No Corresponde: the envelope is addressed to "+icRutC) ||
		!strings.Contains(r.stdout, ": 3 DTE No Recibido - Error en RUT Receptor: RUTRecep "+icRutC+" is not "+icRutB+"; EstadoDTE 2 RECHAZADO: DTE No Recibido") {
		t.Errorf("envelope to C: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	checkAnswerFile(t, dir, filepath.Join(out, "RecepcionEnvio-3.xml"))
	checkAnswerFile(t, dir, filepath.Join(out, "ResultadoDTE-3.xml"))
	r = leer(t, dir, filepath.Join(out, "RecepcionEnvio-3.xml"), "--empresa-rut", icRutA)
	if r.code != 0 || !strings.Contains(r.stdout, ": recibido_con_reparos: DTE No Recibido - Error en RUT Receptor") {
		t.Errorf("leer the refusal: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// Receipts of nothing: the acuse is written, the command says why it
	// wrote no receipt.
	r = responder(t, dir, out, "--recibo", "--recinto", "Bodega", "--cod-envio", "4", "envio-c.xml")
	if r.code != 1 || !strings.Contains(r.stdout, "wrote "+filepath.Join(out, "RecepcionEnvio-4.xml")) ||
		!strings.Contains(r.stderr, "none can be receipted (NOTHING_TO_ANSWER)") {
		t.Errorf("receipts of an envelope to C: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "EnvioRecibos-4.xml")); err == nil {
		t.Error("an EnvioRecibos of nothing was written")
	}

	// An existing answer is kept, and nothing of the set is written.
	before := readString(t, filepath.Join(out, "RecepcionEnvio-3.xml"))
	r = responder(t, dir, out, "--aceptar", "--cod-envio", "3", "--id-respuesta", "99", "envio-b.xml")
	if r.code != 1 || !strings.Contains(r.stderr, "(OUTPUT_EXISTS)") || readString(t, filepath.Join(out, "RecepcionEnvio-3.xml")) != before {
		t.Errorf("over an existing answer: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r = responder(t, dir, out, "--aceptar", "--cod-envio", "3", "--force", "envio-b.xml"); r.code != 0 {
		t.Errorf("--force: exit %d\n%s", r.code, r.stderr)
	}

	// Answers that cannot be trusted or are not ours.
	tampered := filepath.Join(out, "tampered.xml")
	edited := strings.Replace(readString(t, filepath.Join(out, "ResultadoDTE-3.xml")), "<EstadoDTE>0</EstadoDTE>", "<EstadoDTE>2</EstadoDTE>", 1)
	if err := os.WriteFile(tampered, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file  string
		extra []string
		code  string
		msg   string
	}{
		{tampered, nil, "INVALID_ANSWER", "does not verify"},
		{filepath.Join(dir, "envio-b.xml"), nil, "INVALID_ANSWER", "not RespuestaDTE or EnvioRecibos"},
		{filepath.Join(out, "ResultadoDTE-3.xml"), []string{"--empresa-rut", icRutC}, "ANSWER_NOT_FOR_US", "addressed to " + icRutA},
		{filepath.Join(out, "nope.xml"), nil, "FILE_UNREADABLE", "no such file"},
	} {
		r := leer(t, dir, tc.file, tc.extra...)
		if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "("+tc.code+")") || !strings.Contains(r.stderr, tc.msg) {
			t.Errorf("leer %s: exit %d, stdout %q, stderr %q", filepath.Base(tc.file), r.code, r.stdout, r.stderr)
		}
		if loc := internalChain.FindStringIndex(r.stderr); loc != nil || strings.Contains(r.stderr, "intercambio: ") {
			t.Errorf("leer %s: the error carries an internal chain: %s", filepath.Base(tc.file), r.stderr)
		}
	}
}

// TestIntercambioCommandLine: help on standard output, and each wrong
// command line named, with exit status 2.
func TestIntercambioCommandLine(t *testing.T) {
	dir := intercambioFiles(t)
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"intercambio", "--help"}, ""},
		{[]string{"help", "intercambio"}, ""},
		{[]string{"intercambio", "responder", "--help"}, "-recinto"},
		{[]string{"intercambio", "leer", "-h"}, "-empresa-rut"},
	} {
		r := runBin(t, dir, nil, tc.args...)
		if r.code != 0 || r.stderr != "" || !strings.Contains(r.stdout, "usage: dtekit intercambio") {
			t.Errorf("%v: exit %d, stdout %.80q, stderr %q", tc.args, r.code, r.stdout, r.stderr)
		}
		if tc.flag != "" && !regexp.MustCompile(`(?m)^  `+regexp.QuoteMeta(tc.flag)+`\b.*\n\s+\S`).MatchString(r.stdout) {
			t.Errorf("%v: no description of %s", tc.args, tc.flag)
		}
	}
	out := t.TempDir()
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"envio-b.xml"}, "say what to answer"},
		{[]string{"--acuse", "--rechazar", "x", "envio-b.xml"}, "give one of"},
		{[]string{"--recibo", "envio-b.xml"}, "--recibo needs --recinto"},
		{[]string{"--acuse", "--recinto", "x", "envio-b.xml"}, "--recinto goes with --recibo"},
		{[]string{"--rechazar", " ", "envio-b.xml"}, "needs the reason"},
		{[]string{"--rechazar", "precio ≠ pactado", "envio-b.xml"}, "cannot be written"},
		{[]string{"--recibo", "--recinto", strings.Repeat("x", 81), "envio-b.xml"}, "Recinto has 81"},
		{[]string{"--acuse", "--cod-envio", "0", "envio-b.xml"}, "--cod-envio 0"},
		{[]string{"--acuse"}, "want one ENVIO.xml"},
	} {
		r := responder(t, dir, out, tc.args...)
		if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, tc.msg) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", tc.args, r.code, r.stdout, r.stderr)
		}
	}
	r := runBin(t, dir, nil, "intercambio", "responder", "--cert", "b.p12", "--acuse", "envio-b.xml")
	if r.code != 2 || !strings.Contains(r.stderr, "missing required flag --empresa-rut") {
		t.Errorf("without --empresa-rut: exit %d, %q", r.code, r.stderr)
	}
	r = runBin(t, dir, nil, "intercambio", "responder", "--empresa-rut", "76086428-4", "--cert", "b.p12", "--cert-password-file", "b-password.txt", "--acuse", "envio-b.xml")
	if r.code != 2 || !strings.Contains(r.stderr, "Empresa") {
		t.Errorf("a wrong --empresa-rut: exit %d, %q", r.code, r.stderr)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("wrong command lines wrote %d file(s)", len(entries))
	}
	if r := runBin(t, dir, nil, "intercambio", "mandar"); r.code != 2 || !strings.Contains(r.stderr, `unknown command "mandar"`) {
		t.Errorf("intercambio mandar: exit %d, %q", r.code, r.stderr)
	}
}

// TestIntercambioSignerPolicy: responder and leer take the signer policy
// of verify, through the binary. A's envelope, signed by A's signer, is
// received when the policy names that signer for A and not received
// (EstadoRecepEnv 2, the signer named) when it names another; B's answer
// is read when the policy names B's signer for B and refused with
// SIGNER_REFUSED when it names another, and a malformed --signer is a
// usage error.
func TestIntercambioSignerPolicy(t *testing.T) {
	dir := intercambioFiles(t)
	out := t.TempDir()
	r := responder(t, dir, out, "--acuse", "--cod-envio", "51", "--signer", icRutA+"="+dtetest.SignerRUT, "envio-b.xml")
	if r.code != 0 || !strings.Contains(r.stdout, "CodEnvio 51: 0 Envio Recibido Conforme") {
		t.Fatalf("A's own signer authorized: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = responder(t, dir, t.TempDir(), "--acuse", "--cod-envio", "52", "--signer", icRutA+"=11111111-1", "envio-b.xml")
	if r.code != 0 || !strings.Contains(r.stdout, "CodEnvio 52: 2 ") || !strings.Contains(r.stdout, "signer "+dtetest.SignerRUT+" is not authorized for "+icRutA) {
		t.Errorf("another signer authorized: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	acuse := filepath.Join(out, "RecepcionEnvio-51.xml")
	if r = leer(t, dir, acuse, "--signer", icRutB+"="+icSignerB); r.code != 0 {
		t.Errorf("leer with B's signer authorized: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = leer(t, dir, acuse, "--signer", icRutB+"=11111111-1")
	if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "SIGNER_REFUSED") ||
		!strings.Contains(r.stderr, "signer "+icSignerB+" is not authorized for "+icRutB) || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("leer with another signer authorized: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r = leer(t, dir, acuse, "--signer", icRutB+"=not-a-rut"); r.code != 2 || !strings.Contains(r.stderr, "--signer") {
		t.Errorf("a malformed --signer: exit %d\n%s", r.code, r.stderr)
	}
}

// TestServeSignerPolicyFlags: serve takes the same --signer entries (and
// DTEKIT_SIGNERS) and refuses a malformed one before opening anything;
// its help names the flags and the variables.
func TestServeSignerPolicyFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	code, _, errs := runCLI(t, "", nil, "serve", "--data", dir, "--signer", icRutB+"=not-a-rut")
	if code != 2 || !strings.Contains(errs, "--signer") || strings.Count(errs, "\n") != 2 {
		t.Errorf("serve --signer with a bad RUT: exit %d\n%s", code, errs)
	}
	code, _, errs = runCLI(t, "", map[string]string{"DTEKIT_SIGNERS": icRutB + "=" + icSignerB + ",no-equals"}, "serve", "--data", dir)
	if code != 2 || !strings.Contains(errs, `"no-equals"`) {
		t.Errorf("DTEKIT_SIGNERS with a bad entry: exit %d\n%s", code, errs)
	}
	code, out, _ := runCLI(t, "", nil, "serve", "--help")
	for _, w := range []string{"-signer", "-signer-is-rut-envia", "-valid-at-signing", "DTEKIT_SIGNERS", "DTEKIT_VALID_AT_SIGNING"} {
		if code != 0 || !strings.Contains(out, w) {
			t.Errorf("serve --help lacks %q (exit %d)", w, code)
		}
	}
}
