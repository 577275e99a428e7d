package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/caf/caftest"
	"github.com/dtekit/dtekit/certificacion"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/internal/oracle"
	"github.com/dtekit/dtekit/signer/signertest"
)

// leemeCommands returns the commands of a guide's ```sh blocks, in order.
func leemeCommands(t *testing.T, text string) [][]string {
	t.Helper()
	var out [][]string
	for _, block := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(text, -1) {
		for _, line := range strings.Split(strings.TrimSpace(block[1]), "\n") {
			out = append(out, shellWords(t, line))
		}
	}
	return out
}

// shellWords splits a command line the way a POSIX shell does for the
// quoting the guide uses: words separated by spaces, '…' quoting.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	in, have := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'':
			in, have = !in, true
		case c == ' ' && !in:
			if have {
				words = append(words, cur.String())
				cur.Reset()
				have = false
			}
		default:
			cur.WriteByte(c)
			have = true
		}
	}
	if in {
		t.Fatalf("unbalanced quote in %q", line)
	}
	if have {
		words = append(words, cur.String())
	}
	return words
}

// TestCertificacionLeemeGuide follows LEEME.md as a newcomer would, with
// test credentials made for the company's own RUT by "dtekit dev
// credenciales", against "dtekit sii fake" run as a process: generar on a
// whole set file named for the company, then every command of the guide's
// blocks in order (enviar, estado, the simulación with its enviar and
// estado, intercambio of an envelope the "SII" sends), each exiting 0. The
// tables estado prints show every upload approved; the guides are
// re-written with the track ids; the simulación starts above the folios of
// the set's folder; the intercambio answers are listed.
func TestCertificacionLeemeGuide(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary and runs the whole certification; skipped with -short")
	}
	t.Parallel()
	bin := builtBinary(t)
	wd := t.TempDir()
	body := 77301560
	rut := fmt.Sprintf("%d-%c", body, dte.CheckDigit(body))

	// Credentials for the company's own RUT, not valid at the SII.
	r := runBin(t, wd, nil, "dev", "credenciales", "--rut", rut, "--out", "creds")
	if r.code != 0 || !strings.Contains(r.stdout, `"cafs": 12`) {
		t.Fatalf("dev credenciales: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, f := range []string{"autoridad-prueba.pub.pem", "certificado-prueba.p12", "certificado-clave.txt", "emisor.json", "NO-VALIDO-EN-EL-SII.txt"} {
		if _, err := os.Stat(filepath.Join(wd, "creds", f)); err != nil {
			t.Fatal(err)
		}
	}
	cafXML := readString(t, filepath.Join(wd, "creds", "CAF-33.xml"))
	if !strings.Contains(cafXML, "<RE>"+rut+"</RE>") || !strings.Contains(cafXML, "PRUEBA</RS>") {
		t.Errorf("the CAF is not for %s or does not say PRUEBA:\n%s", rut, cafXML)
	}
	if c, err := caf.Parse([]byte(cafXML)); err != nil || c.Verify(caf.SIIKeys()) == nil {
		t.Errorf("the test CAF verifies against the SII's keys alone (%v): it must not", err)
	}

	// The set file, as the SII names it for the company.
	sets := []string{"001-basico.txt", "002-ventas.txt", "003-compras.txt", "005-guia_despacho.txt", "006-libro_guias.txt", "boleta-SetPruebaBE-reconstructed.txt"}
	headers := map[string]string{"001-basico.txt": "SET BASICO - NUMERO DE ATENCION:  414175\r\n\r\n", "005-guia_despacho.txt": "SET GUIA DE DESPACHO - NUMERO DE ATENCION:  428551\r\n\r\n"}
	var all []byte
	for _, f := range sets {
		b, err := os.ReadFile(oracle.SharedFile(t, "sii", "sets", f))
		if err != nil {
			t.Fatal(err)
		}
		all = append(append(append(all, headers[f]...), b...), '\r', '\n')
	}
	setName := "SIISetDePruebas" + strings.ReplaceAll(rut, "-", "") + ".txt"
	if err := os.WriteFile(filepath.Join(wd, setName), all, 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"certificacion", "generar", "--set", setName, "--emisor", "creds/emisor.json", "--cert", "creds/certificado-prueba.p12",
		"--cert-password-file", "creds/certificado-clave.txt", "--trust", "creds/autoridad-prueba.pub.pem", "--url-boletas", "www.empresa-prueba.cl/boletas", "--out", "cert/sets"}
	for _, tp := range dte.Tipos() {
		args = append(args, "--caf", fmt.Sprintf("creds/CAF-%d.xml", tp))
	}
	if r := runBin(t, wd, nil, args...); r.code != 0 {
		t.Fatalf("generar: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	kit := filepath.Join(wd, "cert", "sets")
	// A document of the folder verifies with the test authority, and not
	// without it.
	if r := runBin(t, wd, nil, "verify", "--trust", "creds/autoridad-prueba.pub.pem", filepath.Join(kit, "documentos", "T33F1.xml")); r.code != 0 {
		t.Errorf("verify --trust the test authority: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runBin(t, wd, nil, "verify", filepath.Join(kit, "documentos", "T33F1.xml")); r.code == 0 {
		t.Errorf("a test document verifies against the SII's keys alone")
	}

	// The envelope the "SII" sends in the intercambio step: a factura of
	// another company (with a CAF of the same test authority) to ours.
	envio := sendIntercambio(t, wd, rut)

	_, url := startSIIFake(t, bin)
	env := []string{siiURLEnv + "=" + url}
	cmds := leemeCommands(t, readString(t, filepath.Join(kit, certificacion.LeemeFile)))
	var names []string
	for _, c := range cmds {
		if len(c) < 3 || c[0] != "dtekit" || c[1] != "certificacion" {
			t.Fatalf("LEEME.md gives %q, not a dtekit certificacion command", c)
		}
		names = append(names, c[2])
	}
	if want := "enviar estado simulacion enviar estado intercambio"; strings.Join(names, " ") != want {
		t.Fatalf("LEEME.md's commands %q, want %q", names, want)
	}
	tablas := map[string]string{}
	for _, c := range cmds {
		a := append([]string{}, c[1:]...)
		for i, w := range a {
			if w == "ENVIO-DEL-SII.xml" {
				a[i] = envio
			}
		}
		if c[2] == "estado" {
			a = append(a, "--intervalo", "20ms") // the guide waits 10 s between rounds
		}
		r := runBin(t, wd, env, a...)
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", strings.Join(c, " "), r.code, r.stdout, r.stderr)
		}
		if c[2] == "estado" {
			tablas[a[3]] = r.stdout // a[2] is --dir
		}
		if c[2] == "simulacion" && !strings.Contains(r.stderr, "ya se usaron") {
			t.Errorf("the simulación did not say it skipped the set's folios:\n%s", r.stderr)
		}
	}

	// The sets' table: every upload approved, the envelope of the basic set
	// with its 8 documents, the libros LOK, the RCOF RPR.
	m, err := certificacion.ReadManifest(kit)
	if err != nil {
		t.Fatal(err)
	}
	tabla := tablas[kit]
	for _, want := range []string{"EPR (8 aceptados, 0 reparos, 0 rechazos)", "EPR (3 aceptados, 0 reparos, 0 rechazos)", "EPR (1 aceptados, 0 reparos, 0 rechazos)",
		"EPR (5 aceptados, 0 reparos, 0 rechazos)", "`libros/01-LibroVentas-414176.xml`", "| LOK |", "| RPR |"} {
		if !strings.Contains(tabla, want) {
			t.Errorf("estado's table lacks %q:\n%s", want, tabla)
		}
	}
	if strings.Contains(tabla, "⚠") || strings.Contains(tabla, "sin enviar") {
		t.Errorf("estado's table warns:\n%s", tabla)
	}
	leeme := readString(t, filepath.Join(kit, certificacion.LeemeFile))
	for _, u := range m.Uploads() {
		e := *u.Envio
		if e == nil || e.TrackID == "" || !strings.Contains(leeme, "| "+e.TrackID+" |") {
			t.Errorf("LEEME.md does not show the track id of %s (%+v)", u.File, e)
		}
	}
	if !strings.Contains(leeme, "✓") || strings.Contains(leeme, "sin enviar") {
		t.Errorf("LEEME.md was not re-rendered with the states")
	}
	boletas := readString(t, filepath.Join(kit, certificacion.LeemeBoletasFile))
	if !strings.Contains(boletas, "?SET=2") || !strings.Contains(boletas, m.Sets[len(m.Sets)-1].Envio.TrackID) {
		t.Errorf("LEEME-BOLETAS.md lacks the revision page or the boleta envelope's track id:\n%s", boletas)
	}
	if len(m.Intercambio) != 3 || !strings.Contains(leeme, "`"+m.Intercambio[0]+"`") {
		t.Errorf("the intercambio answers %v are not listed in LEEME.md", m.Intercambio)
	}

	// The simulación: its own envelope approved, above the set's folios.
	sim := filepath.Join(wd, "cert", "sets-simulacion")
	if !strings.Contains(tablas[sim], "EPR (10 aceptados, 0 reparos, 0 rechazos)") {
		t.Errorf("the simulación's table:\n%s", tablas[sim])
	}
	sm, err := certificacion.ReadManifest(sim)
	if err != nil {
		t.Fatal(err)
	}
	used := map[dte.TipoDTE]int64{}
	for _, s := range m.Sets {
		for _, c := range s.Cases {
			used[c.TipoDTE] = max(used[c.TipoDTE], c.Folio)
		}
	}
	for _, c := range sm.Sets[0].Cases {
		if c.Folio <= used[c.TipoDTE] {
			t.Errorf("the simulación's %s reuses tipo %d folio %d (the sets used up to %d)", c.CaseID, c.TipoDTE, c.Folio, used[c.TipoDTE])
		}
	}
}

// sendIntercambio writes the EnvioDTE the SII sends in the intercambio
// step: a factura of the demo company, with a CAF of the test authority in
// wd/creds, addressed to rut. It returns its path.
func sendIntercambio(t *testing.T, wd, rut string) string {
	t.Helper()
	keyPEM, err := os.ReadFile(filepath.Join(wd, "creds", "autoridad-prueba.key.pem"))
	if err != nil {
		t.Fatal(err)
	}
	auth, err := caftest.LoadAuthority(nil, keyPEM, caf.IDKCertificacion)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	file, err := auth.Issue(caftest.IssueRequest{RutEmisor: dtetest.EmisorRUT, RazonSocial: "PROVEEDOR DEL SII PRUEBA", Tipo: 33, Desde: 1, Hasta: 10,
		FechaAutorizacion: dte.ChileTime(now).AddDate(0, 0, -1)})
	if err != nil {
		t.Fatal(err)
	}
	c, err := caf.Parse(file)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := signertest.NewCertificate(nil, signertest.CertOptions{RUT: dtetest.SignerRUT})
	if err != nil {
		t.Fatal(err)
	}
	folios, err := dte.NewMemoryFolios(c)
	if err != nil {
		t.Fatal(err)
	}
	emisor := dtetest.DemoEmisor()
	em := &dte.Emitter{Emisor: emisor, Cert: cert, Folios: folios, TrustedKeys: auth.Keys()}
	out, err := em.Emit(context.Background(), &dte.EmitirDTERequest{TipoDTE: 33, FechaEmision: dte.Today(now),
		Receptor: dte.Receptor{Rut: rut, RazonSocial: "EMPRESA QUE SE CERTIFICA", Giro: "SERVICIOS", Direccion: "CALLE 1", Comuna: "SANTIAGO"},
		Detalle:  []dte.LineaDetalle{{Nombre: "SERVICIO DE PRUEBA", Cantidad: "1", Precio: "10000"}}})
	if err != nil {
		t.Fatal(err)
	}
	env, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: emisor, RutReceptor: rut}, cert, out.XML)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(wd, "envio-del-sii.xml")
	if err := os.WriteFile(p, env, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
