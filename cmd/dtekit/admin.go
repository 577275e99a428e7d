package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/store"
)

const adminUsage = `usage: dtekit admin empresa create [flags]
       dtekit admin empresa update --empresa RUT [--ambiente produccion] [flags]
       dtekit admin empresa show --empresa RUT
       dtekit admin empresa list [--ambiente certificacion|produccion]
       dtekit admin caf upload --empresa RUT [--trust [IDK=]KEY.pem]... FILE.xml
       dtekit admin alertas show --empresa RUT
       dtekit admin alertas update --empresa RUT --caf-low-stock-threshold N
       dtekit admin apikey create --empresa RUT [--write]
       dtekit admin apikey list --empresa RUT
       dtekit admin apikey revoke --empresa RUT --id KEY_ID
       dtekit admin certificado upload --empresa RUT --cert FILE.p12 --rut-firmante RUT [--cert-password-file FILE]
       dtekit admin kek rotate [--new-key-file FILE]
       dtekit admin contribuyentes import FILE

Operator commands on the server's database (the same --data, --database-url
and DTEKIT_KEK as "dtekit serve"; they may run while the server runs, except
kek rotate).

  empresa create   registers a company; prints it as JSON
  empresa update   changes the company with that RUT: the fields of the API's
                   PUT /empresa (only the flags given), its logo (--logo), and
                   the move to produccion (--ambiente produccion, refused
                   without a resolution number and date and a valid
                   certificate); prints it as JSON
  empresa show     prints the company with that RUT as JSON
  empresa list     prints every company (or those of one --ambiente) as JSON
  caf upload       registers a CAF file for the company (its type read from
                   the file), checked as the API's POST /caf checks it: the
                   SII's signature for the company's ambiente (--trust adds a
                   test authority's key), RUT, range; prints it as JSON
  alertas show     prints the company's alert settings as JSON (GET
                   /empresa/alertas): caf_low_stock_threshold, 20 unless set
  alertas update   sets the available folios of a type at which an emission
                   fires caf.low_stock (0 to 1000000), as PUT /empresa/alertas
  apikey create    issues an API key for the company with that RUT and prints
                   it once (only its hash is stored); read-only unless --write
  apikey list      lists the company's keys (ids and prefixes, never the keys)
  apikey revoke    revokes a key by its id; it stops working at once
  certificado upload
                   installs the company's signing certificate (what the API's
                   admin role does); the password comes from
                   --cert-password-file, else $DTEKIT_CERT_PASSWORD
  kek rotate       re-seals every secret under a new key-encryption key; stop
                   the servers first ("dtekit admin kek rotate --help")
  contribuyentes import
                   loads the SII's list of authorized issuers with their
                   intercambio addresses (ce_empresas_dwnld_YYYYMMDD.csv, from
                   "Consulta de contribuyentes autorizados"): a document whose
                   receptor's cliente has no e-mail is mailed there. The new
                   list replaces the previous one once complete; skipped lines
                   are warned on stderr with their numbers; prints a summary
`

func runAdmin(ctx context.Context, env *cmdEnv, args []string) int {
	if len(args) < 2 || wantsHelp(args[:1]) {
		if wantsHelp(args) {
			fmt.Fprint(env.stdout, adminUsage)
			return exitOK
		}
		fmt.Fprint(env.stderr, adminUsage)
		return exitUsage
	}
	switch args[0] + " " + args[1] {
	case "empresa create":
		return adminEmpresaCreate(ctx, env, args[2:])
	case "empresa update":
		return adminEmpresaUpdate(ctx, env, args[2:])
	case "empresa show":
		return adminEmpresaShow(ctx, env, args[2:])
	case "empresa list":
		return adminEmpresaList(ctx, env, args[2:])
	case "caf upload":
		return adminCAFUpload(ctx, env, args[2:])
	case "alertas show", "alertas update":
		return adminAlertas(ctx, env, args[1], args[2:])
	case "apikey create", "apikey list", "apikey revoke":
		return adminAPIKey(ctx, env, args[1], args[2:])
	case "certificado upload":
		return adminCertUpload(ctx, env, args[2:])
	case "kek rotate":
		return adminKEKRotate(ctx, env, args[2:])
	case "contribuyentes import":
		return adminContribuyentesImport(ctx, env, args[2:])
	}
	return usageError(env, "admin", "unknown admin command %q", strings.Join(args[:2], " "))
}

// adminDB are the flags that locate the database, and the CAF keys the
// service trusts (nil: the SII's).
type adminDB struct {
	data, dbURL string
	trust       caf.TrustedKeys
}

func (a *adminDB) define(env *cmdEnv, fs interface {
	StringVar(*string, string, string, string)
}) {
	fs.StringVar(&a.data, "data", "dtekit-data", "data directory of the SQLite database")
	fs.StringVar(&a.dbURL, "database-url", env.getenv("DTEKIT_DATABASE_URL"), "postgres:// URL (default: SQLite under --data)")
}

// open opens the database without starting the job runner.
func (a *adminDB) open(ctx context.Context, env *cmdEnv) (*backend, error) {
	if a.dbURL == "" {
		if _, err := os.Stat(a.data); err != nil {
			return nil, fmt.Errorf("--data %s: %w (start the server once, or create the directory)", a.data, err)
		}
	}
	logger, _ := newLogger(env, "warn")
	return openBackend(ctx, env, a.data, a.dbURL, a.trust, billing.DeliveryConfig{}, mailNetwork{}, nil, dte.VerifyOptions{}, billing.InboxConfig{}, logger)
}

// openEmpresa opens the database and finds the company with RUT r; the
// caller closes the backend's store. A missing company is an error.
func (a *adminDB) openEmpresa(ctx context.Context, env *cmdEnv, r dte.RUT) (*backend, string, error) {
	be, err := a.open(ctx, env)
	if err != nil {
		return nil, "", err
	}
	id, err := adminFindEmpresa(ctx, be.st, r.String())
	if err == nil && id == "" {
		err = fmt.Errorf("no company with RUT %s", r.String())
	}
	if err != nil {
		be.st.Close()
		return nil, "", err
	}
	return be, id, nil
}

// adminFindEmpresa returns the id of the company with this RUT, or ""
// when there is none: the company of either environment, the older one
// when the RUT has a company in both (as when the command scanned every
// company, oldest first).
func adminFindEmpresa(ctx context.Context, st store.Reader, rut string) (string, error) {
	var found *store.Empresa
	for _, ambiente := range []string{dte.AmbienteCertificacion, dte.AmbienteProduccion} {
		e, err := st.GetEmpresaByRut(ctx, rut, ambiente)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return "", err
		}
		if found == nil || e.CreatedAt.Before(found.CreatedAt) {
			found = e
		}
	}
	if found == nil {
		return "", nil
	}
	return found.ID, nil
}

func adminEmpresaCreate(ctx context.Context, env *cmdEnv, args []string) int {
	fs := newFlagSet(env, "admin empresa create")
	var db adminDB
	db.define(env, fs)
	var in api.EmpresaInput
	var acteco string
	fs.StringVar(&in.Rut, "rut", "", "the company's RUT, with check digit")
	fs.StringVar(&in.RazonSocial, "razon-social", "", "legal name")
	fs.StringVar(&in.Giro, "giro", "", "line of business")
	fs.StringVar(&in.Direccion, "direccion", "", "address")
	fs.StringVar(&in.Comuna, "comuna", "", "comuna")
	fs.StringVar(&in.Ciudad, "ciudad", "", "city")
	fs.StringVar(&in.Ambiente, "ambiente", dte.AmbienteCertificacion, "certificacion or produccion")
	fs.StringVar(&in.FechaResolucion, "fecha-resolucion", "", "date of the SII resolution, YYYY-MM-DD")
	fs.IntVar(&in.NumeroResolucion, "numero-resolucion", 0, "number of the SII resolution (0 in certificación)")
	fs.StringVar(&acteco, "acteco", "", "economic activity codes, comma-separated (1 to 4)")
	_, code, ok := parseFlags(env, fs, adminUsage, args, "rut", "razon-social", "giro", "direccion", "comuna", "ciudad", "fecha-resolucion", "acteco")
	if !ok {
		return code
	}
	var err error
	if in.Acteco, err = parseActeco(acteco); err != nil {
		return usageError(env, "admin", "%v", err)
	}
	be, err := db.open(ctx, env)
	if err != nil {
		return adminFail(env, err)
	}
	defer be.st.Close()
	e, err := be.bill.Company.Create(ctx, in)
	if err != nil {
		return adminFail(env, err)
	}
	return adminJSON(env, e)
}

// parseActeco reads --acteco: comma-separated activity codes.
func parseActeco(s string) ([]int, error) {
	var out []int
	for _, a := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(a))
		if err != nil {
			return nil, fmt.Errorf("--acteco %q: want comma-separated numbers", s)
		}
		out = append(out, n)
	}
	return out, nil
}

func adminAPIKey(ctx context.Context, env *cmdEnv, verb string, args []string) int {
	fs := newFlagSet(env, "admin apikey "+verb)
	var db adminDB
	db.define(env, fs)
	var rut, id string
	var write bool
	fs.StringVar(&rut, "empresa", "", "RUT of the company")
	required := []string{"empresa"}
	switch verb {
	case "create":
		fs.BoolVar(&write, "write", false, "grant write access (emission and every other write)")
	case "revoke":
		fs.StringVar(&id, "id", "", "id of the key to revoke (see apikey list)")
		required = append(required, "id")
	}
	_, code, ok := parseFlags(env, fs, adminUsage, args, required...)
	if !ok {
		return code
	}
	r, err := dte.ParseRUT(rut)
	if err != nil {
		return usageError(env, "admin", "--empresa %q: %v", rut, err)
	}
	be, empresaID, err := db.openEmpresa(ctx, env, r)
	if err != nil {
		return adminFail(env, err)
	}
	defer be.st.Close()
	switch verb {
	case "create":
		k, err := be.bill.Keys.Create(ctx, empresaID, api.APIKeyInput{Write: write})
		if err != nil {
			return adminFail(env, err)
		}
		fmt.Fprintln(env.stderr, "dtekit admin: the key is shown only now; store it safely")
		return adminJSON(env, k)
	case "list":
		keys, err := be.bill.Keys.List(ctx, empresaID)
		if err != nil {
			return adminFail(env, err)
		}
		if keys == nil {
			keys = []api.APIKey{}
		}
		return adminJSON(env, keys)
	default:
		if err := be.bill.Keys.Revoke(ctx, empresaID, id); err != nil {
			return adminFail(env, err)
		}
		fmt.Fprintf(env.stdout, "revoked %s\n", id)
		return exitOK
	}
}

func adminJSON(env *cmdEnv, v any) int {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return adminFail(env, err)
	}
	fmt.Fprintf(env.stdout, "%s\n", b)
	return exitOK
}

// adminFail prints a failure; billing's validation details one per line.
func adminFail(env *cmdEnv, err error) int {
	var be *fault.Error
	if errors.As(err, &be) {
		msg := be.Message
		if be.Kind == fault.KindInternal && be.Err != nil {
			// The API keeps the cause in its log; the operator sees it here.
			msg += ": " + errLine(be.Err)
		}
		fmt.Fprintf(env.stderr, "dtekit admin: %s (%s)\n", oneLine(msg), be.Code)
		for _, d := range be.Details {
			fmt.Fprintf(env.stderr, "  %s: %s (%s)\n", d.Field, d.Message, d.Code)
		}
		return exitFail
	}
	var ce *cliError
	if errors.As(err, &ce) {
		fmt.Fprintf(env.stderr, "dtekit admin: %s (%s)\n", ce, ce.code)
		return exitFail
	}
	fmt.Fprintf(env.stderr, "dtekit admin: %s\n", errLine(err))
	return exitFail
}

func adminCertUpload(ctx context.Context, env *cmdEnv, args []string) int {
	fs := newFlagSet(env, "admin certificado upload")
	var db adminDB
	db.define(env, fs)
	var cf certFlags
	cf.define(fs)
	var rut, firmante string
	fs.StringVar(&rut, "empresa", "", "RUT of the company")
	fs.StringVar(&firmante, "rut-firmante", "", "RUT of the certificate's holder")
	_, code, ok := parseFlags(env, fs, adminUsage, args, "empresa", "cert", "rut-firmante")
	if !ok {
		return code
	}
	r, err := dte.ParseRUT(rut)
	if err != nil {
		return usageError(env, "admin", "--empresa %q: %v", rut, err)
	}
	pw, usage, cerr := cf.resolvePassword(env, fs)
	if cerr != nil {
		if usage {
			return usageError(env, "admin", "%v", cerr)
		}
		return adminFail(env, cerr)
	}
	p12, cerr := readArg("--cert", cf.path, billing.MaxCertificateSize+1)
	if cerr != nil {
		return adminFail(env, cerr)
	}
	be, empresaID, err := db.openEmpresa(ctx, env, r)
	if err != nil {
		return adminFail(env, err)
	}
	defer be.st.Close()
	st, err := be.bill.Company.UploadCertificate(ctx, empresaID, api.CertificadoUpload{File: p12, Password: pw, RutFirmante: firmante})
	if err != nil {
		return adminFail(env, err)
	}
	return adminJSON(env, st)
}
