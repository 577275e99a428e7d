package dte_test

import (
	"fmt"

	"github.com/dtekit/dtekit/dte"
)

// XMLText turns the ISO-8859-1 bytes of a signed file into UTF-8 text
// whose declaration says so: the form to carry in JSON.
func ExampleXMLText() {
	latin1 := []byte("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<RznSoc>Comercial \xd1and\xfa</RznSoc>")
	fmt.Println(dte.XMLText(latin1))
	// Output:
	// <?xml version="1.0" encoding="UTF-8"?>
	// <RznSoc>Comercial Ñandú</RznSoc>
}
