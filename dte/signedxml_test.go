package dte_test

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/signer"
)

// A file written by SignedXML has the SII's shape: the ISO-8859-1
// declaration, the root with the namespace, xsi:schemaLocation and
// version, the signed element with its ID, and the Signature right after
// that element; its signature verifies and covers exactly that element, and
// Latin-1 text is written as single bytes.
func TestSignedXML(t *testing.T) {
	c := creds(t)
	x, err := dte.NewSignedXML("LibroGuia", "LibroGuia_v10.xsd", "EnvioLibro", "LG1")
	if err != nil {
		t.Fatal(err)
	}
	x.Open("Caratula")
	x.Text("RznSoc", "razon_social", "  Ñuñoa & Cía.  ", 0)
	x.Text("Vacio", "vacio", "   ", 0)
	x.Int("NroResol", 0)
	x.Decimal("FctProp", "0.60")
	x.Decimal("Ausente", "")
	x.Close("Caratula")
	x.OpenVersion("Otro")
	x.Close("Otro")
	x.Timestamp("TmstFirma", time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC))
	out, err := x.Sign(c.Cert)
	if err != nil {
		t.Fatal(err)
	}
	want := `<?xml version="1.0" encoding="ISO-8859-1"?>` + "\n" +
		`<LibroGuia xmlns="http://www.sii.cl/SiiDte" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://www.sii.cl/SiiDte LibroGuia_v10.xsd" version="1.0">` +
		`<EnvioLibro ID="LG1"><Caratula><RznSoc>` + "\xd1u\xf1oa &amp; C\xeda." + `</RznSoc><NroResol>0</NroResol><FctProp>0.6</FctProp></Caratula>` +
		`<Otro version="1.0"></Otro><TmstFirma>2026-01-02T12:04:05</TmstFirma></EnvioLibro><Signature xmlns="http://www.w3.org/2000/09/xmldsig#">`
	if !bytes.HasPrefix(out, []byte(want)) {
		t.Errorf("file starts\n%q\nwant\n%q", out[:min(len(out), len(want)+40)], want)
	}
	if !bytes.HasSuffix(out, []byte("</Signature></LibroGuia>\n")) {
		t.Errorf("file does not end with the Signature closing the root: %q", out[len(out)-60:])
	}
	sigs, err := signer.Verify(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(sigs) != 1 || sigs[0].ID != "LG1" || !bytes.HasPrefix(out[sigs[0].RefStart:], []byte(`<EnvioLibro ID="LG1">`)) {
		t.Errorf("signatures %+v do not cover EnvioLibro", sigs)
	}
}

// SignedXML refuses what it cannot write: names and IDs that are not plain
// XML names, a missing certificate, and text ISO-8859-1 cannot carry,
// naming the field.
func TestSignedXMLErrors(t *testing.T) {
	c := creds(t)
	for _, args := range [][4]string{
		{"Libro Guia", "LibroGuia_v10.xsd", "EnvioLibro", "LG1"},
		{"LibroGuia", "LibroGuia_v10.xsd", "Envio<Libro", "LG1"},
		{"LibroGuia", `a" b`, "EnvioLibro", "LG1"},
		{"LibroGuia", "LibroGuia_v10.xsd", "EnvioLibro", "1LG"},
		{"LibroGuia", "LibroGuia_v10.xsd", "EnvioLibro", ""},
	} {
		if _, err := dte.NewSignedXML(args[0], args[1], args[2], args[3]); err == nil {
			t.Errorf("NewSignedXML%q: no error", args)
		}
	}
	x, err := dte.NewSignedXML("LibroGuia", "LibroGuia_v10.xsd", "EnvioLibro", "LG1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.Sign(nil); err == nil {
		t.Error("Sign(nil): no error")
	}
	x.Text("RznSoc", "detalle[3].razon_social", "Emoji 😀", 0)
	_, err = x.Sign(c.Cert)
	var ve *dte.ValidationError
	if !errors.As(err, &ve) || ve.Details[0].Field != "detalle[3].razon_social" || ve.Details[0].Code != dte.CodeNotLatin1 {
		t.Errorf("Sign after a non-Latin-1 text: %v, want a NOT_LATIN1 error naming detalle[3].razon_social", err)
	}
}

// TaxCodeKind classifies codes as the SII's tables do: 15 is IVA retained
// in full and 30 (IVA retained on legumes) in part, 53 a retained income
// tax, 17 and 271 additional taxes, 54 one whose effect is not stated, and
// 999 no code at all.
func TestTaxCodeKind(t *testing.T) {
	for code, want := range map[int]dte.TaxKind{
		15: dte.TaxIVAWithheld, 30: dte.TaxIVAWithheld, 53: dte.TaxWithheld,
		17: dte.TaxAdded, 271: dte.TaxAdded, 54: dte.TaxUnknown, 999: dte.TaxUnknown,
	} {
		if got := dte.TaxCodeKind(code); got != want {
			t.Errorf("TaxCodeKind(%d) = %d, want %d", code, got, want)
		}
	}
}
