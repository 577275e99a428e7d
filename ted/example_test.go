package ted_test

import (
	"fmt"
	"log"
	"time"

	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/caf/caftest"
	"github.com/dtekit/dtekit/ted"
)

// Stamp a document with a CAF and check the stamp as a receiver would.
func Example() {
	auth, err := caftest.NewAuthority(nil, caf.IDKCertificacion)
	if err != nil {
		log.Fatal(err)
	}
	file, err := auth.Issue(caftest.IssueRequest{
		RutEmisor: "76192083-9", RazonSocial: "FERRETERÍA ÑUÑOA LTDA", Tipo: 39,
		Desde: 1, Hasta: 100, FechaAutorizacion: time.Date(2024, 1, 15, 0, 0, 0, 0, time.UTC),
	})
	if err != nil {
		log.Fatal(err)
	}
	c, err := caf.Parse(file)
	if err != nil {
		log.Fatal(err)
	}
	stamp, err := ted.Build(ted.DD{
		RE: "76192083-9", TD: 39, F: 7, FE: "2024-02-01",
		RR:  "", // boleta without receptor: 66666666-6
		MNT: "5000", IT1: "Martillo carpintero 16 oz",
		CAF: c, TSTED: time.Date(2024, 2, 1, 12, 0, 0, 0, time.UTC),
	}, nil) // nil: sign with the CAF's own RSASK
	if err != nil {
		log.Fatal(err)
	}
	// stamp is ISO-8859-1: paste it into the DTE and encode it in the PDF417.
	t, err := ted.Verify(stamp, auth.Keys())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(t.DD.RR, t.DD.MNT, t.DD.TSTED.Format("2006-01-02T15:04:05"))
	// Output: 66666666-6 5000 2024-02-01T09:00:00
}
