package cesion_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/dtekit/dtekit/cesion"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/oracle"
	"github.com/dtekit/dtekit/signer"
)

// declaracionRecibo is the fixed Declaracion of Recibos_v10.xsd.
const declaracionRecibo = "El acuse de recibo que se declara en este acto, de acuerdo a lo dispuesto en la letra b) del Art. 4, " +
	"y la letra c) del Art. 5 de la Ley 19.983, acredita que la entrega de mercaderias o servicio(s) prestado(s) ha(n) sido recibido(s)."

// recibo is B's Ley 19.983 receipt of doc, signed by cert, written by
// hand from Recibos_v10.xsd.
func recibo(t testing.TB, doc []byte, cert *signer.Certificate) []byte {
	t.Helper()
	d, err := dte.ParseDTE(doc)
	if err != nil {
		t.Fatal(err)
	}
	rut, _ := cert.RUT()
	mnt, _ := d.Totales.MntTotal.Int64()
	id := fmt.Sprintf("Recibo_T%dF%d", d.Tipo, d.Folio)
	x := `<?xml version="1.0" encoding="ISO-8859-1"?>` + "\n" +
		`<Recibo xmlns="http://www.sii.cl/SiiDte" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" version="1.0">` +
		`<DocumentoRecibo ID="` + id + `"><TipoDoc>` + strconv.Itoa(int(d.Tipo)) + `</TipoDoc><Folio>` + strconv.FormatInt(d.Folio, 10) +
		`</Folio><FchEmis>` + d.FechaEmision + `</FchEmis><RUTEmisor>` + d.Emisor.Rut + `</RUTEmisor><RUTRecep>` + d.Receptor.Rut +
		`</RUTRecep><MntTotal>` + strconv.FormatInt(mnt, 10) + `</MntTotal><Recinto>Bodega central</Recinto><RutFirma>` + rut +
		`</RutFirma><Declaracion>` + declaracionRecibo + `</Declaracion><TmstFirmaRecibo>2026-03-02T10:00:00</TmstFirmaRecibo>` +
		`</DocumentoRecibo></Recibo>` + "\n"
	out, err := cert.SignEnveloped([]byte(x), id)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCederWithRecibo: with the debtor's electronic receipt attached (and
// the printed copy and a paper acuse as PDF), the AEC carries them inside
// DocumentoDTECedido, needs no sworn declaration
// (and has none), validates with xmllint and its receipt's signature
// verifies with xmlsec1 in place; a receipt of another document is
// refused, named by its index.
func TestCederWithRecibo(t *testing.T) {
	t.Parallel()
	oracle.Tool(t, "xmllint")
	oracle.Tool(t, "xmlsec1")
	f := fix(t)
	rec := recibo(t, f.docs[33], f.f2)
	c := cesion.Cesion{Cedente: cesion.Parte{Email: "finanzas@nunoa.cl"}, Cesionario: factoring, Firmantes: []*signer.Certificate{f.a.Cert}}
	pdf := []byte("%PDF-1.4\n% a stand-in for the printed copy\n%%EOF\n")
	aec, err := cesion.Ceder(cesion.Cedido{DTE: f.docs[33], Recibos: [][]byte{rec}, Firmante: f.a.Cert, ImagenDTE: pdf, ImagenAR: pdf}, c, cesion.Options{At: f.at})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(aec, []byte("<DeclaracionJurada>")) {
		t.Error("a sworn declaration beside an electronic receipt")
	}
	dir := writeFiles(t, map[string][]byte{"aec.xml": aec})
	file := filepath.Join(dir, "aec.xml")
	xmllint(t, file)
	if err := xmlsec(t, file, "//*[local-name()='Recibo']/*[local-name()='Signature']", ""); err != nil {
		t.Error(err)
	}
	if err := xmlsec(t, file, xpCedido, ""); err != nil {
		t.Error(err)
	}
	rep, err := cesion.Verify(aec, f.opts(cesion.PolicyStrict))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Recibos != 1 || len(rep.Firmas) != 5 || rep.Firmas[1].Nivel != "Recibo[1]" || !rep.Firmas[1].OK {
		t.Errorf("%d receipts, signatures %+v", rep.Recibos, rep.Firmas)
	}
	// An edited receipt (its place of reception) is refused under the
	// strict policy, even with the file signed again.
	forged := forge(t, bytes.Replace(aec, []byte("Bodega central"), []byte("Bodega lejana"), 1), 0, nil, f.a.Cert, func(d []byte) []byte { return d })
	refusedOn(t, forged, cesion.PolicyStrict, "DocumentoDTECedido.Recibo[1].Signature")
	if !bytes.Contains(aec, []byte("<ImagenDTE>"+base64.StdEncoding.EncodeToString(pdf)+"</ImagenDTE>")) {
		t.Error("no ImagenDTE")
	}
	for field, d := range map[string]cesion.Cedido{
		"recibos[0]": {DTE: f.docs[34], Recibos: [][]byte{rec}, Firmante: f.a.Cert},
		"imagen_dte": {DTE: f.docs[33], Firmante: f.a.Cert, ImagenDTE: []byte("<html>")},
		"imagen_ar":  {DTE: f.docs[33], Firmante: f.a.Cert, ImagenAR: append([]byte("%PDF-"), make([]byte, cesion.MaxImagen)...)},
	} {
		_, err = cesion.Ceder(d, c, cesion.Options{At: f.at})
		if ve, ok := dte.AsValidationError(err); !ok || ve.Details[0].Field != field {
			t.Errorf("%s: %v", field, err)
		}
	}
}
