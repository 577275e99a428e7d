// Command dtekit is the command-line face of the dtekit SDK: it computes
// totals, emits and verifies signed DTEs, builds envelopes, renders PDFs,
// signs and verifies webhooks, and runs the reference REST server.
//
// Usage:
//
//	dtekit totals REQUEST.json
//	dtekit emit --emisor EMISOR.json --caf CAF.xml --cert CERT.p12 --cert-password PASS --folio N REQUEST.json
//	dtekit envio --emisor EMISOR.json --cert CERT.p12 --cert-password PASS DTE.xml...
//	dtekit verify FILE.xml
//	dtekit caf inspect CAF.xml
//	dtekit demo [--out DIR]
//	dtekit pdf DTE.xml [--cedible] [--format carta|80mm] [-o OUT.pdf]
//	dtekit webhook sign|verify ...
//	dtekit sii token|upload|status|dte-status|fake ...
//
// Run "dtekit help" for the list of commands.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// command is one dtekit subcommand.
type command struct {
	name  string
	usage string
	run   func(ctx context.Context, env *cmdEnv, args []string) int
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
		{"totals", "totals REQUEST.json            compute line amounts and Totales", runTotals},
		{"emit", "emit [flags] REQUEST.json      emit a signed DTE", runEmit},
		{"envio", "envio [flags] DTE.xml...        pack signed DTEs into a signed envelope", runEnvio},
		{"verify", "verify FILE.xml                 verify a DTE or envelope", runVerify},
		{"caf", "caf inspect CAF.xml             summarize a CAF", runCAF},
		{"demo", "demo [--out DIR]                emit and verify one document of each type", runDemo},
		{"pdf", "pdf DTE.xml [flags]             render the printed representation", runPDF},
		{"webhook", "webhook sign|verify [flags]     sign or verify a webhook delivery", runWebhook},
		{"sii", "sii token|upload|status|dte-status|fake  talk to the SII, or run a fake one", runSII},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	env := &cmdEnv{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}
	code := run(ctx, env, os.Args[1:])
	stop()
	os.Exit(code)
}

// run dispatches to a subcommand and returns the process exit code.
func run(ctx context.Context, env *cmdEnv, args []string) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(env.stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, env, args[1:])
		}
	}
	fmt.Fprintf(env.stderr, "dtekit: unknown command %q\n", args[0])
	usage(env.stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: dtekit COMMAND [arguments]\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintln(w, "  "+c.usage)
	}
}
