package dte_test

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/oracle"
)

// TestParseEnvioSIISample reads the SII's own signed example (an EnvioDTE
// with one factura, ISO-8859-1, CRLF, indented) and checks the values
// printed in it.
func TestParseEnvioSIISample(t *testing.T) {
	data, err := os.ReadFile(oracle.SharedFile(t, "sii", "samples", "F60T33-ejemplo-oficial-SII.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if name, err := dte.RootName(data); err != nil || name != "EnvioDTE" {
		t.Fatalf("RootName = %q, %v", name, err)
	}
	env, err := dte.ParseEnvio(data)
	if err != nil {
		t.Fatal(err)
	}
	cr := env.Caratula
	if env.Boleta || env.SetID != "SetDoc" || cr.RutEmisor != "97975000-5" || cr.RutEnvia != "7880442-4" ||
		cr.RutReceptor != "60803000-K" || cr.FchResol != "2003-09-02" || cr.NroResol != 0 ||
		cr.TmstFirmaEnv != "2003-10-13T09:33:22" || len(cr.SubTotDTE) != 1 || cr.SubTotDTE[0] != (dte.SubTotDTE{Tipo: 33, Cantidad: 1}) {
		t.Errorf("carátula %+v", cr)
	}
	if len(env.Documentos) != 1 {
		t.Fatalf("%d documents, want 1", len(env.Documentos))
	}
	d := env.Documentos[0]
	if d.ID != "F60T33" || d.Tipo != 33 || d.Folio != 60 || d.FechaEmision != "2003-10-13" || d.TmstFirma != "2003-10-13T09:33:20" {
		t.Errorf("document %s %d/%d %s %s", d.ID, d.Tipo, d.Folio, d.FechaEmision, d.TmstFirma)
	}
	// The DTE's own signature (line 132 of the sample), not the envelope's.
	if want := "JG1Ig0pvSIH85kIKGRZUjkyX6CNaY08Y94j4UegTgDe8+wl61GzqjdR1rfOK9BGn93AMOo6aiAgolW0k/XklNVtM/ZzpNNS3d/fYVa1q509mAMSXbelxSM3bjoa7H6Wzd/mV1PpQ8zK5gw7mgMMP4IKxHyS92G81GEguSmzcQmA="; d.SignatureValue != want {
		t.Errorf("SignatureValue %q, want %q", d.SignatureValue, want)
	}
	if d.Emisor.Rut != "97975000-5" || d.Emisor.RazonSocial != "RUT DE PRUEBA" || len(d.Emisor.Acteco) != 1 || d.Emisor.Acteco[0] != 31341 ||
		d.Emisor.SucursalSII == nil || *d.Emisor.SucursalSII != 1234 || d.Emisor.Direccion != "Teatinos 120, Piso 4" {
		t.Errorf("emisor %+v", d.Emisor)
	}
	if d.Receptor.Rut != "77777777-7" || d.Receptor.RazonSocial != "EMPRESA  LTDA" || d.Receptor.Comuna != "LA FLORIDA" {
		t.Errorf("receptor %+v", d.Receptor)
	}
	tt := d.Totales
	if tt.MntNeto != "100000" || tt.TasaIVA != "19" || tt.IVA != "19000" || tt.MntTotal != "119000" {
		t.Errorf("totales %+v", tt)
	}
	if len(d.Detalle) != 3 || d.Detalle[0].Nombre != "Parlantes Multimedia 180W." || d.Detalle[0].Cantidad != "20" ||
		d.Detalle[0].Precio != "4500" || d.Detalle[0].MontoItem != "90000" || d.Detalle[2].NroLinDet != 3 {
		t.Errorf("detalle %+v", d.Detalle)
	}
	// The TED is kept exactly as the file has it (indented, CRLF).
	ted := regexp.MustCompile(`(?s)<TED version="1.0">.*</TED>`).Find(data)
	if !bytes.Equal(d.TED, ted) {
		t.Errorf("TED bytes differ from the file's:\n%q", d.TED)
	}
	raw := regexp.MustCompile(`(?s)<DTE version="1.0">.*</DTE>`).Find(data)
	if !bytes.Equal(d.Raw, raw) {
		t.Errorf("the DTE's raw bytes differ from the file's")
	}
	if _, err := dte.ParseDTE(data); err == nil {
		t.Error("ParseDTE accepted an envelope")
	}
}

// TestParseEncodingsAndWhitespace reads the same document written as
// ISO-8859-1, as UTF-8 and pretty-printed.
func TestParseEncodingsAndWhitespace(t *testing.T) {
	docs, reqs := emitAll(t)
	out, req := docs[dte.FacturaElectronica], reqs[dte.FacturaElectronica]
	utf := []byte(strings.Replace(latin1ToUTF8(out.XML), `encoding="ISO-8859-1"`, `encoding="UTF-8"`, 1))
	pretty := bytes.ReplaceAll(out.XML, []byte("><"), []byte(">\r\n  <"))
	for name, data := range map[string][]byte{"latin1": out.XML, "utf8": utf, "pretty": pretty} {
		doc, err := dte.ParseDTE(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if doc.Receptor.RazonSocial != req.Receptor.RazonSocial || doc.Detalle[0].Nombre != req.Detalle[0].Nombre ||
			doc.Folio != out.Folio || doc.Totales.MntTotal != out.MontoTotal {
			t.Errorf("%s: read %q / %q / %d / %s", name, doc.Receptor.RazonSocial, doc.Detalle[0].Nombre, doc.Folio, doc.Totales.MntTotal)
		}
		if !bytes.HasPrefix(doc.TED, []byte(`<TED version="1.0">`)) || !bytes.HasSuffix(doc.TED, []byte(`</TED>`)) {
			t.Errorf("%s: TED span %q", name, doc.TED)
		}
	}
}

func TestParseRejects(t *testing.T) {
	for name, in := range map[string]string{
		"empty":          "",
		"not xml":        "hello",
		"no namespace":   `<DTE version="1.0"><Documento ID="x"/></DTE>`,
		"other root":     `<Foo xmlns="http://www.sii.cl/SiiDte"/>`,
		"no document":    `<DTE xmlns="http://www.sii.cl/SiiDte" version="1.0"></DTE>`,
		"bad folio":      `<DTE xmlns="http://www.sii.cl/SiiDte"><Documento><Encabezado><IdDoc><TipoDTE>33</TipoDTE><Folio>x</Folio></IdDoc></Encabezado></Documento></DTE>`,
		"unclosed":       `<DTE xmlns="http://www.sii.cl/SiiDte"><Documento>`,
		"other encoding": `<?xml version="1.0" encoding="UTF-16"?><DTE xmlns="http://www.sii.cl/SiiDte"/>`,
		"bad utf8":       "<DTE xmlns=\"http://www.sii.cl/SiiDte\">\xff</DTE>",
	} {
		if _, err := dte.ParseDTE([]byte(in)); err == nil {
			t.Errorf("%s: accepted", name)
		}
		if _, err := dte.ParseEnvio([]byte(in)); err == nil {
			t.Errorf("%s: ParseEnvio accepted", name)
		}
	}
}

func latin1ToUTF8(b []byte) string {
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return string(r)
}

// FuzzParseDTE feeds arbitrary bytes to ParseDTE and ParseEnvio: they must
// never panic, and what they return must point into the input.
func FuzzParseDTE(f *testing.F) {
	for _, d := range dte.SeedDocuments() {
		f.Add(d)
	}
	if data, err := os.ReadFile("../../shared/sii/samples/F60T33-ejemplo-oficial-SII.xml"); err == nil {
		f.Add(data)
	}
	f.Add([]byte(`<?xml version="1.0" encoding="ISO-8859-1"?><DTE xmlns="http://www.sii.cl/SiiDte" version="1.0"><Documento ID="T33F1"><Encabezado><IdDoc><TipoDTE>33</TipoDTE><Folio>1</Folio></IdDoc></Encabezado><TED version="1.0">` + "\xd1" + `</TED></Documento></DTE>`))
	f.Add([]byte(`<EnvioDTE xmlns="http://www.sii.cl/SiiDte" version="1.0"><SetDTE ID="SetDoc"><Caratula version="1.0"><RutEmisor>1-9</RutEmisor><SubTotDTE><TpoDTE>33</TpoDTE><NroDTE>1</NroDTE></SubTotDTE></Caratula>` +
		string(dte.SeedDocuments()[0][bytes.Index(dte.SeedDocuments()[0], []byte("<DTE")):]) + `</SetDTE></EnvioDTE>`))
	f.Add([]byte(`<EnvioBOLETA xmlns="http://www.sii.cl/SiiDte"><SetDTE ID="S"><Caratula><NroResol>0</NroResol></Caratula><DTE><Documento><Encabezado><IdDoc><Folio>2</Folio></IdDoc></Encabezado></Documento></DTE></SetDTE></EnvioBOLETA>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if doc, err := dte.ParseDTE(data); err == nil {
			if !bytes.Equal(doc.Raw, data) {
				t.Fatal("Raw is not the input")
			}
			if doc.TED != nil && (!bytes.Contains(data, doc.TED) || !bytes.HasPrefix(doc.TED, []byte("<")) || !bytes.HasSuffix(doc.TED, []byte(">"))) {
				t.Fatalf("TED %q is not an element of the input", doc.TED)
			}
		}
		if env, err := dte.ParseEnvio(data); err == nil {
			for _, d := range env.Documentos {
				if !bytes.Contains(data, d.Raw) || !bytes.HasPrefix(d.Raw, []byte("<")) || !bytes.HasSuffix(d.Raw, []byte(">")) {
					t.Fatalf("document Raw %q is not an element of the input", d.Raw)
				}
			}
		}
		_, _ = dte.RootName(data)
	})
}

// The library readers bound what they read, not only the CLI: nesting
// deeper than MaxXMLDepth, more elements than one per 16 bytes, and
// inputs over MaxDTEBytes are refused by ParseDTE, ParseEnvio and Verify
// alike.
func TestReadersLimits(t *testing.T) {
	c := creds(t)
	g := genuine33(t)
	env, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: c.Emisor}, c.Cert, g)
	if err != nil {
		t.Fatal(err)
	}
	insert := func(doc []byte, s string) []byte {
		k := bytes.Index(doc, []byte("<TmstFirma>"))
		return append(append(append([]byte{}, doc[:k]...), s...), doc[k:]...)
	}
	deep := strings.Repeat("<x>", dte.MaxXMLDepth) + strings.Repeat("</x>", dte.MaxXMLDepth)
	many := strings.Repeat("<y/>", 100_000)
	readers := map[string]func([]byte) error{
		"ParseDTE":   func(b []byte) error { _, err := dte.ParseDTE(b); return err },
		"ParseEnvio": func(b []byte) error { _, err := dte.ParseEnvio(b); return err },
		"Verify":     func(b []byte) error { _, err := dte.Verify(b, c.Keys); return err },
	}
	for name, read := range readers {
		doc := g
		if name == "ParseEnvio" {
			doc = env
		}
		for what, tc := range map[string]struct {
			in   []byte
			want string
		}{
			"depth":    {insert(doc, deep), "nested deeper than 32"},
			"elements": {insert(doc, many), "more than"},
		} {
			if err := read(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s, %s: %v, want an error mentioning %q", name, what, err, tc.want)
			}
		}
	}
	big := insert(g, strings.Repeat(" ", dte.MaxDTEBytes))
	for _, name := range []string{"ParseDTE", "Verify"} {
		if err := readers[name](big); err == nil || !strings.Contains(err.Error(), "more than the") {
			t.Errorf("%s of a %d-byte DTE: %v", name, len(big), err)
		}
	}
}
