package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dtekit/dtekit/api"
)

// adminContribuyentesImport loads the SII's list of authorized issuers
// (ce_empresas_dwnld_YYYYMMDD.csv) into the database: the addresses the
// server mails documents to when a receptor's cliente has none.
func adminContribuyentesImport(ctx context.Context, env *cmdEnv, args []string) int {
	fs := newFlagSet(env, "admin contribuyentes import")
	var db adminDB
	db.define(env, fs)
	pos, code, ok := parseFlags(env, fs, adminUsage, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return usageError(env, "admin", "contribuyentes import takes one FILE (the SII's ce_empresas_dwnld_YYYYMMDD.csv)")
	}
	f, err := os.Open(pos[0])
	if err != nil {
		return adminFail(env, newError(codeFileUnreadable, "", err))
	}
	defer f.Close()
	be, err := db.open(ctx, env)
	if err != nil {
		return adminFail(env, err)
	}
	defer be.st.Close()
	res, err := be.bill.Mail.ImportContribuyentes(ctx, api.ContribuyentesImportParams{Archivo: f, Origen: filepath.Base(pos[0])})
	if err != nil {
		return adminFail(env, err)
	}
	for _, w := range res.Advertencias {
		fmt.Fprintf(env.stderr, "dtekit admin: %s: %s\n", pos[0], w)
	}
	if n := res.TotalAdvertencias - len(res.Advertencias); n > 0 {
		fmt.Fprintf(env.stderr, "dtekit admin: %s: %d more warnings not shown\n", pos[0], n)
	}
	return adminJSON(env, res)
}
