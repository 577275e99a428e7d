package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/sii/siitest"
)

const siiUsage = `usage: dtekit sii COMMAND [flags]

Talks to the SII's web services (or to a test server), or runs a fake SII.

  dtekit sii token      [conn]                              print a token
  dtekit sii upload     [conn] [--company RUT] ENVIO.xml     upload an EnvioDTE or EnvioBOLETA
  dtekit sii status     [conn] --company RUT [--boleta] TRACKID
                                                            an envelope's state
  dtekit sii dte-status [conn] DTE.xml                      one document's state (getEstDte)
  dtekit sii dte-status [conn] --advanced DTE.xml           the same through getEstDteAv, with the
                                                            track id of the envelope that carried it
  dtekit sii dte-status [conn] --emisor RUT --receptor RUT --tipo N --folio N --fecha YYYY-MM-DD --monto N
  dtekit sii fake       [--addr 127.0.0.1:PORT] [--register SIGNER=COMPANY[,COMPANY]]...
                        [--trust [IDK=]KEY.pem]...         run a fake SII on loopback

Connection flags [conn]:
  --env certificacion|produccion   the SII's environment (default certificacion)
  --url BASE                       send every service to BASE instead (a test server)
  --cert CERT.p12                  the certificate (required)
  --cert-password-file FILE        its password, first line of FILE (else
                                   $DTEKIT_CERT_PASSWORD, else --cert-password PASS)
  --timeout 30s                    bound on each HTTP exchange

The fake also serves the registry of acceptances and claims ("dtekit rcv"),
which knows the documents uploaded to it once their review accepted them,
and the registry of credit transfers ("dtekit cesion enviar|estado"), which
takes an AEC only of a document its review accepted. Without --trust, that
acceptance vouches for the ceded DTE's stamp; with --trust (a CAF
authority's PEM public key, in the form every --trust takes: trusted for
certificación CAFs, IDK 100, unless IDK= names another), the registry also
checks the stamp's CAF against the SII's keys and those given, as strictly
as the SII does: a test CAF then needs its authority's key here
(autoridad-prueba.pub.pem of "dtekit dev credenciales",
test-sii-authority.pub.pem of "dtekit demo").

upload --company defaults to the envelope's RutEmisor. Answers are printed as
JSON with the contract state they map to; the exit status is 0 when the SII
answered (whatever it said), 1 on errors.
`

// runSII implements "dtekit sii".
func runSII(ctx context.Context, env *cmdEnv, args []string) int {
	subs := map[string]subcommand{"fake": siiFake}
	for _, name := range []string{"token", "upload", "status", "dte-status"} {
		subs[name] = func(ctx context.Context, env *cmdEnv, args []string) int {
			return siiClientCommand(ctx, env, name, args)
		}
	}
	return runGroup(ctx, env, "sii", siiUsage, args, subs)
}

// siiClientCommand runs token, upload, status and dte-status.
func siiClientCommand(ctx context.Context, env *cmdEnv, name string, args []string) int {
	fs := newFlagSet(env, "sii "+name)
	var conn siiConn
	conn.define(fs, "")
	company := fs.String("company", "", "issuing company's RUT")
	boleta := fs.Bool("boleta", false, "status: the track id is a boleta envelope (REST API)")
	emisor := fs.String("emisor", "", "dte-status: issuer RUT")
	receptor := fs.String("receptor", "", "dte-status: receiver RUT")
	tipo := fs.Int("tipo", 0, "dte-status: document type")
	folio := fs.Int64("folio", 0, "dte-status: folio")
	fecha := fs.String("fecha", "", "dte-status: issue date YYYY-MM-DD")
	monto := fs.Int64("monto", 0, "dte-status: total amount")
	advanced := fs.Bool("advanced", false, "dte-status: ask getEstDteAv (needs DTE.xml, not for boletas)")
	pos, code, ok := parseFlags(env, fs, siiUsage, args, "cert")
	if !ok {
		return code
	}
	fail := func(err error) int {
		fmt.Fprintf(env.stderr, "dtekit sii %s: %s\n", name, errLine(err))
		return 1
	}
	client, usage, err := conn.client(env, fs)
	var cerr *cliError
	switch {
	case usage:
		return usageError(env, "sii "+name, "%v", err)
	case errors.As(err, &cerr):
		return report(env, "sii "+name, false, cerr)
	case err != nil:
		return fail(err)
	}
	switch name {
	case "token":
		if len(pos) != 0 {
			fmt.Fprint(env.stderr, siiUsage)
			return 2
		}
		tok, err := client.Token(ctx)
		if err != nil {
			return fail(err)
		}
		fmt.Fprintln(env.stdout, tok)
		return 0
	case "upload":
		if len(pos) != 1 {
			fmt.Fprint(env.stderr, siiUsage)
			return 2
		}
		data, err := readInput(ctx, env, pos[0], maxXMLFile)
		if err != nil {
			return fail(err)
		}
		rut := *company
		if rut == "" {
			e, err := dte.ParseEnvio(data)
			if err != nil {
				return fail(fmt.Errorf("%s: %w", pos[0], err))
			}
			rut = e.Caratula.RutEmisor
		}
		res, err := client.Upload(ctx, rut, data)
		if err != nil {
			return fail(err)
		}
		o := sii.UploadOutcome(res)
		return siiPrint(env, map[string]any{"status": res.Status, "estado_sii": res.Estado, "trackid": res.TrackID,
			"rut_sender": res.RutSender, "rut_company": res.RutCompany, "timestamp": res.Timestamp, "errors": res.Errors,
			"boleta": res.Boleta, "outcome": outcomeJSON(o)})
	case "status":
		if len(pos) != 1 || *company == "" {
			fmt.Fprint(env.stderr, siiUsage)
			return 2
		}
		var s *sii.EnvelopeStatus
		if *boleta {
			s, err = client.BoletaEnvelopeStatus(ctx, *company, pos[0])
		} else {
			s, err = client.EnvelopeStatus(ctx, *company, pos[0])
		}
		if err != nil {
			return fail(err)
		}
		return siiPrint(env, map[string]any{"trackid": s.TrackID, "estado": s.Estado, "glosa": s.Glosa,
			"num_atencion": s.NumAtencion, "err_code": s.ErrCode, "counts": s.Counts, "issues": s.Issues,
			"pending": s.Pending, "outcome": outcomeJSON(sii.EnvelopeOutcome(s, 0))})
	case "dte-status":
		var signatureValue string
		q := sii.DocumentQuery{RutEmisor: *emisor, RutReceptor: *receptor, Tipo: *tipo, Folio: *folio, FechaEmision: *fecha, Monto: *monto}
		switch len(pos) {
		case 0:
			if q.RutEmisor == "" || q.RutReceptor == "" || q.Tipo == 0 || q.Folio == 0 || q.FechaEmision == "" {
				fmt.Fprint(env.stderr, siiUsage)
				return 2
			}
		case 1:
			data, err := readInput(ctx, env, pos[0], maxXMLFile)
			if err != nil {
				return fail(err)
			}
			d, err := dte.ParseDTE(data)
			if err != nil {
				return fail(fmt.Errorf("%s: %w", pos[0], err))
			}
			m, ok := d.Totales.MntTotal.Int64()
			if !ok {
				return fail(fmt.Errorf("%s: MntTotal %q is not a whole amount", pos[0], d.Totales.MntTotal))
			}
			q = sii.DocumentQuery{RutEmisor: d.Emisor.Rut, RutReceptor: d.Receptor.Rut, Tipo: int(d.Tipo), Folio: d.Folio,
				FechaEmision: d.FechaEmision, Monto: m}
			signatureValue = d.SignatureValue
		default:
			fmt.Fprint(env.stderr, siiUsage)
			return 2
		}
		if *advanced {
			if len(pos) != 1 || dte.TipoDTE(q.Tipo).IsBoleta() {
				fmt.Fprintln(env.stderr, "dtekit sii dte-status: --advanced needs a DTE.xml of the classic protocol (not a boleta): it sends the document's signature")
				return 2
			}
			s, err := client.DocumentStatusAdvanced(ctx, q, signatureValue)
			if err != nil {
				return fail(err)
			}
			return siiPrint(env, map[string]any{"recibido": s.Recibido, "trackid": s.TrackID, "estado_sii": s.Estado,
				"glosa": s.Glosa, "num_atencion": s.NumAtencion, "estado_consulta": s.HdrEstado, "glosa_consulta": s.HdrGlosa})
		}
		var s *sii.DocumentStatus
		if dte.TipoDTE(q.Tipo).IsBoleta() {
			s, err = client.BoletaStatus(ctx, q)
		} else {
			s, err = client.DocumentStatus(ctx, q)
		}
		if err != nil {
			return fail(err)
		}
		return siiPrint(env, map[string]any{"estado_sii": s.Estado, "glosa_estado": s.GlosaEstado, "err_code": s.ErrCode,
			"glosa_err": s.GlosaErr, "num_atencion": s.NumAtencion, "outcome": outcomeJSON(sii.DocumentOutcome(s))})
	}
	return 2
}

// siiConn are the flags that say which SII to talk to and with which
// certificate: --env, --url, --cert and its password, --timeout.
type siiConn struct {
	environment, url string
	cert             certFlags
	timeout          time.Duration
}

// define registers the flags; defaultURL is --url's default (a test
// server named by the environment, or "").
func (c *siiConn) define(fs *flag.FlagSet, defaultURL string) {
	fs.StringVar(&c.environment, "env", string(sii.Certificacion), "certificacion or produccion")
	fs.StringVar(&c.url, "url", defaultURL, "base URL of a test server for every service")
	c.cert.define(fs)
	fs.DurationVar(&c.timeout, "timeout", sii.DefaultTimeout, "bound on each HTTP exchange")
}

// client loads the certificate and builds the client. usage is true when
// the flags contradict each other; a certificate that cannot be loaded is
// a *cliError; anything else is the sii package's error.
func (c *siiConn) client(env *cmdEnv, fs *flag.FlagSet) (client *sii.Client, usage bool, err error) {
	cert, usage, cerr := c.cert.load(env, fs)
	if cerr != nil {
		return nil, usage, cerr
	}
	cfg := sii.Config{Environment: sii.Environment(c.environment), Certificate: cert, Timeout: c.timeout}
	if c.url != "" {
		cfg.Endpoints = sii.SingleHost(c.url)
	}
	client, err = sii.New(cfg)
	return client, false, err
}

// openClient is client for the commands that report as cli.go does: a
// contradiction among the flags is a usage error (exit 2), a certificate
// that cannot be loaded is reported with its code, anything else the sii
// package refuses is a usage error. ok is false with the exit status when
// there is no client.
func (c *siiConn) openClient(env *cmdEnv, fs *flag.FlagSet, cmd string) (client *sii.Client, code int, ok bool) {
	client, usage, err := c.client(env, fs)
	var cerr *cliError
	switch {
	case usage:
		return nil, usageError(env, cmd, "%v", err), false
	case errors.As(err, &cerr):
		return nil, report(env, cmd, false, cerr), false
	case err != nil:
		return nil, usageError(env, cmd, "%s", errLine(err)), false
	}
	return client, exitOK, true
}

// outcomeJSON is the printed form of an Outcome.
func outcomeJSON(o sii.Outcome) map[string]any {
	return map[string]any{"estado": o.Estado, "codigo_sii": o.Code, "glosa_sii": o.Glosa, "final": o.Final(),
		"refresh_token": o.RefreshToken, "reconcile": o.Reconcile}
}

// siiPrint writes v as indented JSON.
func siiPrint(env *cmdEnv, v any) int {
	enc := json.NewEncoder(env.stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(env.stderr, "dtekit sii: %s\n", errLine(err))
		return 1
	}
	return 0
}

// siiFake runs the fake SII until the context ends.
func siiFake(ctx context.Context, env *cmdEnv, args []string) int {
	fs := newFlagSet(env, "sii fake")
	addr := fs.String("addr", "127.0.0.1:0", "listen address (loopback)")
	var registers stringList
	fs.Var(&registers, "register", "SIGNER=COMPANY[,COMPANY]: a certificate RUT and the companies it may send for (repeatable; none: any)")
	anyUA := fs.Bool("any-user-agent", false, "accept uploads whatever their User-Agent")
	var trust stringList
	fs.Var(&trust, "trust", trustUsage+"; the registry of credit transfers then checks a ceded DTE's CAF with the SII's keys and these (default: not checked)")
	pos, code, ok := parseFlags(env, fs, siiUsage, args)
	if !ok {
		return code
	}
	if len(pos) != 0 {
		return usageError(env, "sii fake", "unexpected arguments %q", pos)
	}
	opts := siitest.Options{AnySigner: len(registers) == 0, AnyUserAgent: *anyUA}
	if len(trust) > 0 {
		keys, cerr := loadTrust(trust)
		if cerr != nil {
			return report(env, "sii fake", false, cerr)
		}
		opts.CAFKeys = keys
	}
	host, _, err := net.SplitHostPort(*addr)
	if err != nil {
		fmt.Fprintf(env.stderr, "dtekit sii fake: --addr %q: %s\n", *addr, errLine(err))
		return 2
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		fmt.Fprintf(env.stderr, "dtekit sii fake: --addr %q is not a loopback address; the fake is for local tests\n", *addr)
		return 2
	}
	fake := siitest.New(opts)
	for _, r := range registers {
		signer, companies, ok := strings.Cut(r, "=")
		if !ok || signer == "" || companies == "" {
			fmt.Fprintf(env.stderr, "dtekit sii fake: --register %q is not SIGNER=COMPANY[,COMPANY]\n", r)
			return 2
		}
		fake.Register(strings.ToUpper(signer), strings.Split(strings.ToUpper(companies), ",")...)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(env.stderr, "dtekit sii fake: %s\n", errLine(err))
		return 1
	}
	srv := &http.Server{Handler: fake.Handler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(env.stdout, "dtekit sii fake: listening on http://%s (use --url http://%s)\n", ln.Addr(), ln.Addr())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
		<-done
		return 0
	case err := <-done:
		if errors.Is(err, http.ErrServerClosed) {
			return 0
		}
		fmt.Fprintf(env.stderr, "dtekit sii fake: %s\n", errLine(err))
		return 1
	}
}
