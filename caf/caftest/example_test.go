package caftest_test

import (
	"fmt"
	"log"
	"time"

	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/caf/caftest"
)

// Tests and demos issue their own CAFs from a test authority and trust it
// beside the SII's keys.
func ExampleAuthority_Issue() {
	auth, err := caftest.NewAuthority(nil, caf.IDKCertificacion)
	if err != nil {
		log.Fatal(err)
	}
	file, err := auth.Issue(caftest.IssueRequest{
		RutEmisor:         "76192083-9",
		RazonSocial:       "FERRETERÍA ÑUÑOA LTDA",
		Tipo:              33,
		Desde:             1,
		Hasta:             100,
		FechaAutorizacion: time.Date(2024, 1, 15, 0, 0, 0, 0, time.UTC),
	})
	if err != nil {
		log.Fatal(err)
	}
	c, err := caf.Parse(file)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.Verify(auth.Keys()) == nil, c.Verify(caf.SIIKeys()) == nil)
	// Output: true false
}
