package aduana_test

import (
	"fmt"
	"strconv"

	"github.com/dtekit/dtekit/aduana"
)

// Naming the customs codes of an export factura for print, and a code the
// tables lack as its number.
func Example() {
	pais := func(code int) string {
		if name, ok := aduana.Pais(code); ok {
			return name
		}
		return "código " + strconv.Itoa(code) + " (no listado)"
	}
	fmt.Println("País de destino:", pais(225))
	fmt.Println("País receptor:", pais(400))
	puerto, _ := aduana.Puerto(906)
	fmt.Println("Puerto de embarque:", puerto)
	fob, _ := aduana.ClausulaVenta(5)
	fca7, _ := aduana.ClausulaVenta(7)
	fca10, _ := aduana.ClausulaVenta(10)
	fmt.Println("Cláusulas 5, 7 y 10:", fob, fca7, fca10)
	sigla, name, _ := aduana.UnidadMedida(6)
	fmt.Printf("Peso neto: 10.000 %s (%s)\n", sigla, name)
	code, iso, _ := aduana.Moneda("DOLAR USA")
	fmt.Println("DOLAR USA:", code, iso)
	// Output:
	// País de destino: ESTADOS UNIDOS DE AMÉRICA
	// País receptor: código 400 (no listado)
	// Puerto de embarque: SAN ANTONIO
	// Cláusulas 5, 7 y 10: FOB FCA FCA
	// Peso neto: 10.000 KN (KILOGRAMO NETO)
	// DOLAR USA: 13 USD
}
