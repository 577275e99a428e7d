package client_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"strings"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/client"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/webhook"
)

// Each example starts a server of its own in the process (startExample)
// and calls it as a program would call https://dte.example.cl.

// factura is an emission request as an ERP would write it (contract
// §2.3), read strictly as the server reads it.
func factura() *dte.EmitirDTERequest {
	req, err := dte.DecodeRequest(strings.NewReader(`{
		"tipo_dte": 33,
		"receptor": {"rut": "76086428-5", "razon_social": "Comercial Ñandú Ltda.", "giro": "Comercio",
			"direccion": "Av. Providencia 1234", "comuna": "Providencia", "ciudad": "Santiago"},
		"detalle": [{"nombre": "Café de grano 500 g", "cantidad": 6, "precio": 8990}],
		"auto_send": false}`))
	if err != nil {
		log.Fatal(err)
	}
	return req
}

func ExampleNew() {
	srv := startExample()
	defer srv.stop()

	c, err := client.New(srv.URL, // e.g. "https://dte.example.cl"
		client.WithAPIKey(srv.Key), // or WithTokenSource, for JWTs
		client.WithUserAgent("acme-erp/2.1"),
		client.WithRetryPolicy(client.RetryPolicy{MaxAttempts: 5, MaxElapsed: time.Minute}))
	if err != nil {
		log.Fatal(err)
	}
	st, err := c.Company.Certificate(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("certificate installed:", st.HasCertificado)
	// Output: certificate installed: true
}

func ExampleDocumentService_Emit() {
	srv := startExample(33)
	defer srv.stop()
	c, _ := client.New(srv.URL, client.WithAPIKey(srv.Key))
	ctx := context.Background()

	// The client makes the Idempotency-Key (or takes the ERP's, e.g. its
	// invoice's UUID) and sends the same one on every retry: a lost
	// answer never costs a second folio.
	res, err := c.Documents.Emit(ctx, api.EmitParams{Request: factura()})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("tipo", res.TipoDTE, "folio", res.Folio, res.Estado, res.MontoTotal)

	// The signed XML, as the server holds it: ISO-8859-1.
	xml, err := c.Documents.XML(ctx, res.ID)
	if err != nil {
		log.Fatal(err)
	}
	defer xml.Close()
	b, _ := io.ReadAll(xml)
	fmt.Println(bytes.Contains(b, []byte("Comercial \xd1and\xfa Ltda.")))
	// Output:
	// tipo 33 folio 1 firmado 64189
	// true
}

func ExampleDocumentService_All() {
	srv := startExample(33)
	defer srv.stop()
	c, _ := client.New(srv.URL, client.WithAPIKey(srv.Key))
	ctx := context.Background()
	for range 3 {
		if _, err := c.Documents.Emit(ctx, api.EmitParams{Request: factura()}); err != nil {
			log.Fatal(err)
		}
	}
	// Pages of 2, fetched as the loop goes.
	for d, err := range c.Documents.All(ctx, api.DTEListParams{TipoDTE: 33, ListParams: api.ListParams{Limit: 2}}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("folio", d.Folio, d.RazonSocialReceptor)
	}
	// Unordered output:
	// folio 1 Comercial Ñandú Ltda.
	// folio 2 Comercial Ñandú Ltda.
	// folio 3 Comercial Ñandú Ltda.
}

func ExampleEnvelopeService_Create() {
	srv := startExample(33)
	defer srv.stop()
	c, _ := client.New(srv.URL, client.WithAPIKey(srv.Key))
	ctx := context.Background()
	res, err := c.Documents.Emit(ctx, api.EmitParams{Request: factura()})
	if err != nil {
		log.Fatal(err)
	}
	// The envelope is recorded and the server's jobs send it; the call
	// does not wait for the SII (follow it with Envelopes.Get).
	env, err := c.Envelopes.Create(ctx, api.EnvioRequest{DTEIDs: []string{res.ID}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(env.Documentos), "document, folio", env.Documentos[0].Folio)
	// Output: 1 document, folio 1
}

func ExampleCAFService_List() {
	srv := startExample(33, 61)
	defer srv.stop()
	c, _ := client.New(srv.URL, client.WithAPIKey(srv.Key))
	p, err := c.CAFs.List(context.Background(), api.CAFListParams{})
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range p.Data {
		fmt.Println(f.TipoDTE, f.FolioDesde, f.FolioHasta, f.FoliosDisponibles)
	}
	// Output:
	// 33 1 1000 1000
	// 61 1 1000 1000
}

func ExampleCompanyService_UpdateAlertSettings() {
	srv := startExample()
	defer srv.stop()
	c, _ := client.New(srv.URL, client.WithAPIKey(srv.Key))
	n := int64(100)
	a, err := c.Company.UpdateAlertSettings(context.Background(), api.AlertSettingsInput{CAFLowStockThreshold: &n})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("caf.low_stock below", a.CAFLowStockThreshold, "folios")
	// Output: caf.low_stock below 100 folios
}

func ExampleCatalogService_ListClientes() {
	srv := startExample()
	defer srv.stop()
	c, _ := client.New(srv.URL, client.WithAPIKey(srv.Key))
	ctx := context.Background()
	for _, in := range []api.ClienteInput{{Rut: "76086428-5", RazonSocial: "Comercial Andes"}, {Rut: "77777777-7", RazonSocial: "Pacífico SpA"}} {
		if _, err := c.Catalog.CreateCliente(ctx, in); err != nil {
			log.Fatal(err)
		}
	}
	// Q searches by name or RUT (with dots or without).
	p, err := c.Catalog.ListClientes(ctx, api.ClienteListParams{Q: "76.086.428-5"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(p.TotalCount, p.Data[0].RazonSocial)
	// Output: 1 Comercial Andes
}

func ExampleReceivedService_Receive() {
	srv := startExample()
	defer srv.stop()
	c, _ := client.New(srv.URL, client.WithAPIKey(srv.Key))
	// The XML a supplier mailed, as received. A file that is not an
	// EnvioDTE is kept too, refused, with the report of why.
	rec, err := c.Received.Receive(context.Background(), api.ReceiveParams{XML: []byte("<EnvioDTE><SetDTE/></EnvioDTE>")})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rec.Tipo, rec.Estado, len(rec.Recibidos))
	// Output: envio rechazada 0
}

func ExampleMailService_Settings() {
	srv := startExample()
	defer srv.stop()
	c, _ := client.New(srv.URL, client.WithAPIKey(srv.Key))
	s, err := c.Mail.Settings(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("SMTP set:", s.SMTP != nil, "documents mailed when", s.EnviarDTE)
	// Output: SMTP set: false documents mailed when aceptado
}

func ExampleError() {
	srv := startExample()
	defer srv.stop()
	c, _ := client.New(srv.URL, client.WithAPIKey(srv.Key))
	_, err := c.Documents.Get(context.Background(), "0b7e2c1a-5d3f-4e8a-9c6b-2f1d0e9a8b7c", api.DTEGetParams{})
	if errors.Is(err, fault.NotFound) {
		fmt.Println("no such document")
	}
	bad := factura()
	bad.Receptor.Rut = "76086428-4"
	_, err = c.Documents.Emit(context.Background(), api.EmitParams{Request: bad})
	var e *client.Error
	if errors.As(err, &e) {
		for _, d := range e.Details {
			fmt.Println(e.StatusCode, e.Code, d.Field, d.Code)
		}
	}
	// Output:
	// no such document
	// 400 VALIDATION_ERROR receptor.rut INVALID_RUT
}

func ExampleWebhookService_Create() {
	srv := startExample(33)
	defer srv.stop()
	c, _ := client.New(srv.URL, client.WithAPIKey(srv.Key))
	ctx := context.Background()

	// The ERP's endpoint: verify, decode, act; 204 when fn returns nil.
	secret := webhook.GenerateSecret() // or webhook.ParseSecret(os.Getenv(...))
	got := make(chan client.Received, 1)
	h, err := client.WebhookHandler([]webhook.Secret{secret}, func(ctx context.Context, d client.Received) error {
		got <- d
		return nil
	}, webhook.MiddlewareOptions{})
	if err != nil {
		log.Fatal(err)
	}
	endpoint := httptest.NewServer(h)
	defer endpoint.Close()

	if _, err := c.Webhooks.Create(ctx, api.WebhookInput{URL: endpoint.URL, Events: []string{"dte.created"}, Secret: secret.Encode()}); err != nil {
		log.Fatal(err)
	}
	if _, err := c.Documents.Emit(ctx, api.EmitParams{Request: factura()}); err != nil {
		log.Fatal(err)
	}
	select {
	case d := <-got:
		doc, _ := d.Event.DTE()
		fmt.Println(d.Event.Type, doc.TipoDTE, doc.Folio, doc.Estado)
	case <-time.After(30 * time.Second):
		fmt.Fprintln(os.Stderr, "no delivery")
	}
	// Output: dte.created 33 1 firmado
}

func ExampleWithResponse() {
	srv := startExample(33)
	defer srv.stop()
	c, _ := client.New(srv.URL, client.WithAPIKey(srv.Key))
	p := api.EmitParams{Request: factura(), IdempotencyKey: "9a3c1e55-0f4b-4c2d-8e7a-1b2c3d4e5f60"}
	for range 2 {
		var r client.Response
		res, err := c.Documents.Emit(client.WithResponse(context.Background(), &r), p)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(r.StatusCode, "folio", res.Folio, "replayed", r.Replayed)
	}
	// Output:
	// 201 folio 1 replayed false
	// 201 folio 1 replayed true
}
