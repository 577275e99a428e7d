package certificacion_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/certificacion"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/oracle"
)

// TestSimulacion: ten documents cycling over every type the CAFs cover
// (33, 34, 52, 61, 56, 46, 110, 112, 111; not the boletas nor 43), none
// with the SET reference, each note modifying the amount of the latest
// factura of its family before it (CodRef 3), the factura de compra with
// the IVA retained, in one envelope that passes the schema and whose
// folder the fake SII accepts with every document accepted.
func TestSimulacion(t *testing.T) {
	c := creds(t)
	res, err := certificacion.Simulacion(context.Background(), certificacion.SimulacionConfig{Config: certificacion.Config{
		Emisor: c.Emisor, Cert: c.Cert, CAFs: allCAFs(c), TrustedKeys: c.Keys, Now: func() time.Time { return testAt }}})
	if err != nil {
		t.Fatal(err)
	}
	docs := docsByCase(t, res)
	if len(res.Sets) != 1 || len(res.Sets[0].Docs) != 10 || res.Sets[0].Envelope == nil {
		t.Fatalf("%d sets, want one envelope of 10 documents", len(res.Sets))
	}
	want := []dte.TipoDTE{33, 34, 52, 61, 56, 46, 110, 112, 111, 33}
	var lastFactura, lastExport *dte.Document
	for i, d := range res.Sets[0].Docs {
		doc := docs[d.Case.ID]
		if doc.Tipo != want[i] {
			t.Errorf("document %d: tipo %d, want %d", i+1, doc.Tipo, want[i])
		}
		for _, r := range doc.Referencias {
			if r.TipoDocRef.Codigo == dte.RefCodigoSET || strings.Contains(r.RazonRef, "CASO") {
				t.Errorf("document %d carries the SET reference: %+v", i+1, r)
			}
		}
		switch doc.Tipo {
		case 61, 56:
			if len(doc.Referencias) != 1 || doc.Referencias[0].TipoDocRef.Tipo != lastFactura.Tipo || doc.Referencias[0].FolioRef != lastFactura.Folio ||
				doc.Referencias[0].CodigoRef == nil || *doc.Referencias[0].CodigoRef != 3 || doc.Receptor.Rut != lastFactura.Receptor.Rut {
				t.Errorf("note %d: %+v, want CodRef 3 to %d F%d", i+1, doc.Referencias, lastFactura.Tipo, lastFactura.Folio)
			}
		case 111, 112:
			if len(doc.Referencias) != 1 || doc.Referencias[0].TipoDocRef.Tipo != 110 || doc.Referencias[0].FolioRef != lastExport.Folio ||
				doc.Receptor.Rut != lastExport.Receptor.Rut {
				t.Errorf("export note %d: %+v, want a reference to 110 F%d", i+1, doc.Referencias, lastExport.Folio)
			}
		case 46:
			for _, l := range doc.Detalle {
				if len(l.CodImpAdic) != 1 || l.CodImpAdic[0] != 15 {
					t.Errorf("factura de compra: line %+v without the retention code 15", l)
				}
			}
		case 110:
			lastExport = doc
		case 33, 34:
			lastFactura = doc
		}
	}
	if _, err := certificacion.Simulacion(context.Background(), certificacion.SimulacionConfig{N: 9, Config: certificacion.Config{
		Emisor: c.Emisor, Cert: c.Cert, CAFs: allCAFs(c)}}); err == nil || !strings.Contains(err.Error(), "10 to 100") {
		t.Errorf("9 documents: %v, want refused", err)
	}
	if _, err := certificacion.Simulacion(context.Background(), certificacion.SimulacionConfig{Config: certificacion.Config{
		Emisor: c.Emisor, Cert: c.Cert, CAFs: allCAFs(c, 33, 34)}}); err == nil || !strings.Contains(err.Error(), "(33)") {
		t.Errorf("no factura CAF: %v, want refused", err)
	}

	dir := filepath.Join(t.TempDir(), "sim")
	m, err := certificacion.WriteDir(dir, res, c.Emisor)
	if err != nil {
		t.Fatal(err)
	}
	oracle.Run(t, "xmllint", "--noout", "--schema", filepath.Join(oracle.Schemas(t), "EnvioDTE_v10.xsd"), filepath.Join(dir, m.Sets[0].Envelope))
	_, client := fakeSII(t)
	if _, err := certificacion.Enviar(context.Background(), client, dir, nil); err != nil {
		t.Fatal(err)
	}
	m, err = certificacion.Estado(context.Background(), client, dir, certificacion.Poll{Rounds: 10})
	if err != nil {
		t.Fatal(err)
	}
	if e := m.Sets[0].Envio; e == nil || !e.Aprobado() || e.Informados != 10 {
		t.Errorf("the simulación's envelope at the fake SII: %+v, want EPR with 10 accepted", e)
	}
}
