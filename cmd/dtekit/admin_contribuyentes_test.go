package main

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/internal/pgtest"
)

// TestAdminContribuyentesImport runs "dtekit admin contribuyentes import"
// on SQLite and PostgreSQL: a list in the SII's form is loaded with its
// warnings on stderr, one per skipped line with its number; loading it
// again gives the same list and purges the first; a file that is not the
// list is refused with its reason.
func TestAdminContribuyentesImport(t *testing.T) {
	if testing.Short() {
		t.Skip("opens a database")
	}
	list := "RUT;RAZON SOCIAL;NUMERO RESOLUCION;FECHA RESOLUCION;MAIL INTERCAMBIO;URL\r\n" +
		"76543210-3;ARA\xd1A SPA;80;22-08-2014 ;dte@arana.cl;\r\n" + // 2
		"76543210-4;MAL DIGITO;1;01-01-2020;x@y.cl;\r\n" + // 3: bad RUT
		"11111111-1;SIN CASILLA;42;01-01-2020 ;;\r\n" + // 4
		"76543210-3;REPETIDA;1;01-01-2020;otra@arana.cl;\r\n" // 5: repeated
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			data := filepath.Join(dir, "data")
			if err := os.MkdirAll(data, 0o700); err != nil {
				t.Fatal(err)
			}
			vars := map[string]string{}
			if backend == "postgres" {
				vars["DTEKIT_DATABASE_URL"] = pgtest.URL(t)
				vars["DTEKIT_KEK"] = hex.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
			}
			file := filepath.Join(dir, "ce_empresas_dwnld_20261129.csv")
			if err := os.WriteFile(file, []byte(list), 0o600); err != nil {
				t.Fatal(err)
			}
			var first struct {
				Lista             int64
				Contribuyentes    int64
				ConCorreo         int64 `json:"con_correo"`
				TotalAdvertencias int   `json:"total_advertencias"`
				Eliminados        int64
			}
			for i := range 2 {
				code, out, errs := runCLI(t, "", vars, "admin", "contribuyentes", "import", "--data", data, file)
				var got = first
				if code != exitOK || json.Unmarshal([]byte(out), &got) != nil {
					t.Fatalf("import %d: exit %d\n%s\n%s", i, code, out, errs)
				}
				wantErr := "dtekit admin: " + file + ": line 3: RUT \"76543210-4\" is not valid\n" +
					"dtekit admin: " + file + ": line 5: RUT 76543210-3 appears on an earlier line; the first is kept\n"
				if errs != wantErr {
					t.Errorf("import %d: stderr\n%s\nwant\n%s", i, errs, wantErr)
				}
				if got.Contribuyentes != 2 || got.ConCorreo != 1 || got.TotalAdvertencias != 2 {
					t.Errorf("import %d: %s", i, out)
				}
				if i == 1 && (got.Lista == first.Lista || got.Eliminados != 2) {
					t.Errorf("the second import (%s) did not replace the first (list %d)", out, first.Lista)
				}
				first = got
			}
			bad := filepath.Join(dir, "bad.csv")
			os.WriteFile(bad, []byte("RUT,RAZON SOCIAL\n76543210-3,X\n"), 0o600)
			code, out, errs := runCLI(t, "", vars, "admin", "contribuyentes", "import", "--data", data, bad)
			if code != exitFail || out != "" || !strings.HasPrefix(errs, "dtekit admin: the file is not the SII's list of contribuyentes (VALIDATION_ERROR)\n") ||
				!strings.Contains(errs, "line 1:") {
				t.Errorf("a file that is not the list: exit %d\n%s\n%s", code, out, errs)
			}
			if code, _, errs := runCLI(t, "", vars, "admin", "contribuyentes", "import", "--data", data); code != exitUsage {
				t.Errorf("no FILE: exit %d %s", code, errs)
			}
		})
	}
}
