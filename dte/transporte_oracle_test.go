package dte_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/text/encoding/charmap"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/oracle"
)

// TestOracleTransporte checks the transport data in the signed XML with the
// SII's own schema (xmllint, DTE_v10.xsd) and the exact bytes written,
// typed by hand from the schema's sequence: Patente, RUTTrans,
// Chofer(RUTChofer, NombreChofer), DirDest, CmnaDest, CiudadDest, then
// (on an export) Aduana, between Receptor and Totales. The documents are
// the oracle run's guía and factura de exportación, whose requests carry
// transporte with characters that need escaping.
func TestOracleTransporte(t *testing.T) {
	schemas := oracle.Schemas(t)
	oracle.Tool(t, "xmllint")
	docs, reqs := emitAll(t)
	dir := t.TempDir()
	want := map[dte.TipoDTE]string{
		52: `</Receptor><Transporte><Patente>KX-RT45</Patente><RUTTrans>77123456-9</RUTTrans>` +
			`<Chofer><RUTChofer>16789012-1</RUTChofer><NombreChofer>Juan "Ñato" Pérez &amp; &lt;hijo&gt;</NombreChofer></Chofer>` +
			`<DirDest>Bodega &lt;B&gt; &amp; "Patio 3", Ruta 5 km 12</DirDest><CmnaDest>Ñuñoa</CmnaDest>` +
			`<CiudadDest>Santiago</CiudadDest></Transporte><Totales>`,
		110: `</Receptor><Transporte><Patente>BBCL22</Patente><RUTTrans>96512340-7</RUTTrans>` +
			`<DirDest>Puerto de San Antonio, sitio 3</DirDest><CmnaDest>San Antonio</CmnaDest>` +
			`<CiudadDest>San Antonio</CiudadDest><Aduana><CodModVenta>1</CodModVenta>`,
	}
	var files []string
	for _, tipo := range []dte.TipoDTE{52, 110} {
		out := docs[tipo]
		wantLatin1, err := charmap.ISO8859_1.NewEncoder().String(want[tipo])
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(out.XML, []byte(wantLatin1)) {
			i := bytes.Index(out.XML, []byte("</Receptor>"))
			t.Errorf("tipo %d: the XML lacks\n%s\nit has\n%.400s", tipo, want[tipo], out.XML[max(i, 0):])
		}
		f := filepath.Join(dir, out.ID+".xml")
		if err := os.WriteFile(f, out.XML, 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)

		// Read back: the transport data the request gave.
		doc, err := dte.ParseDTE(out.XML)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(reqs[tipo].Transporte, doc.Transporte); d != "" {
			t.Errorf("tipo %d: parsed Transporte (-request +parsed):\n%s", tipo, d)
		}
		if tipo == 110 && (doc.Export == nil || doc.Export.ModalidadVenta == nil || *doc.Export.ModalidadVenta != 1) {
			t.Errorf("tipo 110: the Aduana block was not read after the transport data: %+v", doc.Export)
		}
	}
	msg, ok := runIn(t, schemas, "xmllint", append([]string{"--noout", "--schema", "DTE_v10.xsd"}, files...)...)
	for _, f := range files {
		if !strings.Contains(msg, f+" validates") {
			t.Errorf("xmllint DTE_v10.xsd: %s does not validate: %s", filepath.Base(f), msg)
		}
	}
	if !ok {
		t.Errorf("xmllint: %s", msg)
	}
}
