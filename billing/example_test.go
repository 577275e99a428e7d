package billing_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/store/sqlite"
)

// Example runs the service in-process on an embedded SQLite file: an
// operator creates a company and an API key, and the key then
// authenticates as that company.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "dtekit-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	st, err := sqlite.Open(ctx, filepath.Join(dir, sqlite.FileName), nil)
	if err != nil {
		panic(err)
	}
	defer st.Close()
	// The key-encryption key lives in a 0600 file beside the database,
	// made on the first start; the database records its fingerprint.
	keys, err := billing.LoadKeyFile(ctx, st, filepath.Join(dir, "kek"))
	if err != nil {
		panic(err)
	}
	svc, err := billing.New(billing.Config{Store: st, Keyring: keys})
	if err != nil {
		panic(err)
	}
	emp, err := svc.Company.Create(ctx, api.EmpresaInput{
		Rut: "76.192.083-9", RazonSocial: "Comercializadora Ñuñoa Ltda.", Giro: "Comercio",
		Direccion: "Av. Irarrázaval 2401", Comuna: "Ñuñoa", Ciudad: "Santiago",
		Ambiente: "certificacion", FechaResolucion: "2024-05-10", NumeroResolucion: 0, Acteco: []int{465100},
	})
	if err != nil {
		panic(err)
	}
	key, err := svc.Keys.Create(ctx, emp.ID, api.APIKeyInput{Write: false})
	if err != nil {
		panic(err)
	}
	who, err := svc.Keys.Authenticate(ctx, key.Key)
	if err != nil {
		panic(err)
	}
	fmt.Println(emp.Rut, who.EmpresaID == emp.ID, who.Write)

	// Another company's id is simply not found.
	_, err = svc.Company.Get(ctx, "00000000-0000-0000-0000-000000000000")
	var be *fault.Error
	fmt.Println(errors.As(err, &be), be.Kind, be.Code)
	// Output:
	// 76192083-9 true false
	// true not_found NOT_FOUND
}
