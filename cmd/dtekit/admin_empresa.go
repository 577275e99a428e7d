package main

import (
	"context"
	"flag"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing"
	"github.com/dtekit/dtekit/dte"
)

// adminCompanyFlags parses a command that acts on the company named by
// --empresa RUT, with the database flags and the command's own (define);
// it returns the positional arguments and the RUT.
func adminCompanyFlags(env *cmdEnv, name string, args []string, define func(fs *flag.FlagSet), required ...string) (fs *flag.FlagSet, db *adminDB, rut dte.RUT, pos []string, code int, ok bool) {
	fs = newFlagSet(env, name)
	db = &adminDB{}
	db.define(env, fs)
	var raw string
	fs.StringVar(&raw, "empresa", "", "RUT of the company")
	if define != nil {
		define(fs)
	}
	pos, code, ok = parseFlags(env, fs, adminUsage, args, append([]string{"empresa"}, required...)...)
	if !ok {
		return nil, nil, dte.RUT{}, nil, code, false
	}
	r, err := dte.ParseRUT(raw)
	if err != nil {
		return nil, nil, dte.RUT{}, nil, usageError(env, "admin", "--empresa %q: %v", raw, err), false
	}
	return fs, db, r, pos, exitOK, true
}

// adminEmpresaUpdate changes a company through billing's Company.Update,
// as PUT /empresa does: only the flags given change, and the move to
// produccion meets the same refusals.
func adminEmpresaUpdate(ctx context.Context, env *cmdEnv, args []string) int {
	var in api.EmpresaUpdate
	var razon, giro, direccion, comuna, ciudad, oficina, fecha, email, ambiente, acteco, logo string
	var numero int
	fs, db, r, pos, code, ok := adminCompanyFlags(env, "admin empresa update", args, func(fs *flag.FlagSet) {
		fs.StringVar(&razon, "razon-social", "", "legal name")
		fs.StringVar(&giro, "giro", "", "line of business")
		fs.StringVar(&direccion, "direccion", "", "address")
		fs.StringVar(&comuna, "comuna", "", "comuna")
		fs.StringVar(&ciudad, "ciudad", "", "city")
		fs.StringVar(&oficina, "oficina-sii", "", "the SII office printed on every PDF (\"\" prints none)")
		fs.StringVar(&acteco, "acteco", "", "economic activity codes, comma-separated (1 to 4)")
		fs.StringVar(&fecha, "fecha-resolucion", "", "date of the SII resolution, YYYY-MM-DD")
		fs.IntVar(&numero, "numero-resolucion", 0, "number of the SII resolution (0 in certificación)")
		fs.StringVar(&email, "inbound-email", "", "the company's intercambio e-mail address (\"\" clears it)")
		fs.StringVar(&ambiente, "ambiente", "", "certificacion or produccion (produccion needs a resolution and a valid certificate)")
		fs.StringVar(&logo, "logo", "", "PNG or JPEG file printed on the PDFs (at most 256 KiB, 2000 pixels a side)")
	})
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return usageError(env, "admin", "unexpected arguments %q", pos)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	str := func(name string, v *string) *string {
		if set[name] {
			return v
		}
		return nil
	}
	in.RazonSocial, in.Giro, in.Direccion = str("razon-social", &razon), str("giro", &giro), str("direccion", &direccion)
	in.Comuna, in.Ciudad, in.OficinaSII = str("comuna", &comuna), str("ciudad", &ciudad), str("oficina-sii", &oficina)
	in.FechaResolucion, in.InboundEmail, in.Ambiente = str("fecha-resolucion", &fecha), str("inbound-email", &email), str("ambiente", &ambiente)
	if set["numero-resolucion"] {
		in.NumeroResolucion = &numero
	}
	if set["acteco"] {
		codes, err := parseActeco(acteco)
		if err != nil {
			return usageError(env, "admin", "%v", err)
		}
		in.Acteco = &codes
	}
	if set["logo"] {
		data, cerr := readArg("--logo", logo, billing.MaxLogoSize+1)
		if cerr != nil {
			return adminFail(env, cerr)
		}
		in.Logo = data
	}
	be, empresaID, err := db.openEmpresa(ctx, env, r)
	if err != nil {
		return adminFail(env, err)
	}
	defer be.st.Close()
	e, err := be.bill.Company.Update(ctx, empresaID, in)
	if err != nil {
		return adminFail(env, err)
	}
	return adminJSON(env, e)
}

// adminEmpresaShow prints a company as JSON (as GET /empresa answers it).
func adminEmpresaShow(ctx context.Context, env *cmdEnv, args []string) int {
	_, db, r, pos, code, ok := adminCompanyFlags(env, "admin empresa show", args, nil)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return usageError(env, "admin", "unexpected arguments %q", pos)
	}
	be, empresaID, err := db.openEmpresa(ctx, env, r)
	if err != nil {
		return adminFail(env, err)
	}
	defer be.st.Close()
	e, err := be.bill.Company.Get(ctx, empresaID)
	if err != nil {
		return adminFail(env, err)
	}
	return adminJSON(env, e)
}

// adminEmpresaList prints every company, or those of one ambiente, as a
// JSON array, oldest first.
func adminEmpresaList(ctx context.Context, env *cmdEnv, args []string) int {
	fs := newFlagSet(env, "admin empresa list")
	var db adminDB
	db.define(env, fs)
	var ambiente string
	fs.StringVar(&ambiente, "ambiente", "", "only the companies working in certificacion or produccion")
	pos, code, ok := parseFlags(env, fs, adminUsage, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return usageError(env, "admin", "unexpected arguments %q", pos)
	}
	be, err := db.open(ctx, env)
	if err != nil {
		return adminFail(env, err)
	}
	defer be.st.Close()
	list, err := be.bill.Company.List(ctx, api.EmpresaListParams{Ambiente: ambiente})
	if err != nil {
		return adminFail(env, err)
	}
	return adminJSON(env, list)
}

// adminCAFUpload registers a CAF file through billing's CAF intake (the
// one POST /caf uses), its type read from the file.
func adminCAFUpload(ctx context.Context, env *cmdEnv, args []string) int {
	var trust stringList
	_, db, r, pos, code, ok := adminCompanyFlags(env, "admin caf upload", args, func(fs *flag.FlagSet) {
		fs.Var(&trust, "trust", trustUsage)
	})
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return usageError(env, "admin", "caf upload takes one CAF file, got %d arguments", len(pos))
	}
	if len(trust) > 0 {
		keys, cerr := loadTrust(trust)
		if cerr != nil {
			return adminFail(env, cerr)
		}
		db.trust = keys
	}
	file, cerr := readArg(pos[0], pos[0], maxSmallFile)
	if cerr != nil {
		return adminFail(env, cerr)
	}
	be, empresaID, err := db.openEmpresa(ctx, env, r)
	if err != nil {
		return adminFail(env, err)
	}
	defer be.st.Close()
	c, err := be.bill.CAFs.RegisterFile(ctx, empresaID, file)
	if err != nil {
		return adminFail(env, err)
	}
	return adminJSON(env, c)
}
