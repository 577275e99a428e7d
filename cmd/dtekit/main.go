// Command dtekit is the command-line face of the dtekit SDK: it computes
// totals, emits and verifies signed DTEs, builds envelopes, renders PDFs,
// signs and verifies webhooks, and runs the reference REST server.
//
// Usage:
//
//	dtekit totals REQUEST.json
//	dtekit emit --emisor EMISOR.json --caf CAF.xml --cert CERT.p12 --cert-password-file FILE --folio N REQUEST.json
//	dtekit envio --emisor EMISOR.json --cert CERT.p12 --cert-password-file FILE DTE.xml... > ENVIO.xml
//	dtekit verify [--trust KEY.pem]... FILE.xml...
//	dtekit caf inspect CAF.xml
//	dtekit demo [--out DIR]
//	dtekit pdf DTE.xml [--cedible] [--format carta|80mm] [-o OUT.pdf]
//	dtekit webhook sign|verify|secret ...
//	dtekit certificacion generar --set SET.txt --emisor EMISOR.json --cert CERT.p12 --caf CAF.xml... --out DIR
//	dtekit sii token|upload|status|dte-status|fake ...
//	dtekit rcv aceptar|reclamar|recibo|eventos|fecha-recepcion|cedible --emisor-rut RUT --tipo N --folio N ...
//	dtekit intercambio responder|leer ...
//	dtekit cesion ceder|enviar|estado|leer ...
//	dtekit serve [--addr 127.0.0.1:8080] [--data DIR] [--database-url URL] [--demo]
//	dtekit admin empresa create|apikey create|list|revoke|certificado upload ...
//	dtekit dev credenciales --rut RUT --out DIR
//	dtekit version
//
// Run "dtekit help" for the list of commands and "dtekit COMMAND --help" for
// a command's flags (both print on standard output and exit 0). Exit status
// 1 means the command failed, with a line on standard error naming the
// problem and its code (FILE_UNREADABLE, CERTIFICATE_PASSWORD, …); 2 means
// a wrong command line.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/dtekit/dtekit/signer"
)

// command is one dtekit subcommand.
type command struct {
	name  string
	usage string
	run   func(ctx context.Context, env *cmdEnv, args []string) int
	// help, when set, is printed on standard output for -h or --help
	// before the command runs (for commands that do not print their own).
	help string
}

// cmdEnv carries the process's standard streams, so commands can be tested
// without touching the real ones.
type cmdEnv struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
}

func commands() []command {
	return []command{
		{name: "totals", usage: "totals REQUEST.json            compute line amounts and Totales", run: runTotals},
		{name: "emit", usage: "emit [flags] REQUEST.json      emit a signed DTE", run: runEmit},
		{name: "envio", usage: "envio [flags] DTE.xml...        pack signed DTEs into a signed envelope", run: runEnvio},
		{name: "verify", usage: "verify FILE.xml...              verify DTEs, envelopes, libros and AECs", run: runVerify, help: verifyUsage + verifyFlagsHelp},
		{name: "caf", usage: "caf inspect CAF.xml             summarize and check a CAF", run: runCAF},
		{name: "demo", usage: "demo [--out DIR]                emit and verify one document of each type", run: runDemo},
		{name: "pdf", usage: "pdf DTE.xml [flags]             render the printed representation", run: runPDF},
		{name: "webhook", usage: "webhook sign|verify|secret      sign or verify a webhook delivery", run: runWebhook},
		{name: "certificacion", usage: "certificacion generar [flags]   the SII certification kit: every case of a set file, envelopes, samples", run: runCertificacion},
		{name: "sii", usage: "sii token|upload|status|dte-status|fake  talk to the SII, or run a fake one", run: runSII},
		{name: "rcv", usage: "rcv aceptar|reclamar|recibo|eventos|...  accept or claim a received DTE in the SII's registry", run: runRCV},
		{name: "cesion", usage: "cesion ceder|enviar|estado|leer   cede a factura to a factoring company (AEC), follow it in the SII's registry", run: runCesion},
		{name: "intercambio", usage: "intercambio responder|leer      answer a supplier's EnvioDTE, read a customer's answer", run: runIntercambio},
		{name: "serve", usage: "serve [--addr A] [--data DIR] [--demo]  run the REST API server", run: runServe},
		{name: "bench", usage: "bench --url URL --key KEY [flags]  load-test a running server: documents/s, latency, CPU", run: runBench},
		{name: "admin", usage: "admin empresa|apikey ...        operator commands on the server's database", run: runAdmin},
		{name: "dev", usage: "dev credenciales --rut RUT --out DIR  test credentials for your RUT, to rehearse against sii fake", run: runDev},
		{name: "version", usage: "version                         print dtekit's version", run: runVersion},
	}
}

// verifyFlagsHelp describes the flags of "dtekit verify".
const verifyFlagsHelp = `
Flags:
  -json
    	print the report as JSON
  -policy value
    	for an AEC, the signature policy: registry (the default: an inner signature that does
    	not verify as the file stands is a warning, as the SII's registry accepts) or strict
    	(every signature must verify)
  -signer value
    	EMISOR_RUT=SIGNER_RUT authorized to sign the emisor's documents and envelopes; repeatable
  -signer-is-rut-envia
    	require every signer of an envelope to be the Carátula's RutEnvia
  -trust value
    	extra trusted CAF-authority public key (PEM), for test CAFs; repeatable
  -valid-at-signing
    	require each signer's certificate to be valid at the signing time the document states
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	env := &cmdEnv{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}
	code := run(ctx, env, os.Args[1:])
	stop()
	os.Exit(code)
}

// run dispatches to a subcommand and returns the process exit code.
func run(ctx context.Context, env *cmdEnv, args []string) int {
	if len(args) == 0 {
		usage(env.stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help":
		usage(env.stdout)
		return exitOK
	case "help":
		if len(args) == 1 {
			usage(env.stdout)
			return exitOK
		}
		// "dtekit help emit" is "dtekit emit --help".
		return run(ctx, env, []string{args[1], "--help"})
	case "-version", "--version":
		return runVersion(ctx, env, nil)
	}
	for _, c := range commands() {
		if c.name == args[0] {
			if c.help != "" && wantsHelp(args[1:]) {
				fmt.Fprint(env.stdout, c.help)
				return exitOK
			}
			return c.run(ctx, env, args[1:])
		}
	}
	fmt.Fprintf(env.stderr, "dtekit: unknown command %q\n", args[0])
	usage(env.stderr)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: dtekit COMMAND [arguments]\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintln(w, "  "+c.usage)
	}
	fmt.Fprintln(w, "\nRun \"dtekit COMMAND --help\" for a command's flags. Exit status: 0 done, 1 failed, 2 wrong command line.")
}

const versionUsage = `usage: dtekit version

Prints dtekit's module version, the commit it was built from (when known)
and the Go version; a binary built with -tags openssl also names the
OpenSSL it signs with.
`

// runVersion implements "dtekit version".
func runVersion(ctx context.Context, env *cmdEnv, args []string) int {
	fs := newFlagSet(env, "version")
	pos, code, ok := parseFlags(env, fs, versionUsage, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return usageError(env, "version", "unexpected arguments %q", pos)
	}
	fmt.Fprintln(env.stdout, versionString())
	return exitOK
}

// versionString describes the build: "dtekit v0.3.0 (commit 1a2b3c4d5e6f, go1.26.0)".
func versionString() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "dtekit (devel, build information unavailable)"
	}
	version := info.Main.Version
	if version == "" {
		version = "(devel)"
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "+modified"
			}
		}
	}
	extra := info.GoVersion
	if rev != "" {
		extra = "commit " + rev[:min(12, len(rev))] + modified + ", " + extra
	}
	if b := signer.Backend(); !strings.HasPrefix(b, "Go") {
		extra += ", signing with " + b
	}
	return fmt.Sprintf("dtekit %s (%s)", version, extra)
}
