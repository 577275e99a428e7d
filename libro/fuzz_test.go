package libro_test

import (
	"strings"
	"testing"

	"github.com/dtekit/dtekit/libro"
)

// The three readers never panic, whatever the input, and every error they
// return is theirs (prefixed "libro:"). The seeds are the libros of the
// sample sets and a few broken shapes.
func FuzzParse(f *testing.F) {
	e := theSets(f)
	seed := func(b []byte, err error) {
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	seed(libro.Ventas(libro.Options{Emisor: e.creds.Emisor, At: at}, e.creds.Cert, e.envio))
	seed(libro.Compras(libro.Options{Emisor: e.creds.Emisor, At: at, FctProp: "0.6"}, e.creds.Cert, compras("2026-01-10")))
	seed(libro.Guias(libro.Options{Emisor: e.creds.Emisor, At: at, Anuladas: map[int64]int{e.guias[2].Folio: 2}}, e.creds.Cert,
		e.guias[0].XML, e.guias[1].XML, e.guias[2].XML))
	seed(libro.ConsumoFolios(libro.Options{Emisor: e.creds.Emisor, At: at}, e.creds.Cert, e.boletas[0].XML))
	const ns = `xmlns="http://www.sii.cl/SiiDte"`
	for _, s := range []string{
		`<LibroCompraVenta ` + ns + `><EnvioLibro ID="a"><Caratula/><Detalle><NroDoc>x</NroDoc></Detalle></EnvioLibro></LibroCompraVenta>`,
		`<LibroGuia ` + ns + `><EnvioLibro><Detalle><Folio>99999999999999999999</Folio></Detalle></EnvioLibro></LibroGuia>`,
		`<ConsumoFolios ` + ns + `><DocumentoConsumoFolios><Caratula><TmstFirmaEnv>ayer</TmstFirmaEnv></Caratula></DocumentoConsumoFolios></ConsumoFolios>`,
		`<LibroCompraVenta><EnvioLibro/></LibroCompraVenta>`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for name, parse := range map[string]func([]byte) error{
			"Parse":        func(b []byte) error { _, err := libro.Parse(b); return err },
			"ParseGuia":    func(b []byte) error { _, err := libro.ParseGuia(b); return err },
			"ParseConsumo": func(b []byte) error { _, err := libro.ParseConsumo(b); return err },
		} {
			if err := parse(data); err != nil && !strings.HasPrefix(err.Error(), "libro: ") {
				t.Errorf("%s: error %q is not prefixed libro:", name, err)
			}
		}
	})
}
