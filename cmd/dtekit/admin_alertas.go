package main

import (
	"context"
	"flag"

	"github.com/dtekit/dtekit/api"
)

// adminAlertas implements "dtekit admin alertas show|update": the
// company's alert settings, as GET and PUT /empresa/alertas read and
// change them.
func adminAlertas(ctx context.Context, env *cmdEnv, verb string, args []string) int {
	var threshold int64
	name := "admin alertas " + verb
	define := func(fs *flag.FlagSet) {
		fs.Int64Var(&threshold, "caf-low-stock-threshold", 0,
			"available folios of a type at which caf.low_stock fires (0 to 1000000)")
	}
	if verb == "show" {
		define = nil
	}
	var required []string
	if verb == "update" {
		required = []string{"caf-low-stock-threshold"}
	}
	_, db, r, pos, code, ok := adminCompanyFlags(env, name, args, define, required...)
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
	var s *api.AlertSettings
	if verb == "update" {
		s, err = be.bill.Company.UpdateAlertSettings(ctx, empresaID, api.AlertSettingsInput{CAFLowStockThreshold: &threshold})
	} else {
		s, err = be.bill.Company.AlertSettings(ctx, empresaID)
	}
	if err != nil {
		return adminFail(env, err)
	}
	return adminJSON(env, s)
}
