package billing_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing"
	"github.com/dtekit/dtekit/billing/billingtest"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/store"
)

// Example_emit emits a factura through the service and sends the same
// request again under the same Idempotency-Key, which answers the first
// response. The company, its certificate and its CAF come from
// billingtest's test authority; in production they are the company's own,
// registered with Company.Create, Company.UploadCertificate and CAFs.Register.
func Example_emit() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "dtekit-example-emit")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	st, err := billingtest.SQLite.Open(ctx, filepath.Join(dir, "dtekit.db"), store.JobsConfig{})
	if err != nil {
		panic(err)
	}
	defer st.Close()
	svc, err := billingtest.New(st, billing.Config{}) // test KEK, test authority trusted
	if err != nil {
		panic(err)
	}
	creds, err := billingtest.SharedCredentials()
	if err != nil {
		panic(err)
	}
	emp, err := billingtest.Provision(ctx, svc, creds, billingtest.Company{Tipos: []dte.TipoDTE{33}})
	if err != nil {
		panic(err)
	}

	// One line of 10,000 pesos net: IVA 19 % is 1,900, the total 11,900.
	req, err := dte.DecodeRequest(strings.NewReader(`{"tipo_dte":33,
		"receptor":{"rut":"76086428-5","razon_social":"Cliente de Prueba SpA","giro":"Servicios",
			"direccion":"Av. Providencia 1234","comuna":"Providencia","ciudad":"Santiago"},
		"detalle":[{"nombre":"Asesoría","cantidad":1,"precio":10000}],
		"auto_send":false}`))
	if err != nil {
		panic(err) // a *dte.ValidationError naming each bad field
	}
	const key = "0b6f3c1e-5d7a-4c8e-9f10-2a3b4c5d6e7f"
	first, replayed, err := svc.Documents.Emit(ctx, emp.ID, api.EmitParams{IdempotencyKey: key, Request: req})
	if err != nil {
		panic(err) // a *fault.Error: its Kind, Code and Details say what failed
	}
	fmt.Println(first.TipoDTE, first.Folio, first.Estado, first.MontoTotal, replayed)

	again, replayed, err := svc.Documents.Emit(ctx, emp.ID, api.EmitParams{IdempotencyKey: key, Request: req})
	if err != nil {
		panic(err)
	}
	fmt.Println(again.ID == first.ID, replayed)

	xml, err := svc.Documents.XML(ctx, emp.ID, first.ID)
	if err != nil {
		panic(err)
	}
	rep, err := dte.Verify(xml, creds.TrustedKeys)
	if err != nil {
		panic(err)
	}
	fmt.Println("signature, stamp and totals verify:", rep.OK())
	// Output:
	// 33 1 firmado 11900 false
	// true true
	// signature, stamp and totals verify: true
}
