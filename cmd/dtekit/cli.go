package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/smallrsa"
	"github.com/dtekit/dtekit/signer"
)

// Exit statuses shared by every command.
const (
	exitOK    = 0 // done; for checks, everything passed
	exitFail  = 1 // the input is invalid, a check failed or an operation failed
	exitUsage = 2 // the command line is wrong
)

// Top-level error codes of the CLI's own failures. A request that fails
// validation keeps the contract's VALIDATION_ERROR with its detail codes;
// these name what went wrong with the files and credentials around it.
const (
	codeFileUnreadable = "FILE_UNREADABLE"      // a named file cannot be opened or read, or is too large
	codeInvalidEmisor  = "INVALID_EMISOR"       // the issuer JSON is malformed or incomplete
	codeInvalidCAF     = "INVALID_CAF"          // the CAF file is not a CAF
	codeCAFTipo        = "CAF_TIPO_MISMATCH"    // the CAF authorizes another document type
	codeCAFUnusable    = "CAF_NOT_USABLE"       // untrusted, expired, not yet valid, folio outside its range
	codeCertPassword   = "CERTIFICATE_PASSWORD" // the password does not open the PKCS#12 file
	codeInvalidCert    = "INVALID_CERTIFICATE"  // the PKCS#12 file is corrupt or unsupported
	codeInvalidTrust   = "INVALID_TRUSTED_KEY"  // a --trust file is not a PEM public key
	codeInvalidDTE     = "INVALID_DTE"          // an input is not a DTE or envelope the command can use
	codeNotVerified    = "DOCUMENT_NOT_VERIFIED"
	codeOutputExists   = "OUTPUT_EXISTS"    // the output file exists and --force was not given
	codeOutputFailed   = "OUTPUT_FAILED"    // the output cannot be written
	codeEmitFailed     = "EMISSION_FAILED"  // stamping or signing failed for another reason
	codeInvalidFlag    = "INVALID_ARGUMENT" // a flag's value is wrong (reported as usage, exit 2)
)

// certPasswordEnv is read when neither --cert-password nor
// --cert-password-file is given, so the password need not appear in the
// process list or the shell history.
const certPasswordEnv = "DTEKIT_CERT_PASSWORD"

// cliError is a command's failure: a stable code, the flag or argument it
// concerns and the cause.
type cliError struct {
	code  string
	where string // e.g. "--cert dtekit-demo/cert.p12"
	err   error
}

func (e *cliError) Error() string {
	if e.where == "" {
		return errLine(e.err)
	}
	return dedupe(e.where + ": " + errLine(e.err))
}

// errLine is what every command prints of an error: one line (the lines
// of a joined error separated by "; "), without the prefixes of dtekit's
// packages ("dte: ", "store/sqlite: ", "billing: ") or what a library says
// below ours (plainReason), and without a part that repeats the one
// before it (dedupe).
func errLine(err error) string { return oneLine(err.Error()) }

// oneLine is errLine for a message already formatted.
func oneLine(s string) string {
	lines := strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' })
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return dedupe(plainReason(strings.Join(lines, "; ")))
}

// ownPrefix is the prefix a dtekit package puts on its errors ("caf: ",
// "dte: parse: "); foreignChain is where a library's own words begin
// (": pkcs12: error reading P12 data: asn1: structure error: …" or
// " (smallrsa: …)").
var (
	ownPrefix    = regexp.MustCompile(`(^|: |; |\()(dte|caf|ted|signer|xmltree|xmlflat|billing|store|store/sqlite|store/postgres|sqlstore|sii|certificacion|intercambio|libro|email|webhook|pdf|server|aduana)(: parse|: read|: verify)?: `)
	foreignChain = regexp.MustCompile(`(: | \()(pkcs12|asn1|x509|smallrsa|crypto/[a-z0-9]+|rsa|pem|xml|json|strconv|base64): `)
)

// plainReason turns an error chain into a one-line reason for a person:
// the packages' prefixes go, and so does what a library says below ours
// (the cause stays in the error value for whoever wraps it).
func plainReason(s string) string {
	for range 8 {
		loc := foreignChain.FindStringIndex(s)
		if loc == nil {
			break
		}
		if s[loc[0]+1] != '(' {
			s = s[:loc[0]] // ": lib: …" runs to the end
			break
		}
		// " (lib: …)" closes: only the parenthesis goes.
		end := strings.IndexByte(s[loc[1]:], ')')
		if end < 0 {
			s = s[:loc[0]]
			break
		}
		s = s[:loc[0]] + s[loc[1]+end+1:]
	}
	return ownPrefix.ReplaceAllString(s, "$1")
}

func (e *cliError) Unwrap() error { return e.err }

// newError builds a cliError.
func newError(code, where string, err error) *cliError {
	return &cliError{code: code, where: where, err: err}
}

// dedupe drops a "part: " that repeats the one before it, so that an error
// wrapped by two layers that both name the field reads "receptor.rut: …"
// rather than "receptor.rut: receptor.rut: …".
func dedupe(s string) string {
	parts := strings.Split(s, ": ")
	out := parts[:1]
	for _, p := range parts[1:] {
		if p == out[len(out)-1] {
			continue
		}
		out = append(out, p)
	}
	return strings.Join(out, ": ")
}

// report prints a failure: a line on standard error, and, when the
// command's standard output is JSON (not a document), the contract's error
// envelope there too. It returns exitFail.
func report(env *cmdEnv, cmd string, jsonOut bool, e *cliError) int {
	fmt.Fprintf(env.stderr, "dtekit %s: %s (%s)\n", cmd, e, e.code)
	if jsonOut {
		msg := e.Error()
		_ = totalsWriteJSON(env.stdout, api.ErrorResponse{Code: fault.Code(e.code), Message: msg, Severity: "error"})
	}
	return exitFail
}

// reportValidation prints a request's validation failure: one line per
// detail on standard error and, when jsonOut, the contract's envelope
// (VALIDATION_ERROR) on standard output. It returns exitFail.
func reportValidation(env *cmdEnv, cmd, input string, jsonOut bool, ve *dte.ValidationError) int {
	fmt.Fprintf(env.stderr, "dtekit %s: %s: the request has %d invalid field(s):\n", cmd, input, len(ve.Details))
	for _, d := range ve.Details {
		msg := strings.TrimPrefix(d.Message, d.Field+": ")
		if d.Field == "" {
			fmt.Fprintf(env.stderr, "  %s (%s)\n", msg, d.Code)
			continue
		}
		fmt.Fprintf(env.stderr, "  %s: %s (%s)\n", d.Field, msg, d.Code)
	}
	if jsonOut {
		fe := fault.FromValidation(ve)
		_ = totalsWriteJSON(env.stdout, api.ErrorResponse{Code: fe.Code, Message: fe.Message,
			Details: fe.Details, Severity: "error"})
	}
	return exitFail
}

// usageError prints a command-line mistake and where to find help, and
// returns exitUsage.
func usageError(env *cmdEnv, cmd, format string, args ...any) int {
	fmt.Fprintf(env.stderr, "dtekit %s: %s\nRun 'dtekit %s --help' for usage.\n", cmd, oneLine(fmt.Sprintf(format, args...)), cmd)
	return exitUsage
}

// newFlagSet returns a FlagSet for a command; parse errors go to standard
// error and help is printed by parseFlags.
func newFlagSet(env *cmdEnv, name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {}
	return fs
}

// parseFlags parses args, whose flags may come before, between or after the
// positional arguments. -h or --help prints the command's help on standard
// output; an unknown flag or a missing required one is reported on standard
// error naming the flag. ok is false when the command must return code.
func parseFlags(env *cmdEnv, fs *flag.FlagSet, help string, args []string, required ...string) (pos []string, code int, ok bool) {
	pos, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		printHelp(env.stdout, fs, help)
		return nil, exitOK, false
	}
	if err != nil {
		// The flag package has already printed what is wrong.
		fmt.Fprintf(env.stderr, "Run 'dtekit %s --help' for usage.\n", fs.Name())
		return nil, exitUsage, false
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, name := range required {
		if !set[name] {
			return nil, usageError(env, fs.Name(), "missing required flag --%s (%s)", name, fs.Lookup(name).Usage), false
		}
	}
	return pos, exitOK, true
}

// printHelp writes a command's help text and its flags with their
// descriptions and defaults.
func printHelp(w io.Writer, fs *flag.FlagSet, help string) {
	fmt.Fprint(w, help)
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		return
	}
	fmt.Fprintln(w, "\nFlags:")
	old := fs.Output()
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(old)
}

// wantsHelp reports whether args ask for help before any "--".
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// subcommand runs one command of a group, such as "dtekit cesion ceder",
// with the arguments after its name.
type subcommand func(ctx context.Context, env *cmdEnv, args []string) int

// runGroup dispatches a group of commands ("dtekit cesion", "dtekit sii"):
// no command prints the group's usage on stderr (exit 2); "help", -h,
// -help or --help prints it on stdout; an unknown command is named.
func runGroup(ctx context.Context, env *cmdEnv, group, usage string, args []string, subs map[string]subcommand) int {
	if len(args) == 0 {
		fmt.Fprint(env.stderr, usage)
		return exitUsage
	}
	if args[0] == "help" || wantsHelp(args[:1]) {
		fmt.Fprint(env.stdout, usage)
		return exitOK
	}
	if run, ok := subs[args[0]]; ok {
		return run(ctx, env, args[1:])
	}
	fmt.Fprintf(env.stderr, "dtekit %s: unknown command %q\n", group, args[0])
	fmt.Fprint(env.stderr, usage)
	return exitUsage
}

// parseInterspersed parses flags that may come before, between or after the
// positional arguments, and returns the positional ones.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// certFlags are the flags that locate the signing certificate and its
// password.
type certFlags struct {
	path, password, passwordFile string
}

// define registers --cert, --cert-password and --cert-password-file.
func (c *certFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&c.path, "cert", "", "PKCS#12 (.p12/.pfx) signing certificate")
	fs.StringVar(&c.password, "cert-password", "", "the certificate's password (visible to other users of the machine; prefer the two below)")
	fs.StringVar(&c.passwordFile, "cert-password-file", "", "file whose first line is the certificate's password")
}

// resolvePassword returns the certificate password from --cert-password,
// --cert-password-file or $DTEKIT_CERT_PASSWORD, in that order; giving both
// flags is a usage error (usage true).
func (c *certFlags) resolvePassword(env *cmdEnv, fs *flag.FlagSet) (pw string, usage bool, err *cliError) {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case set["cert-password"] && set["cert-password-file"]:
		return "", true, newError(codeInvalidFlag, "--cert-password-file", errors.New("give --cert-password or --cert-password-file, not both"))
	case set["cert-password"]:
		return c.password, false, nil
	case set["cert-password-file"]:
		data, err := readFile(c.passwordFile, maxSmallFile)
		if err != nil {
			return "", false, newError(codeFileUnreadable, "--cert-password-file", err)
		}
		line, _, _ := strings.Cut(string(data), "\n")
		return strings.TrimSuffix(line, "\r"), false, nil
	}
	if env.getenv != nil {
		return env.getenv(certPasswordEnv), false, nil
	}
	return "", false, nil
}

// load reads and opens the certificate, classifying the failure: an
// unreadable file, a wrong password, or a file that is not a usable
// PKCS#12.
func (c *certFlags) load(env *cmdEnv, fs *flag.FlagSet) (*signer.Certificate, bool, *cliError) {
	pw, usage, cerr := c.resolvePassword(env, fs)
	if cerr != nil {
		return nil, usage, cerr
	}
	where := "--cert " + c.path
	data, err := readFile(c.path, maxSmallFile)
	if err != nil {
		return nil, false, newError(codeFileUnreadable, "--cert", err)
	}
	cert, err := signer.Load(data, pw)
	switch {
	case errors.Is(err, signer.ErrWrongPassword):
		return nil, false, newError(codeCertPassword, where, fmt.Errorf("the password does not open this file (give it with --cert-password-file, $%s or --cert-password)", certPasswordEnv))
	case err != nil:
		return nil, false, newError(codeInvalidCert, where, err)
	}
	return cert, false, nil
}

// readArg reads the file named by a flag or argument, as FILE_UNREADABLE on
// failure.
func readArg(where, path string, limit int) ([]byte, *cliError) {
	data, err := readFile(path, limit)
	if err != nil {
		return nil, newError(codeFileUnreadable, where, err)
	}
	return data, nil
}

// trustUsage describes --trust for the commands that take it.
const trustUsage = "extra trusted CAF-authority public key (PEM), for test CAFs; [IDK=]KEY.pem, IDK 100 (certificación) unless given; repeatable"

// trustedKeys returns the SII's CAF keys plus each --trust PEM public key.
// A --trust key is trusted for certification CAFs (IDK 100) unless the
// argument names another IDK ("300=KEY.pem"): a test authority makes a
// CAF pass as a production one only when asked to by name, as an
// end-to-end test of production does.
func trustedKeys(args []string) (caf.TrustedKeys, error) {
	keys := caf.SIIKeys()
	for _, a := range args {
		idk, p := caf.IDKCertificacion, a
		if n, rest, ok := strings.Cut(a, "="); ok && n != "" && strings.Trim(n, "0123456789") == "" {
			v, err := strconv.Atoi(n)
			if err != nil || v <= 0 {
				return nil, newError(codeInvalidTrust, "", fmt.Errorf("%s: the IDK before = must be a positive number", a))
			}
			idk, p = v, rest
		}
		data, err := readFile(p, maxSmallFile)
		if err != nil {
			return nil, newError(codeFileUnreadable, "", err)
		}
		pub, err := smallrsa.ParsePublicKeyPEM(data)
		if err != nil {
			return nil, newError(codeInvalidTrust, "", fmt.Errorf("%s is not a PEM public key: %w", p, err))
		}
		keys = keys.With(idk, pub)
	}
	return keys, nil
}

// loadTrust is trustedKeys for the commands that report a cliError.
func loadTrust(paths []string) (caf.TrustedKeys, *cliError) {
	keys, err := trustedKeys(paths)
	if err != nil {
		var ce *cliError
		if errors.As(err, &ce) {
			return nil, newError(ce.code, "--trust", ce.err)
		}
		return nil, newError(codeInvalidTrust, "--trust", err)
	}
	return keys, nil
}

// writeFileAtomic writes data to path through a temporary file in the same
// directory, so a failure never leaves a half-written file. Unless
// overwrite is set, an existing path is left alone and the error wraps
// fs.ErrExist.
func writeFileAtomic(path string, data []byte, overwrite bool) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".dtekit-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if overwrite {
		return os.Rename(tmp.Name(), path)
	}
	// A hard link fails if path exists, with no window in which another
	// writer's file could be replaced.
	err = os.Link(tmp.Name(), path)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		// No hard links on this file system: check, then rename.
		if _, serr := os.Lstat(path); serr == nil {
			err = fs.ErrExist
		} else {
			err = os.Rename(tmp.Name(), path)
		}
	}
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s already exists: %w", path, fs.ErrExist)
	}
	return err
}
