package client_test

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/caf/caftest"
	"github.com/dtekit/dtekit/client"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/webhook"
)

// testCatalog: customers and products created, paged, searched, read,
// updated and deleted.
func testCatalog(t *testing.T, e *env) {
	ctx := context.Background()
	tn := e.tenant(t)
	ruts := []string{"76086428-5", "77777777-7", "11111111-1"}
	var ids []string
	for i, rut := range ruts {
		c, err := tn.w.Catalog.CreateCliente(ctx, api.ClienteInput{Rut: rut, RazonSocial: []string{"Andes Ltda.", "Pacífico SpA", "Austral"}[i]})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	if _, err := tn.w.Catalog.CreateCliente(ctx, api.ClienteInput{Rut: ruts[0], RazonSocial: "Otra"}); !errors.Is(err, fault.ClienteRUTConflict) {
		t.Errorf("a second customer with a RUT: %v, want CLIENTE_RUT_CONFLICT", err)
	}
	p, err := tn.r.Catalog.ListClientes(ctx, api.ClienteListParams{ListParams: api.ListParams{Limit: 2}})
	if err != nil || p.TotalCount != 3 || len(p.Data) != 2 || p.NextCursor == nil {
		t.Errorf("a page of 2 customers: %+v, %v", p, err)
	}
	var names []string
	for c, err := range tn.r.Catalog.AllClientes(ctx, api.ClienteListParams{ListParams: api.ListParams{Limit: 2}}) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, c.RazonSocial)
	}
	if len(names) != 3 {
		t.Errorf("the iterator gave %v", names)
	}
	// A RUT written with dots matches its canonical form.
	s, err := tn.r.Catalog.ListClientes(ctx, api.ClienteListParams{Q: "77.777.777-7"})
	if err != nil || s.TotalCount != 1 || s.Data[0].ID != ids[1] {
		t.Errorf("searching 77.777.777-7: %+v, %v", s, err)
	}
	mail := "pagos@andes.cl"
	c, err := tn.w.Catalog.UpdateCliente(ctx, ids[0], api.ClienteUpdate{Email: &mail})
	if err != nil || c.Email != mail {
		t.Errorf("UpdateCliente: %+v, %v", c, err)
	}
	if got, err := tn.r.Catalog.GetCliente(ctx, ids[0]); err != nil || got.Email != mail || got.Rut != ruts[0] {
		t.Errorf("GetCliente: %+v, %v", got, err)
	}
	if err := tn.w.Catalog.DeleteCliente(ctx, ids[2]); err != nil {
		t.Fatal(err)
	}
	if _, err := tn.r.Catalog.GetCliente(ctx, ids[2]); !errors.Is(err, fault.NotFound) {
		t.Errorf("a deleted customer: %v", err)
	}

	var pids []string
	for i, name := range []string{"Café de grano", "Té verde", "Azúcar"} {
		pr, err := tn.w.Catalog.CreateProducto(ctx, api.ProductoInput{Codigo: []string{"CAF-1", "TE-2", "AZ-3"}[i], Nombre: name, PrecioUnitario: int64(1000 * (i + 1))})
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, pr.ID)
	}
	pp, err := tn.r.Catalog.ListProductos(ctx, api.ProductoListParams{ListParams: api.ListParams{Limit: 1}})
	if err != nil || pp.TotalCount != 3 || len(pp.Data) != 1 {
		t.Errorf("a page of 1 product: %+v, %v", pp, err)
	}
	n := 0
	for _, err := range tn.r.Catalog.AllProductos(ctx, api.ProductoListParams{ListParams: api.ListParams{Limit: 1}}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	sp, err := tn.r.Catalog.ListProductos(ctx, api.ProductoListParams{Q: "café"})
	if err != nil || n != 3 || sp.TotalCount != 1 || sp.Data[0].ID != pids[0] {
		t.Errorf("iterator %d products; searching café: %+v, %v", n, sp, err)
	}
	price := int64(9990)
	if pr, err := tn.w.Catalog.UpdateProducto(ctx, pids[1], api.ProductoUpdate{PrecioUnitario: &price}); err != nil || pr.PrecioUnitario != price {
		t.Errorf("UpdateProducto: %+v, %v", pr, err)
	}
	if pr, err := tn.r.Catalog.GetProducto(ctx, pids[1]); err != nil || pr.PrecioUnitario != price || pr.Nombre != "Té verde" {
		t.Errorf("GetProducto: %+v, %v", pr, err)
	}
	if err := tn.w.Catalog.DeleteProducto(ctx, pids[2]); err != nil {
		t.Fatal(err)
	}
	if _, err := tn.r.Catalog.GetProducto(ctx, pids[2]); !errors.Is(err, fault.NotFound) {
		t.Errorf("a deleted product: %v", err)
	}
}

// testCAFs: a CAF file uploaded, listed, read; an overlapping one refused.
func testCAFs(t *testing.T, e *env) {
	ctx := context.Background()
	tn := e.tenant(t)
	em := must[*api.Empresa](t, "Company.Get")(tn.r.Company.Get(ctx))
	issue := func(desde, hasta int64) string {
		file, err := e.creds.Authority.Issue(caftest.IssueRequest{RutEmisor: tn.rut, RazonSocial: em.RazonSocial, Tipo: 33,
			Desde: desde, Hasta: hasta, FechaAutorizacion: dte.ChileTime(time.Now()).AddDate(0, 0, -1)})
		if err != nil {
			t.Fatal(err)
		}
		return string(file)
	}
	c, err := tn.w.CAFs.Register(ctx, api.CAFInput{TipoDTE: 33, CAFXML: issue(1, 50)})
	if err != nil || c.FolioDesde != 1 || c.FolioHasta != 50 || c.FoliosDisponibles != 50 || !c.IsActive {
		t.Fatalf("Register: %+v, %v", c, err)
	}
	if _, err := tn.w.CAFs.Register(ctx, api.CAFInput{TipoDTE: 33, CAFXML: issue(40, 60)}); !errors.Is(err, fault.CAFRangeConflict) {
		t.Errorf("an overlapping CAF: %v, want CAF_RANGE_CONFLICT", err)
	}
	c2 := must[*api.CAF](t, "Register")(tn.w.CAFs.Register(ctx, api.CAFInput{TipoDTE: 33, CAFXML: issue(51, 60)}))
	if got, err := tn.r.CAFs.Get(ctx, c.ID); err != nil || got.ID != c.ID || got.FolioHasta != 50 {
		t.Errorf("Get: %+v, %v", got, err)
	}
	p, err := tn.r.CAFs.List(ctx, api.CAFListParams{TipoDTE: 33, ListParams: api.ListParams{Limit: 1}})
	if err != nil || p.TotalCount != 2 || len(p.Data) != 1 {
		t.Errorf("a page of one CAF: %+v, %v", p, err)
	}
	var got []string
	for c, err := range tn.r.CAFs.All(ctx, api.CAFListParams{ListParams: api.ListParams{Limit: 1}}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, c.ID)
	}
	if len(got) != 2 || got[0] != c.ID || got[1] != c2.ID {
		t.Errorf("the iterator gave %v, want %s then %s (registration order)", got, c.ID, c2.ID)
	}
}

// pngImage is a 3×2 PNG written by image/png.
func pngImage(t *testing.T) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 3, 2))
	img.Set(1, 1, color.RGBA{R: 200, A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// testSettings: the company, its certificate (uploaded with the admin
// role, as a multipart form), its logo and its alert settings.
func testSettings(t *testing.T, e *env) {
	ctx := context.Background()
	tn := e.tenant(t)
	em, err := tn.r.Company.Get(ctx)
	if err != nil || em.Rut != tn.rut {
		t.Fatalf("Company.Get: %+v, %v", em, err)
	}
	giro := "Venta de café al por mayor"
	if up, err := tn.w.Company.Update(ctx, api.EmpresaUpdate{Giro: &giro}); err != nil || up.Giro != giro || up.Rut != tn.rut {
		t.Errorf("Company.Update: %+v, %v", up, err)
	}
	st, err := tn.r.Company.Certificate(ctx)
	if err != nil || !st.HasCertificado || st.RutFirmante == nil || *st.RutFirmante != e.creds.SignerRUT {
		t.Errorf("Certificate: %+v, %v", st, err)
	}
	up := api.CertificadoUpload{File: e.creds.P12, Password: e.creds.Password, RutFirmante: e.creds.SignerRUT}
	if _, err := tn.w.Company.UploadCertificate(ctx, up); !errors.Is(err, fault.Forbidden) {
		t.Errorf("an upload by a write key: %v, want FORBIDDEN", err)
	}
	before := tn.jwtCalls.Load()
	st, err = tn.admin.Company.UploadCertificate(ctx, up)
	if err != nil || !st.HasCertificado || !st.IsActive || st.UploadedAt == nil {
		t.Errorf("UploadCertificate: %+v, %v", st, err)
	}
	if tn.jwtCalls.Load() != before+1 {
		t.Errorf("the token source was asked %d times for one call", tn.jwtCalls.Load()-before)
	}
	bad := up
	bad.Password = "not-the-password"
	var ce *client.Error
	if _, err := tn.admin.Company.UploadCertificate(ctx, bad); !errors.As(err, &ce) || ce.Code != fault.Validation || len(ce.Details) == 0 {
		t.Errorf("a wrong password: %v", err)
	}

	if _, err := tn.r.Company.Logo(ctx); !errors.Is(err, fault.NotFound) {
		t.Errorf("the logo before one is set: %v, want NOT_FOUND", err)
	}
	img := pngImage(t)
	info, err := tn.w.Company.SetLogo(ctx, img)
	if err != nil || info.ContentType != "image/png" {
		t.Fatalf("SetLogo: %+v, %v", info, err)
	}
	// The service decodes and encodes the image again (billing's
	// SetLogo), so the pixels come back, not the bytes.
	logo, err := tn.r.Company.Logo(ctx)
	if err != nil || logo.ContentType != "image/png" || len(logo.Data) != info.Size {
		t.Fatalf("Logo: %v, %v; SetLogo said %d bytes", logo, err, info.Size)
	}
	back, err := png.Decode(bytes.NewReader(logo.Data))
	if err != nil || back.Bounds() != image.Rect(0, 0, 3, 2) || color.RGBAModel.Convert(back.At(1, 1)) != (color.RGBA{R: 200, A: 255}) ||
		color.RGBAModel.Convert(back.At(0, 0)) != (color.RGBA{}) {
		t.Errorf("the logo read back is not the 3×2 image set: %v", err)
	}
	if _, err := tn.w.Company.SetLogo(ctx, []byte("GIF89a")); err == nil {
		t.Error("SetLogo took a GIF")
	}
	if err := tn.w.Company.DeleteLogo(ctx); err != nil {
		t.Error(err)
	}
	if _, err := tn.r.Company.Logo(ctx); !errors.Is(err, fault.NotFound) {
		t.Errorf("the logo once deleted: %v", err)
	}

	// 20 is the threshold until the company sets one (api.AlertSettings).
	if a, err := tn.r.Company.AlertSettings(ctx); err != nil || a.CAFLowStockThreshold != 20 {
		t.Errorf("AlertSettings: %+v, %v", a, err)
	}
	n := int64(75)
	if a, err := tn.w.Company.UpdateAlertSettings(ctx, api.AlertSettingsInput{CAFLowStockThreshold: &n}); err != nil || a.CAFLowStockThreshold != 75 {
		t.Errorf("UpdateAlertSettings: %+v, %v", a, err)
	}
	if a, err := tn.r.Company.AlertSettings(ctx); err != nil || a.CAFLowStockThreshold != 75 {
		t.Errorf("AlertSettings after the update: %+v, %v", a, err)
	}
}

// testMail: the mail settings (admin), a document's mail queued and read
// in three lists, the mailbox's messages.
func testMail(t *testing.T, e *env) {
	ctx := context.Background()
	tn := e.tenant(t, 33)
	if _, err := tn.r.Mail.Settings(ctx); err != nil {
		t.Fatal(err)
	}
	in := api.CorreoSettings{Direccion: "dte@empresa.cl", EnviarDTE: api.EnviarNunca,
		SMTP: &api.CorreoServidor{Host: "127.0.0.1", Port: 2525, Seguridad: "none", Usuario: "dte", Password: "secreto"}}
	if _, err := tn.w.Mail.UpdateSettings(ctx, in); !errors.Is(err, fault.Forbidden) {
		t.Errorf("mail settings by a write key: %v, want FORBIDDEN", err)
	}
	set, err := tn.admin.Mail.UpdateSettings(ctx, in)
	if err != nil || set.Direccion != "dte@empresa.cl" || set.SMTP == nil || !set.SMTP.PasswordSet || set.SMTP.Password != "" {
		t.Fatalf("UpdateSettings: %+v, %v", set, err)
	}
	res := must[*api.EmitResponse](t, "emit")(tn.w.Documents.Emit(ctx, api.EmitParams{Request: held(t, "factura")}))
	c, err := tn.w.Documents.Mail(ctx, res.ID, api.DTEMailParams{Para: "pagos@cliente.cl"})
	if err != nil || c.Para != "pagos@cliente.cl" || c.DTEID == nil || *c.DTEID != res.ID {
		t.Fatalf("Documents.Mail: %+v, %v", c, err)
	}
	if got, err := tn.r.Mail.Get(ctx, c.ID); err != nil || got.ID != c.ID {
		t.Errorf("Mail.Get: %+v, %v", got, err)
	}
	if p, err := tn.r.Documents.ListCorreos(ctx, res.ID, api.ListParams{}); err != nil || p.TotalCount != 1 || p.Data[0].ID != c.ID {
		t.Errorf("Documents.ListCorreos: %+v, %v", p, err)
	}
	for got, err := range tn.r.Documents.AllCorreos(ctx, res.ID, api.ListParams{}) {
		if err != nil || got.ID != c.ID {
			t.Errorf("Documents.AllCorreos: %+v, %v", got, err)
		}
	}
	if p, err := tn.r.Mail.List(ctx, api.CorreoListParams{DTEID: res.ID}); err != nil || p.TotalCount != 1 {
		t.Errorf("Mail.List of the document: %+v, %v", p, err)
	}
	n := 0
	for _, err := range tn.r.Mail.All(ctx, api.CorreoListParams{}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 1 {
		t.Errorf("Mail.All gave %d mails, want 1", n)
	}
	// No mailbox is set: a read finds nothing.
	if l, err := tn.w.Mail.Poll(ctx); err != nil || l.Leidos != 0 {
		t.Errorf("Poll without a mailbox: %+v, %v", l, err)
	}
	if p, err := tn.r.Mail.ListMensajes(ctx, api.MensajeListParams{}); err != nil || p.TotalCount != 0 {
		t.Errorf("ListMensajes: %+v, %v", p, err)
	}
	for _, err := range tn.r.Mail.AllMensajes(ctx, api.MensajeListParams{}) {
		t.Errorf("AllMensajes gave a message (%v)", err)
	}
}

// testWebhooks: a receiver built with client.WebhookHandler gets a ping
// and a dte.created delivery, verified with the webhook's secret, and the
// deliveries are listed, read and resent; the webhook is read, updated,
// turned off and on, its secret rotated, and deleted.
func testWebhooks(t *testing.T, e *env) {
	ctx := context.Background()
	tn := e.tenant(t, 33)
	secret := webhook.GenerateSecret()
	var mu sync.Mutex
	var got []client.Received
	h, err := client.WebhookHandler([]webhook.Secret{secret}, func(ctx context.Context, d client.Received) error {
		mu.Lock()
		got = append(got, d)
		mu.Unlock()
		return nil
	}, webhook.MiddlewareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rs := httptest.NewServer(h)
	defer rs.Close()
	received := func(typ webhook.EventType) []client.Received {
		mu.Lock()
		defer mu.Unlock()
		var out []client.Received
		for _, d := range got {
			if d.Event.Type == typ {
				out = append(out, d)
			}
		}
		return out
	}

	hook, err := tn.w.Webhooks.Create(ctx, api.WebhookInput{URL: rs.URL + "/dtekit", Events: []string{"dte.created"}, Secret: secret.Encode()})
	if err != nil {
		t.Fatal(err)
	}
	ping, err := tn.w.Webhooks.Ping(ctx, hook.ID)
	if err != nil || ping.WebhookID != hook.ID {
		t.Fatalf("Ping: %+v, %v", ping, err)
	}
	res := must[*api.EmitResponse](t, "emit")(tn.w.Documents.Emit(ctx, api.EmitParams{Request: held(t, "factura")}))
	eventually(t, "the ping and dte.created delivered", func() (bool, error) {
		return len(received(webhook.EventPing)) > 0 && len(received(webhook.EventDTECreated)) > 0, nil
	})
	d, err := received(webhook.EventDTECreated)[0].Event.DTE()
	if err != nil || d.ID != res.ID || d.Folio != 1 || d.TipoDTE != 33 || d.Ambiente != "certificacion" {
		t.Errorf("the dte.created event: %+v, %v; want document %s folio 1 in certificacion", d, err, res.ID)
	}

	var deliveries []api.Delivery
	for dl, err := range tn.r.Webhooks.AllDeliveries(ctx, api.DeliveryListParams{WebhookID: hook.ID, ListParams: api.ListParams{Limit: 1}}) {
		if err != nil {
			t.Fatal(err)
		}
		deliveries = append(deliveries, dl)
	}
	if len(deliveries) != 2 {
		t.Fatalf("the iterator gave %d deliveries, want the ping and the event", len(deliveries))
	}
	p, err := tn.r.Webhooks.ListDeliveries(ctx, api.DeliveryListParams{WebhookID: hook.ID})
	if err != nil || p.TotalCount != 2 {
		t.Errorf("ListDeliveries: %+v, %v", p, err)
	}
	eventually(t, "the ping's delivery recorded as delivered", func() (bool, error) {
		dl, err := tn.r.Webhooks.GetDelivery(ctx, ping.ID, api.DeliveryParams{WebhookID: hook.ID})
		return err == nil && dl.State == api.DeliverySucceeded, err
	})
	if _, err := tn.w.Webhooks.ResendDelivery(ctx, ping.ID, api.DeliveryParams{WebhookID: hook.ID}); err != nil {
		t.Errorf("ResendDelivery: %v", err)
	}
	eventually(t, "the ping delivered again", func() (bool, error) { return len(received(webhook.EventPing)) >= 2, nil })
	pings := received(webhook.EventPing)
	if pings[0].ID != pings[1].ID {
		t.Errorf("a resent delivery carries webhook-id %s, the first %s: want the same, to deduplicate by", pings[1].ID, pings[0].ID)
	}

	if g, err := tn.r.Webhooks.Get(ctx, hook.ID); err != nil || g.URL != rs.URL+"/dtekit" || !g.IsActive {
		t.Errorf("Get: %+v, %v", g, err)
	}
	off := false
	if u, err := tn.w.Webhooks.Update(ctx, hook.ID, api.WebhookUpdate{IsActive: &off}); err != nil || u.IsActive {
		t.Errorf("Update: %+v, %v", u, err)
	}
	if u, err := tn.w.Webhooks.Enable(ctx, hook.ID); err != nil || !u.IsActive {
		t.Errorf("Enable: %+v, %v", u, err)
	}
	rot, err := tn.w.Webhooks.RotateSecret(ctx, hook.ID, api.WebhookSecretParams{})
	if err != nil || rot.Secret == "" || rot.Secret == secret.Encode() {
		t.Errorf("RotateSecret: %+v, %v", rot, err)
	} else if _, err := webhook.ParseSecret(rot.Secret); err != nil {
		t.Errorf("the rotated secret does not parse: %v", err)
	}
	if l, err := tn.r.Webhooks.List(ctx); err != nil || len(l) != 1 || l[0].ID != hook.ID {
		t.Errorf("List: %+v, %v", l, err)
	}
	if err := tn.w.Webhooks.Delete(ctx, hook.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := tn.r.Webhooks.Get(ctx, hook.ID); !errors.Is(err, fault.NotFound) {
		t.Errorf("a deleted webhook: %v", err)
	}
}

// testTenancy: a company reads nothing of another's through the client.
func testTenancy(t *testing.T, e *env) {
	ctx := context.Background()
	a, b := e.tenant(t, 33), e.tenant(t)
	res := must[*api.EmitResponse](t, "emit")(a.w.Documents.Emit(ctx, api.EmitParams{Request: held(t, "factura")}))
	if _, err := b.r.Documents.Get(ctx, res.ID, api.DTEGetParams{}); !errors.Is(err, fault.NotFound) {
		t.Errorf("B reading A's document: %v", err)
	}
	if _, err := b.r.Documents.XML(ctx, res.ID); !errors.Is(err, fault.NotFound) {
		t.Errorf("B downloading A's XML: %v", err)
	}
	if _, err := b.w.Documents.Submit(ctx, res.ID, api.SubmitParams{}); !errors.Is(err, fault.NotFound) {
		t.Errorf("B sending A's document: %v", err)
	}
	if p, err := b.r.Documents.List(ctx, api.DTEListParams{}); err != nil || p.TotalCount != 0 {
		t.Errorf("B's list: %+v, %v", p, err)
	}
}
