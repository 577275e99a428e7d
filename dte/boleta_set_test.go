package dte_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/oracle"
)

// TestBoletaSetReference emits a boleta carrying the reference to the SII's
// test set and checks the form the boleta schema and DTEUpload want
// (sii-wave3-notes §6.4): NroLinRef 1, CodRef SET, RazonRef CASO-1, and no
// TpoDocRef, FolioRef or FchRef; it must read back as the same reference
// and validate against the boleta schema.
func TestBoletaSetReference(t *testing.T) {
	c := creds(t)
	em, err := c.Emitter(nil)
	if err != nil {
		t.Fatal(err)
	}
	req := &dte.EmitirDTERequest{TipoDTE: 39, Receptor: dte.Receptor{Rut: "66666666-6", RazonSocial: "Cliente"},
		Detalle:     []dte.LineaDetalle{{Nombre: "Papel de regalo", Cantidad: "17", Precio: "120"}},
		Referencias: []dte.Referencia{{TipoDocRef: dte.RefCodigo(dte.RefCodigoSET), RazonRef: "CASO-2"}}}
	out, err := em.Emit(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte("<Referencia><NroLinRef>1</NroLinRef><CodRef>SET</CodRef><RazonRef>CASO-2</RazonRef></Referencia>")
	if !bytes.Contains(out.XML, want) {
		i := bytes.Index(out.XML, []byte("<Referencia>"))
		t.Fatalf("the boleta's SET reference is not %s:\n%s", want, out.XML[max(i, 0):min(max(i, 0)+200, len(out.XML))])
	}
	doc, err := dte.ParseDTE(out.XML)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Referencias) != 1 || doc.Referencias[0].TipoDocRef.Codigo != "SET" || doc.Referencias[0].RazonRef != "CASO-2" {
		t.Errorf("read back as %+v", doc.Referencias)
	}
	if rep, err := dte.Verify(out.XML, c.Keys); err != nil || !rep.OK() {
		t.Errorf("Verify: %v", err)
	}
	schemas := oracle.Schemas(t)
	oracle.Tool(t, "xmllint")
	file := filepath.Join(t.TempDir(), "boleta.xml")
	if err := os.WriteFile(file, out.XML, 0o600); err != nil {
		t.Fatal(err)
	}
	if msg, ok := runIn(t, schemas, "xmllint", "--noout", "--schema", "BoletaDTE_wrapper.xsd", file); !ok {
		t.Errorf("xmllint: %s", msg)
	}
}
