package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/internal/oracle"
	"github.com/dtekit/dtekit/signer/signertest"
	"github.com/dtekit/dtekit/sii/siitest"
)

// The parties of the cesion tests: A (dtetest's demo company) issues a
// factura to B and cedes it to the factoring company F, whose
// representative re-cedes it to G.
const (
	cesRutB    = "76086428-5"
	cesRutF    = "96790240-3"
	cesRutG    = "77777777-7"
	cesSignerF = "15111111-4"
)

var (
	cesOnce sync.Once
	cesDir  string
	cesErr  error
	cesA    *dtetest.Creds
)

// cesionFiles writes, once, what the cesion tests hand the command: A's
// signed factura to B (dte.xml, and in its EnvioDTE envio.xml), A's certificate (a.p12, its password in
// a-password.txt, a.pem), F's (f.p12, f-password.txt, f.pem) and A's test
// CAF authority (authority.pem). Every test writes its output elsewhere.
func cesionFiles(t *testing.T) string {
	t.Helper()
	root := oracle.RepoRoot(t)
	cesOnce.Do(func() {
		cesDir, cesErr = os.MkdirTemp("", "dtekit-cesion-")
		if cesErr == nil {
			cesErr = writeCesionFiles(root, cesDir)
		}
	})
	if cesErr != nil {
		t.Fatal(cesErr)
	}
	return cesDir
}

func writeCesionFiles(root, dir string) error {
	a, err := dtetest.New(nil)
	if err != nil {
		return err
	}
	cesA = a
	em, err := a.Emitter(nil)
	if err != nil {
		return err
	}
	f, err := os.Open(filepath.Join(root, "testdata", "requests", "factura.json"))
	if err != nil {
		return err
	}
	req, err := dte.DecodeRequest(f)
	f.Close()
	if err != nil {
		return err
	}
	req.Receptor.Rut = cesRutB
	doc, err := em.Emit(context.Background(), req)
	if err != nil {
		return err
	}
	envio, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: a.Emisor}, a.Cert, doc.XML)
	if err != nil {
		return err
	}
	certF, err := signertest.NewCertificate(nil, signertest.CertOptions{CommonName: "Fernanda Factoring", RUT: cesSignerF})
	if err != nil {
		return err
	}
	p12F, err := signertest.EncodePKCS12(certF, "clave-f", signertest.Modern)
	if err != nil {
		return err
	}
	for name, b := range map[string][]byte{"dte.xml": doc.XML, "envio.xml": envio, "a.p12": a.P12, "a-password.txt": []byte(a.Password + "\n"),
		"a.pem": a.Cert.CertificatePEM(), "f.p12": p12F, "f-password.txt": []byte("clave-f\n"), "f.pem": certF.CertificatePEM(),
		"authority.pem": a.AuthorityPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// cederArgs are the flags of A's first cesión of dte.xml to F.
func cederArgs(dir string, extra ...string) []string {
	args := []string{"cesion", "ceder", filepath.Join(dir, "dte.xml"), "--cesionario", cesRutF,
		"--cesionario-nombre", "Factoring Ñandú & Cía. S.A.", "--cesionario-direccion", "Av. Apoquindo 3000, Las Condes",
		"--cesionario-email", "cesiones@factoring.cl", "--email", "finanzas@nunoa.cl",
		"--cert", filepath.Join(dir, "a.p12"), "--cert-password-file", filepath.Join(dir, "a-password.txt"),
		"--trust", filepath.Join(dir, "authority.pem")}
	return append(args, extra...)
}

// aecXmllint validates file against the official AEC_v10.xsd.
func aecXmllint(t *testing.T, file string) {
	t.Helper()
	cmd := oracle.Command(t, "xmllint", "--noout", "--schema", "AEC_v10.xsd", file)
	cmd.Dir = oracle.Schemas(t)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), " validates") {
		t.Errorf("xmllint %s: %v\n%s", filepath.Base(file), err, out)
	}
}

// aecXmlsec verifies with xmlsec1 the signature at xpath in file, with
// only the certificate certPEM trusted (not its KeyValue).
func aecXmlsec(t *testing.T, file, xpath, certPEM string) {
	t.Helper()
	args := []string{"--verify"}
	for _, el := range []string{"DocumentoAEC", "DocumentoDTECedido", "DocumentoCesion", "Documento"} {
		args = append(args, "--id-attr:ID", el)
	}
	args = append(args, "--node-xpath", xpath, "--enabled-key-data", "x509", "--trusted-pem", certPEM, file)
	out, err := oracle.Command(t, "xmlsec1", args...).CombinedOutput()
	if err != nil || !strings.HasPrefix(strings.TrimSpace(string(out)), "OK") {
		t.Errorf("xmlsec1 %s %s: %v\n%s", filepath.Base(file), xpath, err, out)
	}
}

// aecSig is the XPath of an AEC's signatures: the file's (level ""), the
// ceded document's, the DTE's, or the n-th of the seq-th cesión.
func aecSig(level string, seq, n int) string {
	switch level {
	case "AEC":
		return "/*/*[local-name()='Signature']"
	case "DTECedido", "DTE":
		return fmt.Sprintf("//*[local-name()='%s']/*[local-name()='Signature']", level)
	}
	return fmt.Sprintf("(//*[local-name()='Cesion'])[%d]/*[local-name()='Signature'][%d]", seq, n)
}

// TestCesionCederLeer: "cesion ceder" writes a first cesión and a
// re-cession that xmllint validates against AEC_v10.xsd and whose every
// signature xmlsec1 verifies with only its signer's certificate trusted
// (A's for the DTE, the ceded document, the first cesión and the first
// file; F's for the second cesión and the second file); "cesion leer"
// accepts both under the strict policy, prints the parties, the amount
// (the DTE's own MntTotal, in Chile's thousands) and every signature; the
// files edited by one byte are refused (exit 1, AEC_REFUSED naming the
// element); and the command line's mistakes are named in one line.
func TestCesionCederLeer(t *testing.T) {
	t.Parallel()
	oracle.Tool(t, "xmllint")
	oracle.Tool(t, "xmlsec1")
	dir := cesionFiles(t)
	out := t.TempDir()
	aec1, aec2 := filepath.Join(out, "AEC-1.xml"), filepath.Join(out, "AEC-2.xml")
	code, stdout, stderr := runCLI(t, "", nil, cederArgs(dir, "--vencimiento", "2027-01-31", "--out", aec1)...)
	if code != 0 || !strings.Contains(stdout, "wrote "+aec1+": cesión 1, "+dtetest.EmisorRUT+" → "+cesRutF) {
		t.Fatalf("ceder: exit %d\n%s%s", code, stdout, stderr)
	}
	// The re-cession: F, the cesionario, cedes to G; its e-mail and
	// address come from the first cesión.
	code, stdout, stderr = runCLI(t, "", nil, "cesion", "ceder", aec1, "--cesionario", cesRutG, "--cesionario-nombre", "Fondo de Inversión Segundo",
		"--cesionario-direccion", "Huérfanos 1234, Santiago", "--cesionario-email", "ops@segundo.cl", "--monto", "100.000",
		"--cert", filepath.Join(dir, "f.p12"), "--cert-password-file", filepath.Join(dir, "f-password.txt"),
		"--trust", filepath.Join(dir, "authority.pem"), "--out", aec2)
	if code != 0 || !strings.Contains(stdout, "cesión 2, "+cesRutF+" → "+cesRutG+", $100.000,") {
		t.Fatalf("re-cession: exit %d\n%s%s", code, stdout, stderr)
	}
	a, f := filepath.Join(dir, "a.pem"), filepath.Join(dir, "f.pem")
	for file, sigs := range map[string]map[string]string{
		aec1: {aecSig("AEC", 0, 0): a, aecSig("DTECedido", 0, 0): a, aecSig("DTE", 0, 0): a, aecSig("", 1, 1): a},
		aec2: {aecSig("AEC", 0, 0): f, aecSig("DTECedido", 0, 0): a, aecSig("DTE", 0, 0): a, aecSig("", 1, 1): a, aecSig("", 2, 1): f},
	} {
		aecXmllint(t, file)
		for xp, pem := range sigs {
			aecXmlsec(t, file, xp, pem)
		}
	}

	// leer, in words and as JSON.
	dteXML, err := os.ReadFile(filepath.Join(dir, "dte.xml"))
	if err != nil {
		t.Fatal(err)
	}
	total := regexp.MustCompile(`<MntTotal>(\d+)</MntTotal>`).FindSubmatch(dteXML)[1]
	var dotted []byte // the total with a dot every three digits from the right
	for i, c := range total {
		if i > 0 && (len(total)-i)%3 == 0 {
			dotted = append(dotted, '.')
		}
		dotted = append(dotted, c)
	}
	trust := filepath.Join(dir, "authority.pem")
	code, stdout, stderr = runCLI(t, "", nil, "cesion", "leer", "--policy", "strict", "--trust", trust, aec2)
	for _, want := range []string{aec2 + ": OK (policy strict)",
		"cesión 1: " + dtetest.EmisorRUT, "→ " + cesRutF + ` "Factoring Ñandú & Cía. S.A.", $` + string(dotted) + ", last due 2027-01-31",
		"cesión 2: " + cesRutF, "→ " + cesRutG + ` "Fondo de Inversión Segundo", $100.000,`,
		"authorized: " + cesSignerF + ` "Fernanda Factoring"`,
		"    Cesion[2]  OK, signed by " + cesSignerF, "    AEC        OK, signed by " + cesSignerF} {
		if !strings.Contains(stdout, want) {
			t.Errorf("leer: no %q in\n%s", want, stdout)
		}
	}
	if code != 0 || strings.Contains(stdout, "FAILED") || stderr != "" {
		t.Errorf("leer: exit %d\n%s%s", code, stdout, stderr)
	}
	// Who may sign: A's signer for A, F's for F; F without an entry is
	// refused at its cesión and at the file's signature.
	signerA, signerF := "--signer="+dtetest.EmisorRUT+"="+dtetest.SignerRUT, "--signer="+cesRutF+"="+cesSignerF
	if code, stdout, stderr := runCLI(t, "", nil, "cesion", "leer", "--trust", trust, signerA, signerF, aec2); code != 0 {
		t.Errorf("leer with both signers: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t, "", nil, "cesion", "leer", "--trust", trust, signerA, aec2)
	if code != 1 || !strings.Contains(stderr, "Cesion[2].Signature[1]: ") || !strings.Contains(stderr, "AEC.Signature: ") || !strings.HasSuffix(stderr, "(AEC_REFUSED)\n") {
		t.Errorf("leer without F's signer: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = runCLI(t, "", nil, "cesion", "leer", "--json", "--trust", trust, aec1)
	var rep struct {
		OK        bool   `json:"ok"`
		Policy    string `json:"policy"`
		Documento struct {
			Tipo       int    `json:"tipo_dte"`
			MontoTotal string `json:"monto_total"`
		} `json:"documento"`
		Report struct {
			Firmas []struct {
				Nivel string `json:"nivel"`
				OK    bool   `json:"ok"`
			} `json:"firmas"`
		} `json:"report"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != 0 {
		t.Fatalf("leer --json: exit %d, %v\n%s", code, err, stdout)
	}
	if !rep.OK || rep.Policy != "registry" || rep.Documento.Tipo != 33 || rep.Documento.MontoTotal != string(total) || len(rep.Report.Firmas) != 4 {
		t.Errorf("leer --json: %+v", rep)
	}

	// One byte edited: the cesionario's name in the first cesión, the
	// amount of the second, the debtor's RUT in the DTE.
	orig, err := os.ReadFile(aec2)
	if err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string]struct{ old, new, field string }{
		"cesionario": {"Factoring Ñandú", "Factoring Ñandu", "AEC.Signature"},
		"monto":      {"<MontoCesion>100000<", "<MontoCesion>100001<", "AEC.Signature"},
		"receptor":   {"<RUTRecep>" + cesRutB, "<RUTRecep>" + cesRutB[:7] + "9" + cesRutB[8:], "DocumentoDTECedido.DTE"},
	} {
		old, _ := latin1(edit.old)
		nw, _ := latin1(edit.new)
		bad := bytes.Replace(orig, old, nw, 1)
		if bytes.Equal(bad, orig) || len(bad) != len(orig) {
			t.Fatalf("%s: the edit %q changed nothing or more than a byte", name, edit.old)
		}
		p := filepath.Join(out, name+".xml")
		if err := os.WriteFile(p, bad, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, pol := range []string{"registry", "strict"} {
			code, stdout, stderr := runCLI(t, "", nil, "cesion", "leer", "--policy", pol, "--trust", trust, p)
			if code != 1 || !strings.Contains(stdout, p+": REFUSED (policy "+pol+")") || !strings.HasSuffix(stderr, "(AEC_REFUSED)\n") ||
				strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, edit.field) {
				t.Errorf("%s, policy %s: exit %d, want 1 naming %s\n%s%s", name, pol, code, edit.field, stdout, stderr)
			}
		}
	}

	// The command line's mistakes, each in one line naming the flag.
	notDTE := cederArgs(dir)
	notDTE[2] = filepath.Join(dir, "a.pem")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{cederArgs(dir, "--cesionario-email", "nadie", "--monto", "999999999999"), 1,
			`--cesionario-email (cesionario.email): "nadie" is not an e-mail address`},
		{cederArgs(dir, "--monto", "999999999999"), 1, "--monto (monto): MontoCesion 999999999999 must be over 0 and at most the document's total " + string(total)},
		{cederArgs(dir, "--vencimiento", "2020-01-01"), 1, "--vencimiento (ultimo_vencimiento): 2020-01-01 is before the document's issue date"},
		{cederArgs(dir, "--cesionario", dtetest.EmisorRUT), 1, "--cesionario (cesionario.rut): the cesionario is the cedente itself"},
		{cederArgs(dir, "--out", aec1), 1, "already exists; give --force to replace it (OUTPUT_EXISTS)"},
		{cederArgs(dir, "--monto", "mucho"), 2, `--monto "mucho": want a whole amount over 0`},
		{cederArgs(dir, "--policy", "laxa"), 2, `invalid value "laxa" for flag -policy: "laxa" is not registry or strict`},
		{cederArgs(dir)[:5], 2, "missing required flag --cesionario-nombre"},
		{[]string{"cesion", "ceder", filepath.Join(dir, "dte.xml"), "--cesionario", cesRutF, "--cesionario-nombre", "F", "--cesionario-direccion",
			"Calle 12", "--cesionario-email", "a@b.cl", "--cert", filepath.Join(dir, "a.p12")}, 2, "missing required flag --email"},
		{notDTE, 1, "not an XML file (INVALID_DTE)"},
		{[]string{"cesion", "leer", filepath.Join(dir, "dte.xml")}, 1, "AEC: the root is not an AEC of the SII namespace"},
	} {
		code, stdout, stderr := runCLI(t, "", map[string]string{certPasswordEnv: cesA.Password}, c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) || (code == 1 && strings.Count(stderr, "\n") != 1) || stdout != "" {
			t.Errorf("%v: exit %d, want %d with %q\nstdout %q\nstderr %s", c.args[3:], code, c.code, c.want, stdout, stderr)
		}
	}
	for _, args := range [][]string{{"cesion", "--help"}, {"cesion", "ceder", "--help"}, {"cesion", "leer", "-h"}, {"help", "cesion"}} {
		code, stdout, _ := runCLI(t, "", nil, args...)
		if code != 0 || !strings.Contains(stdout, "dtekit cesion") || !strings.Contains(stdout, "xample") {
			t.Errorf("%v: exit %d, no example:\n%s", args, code, stdout)
		}
	}
}

// latin1 encodes s as ISO-8859-1, the AEC's encoding.
func latin1(s string) ([]byte, bool) {
	b := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xFF {
			return nil, false
		}
		b = append(b, byte(r))
	}
	return b, true
}

// realAECEnv names a folder of real AEC files the SII's registry recorded,
// for TestCesionLeerRealFiles. The two public ones known (published by
// the cl-sii Python library under the MIT licence:
// https://github.com/cordada/lib-cl-sii-python, src/tests/test_data/sii-rtc/,
// AEC--76399752-9--33--25568--SEQ-1.xml and
// AEC--76354771-K--33--170--SEQ-2.xml) name real people, so the
// repository does not keep them: download them there to run the test.
const realAECEnv = "DTEKIT_REAL_AEC_DIR"

// TestCesionLeerRealFiles: "cesion leer" accepts every real AEC of
// $DTEKIT_REAL_AEC_DIR under the default policy (registry), with only the
// SII's CAF keys trusted, and refuses each one edited at one byte in every
// 11 of its root element (exit 1, AEC_REFUSED or INVALID_AEC), leaving out
// what no signature of the SII's profile covers: comments, and the bytes
// of the certificate beside the file's own signature (see package cesion's
// documentation).
func TestCesionLeerRealFiles(t *testing.T) {
	t.Parallel()
	dir := os.Getenv(realAECEnv)
	if dir == "" {
		t.Skipf("$%s is not set: no real AEC files to read", realAECEnv)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.xml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no *.xml in $%s (%s): %v", realAECEnv, dir, err)
	}
	out := t.TempDir()
	comment := regexp.MustCompile(`(?s)<!--.*?-->`)
	for _, file := range files {
		code, stdout, stderr := runCLI(t, "", nil, "cesion", "leer", file)
		if code != 0 || !strings.Contains(stdout, ": OK (policy registry)") || strings.Contains(stdout, "FAILED") {
			t.Errorf("%s: exit %d\n%s%s", file, code, stdout, stderr)
			continue
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		skip := comment.FindAllIndex(data, -1)
		skip = append(skip, []int{bytes.LastIndex(data, []byte("<X509Certificate>")), bytes.LastIndex(data, []byte("</X509Certificate>"))})
		start, end := bytes.Index(data, []byte("<AEC")), bytes.LastIndex(data, []byte("</AEC>"))+len("</AEC>")
		edited, refused := 0, 0
	next:
		for i := start; i < end; i += 11 {
			for _, s := range skip {
				if i >= s[0] && i < s[1] {
					continue next
				}
			}
			bad := bytes.Clone(data)
			bad[i] ^= 0x01
			p := filepath.Join(out, "edited.xml")
			if err := os.WriteFile(p, bad, 0o600); err != nil {
				t.Fatal(err)
			}
			edited++
			code, _, stderr := runCLI(t, "", nil, "cesion", "leer", p)
			if code == 1 && (strings.HasSuffix(stderr, "(AEC_REFUSED)\n") || strings.HasSuffix(stderr, "(INVALID_AEC)\n")) {
				refused++
				continue
			}
			t.Errorf("%s edited at byte %d (%q → %q): exit %d, want 1\n%s", filepath.Base(file), i, data[i], bad[i], code, stderr)
		}
		t.Logf("%s: accepted; %d of %d one-byte edits refused", filepath.Base(file), refused, edited)
	}
}

// TestCesionEnviarEstado runs enviar and estado in process against a fake
// SII on loopback found through $DTEKIT_SII_URL, whose registry trusts A's
// test CAF authority: A's factura, accepted by the fake's review, is ceded
// to F (EOK after the review's steps, waited for with --esperar); the
// registry then says the document is ceded and held by F; A's second
// cesión of it, to G, is rejected (RCS, exit 1 AEC_REJECTED); F's
// re-cession to G is recorded and G holds it; an unknown folio is not
// ceded; an SII out of reach is SII_UNAVAILABLE; and the command line's
// mistakes are exit 2.
func TestCesionEnviarEstado(t *testing.T) {
	t.Parallel()
	dir := cesionFiles(t)
	fake := siitest.New(siitest.Options{Steps: []string{}, CAFKeys: cesA.Keys}).Start()
	defer fake.Close()
	fake.Register(dtetest.SignerRUT, dtetest.EmisorRUT)
	fake.Register(cesSignerF, cesRutF)
	url := fake.Endpoints().Classic
	runIn := func(siiURL string, args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		env := &cmdEnv{stdout: &out, stderr: &errb, getenv: func(k string) string {
			if k == siiURLEnv {
				return siiURL
			}
			return ""
		}}
		return run(context.Background(), env, args), out.String(), errb.String()
	}
	a := []string{"--cert", filepath.Join(dir, "a.p12"), "--cert-password-file", filepath.Join(dir, "a-password.txt")}
	f := []string{"--cert", filepath.Join(dir, "f.p12"), "--cert-password-file", filepath.Join(dir, "f-password.txt")}
	trust := []string{"--trust", filepath.Join(dir, "authority.pem")}
	if code, out, errs := runIn(url, append([]string{"sii", "upload", "--url", url, filepath.Join(dir, "envio.xml")}, a...)...); code != 0 {
		t.Fatalf("the factura's envelope: %d %s %s", code, out, errs)
	}
	folio := regexp.MustCompile(`<Folio>(\d+)</Folio>`).FindStringSubmatch(readString(t, filepath.Join(dir, "dte.xml")))[1]
	out := t.TempDir()
	aecF, aecG, aecFG := filepath.Join(out, "a-f.xml"), filepath.Join(out, "a-g.xml"), filepath.Join(out, "f-g.xml")
	if code, _, errs := runCLI(t, "", nil, cederArgs(dir, "--out", aecF)...); code != 0 {
		t.Fatalf("ceder to F: %d %s", code, errs)
	}
	toG := cederArgs(dir, "--out", aecG)
	toG[4] = cesRutG
	if code, _, errs := runCLI(t, "", nil, toG...); code != 0 {
		t.Fatalf("ceder to G: %d %s", code, errs)
	}
	if code, _, errs := runCLI(t, "", nil, append(append([]string{"cesion", "ceder", aecF, "--cesionario", cesRutG, "--cesionario-nombre", "Fondo Segundo",
		"--cesionario-direccion", "Huérfanos 1234", "--cesionario-email", "ops@segundo.cl", "--out", aecFG}, f...), trust...)...); code != 0 {
		t.Fatalf("re-cession to G: %d %s", code, errs)
	}

	enviar := func(file string, cert []string) string {
		t.Helper()
		code, stdout, stderr := runIn(url, append(append([]string{"cesion", "enviar", file}, cert...), trust...)...)
		if code != 0 || !regexp.MustCompile(`^[0-9]{1,10}\n$`).MatchString(stdout) || stderr != "" {
			t.Fatalf("enviar %s: exit %d %q %q", filepath.Base(file), code, stdout, stderr)
		}
		return strings.TrimSpace(stdout)
	}
	// estado asks as A, unless the last arguments name another certificate.
	estado := func(args ...string) (int, string, string) {
		t.Helper()
		if !slices.Contains(args, "--cert") {
			args = append(args, a...)
		}
		return runIn(url, append([]string{"cesion", "estado"}, args...)...)
	}
	wait := []string{"--esperar", "10s", "--intervalo", "5ms"}

	track := enviar(aecF, a)
	if up := fake.AECUploads(); len(up) != 1 || up[0].TrackID != track || up[0].Email != "finanzas@nunoa.cl" || up[0].Company != dtetest.EmisorRUT {
		t.Fatalf("the registry received %+v", up)
	}
	code, stdout, stderr := estado("--track", track)
	if code != 0 || stdout != "TRACKID "+track+": RCP Envío recibido (pending)\n" {
		t.Errorf("estado, first question: %d %q %q", code, stdout, stderr)
	}
	code, stdout, stderr = estado(append([]string{"--track", track}, wait...)...)
	if code != 0 || stdout != "TRACKID "+track+": EOK Envío aceptado: cesión registrada (accepted)\n" {
		t.Fatalf("estado --esperar: %d %q %q", code, stdout, stderr)
	}
	doc := []string{"--emisor", dtetest.EmisorRUT, "--tipo", "33", "--folio", folio}
	code, stdout, stderr = estado(doc...)
	if code != 0 || !strings.HasPrefix(stdout, "factura electrónica 33 folio "+folio+" of "+dtetest.EmisorRUT+": ceded") {
		t.Errorf("estado of the document: %d %q %q", code, stdout, stderr)
	}
	code, stdout, stderr = estado(append(append(doc, "--empresa", cesRutF), f...)...)
	if code != 0 || !strings.Contains(stdout, ": ceded, held by "+cesRutF+", last recorded ") || !strings.Contains(stdout, "sworn declaration EXISTE") {
		t.Errorf("estado --empresa F: %d %q %q", code, stdout, stderr)
	}

	// A second cesión of the same document by A: rejected in review.
	track = enviar(aecG, a)
	code, stdout, stderr = estado(append([]string{"--track", track}, wait...)...)
	if code != 1 || !strings.HasPrefix(stdout, "TRACKID "+track+": RCS ") || !strings.HasSuffix(stderr, "(AEC_REJECTED)\n") ||
		!strings.Contains(stderr, "--track "+track+": the registry rejected the AEC: RCS ") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("the second cesión: %d %q %q", code, stdout, stderr)
	}
	// F's re-cession to G is recorded, and G holds the document.
	track = enviar(aecFG, f)
	if code, stdout, stderr = estado(append(append([]string{"--track", track}, wait...), f...)...); code != 0 || !strings.Contains(stdout, ": EOK ") {
		t.Errorf("the re-cession: %d %q %q", code, stdout, stderr)
	}
	recorded := fake.Cesiones()
	if len(recorded) != 2 || recorded[0].Cesionario != cesRutF || recorded[1].Cesionario != cesRutG {
		t.Fatalf("the registry recorded %+v", recorded)
	}
	code, stdout, stderr = estado(append(doc, "--id-cesion", recorded[1].IdCesion, "--json")...)
	var st struct {
		Estado     int    `json:"estado"`
		Cedido     bool   `json:"cedido"`
		RutTenedor string `json:"rut_tenedor"`
	}
	if err := json.Unmarshal([]byte(stdout), &st); err != nil || code != 0 || st.Estado != 0 || !st.Cedido || st.RutTenedor != cesRutG {
		t.Errorf("estado --id-cesion --json: %d %v %q %q", code, err, stdout, stderr)
	}
	// Another folio is not ceded.
	code, stdout, stderr = estado("--emisor", dtetest.EmisorRUT, "--tipo", "33", "--folio", "999999")
	if code != 0 || !strings.Contains(stdout, "folio 999999 of "+dtetest.EmisorRUT+": not ceded") {
		t.Errorf("an unknown folio: %d %q %q", code, stdout, stderr)
	}

	// An SII out of reach.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	code, stdout, stderr = runIn(closed, append([]string{"cesion", "estado", "--track", "1", "--timeout", "2s"}, a...)...)
	if code != 1 || stdout != "" || !strings.HasSuffix(stderr, "(SII_UNAVAILABLE)\n") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("no SII: %d %q %q", code, stdout, stderr)
	}

	// The command line's mistakes.
	for name, args := range map[string][]string{
		"neither track nor document":  {"cesion", "estado"},
		"both track and document":     append([]string{"cesion", "estado", "--track", "1"}, doc...),
		"document without folio":      {"cesion", "estado", "--emisor", dtetest.EmisorRUT, "--tipo", "33"},
		"id-cesion and empresa":       append([]string{"cesion", "estado", "--id-cesion", "ABC", "--empresa", cesRutF}, doc...),
		"esperar without track":       append([]string{"cesion", "estado", "--esperar", "1m"}, doc...),
		"a track that is not digits":  {"cesion", "estado", "--track", "12a"},
		"a bad check digit":           {"cesion", "estado", "--emisor", "76192083-0", "--tipo", "33", "--folio", "1"},
		"enviar without a file":       {"cesion", "enviar"},
		"an unknown ambiente":         {"cesion", "estado", "--track", "1", "--ambiente", "staging"},
		"an unknown cesion command":   {"cesion", "anular"},
		"enviar, a bad notify e-mail": append([]string{"cesion", "enviar", aecF, "--email", "nadie"}, trust...),
	} {
		args = append(args, a...)
		if code, _, errs := runIn(url, args...); code != 2 || errs == "" || strings.Contains(errs, "sii: ") {
			t.Errorf("%s: exit %d %q, want 2", name, code, errs)
		}
	}
	for _, sub := range []string{"enviar", "estado"} {
		if code, stdout, _ := runIn("", "cesion", sub, "--help"); code != 0 || !strings.Contains(stdout, "Example") || !strings.Contains(stdout, "DTEKIT_SII_URL") {
			t.Errorf("cesion %s --help: %d %s", sub, code, stdout)
		}
	}
}

// TestREADMECesion runs the README's "Cesión de facturas" as written, with
// the built binary as dtekit on PATH, in a fresh directory, the fake SII on
// a free port instead of 8099 (given a second to listen): the factura the
// fake accepted is ceded, read, sent, recorded (EOK) and held by the
// factoring company.
func TestREADMECesion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	t.Parallel()
	oracle.Tool(t, "sed")
	bin := builtBinary(t)
	blocks := readmeBlocks(t, "## Cesión de facturas")
	if len(blocks) != 1 {
		t.Fatalf("the README's cesión has %d shell blocks, want 1: %q", len(blocks), blocks)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var script []string
	for _, line := range strings.Split(blocks[0], "\n") {
		script = append(script, strings.ReplaceAll(line, "127.0.0.1:8099", addr))
		if strings.Contains(line, "sii fake") {
			script = append(script, "FAKE=$!; sleep 1")
		}
	}
	cmd := exec.Command("sh", "-e", "-c", "trap 'kill $FAKE 2>/dev/null' EXIT\n"+strings.Join(script, "\n"))
	res := runCmd(t, cmd, t.TempDir(), []string{"PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH")})
	for _, want := range []string{`"estado": "aceptado"`, "AEC-33-1.xml: OK (policy registry)", ": EOK Envío aceptado: cesión registrada (accepted)\n",
		"factura electrónica 33 folio 1 of 76192083-9: ceded, held by 96790240-3, last recorded "} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("the README's cesión does not print %q", want)
		}
	}
	if res.code != 0 || t.Failed() {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
}
