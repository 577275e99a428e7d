package main

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/libro"
)

// rootElement returns the local name of data's root element, reading no
// further than its start tag ("" when there is none before an error).
func rootElement(data []byte) string {
	dec := xml.NewDecoder(bytes.NewReader(data))
	// Only the name is wanted: any declared encoding reads as bytes.
	dec.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	for range 64 {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		if se, ok := tok.(xml.StartElement); ok {
			return se.Name.Local
		}
	}
	return ""
}

// isLibro reports whether a root element is one of the SII's libros or
// the RCOF, which "dtekit verify" checks with libro.Verify.
func isLibro(root string) bool {
	return root == libro.RootCompraVenta || root == libro.RootGuia || root == libro.RootConsumo
}

// verifyLibro verifies a libro or RCOF and prints its report; it returns
// the exit code of the file.
func verifyLibro(env *cmdEnv, file string, data []byte, opts dte.VerifyOptions, asJSON bool) int {
	rep, err := libro.Verify(data, opts)
	if rep == nil {
		fmt.Fprintf(env.stderr, "dtekit verify: %s: %s\n", file, errLine(err))
		return exitFail
	}
	if asJSON {
		_ = totalsWriteJSON(env.stdout, map[string]any{"file": file, "ok": rep.OK(), "report": rep})
	} else {
		verdict := "OK"
		if !rep.OK() {
			verdict = "FAILED"
		}
		fmt.Fprintf(env.stdout, "%s: %s (%s %s, %s %s, %d row(s))\n", file, verdict, rep.Kind, rep.ID, rep.Tipo, rep.Periodo, rep.Detalles)
		fmt.Fprintf(env.stdout, "  emisor %s, sent by %s: signature %s; signer policy %s\n", rep.RutEmisor, rep.RutEnvia,
			checkText(rep.Signature), checkText(rep.Policy))
		fmt.Fprintf(env.stdout, "    signed by %s\n", rep.Signer)
	}
	if err != nil {
		return exitFail
	}
	return exitOK
}
