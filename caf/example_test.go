package caf_test

import (
	"fmt"
	"log"
	"os"
	"time"

	"github.com/dtekit/dtekit/caf"
)

// A CAF downloaded from the SII is parsed and checked before use: the SII's
// signature, the key pair, the dates and the folio.
func Example() {
	data, err := os.ReadFile("FoliosSII7697500033120241151234.xml")
	if err != nil {
		log.Fatal(err)
	}
	c, err := caf.Parse(data) // raw XML or base64, ISO-8859-1 or UTF-8
	if err != nil {
		log.Fatal(err)
	}
	if err := c.Validate(time.Now(), caf.SIIKeys()); err != nil {
		log.Fatal(err) // errors.Is(err, caf.ErrExpired), caf.ErrSignature, ...
	}
	if err := c.CheckFolio(42); err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.RazonSocial, c.Tipo, c.Desde, c.Hasta, c.Ambiente())
}
