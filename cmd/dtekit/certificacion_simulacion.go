package main

import (
	"context"
	"errors"
	"time"

	"github.com/dtekit/dtekit/certificacion"
)

const simulacionUsage = `usage: dtekit certificacion simulacion --emisor EMISOR.json --cert CERT.p12
                  [--cert-password-file FILE] --caf CAF.xml [--caf CAF.xml]...
                  [--trust KEY.pem]... [--n N] [--fecha YYYY-MM-DD] --out DIR

The certification's simulación: --n (10 to 100; default 10, or one of each type
when more) real-like documents of every type the CAFs authorize among 33, 34,
52, 61, 56, 46, 110, 112 and 111 (boletas have a certification of their own),
cycling through them, with items from a catalog of goods and services, without
the SET reference; each note modifies the amount of the latest factura of its
family before it (CodRef 3), the factura de compra retains the whole IVA. They
go in one signed EnvioDTE. Folios used by the folders beside DIR (the set's
folder: their manifest.json is the ledger) are skipped, and it says so. DIR (absent or empty) receives the documents, the
envelope, the printed samples, manifest.json and LEEME.md as "certificacion
generar" writes them, so "certificacion enviar --dir DIR" and "estado" send
and track it.

A CAF of 33 or 34 is required (the notes modify facturas). On failure nothing
is written and the exit status is 1, with a line on standard error and its
code: FILE_UNREADABLE, INVALID_EMISOR, INVALID_CAF, CAF_MISSING,
CAF_NOT_USABLE, CERTIFICATE_PASSWORD, INVALID_CERTIFICATE, INVALID_TRUSTED_KEY,
OUTPUT_EXISTS, OUTPUT_FAILED or EMISSION_FAILED. A wrong command line exits 2.
On success a JSON summary {"out":…,"documents":…,"samples":…} is printed.
`

// runSimulacion implements "dtekit certificacion simulacion".
func runSimulacion(ctx context.Context, env *cmdEnv, args []string) int {
	const cmd = "certificacion simulacion"
	fs := newFlagSet(env, cmd)
	emisorPath := fs.String("emisor", "", "issuer JSON (contract §2.6 plus acteco), registered for certification")
	var cf certFlags
	cf.define(fs)
	var cafPaths, trust stringList
	fs.Var(&cafPaths, "caf", "CAF of a document type to emit; repeatable")
	fs.Var(&trust, "trust", "extra trusted CAF-authority public key (PEM), for test CAFs; repeatable")
	n := fs.Int("n", 0, "how many documents (10 to 100; default 10, or one of each type)")
	fecha := fs.String("fecha", "", "emission date YYYY-MM-DD (default today in Chile)")
	out := fs.String("out", "", "output directory (absent or empty)")
	pos, code, ok := parseFlags(env, fs, simulacionUsage, args, "emisor", "cert", "caf", "out")
	if !ok {
		return code
	}
	if len(pos) != 0 {
		return usageError(env, cmd, "unexpected arguments %q", pos)
	}
	if *n != 0 && (*n < certificacion.MinSimulacion || *n > certificacion.MaxSimulacion) {
		return usageError(env, cmd, "--n %d: the simulación needs 10 to 100 documents", *n)
	}
	if *fecha != "" {
		if _, err := time.Parse("2006-01-02", *fecha); err != nil {
			return usageError(env, cmd, "--fecha %q must be YYYY-MM-DD", *fecha)
		}
	}
	fail := func(e *cliError) int { return report(env, cmd, false, e) }
	emisor, keys, cafs, cerr := loadKitCAFs(*emisorPath, trust, cafPaths)
	if cerr != nil {
		return fail(cerr)
	}
	cert, usage, cerr := cf.load(env, fs)
	if usage {
		return usageError(env, cmd, "%v", cerr)
	}
	if cerr != nil {
		return fail(cerr)
	}
	usados, cerr := kitLedger(env, cmd, *out, emisor)
	if cerr != nil {
		return fail(cerr)
	}
	res, err := certificacion.Simulacion(ctx, certificacion.SimulacionConfig{N: *n,
		Config: certificacion.Config{Emisor: emisor, Cert: cert, CAFs: cafs, TrustedKeys: keys, Fecha: *fecha, FoliosUsados: usados}})
	var me *certificacion.MissingCAFError
	switch {
	case errors.As(err, &me):
		return fail(newError(codeMissingCAF, "--caf", err))
	case errors.Is(err, certificacion.ErrSimulacionCAF):
		return fail(newError(codeMissingCAF, "--caf", err))
	case err != nil && cafProblem(err):
		return fail(newError(codeCAFUnusable, "--caf", err))
	case err != nil:
		return fail(newError(codeEmitFailed, "", err))
	}
	reportSaltados(env, cmd, res)
	inv := kitInvocacion(*out, cf, cafPaths, trust)
	inv.Emisor = absPath(*emisorPath)
	m, cerr := writeKit(*out, res, emisor, inv)
	if cerr != nil {
		return fail(cerr)
	}
	_ = totalsWriteJSON(env.stdout, map[string]any{"out": *out, "documents": len(m.Sets[0].Cases), "samples": len(m.Muestras)})
	return exitOK
}
