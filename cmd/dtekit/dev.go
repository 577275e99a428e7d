package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/caf/caftest"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/signer/signertest"
)

const devUsage = `usage: dtekit dev credenciales --rut RUT --out DIR [--razon-social NAME]
                  [--firmante RUT] [--desde 1] [--hasta 1000]

Tools for rehearsing with test credentials. Subcommands:

  credenciales  write test credentials for a company (your own RUT), to
                rehearse the certification kit (generar, enviar, estado,
                simulacion, intercambio) against "dtekit sii fake"

Run "dtekit dev credenciales --help" for its flags.
`

const devCredencialesUsage = `usage: dtekit dev credenciales --rut RUT --out DIR [--razon-social NAME]
                  [--firmante RUT] [--desde 1] [--hasta 1000]

Writes into DIR (absent or empty) test credentials for the company RUT, so a
newcomer can rehearse "dtekit certificacion generar", "enviar", "estado",
"simulacion" and "intercambio" against "dtekit sii fake" with the company's
own RUT before asking the SII for real ones:

  autoridad-prueba.pub.pem   the public key of a test CAF authority, which
                             stands in for the SII: give it as --trust to
                             generar, simulacion, intercambio and verify
  autoridad-prueba.key.pem   its private key (to issue more test CAFs)
  CAF-<tipo>.xml             a CAF of every document type for RUT, folios
                             --desde to --hasta (default 1-1000)
  certificado-prueba.p12     a test signing certificate of the person
                             --firmante (default 13567890-2)
  certificado-clave.txt      its password (random)
  emisor.json                the company in certification (resolución 0):
                             edit its name, giro and address to yours
  NO-VALIDO-EN-EL-SII.txt    says what these files are

None of it is valid at the SII: the CAFs are signed by the test authority, not
by the SII (they verify only against autoridad-prueba.pub.pem, never against
the SII's keys, and their razón social says PRUEBA), and the certificate is
self-signed, its name says PRUEBA NO VALIDA EN EL SII. Use them only with
"dtekit sii fake" (which accepts any signer unless --register is given).

Exit status 0 and a JSON summary {"out":…,"rut":…,"cafs":…} on success; 1 with
a line and its code (INVALID_RUT, OUTPUT_EXISTS, OUTPUT_FAILED) on failure; 2
for a wrong command line.
`

// devNotice is written into NO-VALIDO-EN-EL-SII.txt.
const devNotice = `CREDENCIALES DE PRUEBA - NO VALIDAS EN EL SII

Estos archivos los escribio "dtekit dev credenciales" para ensayar la
certificacion con el RUT %s contra "dtekit sii fake". Ninguno sirve ante el
SII:

- los CAF estan firmados por una autoridad de prueba (autoridad-prueba.pub.pem),
  no por el SII; solo se verifican con --trust autoridad-prueba.pub.pem;
- el certificado es autofirmado ("PRUEBA NO VALIDA EN EL SII").

Para la certificacion real: pida los CAF en el portal del SII (ambiente de
certificacion) y use el certificado digital de una persona autorizada.
`

// runDev implements "dtekit dev".
func runDev(ctx context.Context, env *cmdEnv, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(env.stderr, devUsage)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(env.stdout, devUsage)
		return exitOK
	case "credenciales":
		return runDevCredenciales(ctx, env, args[1:])
	}
	return usageError(env, "dev", "unknown subcommand %q (want credenciales)", args[0])
}

// runDevCredenciales implements "dtekit dev credenciales".
func runDevCredenciales(_ context.Context, env *cmdEnv, args []string) int {
	const cmd = "dev credenciales"
	fs := newFlagSet(env, cmd)
	rutFlag := fs.String("rut", "", "the company's RUT, e.g. 76192083-9")
	out := fs.String("out", "", "output directory (absent or empty)")
	razon := fs.String("razon-social", "", "the company's name in the CAFs (default \"EMPRESA <RUT> PRUEBA\")")
	firmante := fs.String("firmante", dtetest.SignerRUT, "RUT of the person in the test certificate")
	desde := fs.Int64("desde", 1, "first folio of every CAF")
	hasta := fs.Int64("hasta", 1000, "last folio of every CAF")
	pos, code, ok := parseFlags(env, fs, devCredencialesUsage, args, "rut", "out")
	if !ok {
		return code
	}
	if len(pos) != 0 {
		return usageError(env, cmd, "unexpected arguments %q", pos)
	}
	if *desde < 1 || *hasta < *desde || *hasta-*desde >= 1_000_000 {
		return usageError(env, cmd, "--desde %d --hasta %d: want 1 ≤ desde ≤ hasta, at most a million folios", *desde, *hasta)
	}
	fail := func(e *cliError) int { return report(env, cmd, false, e) }
	rut, err := dte.ParseRUT(*rutFlag)
	if err != nil {
		return fail(newError("INVALID_RUT", "--rut", err))
	}
	firma, err := dte.ParseRUT(*firmante)
	if err != nil {
		return fail(newError("INVALID_RUT", "--firmante", err))
	}
	name := strings.TrimSpace(*razon)
	if name == "" {
		name = "EMPRESA " + rut.String()
	}
	// The CAF's razón social (at most 40 characters) says it is a test.
	rs := name
	if r := []rune(rs); len(r) > 33 {
		rs = string(r[:33])
	}
	rs += " PRUEBA"
	if entries, err := os.ReadDir(*out); err == nil && len(entries) > 0 {
		return fail(newError(codeOutputExists, "--out "+*out, errors.New("the folder exists and is not empty; give a new one")))
	} else if err != nil && !errors.Is(err, iofs.ErrNotExist) {
		return fail(newError(codeOutputFailed, "--out "+*out, err))
	}
	files, err := devFiles(rut.String(), firma.String(), name, rs, *desde, *hasta, time.Now())
	if err != nil {
		return fail(newError(codeOutputFailed, "--out "+*out, err))
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return fail(newError(codeOutputFailed, "--out "+*out, err))
	}
	for _, f := range files {
		if err := writeFileAtomic(filepath.Join(*out, f.name), f.data, false); err != nil {
			return fail(newError(codeOutputFailed, "--out "+*out, err))
		}
	}
	_ = totalsWriteJSON(env.stdout, map[string]any{"out": *out, "rut": rut.String(), "cafs": len(dte.Tipos())})
	return exitOK
}

type devFile struct {
	name string
	data []byte
}

// devFiles makes the test credentials of company rut (name, and rs in its
// CAFs) signed by the person firma, at now.
func devFiles(rut, firma, name, rs string, desde, hasta int64, now time.Time) ([]devFile, error) {
	auth, err := caftest.NewAuthority(nil, caf.IDKCertificacion)
	if err != nil {
		return nil, err
	}
	pub, err := auth.PublicKeyPEM()
	if err != nil {
		return nil, err
	}
	priv, err := auth.PrivateKeyPEM()
	if err != nil {
		return nil, err
	}
	files := []devFile{{"autoridad-prueba.pub.pem", pub}, {"autoridad-prueba.key.pem", priv}}
	fa := dte.ChileTime(now).AddDate(0, 0, -1)
	for _, t := range dte.Tipos() {
		b, err := auth.Issue(caftest.IssueRequest{RutEmisor: rut, RazonSocial: rs, Tipo: int(t), Desde: desde, Hasta: hasta, FechaAutorizacion: fa})
		if err != nil {
			return nil, fmt.Errorf("CAF of tipo %d: %w", t, err)
		}
		files = append(files, devFile{fmt.Sprintf("CAF-%d.xml", t), b})
	}
	cert, err := signertest.NewCertificate(nil, signertest.CertOptions{CommonName: "PRUEBA NO VALIDA EN EL SII", RUT: firma,
		NotBefore: now.Add(-24 * time.Hour), NotAfter: now.AddDate(1, 0, 0)})
	if err != nil {
		return nil, err
	}
	var pw [12]byte
	if _, err := rand.Read(pw[:]); err != nil {
		return nil, err
	}
	password := hex.EncodeToString(pw[:])
	p12, err := signertest.EncodePKCS12(cert, password, signertest.Modern)
	if err != nil {
		return nil, err
	}
	emisor := dte.Emisor{Rut: rut, RazonSocial: name, Giro: "GIRO DE LA EMPRESA (ESCRIBA EL SUYO SIN ABREVIATURAS)",
		Direccion: "DIRECCION DE LA CASA MATRIZ 123", Comuna: "SANTIAGO", Ciudad: "SANTIAGO", Ambiente: dte.AmbienteCertificacion,
		FechaResolucion: dte.ChileTime(now).Format("2006-01-02"), NumeroResolucion: 0, Acteco: []int{620200}}
	ej, err := json.MarshalIndent(emisor, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(files, devFile{"certificado-prueba.p12", p12}, devFile{"certificado-clave.txt", []byte(password + "\n")},
		devFile{"emisor.json", append(ej, '\n')}, devFile{"NO-VALIDO-EN-EL-SII.txt", []byte(fmt.Sprintf(devNotice, rut))}), nil
}
