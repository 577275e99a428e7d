package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/dtekit/dtekit/dte"
)

// signerPolicy holds the flags that state who may sign what a command
// reads, as dte.VerifyOptions takes them: verify, intercambio responder
// and leer, and serve (for what its companies receive) share them.
type signerPolicy struct {
	signers           stringList
	rutEnvia, validAt bool
}

// define registers --signer and --valid-at-signing and, for commands that
// read envelopes, --signer-is-rut-envia. party names the RUT a --signer
// entry authorizes signers for, as the usage shows it.
func (p *signerPolicy) define(fs *flag.FlagSet, party string, envelopes bool) {
	fs.Var(&p.signers, "signer", party+"_RUT=SIGNER_RUT authorized to sign for that company; repeatable (any company without an entry is refused)")
	if envelopes {
		fs.BoolVar(&p.rutEnvia, "signer-is-rut-envia", false, "require every signer of an envelope to be its RutEnvia")
	}
	fs.BoolVar(&p.validAt, "valid-at-signing", false, "require each certificate to be valid at the signing time")
}

// options returns the policy as dte.VerifyOptions (without keys); the
// error names the --signer entry that is not RUT=RUT.
func (p *signerPolicy) options() (dte.VerifyOptions, error) {
	opts := dte.VerifyOptions{SignerIsRutEnvia: p.rutEnvia, ValidAtSigning: p.validAt}
	for _, s := range p.signers {
		party, rut, ok := strings.Cut(s, "=")
		party, rut = strings.TrimSpace(party), strings.TrimSpace(rut)
		if !ok || party == "" || rut == "" {
			return opts, fmt.Errorf("--signer %q: want EMISOR_RUT=SIGNER_RUT", s)
		}
		for _, r := range []string{party, rut} {
			if _, err := dte.ParseRUT(r); err != nil {
				return opts, fmt.Errorf("--signer %q: %s", s, plainReason(err.Error()))
			}
		}
		if opts.AuthorizedSigners == nil {
			opts.AuthorizedSigners = map[string][]string{}
		}
		opts.AuthorizedSigners[party] = append(opts.AuthorizedSigners[party], rut)
	}
	return opts, nil
}

// parseSigners reads the DTEKIT_SIGNERS form of --signer: entries
// RUT=SIGNER_RUT separated by commas or spaces.
func parseSigners(v string) stringList {
	return strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
}
