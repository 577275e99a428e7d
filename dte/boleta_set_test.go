package dte_test

import (
	"bytes"
	"context"
	"errors"
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

// TestSetReferenceTextFolio emits a factura whose SET reference carries
// the case as its folio, as the notes recommend for a certification case
// (sii-wave3-notes §6.3: FolioRef is FolioRType, a string of at most 18
// characters): the XML says <FolioRef>414175-1</FolioRef>, reads back as
// the same text folio, validates against DTE_v10.xsd and verifies; a
// text folio on a numeric document type, beside a numeric folio or longer
// than 18 characters is refused on folio_ref.
func TestSetReferenceTextFolio(t *testing.T) {
	c := creds(t)
	em, err := c.Emitter(nil)
	if err != nil {
		t.Fatal(err)
	}
	req := func(ref dte.Referencia) *dte.EmitirDTERequest {
		return &dte.EmitirDTERequest{TipoDTE: 33,
			Receptor: dte.Receptor{Rut: "76086428-5", RazonSocial: "Cliente", Giro: "Comercio", Direccion: "Calle 1", Comuna: "Santiago"},
			Detalle:  []dte.LineaDetalle{{Nombre: "Cajón AFECTO", Cantidad: "123", Precio: "923"}}, Referencias: []dte.Referencia{ref}}
	}
	set := dte.Referencia{TipoDocRef: dte.RefCodigo(dte.RefCodigoSET), FolioRefTexto: "414175-1", FechaRef: "2026-03-02", RazonRef: "CASO 414175-1"}
	out, err := em.Emit(context.Background(), req(set))
	if err != nil {
		t.Fatal(err)
	}
	want := []byte("<Referencia><NroLinRef>1</NroLinRef><TpoDocRef>SET</TpoDocRef><FolioRef>414175-1</FolioRef><FchRef>2026-03-02</FchRef><RazonRef>CASO 414175-1</RazonRef></Referencia>")
	if !bytes.Contains(out.XML, want) {
		i := max(bytes.Index(out.XML, []byte("<Referencia>")), 0)
		t.Fatalf("the SET reference is not %s:\n%s", want, out.XML[i:min(i+200, len(out.XML))])
	}
	doc, err := dte.ParseDTE(out.XML)
	if err != nil {
		t.Fatal(err)
	}
	if r := doc.Referencias; len(r) != 1 || r[0].FolioRefTexto != "414175-1" || r[0].FolioRef != 0 || r[0].TipoDocRef.Codigo != "SET" {
		t.Errorf("read back as %+v", r)
	}
	if rep, err := dte.Verify(out.XML, c.Keys); err != nil || !rep.OK() {
		t.Errorf("Verify: %v", err)
	}
	file := filepath.Join(t.TempDir(), "factura.xml")
	if err := os.WriteFile(file, out.XML, 0o600); err != nil {
		t.Fatal(err)
	}
	oracle.Tool(t, "xmllint")
	if msg, ok := runIn(t, oracle.Schemas(t), "xmllint", "--noout", "--schema", "DTE_v10.xsd", file); !ok {
		t.Errorf("xmllint: %s", msg)
	}
	for name, ref := range map[string]dte.Referencia{
		"numeric type": {TipoDocRef: dte.RefTipo(33), FolioRefTexto: "414175-1", FechaRef: "2026-03-02", RazonRef: "X"},
		"both folios":  {TipoDocRef: dte.RefCodigo("SET"), FolioRef: 7, FolioRefTexto: "414175-1", FechaRef: "2026-03-02", RazonRef: "X"},
		"19 chars":     {TipoDocRef: dte.RefCodigo("SET"), FolioRefTexto: "1234567890123456789", FechaRef: "2026-03-02", RazonRef: "X"},
	} {
		_, err := em.Emit(context.Background(), req(ref))
		var ve *dte.ValidationError
		if !errors.As(err, &ve) || len(ve.Details) == 0 || ve.Details[0].Field != "referencias[0].folio_ref" {
			t.Errorf("%s: %v, want a validation error on referencias[0].folio_ref", name, err)
		}
	}
}
