package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/dtekit/dtekit/certificacion"
)

const certIntercambioUsage = `usage: dtekit certificacion intercambio --dir DIR --cert CERT.p12 [--cert-password-file FILE]
                  [--trust KEY.pem]... [--recinto LUGAR] [--cod-envio N] [--at …] ENVIO.xml

The certification's intercambio step: answers the EnvioDTE the SII sent the
company (manifest.json's rut_emisor) with the three files the SII wants back,
written into DIR/intercambio and listed in DIR/manifest.json: the acuse de
recibo (RecepcionEnvio-N.xml), the commercial result accepting the documents
addressed to the company and rejecting the others (ResultadoDTE-N.xml) and the
Ley 19.983 receipt (EnvioRecibos-N.xml). It is "dtekit intercambio responder
--empresa-rut RUT --aceptar --recibo" with the kit's folder: see that
command's help for the checks, the codes and the exit status. --recinto
defaults to "CASA MATRIZ"; --cod-envio to the clock's Unix seconds.
`

// runCertificacionIntercambio implements "dtekit certificacion
// intercambio" through runResponder (one implementation of the answers).
func runCertificacionIntercambio(ctx context.Context, env *cmdEnv, args []string) int {
	const cmd = "certificacion intercambio"
	fs := newFlagSet(env, cmd)
	dir := fs.String("dir", "", "the folder written by dtekit certificacion generar")
	var cf certFlags
	cf.define(fs)
	var trust stringList
	fs.Var(&trust, "trust", "extra trusted CAF-authority public key (PEM), for test CAFs; repeatable")
	recinto := fs.String("recinto", "CASA MATRIZ", "where the goods or services were received (the receipt's Recinto)")
	codEnvio := fs.Int64("cod-envio", 0, "our number for the SII's envelope (default the clock's Unix seconds)")
	at := fs.String("at", "", "clock, Chile local time YYYY-MM-DDTHH:MM:SS (default now)")
	pos, code, ok := parseFlags(env, fs, certIntercambioUsage, args, "dir", "cert")
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return usageError(env, cmd, "want one ENVIO.xml argument, got %d", len(pos))
	}
	m, err := certificacion.ReadManifest(*dir)
	if err != nil {
		return report(env, cmd, false, newError(codeFileUnreadable, "--dir "+*dir, err))
	}
	if *codEnvio == 0 {
		now, err := parseAt(*at)
		if err != nil {
			return usageError(env, cmd, "%v", err)
		}
		*codEnvio = now().Unix()
	}
	out := filepath.Join(*dir, certificacion.IntercambioDir)
	fwd := []string{"--empresa-rut", m.RutEmisor, "--aceptar", "--recibo", "--recinto", *recinto,
		"--cod-envio", strconv.FormatInt(*codEnvio, 10), "--out", out}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "cert", "cert-password", "cert-password-file", "at":
			fwd = append(fwd, "--"+f.Name, f.Value.String())
		}
	})
	for _, k := range trust {
		fwd = append(fwd, "--trust", k)
	}
	if code := runResponder(ctx, env, append(fwd, pos[0])); code != exitOK {
		return code
	}
	for _, kind := range []string{"RecepcionEnvio", "ResultadoDTE", "EnvioRecibos"} {
		name := fmt.Sprintf("%s/%s-%d.xml", certificacion.IntercambioDir, kind, *codEnvio)
		if _, err := os.Stat(filepath.Join(*dir, filepath.FromSlash(name))); err == nil {
			m.Intercambio = append(m.Intercambio, name)
		}
	}
	if err := certificacion.SaveManifest(*dir, m); err != nil {
		return report(env, cmd, false, newError(codeOutputFailed, "--dir "+*dir, err))
	}
	return exitOK
}
