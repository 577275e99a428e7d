package client_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/client"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/intercambio"
	"github.com/dtekit/dtekit/internal/oracle"
	"github.com/dtekit/dtekit/signer"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/sii/siitest"
)

// supplierFile has supplier emit n facturas to the company with RUT
// buyer and packs them, read back through the client, into the EnvioDTE
// the supplier would mail: signed with the test certificate.
func supplierFile(t *testing.T, e *env, supplier *tenant, buyer string, n int) ([]byte, []string) {
	t.Helper()
	ctx := context.Background()
	var docs [][]byte
	var ids []string
	for range n {
		req := held(t, "factura")
		req.Receptor.Rut = buyer
		res := must[*api.EmitResponse](t, "emit")(supplier.w.Documents.Emit(ctx, api.EmitParams{Request: req}))
		docs = append(docs, readAll(t)(supplier.r.Documents.XML(ctx, res.ID)))
		ids = append(ids, res.ID)
	}
	cert, err := signer.Load(e.creds.P12, e.creds.Password)
	if err != nil {
		t.Fatal(err)
	}
	em := e.creds.Emisor
	file, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: dte.Emisor{Rut: supplier.rut, FechaResolucion: em.FechaResolucion,
		NumeroResolucion: em.NumeroResolucion}, RutReceptor: buyer}, cert, docs...)
	if err != nil {
		t.Fatal(err)
	}
	// The documents the client downloaded, packed and signed, make an
	// envelope the SII's schema accepts (xmllint).
	if errs := oracle.SchemaCheck(t)("EnvioDTE", file); len(errs) > 0 {
		t.Fatalf("the supplier's EnvioDTE against EnvioDTE_v10.xsd: %v", errs)
	}
	return file, ids
}

// testReceived: a supplier's file received (201, then the same bytes
// again: the first reception, duplicado, 200), its documents listed,
// read (JSON, the XML as it stood in the file, PDF), their window read
// from the fake SII's registry, each decision registered there, the
// files listed, the buyer's acknowledgment uploaded by the supplier, and
// the inbox's settings.
func testReceived(t *testing.T, e *env) {
	ctx := context.Background()
	supplier, buyer := e.tenant(t, 33), e.tenant(t)
	file, sent := supplierFile(t, e, supplier, buyer.rut, 3)

	var r1, r2 client.Response
	rec, err := buyer.w.Received.Receive(client.WithResponse(ctx, &r1), api.ReceiveParams{XML: file, CorreoEmisor: "facturacion@proveedor.cl"})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(file)
	if r1.StatusCode != 201 || rec.Estado != "conforme" || rec.Duplicado || len(rec.Recibidos) != 3 || rec.Digest != hex.EncodeToString(sum[:]) {
		t.Fatalf("the reception (%d): %+v", r1.StatusCode, rec)
	}
	again, err := buyer.w.Received.Receive(client.WithResponse(ctx, &r2), api.ReceiveParams{XML: file})
	if err != nil || r2.StatusCode != 200 || !again.Duplicado || again.ID != rec.ID {
		t.Errorf("the same file again (%d): %+v, %v", r2.StatusCode, again, err)
	}
	if _, err := buyer.r.Received.Receive(ctx, api.ReceiveParams{XML: file}); !errors.Is(err, fault.WriteNotAllowed) {
		t.Errorf("a read-only key receiving: %v", err)
	}

	p, err := buyer.r.Received.List(ctx, api.RecibidoListParams{Estado: "pendiente", ListParams: api.ListParams{Limit: 2}})
	if err != nil || p.TotalCount != 3 || len(p.Data) != 2 || p.NextCursor == nil {
		t.Fatalf("a page of 2 pending documents: %+v, %v", p, err)
	}
	byFolio := map[int64]string{}
	for d, err := range buyer.r.Received.All(ctx, api.RecibidoListParams{RutEmisor: supplier.rut, TipoDTE: 33, ListParams: api.ListParams{Limit: 2}}) {
		if err != nil {
			t.Fatal(err)
		}
		byFolio[d.Folio] = d.ID
	}
	if len(byFolio) != 3 || byFolio[1] == "" || byFolio[3] == "" {
		t.Fatalf("the iterator gave folios %v, want 1, 2 and 3", byFolio)
	}
	one := must[*api.Recibido](t, "Get")(buyer.r.Received.Get(ctx, byFolio[1]))
	if one.RutEmisor != supplier.rut || one.RecepcionID != rec.ID || one.Estado != "pendiente" ||
		one.CorreoEmisor == nil || *one.CorreoEmisor != "facturacion@proveedor.cl" {
		t.Errorf("the first document: %+v", one)
	}
	// Its XML is the <DTE> the supplier signed, byte for byte as it
	// stood in the file.
	x := readAll(t)(buyer.r.Received.XML(ctx, byFolio[1]))
	i := bytes.Index(x, []byte("<DTE"))
	if i < 0 || !bytes.Contains(file, x[i:]) || !bytes.HasSuffix(x, []byte("</DTE>")) {
		t.Errorf("the received XML is not the file's <DTE>: %.120q", x)
	}
	if pdf := readAll(t)(buyer.r.Received.PDF(ctx, byFolio[1])); !bytes.HasPrefix(pdf, []byte("%PDF-")) {
		t.Errorf("the PDF starts %.8q", pdf)
	}

	// The registry: the SII received them 2 days and 1 hour ago; the
	// window is 8 days, so 5 days and 23 hours are left: 5 whole days.
	received := time.Now().Add(-(2*24 + 1) * time.Hour)
	for folio := range int64(3) {
		e.fake.SeedRCV(siitest.RCVSeed{RutEmisor: supplier.rut, RutReceptor: buyer.rut, Tipo: 33, Folio: folio + 1, Received: received, FmaPago: 2})
	}
	if err := buyer.w.Received.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	one = must[*api.Recibido](t, "Get")(buyer.r.Received.Get(ctx, byFolio[1]))
	if one.DiasRestantes == nil || *one.DiasRestantes != 5 || one.FechaRecepcionSII == nil {
		t.Errorf("after the refresh: dias_restantes %v, fecha_recepcion_sii %v; want 5 days", one.DiasRestantes, one.FechaRecepcionSII)
	}

	// Decisions, each registered once in the fake registry.
	acc, err := buyer.w.Received.Aceptar(ctx, byFolio[1])
	if err != nil || acc.Estado != "aceptado" || acc.Respuestas.Decision == nil || acc.Respuestas.Decision.Accion != "ACD" {
		t.Errorf("Aceptar: %+v, %v", acc, err)
	}
	if _, err := buyer.w.Received.Aceptar(ctx, byFolio[1]); !errors.Is(err, fault.InvalidState) {
		t.Errorf("accepting twice: %v, want INVALID_STATE", err)
	}
	rcl, err := buyer.w.Received.Reclamar(ctx, byFolio[2], api.DecisionInput{Accion: "RFP", Motivo: "Faltan 3 cajas"})
	if err != nil || rcl.Estado != "reclamado" || rcl.Respuestas.Decision == nil || rcl.Respuestas.Decision.Accion != "RFP" ||
		rcl.Respuestas.Decision.Motivo != "Faltan 3 cajas" {
		t.Errorf("Reclamar: %+v, %v", rcl, err)
	}
	var ce *client.Error
	if _, err := buyer.w.Received.Reclamar(ctx, byFolio[3], api.DecisionInput{}); !errors.As(err, &ce) || len(ce.Field("motivo")) != 1 {
		t.Errorf("a claim without motivo: %v, want the field motivo named", err)
	}
	rcb, err := buyer.w.Received.Recibo(ctx, byFolio[3], api.DecisionInput{Recinto: "Bodega 4, Quilicura"})
	if err != nil || !rcb.MercaderiasRecibidas || rcb.Respuestas.Recibo == nil || rcb.Respuestas.Recibo.Accion != "ERM" {
		t.Errorf("Recibo: %+v, %v", rcb, err)
	}
	for folio, want := range map[int64]sii.RCVAction{1: sii.RCVAccept, 2: sii.RCVClaimPartial, 3: sii.RCVReceipt} {
		var got []sii.RCVAction
		for _, ev := range e.fake.RCVHistory(supplier.rut, 33, folio) {
			got = append(got, ev.Action)
		}
		if !slices.Equal(got, []sii.RCVAction{want}) {
			t.Errorf("folio %d: the registry holds %v, want %s", folio, got, want)
		}
	}
	if _, err := buyer.r.Received.ListCorreos(ctx, byFolio[1], api.ListParams{}); err != nil {
		t.Errorf("ListCorreos: %v", err)
	}
	for _, err := range buyer.r.Received.AllCorreos(ctx, byFolio[1], api.ListParams{}) {
		if err != nil {
			t.Errorf("AllCorreos: %v", err)
		}
	}

	// The files.
	files, err := buyer.r.Received.ListRecepciones(ctx, api.RecepcionListParams{})
	if err != nil || files.TotalCount != 1 || files.Data[0].ID != rec.ID {
		t.Errorf("the received files: %+v, %v", files, err)
	}
	n := 0
	for f, err := range buyer.r.Received.AllRecepciones(ctx, api.RecepcionListParams{Ambiente: api.AmbienteTodos}) {
		if err != nil || f.ID != rec.ID {
			t.Errorf("AllRecepciones: %+v, %v", f, err)
		}
		n++
	}
	if got, err := buyer.r.Received.GetRecepcion(ctx, rec.ID); err != nil || got.Digest != rec.Digest || n != 1 {
		t.Errorf("GetRecepcion: %+v, %v (%d listed)", got, err, n)
	}

	// The buyer's acknowledgment, uploaded by the supplier, lands on the
	// supplier's three documents.
	cert, err := signer.Load(e.creds.P12, e.creds.Password)
	if err != nil {
		t.Fatal(err)
	}
	in, err := intercambio.Receive(file, intercambio.Options{Empresa: buyer.rut, Verify: dte.VerifyOptions{Keys: e.creds.TrustedKeys}, CodEnvio: 1})
	if err != nil {
		t.Fatal(err)
	}
	acuse, err := in.Acuse(cert, intercambio.AnswerOptions{IdRespuesta: 1, At: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	res, err := supplier.w.Received.ReceiveRespuesta(ctx, api.ReceiveRespuestaParams{XML: acuse})
	if err != nil {
		t.Fatal(err)
	}
	got := slices.Clone(res.DTEIDs)
	slices.Sort(got)
	slices.Sort(sent)
	if !slices.Equal(got, sent) || res.Recepcion.Tipo != "respuesta" {
		t.Errorf("the acknowledgment changed %v (reception %+v), want %v", got, res.Recepcion, sent)
	}
	d := must[*api.DTE](t, "Get")(supplier.r.Documents.Get(ctx, sent[0], api.DTEGetParams{}))
	if d.Intercambio == nil || d.Intercambio.Recepcion == nil || d.Intercambio.Recepcion.RutReceptor != buyer.rut {
		t.Errorf("the supplier's document after the acknowledgment: %+v", d.Intercambio)
	}

	// The inbox's settings: anyone reads them, the admin role sets them.
	if _, err := buyer.r.Received.Settings(ctx); err != nil {
		t.Error(err)
	}
	days := int64(30)
	if _, err := buyer.w.Received.UpdateSettings(ctx, api.RecepcionLimits{RetencionDias: &days}); !errors.Is(err, fault.Forbidden) {
		t.Errorf("settings by a write key: %v, want FORBIDDEN", err)
	}
	set, err := buyer.admin.Received.UpdateSettings(ctx, api.RecepcionLimits{RetencionDias: &days})
	if err != nil || set.Empresa.RetencionDias == nil || *set.Empresa.RetencionDias != 30 {
		t.Errorf("UpdateSettings: %+v, %v", set, err)
	}
}
