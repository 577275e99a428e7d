package billing

import (
	"context"
	"crypto/rsa"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
)

func TestClientes(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			f := newFixture(t, b, false)
			ctx := context.Background()
			s, id := f.s, f.emp.ID
			a, err := s.Catalog.CreateCliente(ctx, id, api.ClienteInput{Rut: "77.777.777-7", RazonSocial: " Pérez & Hijos Ltda. ", Email: "ventas@perez.cl"})
			if err != nil {
				t.Fatal(err)
			}
			if a.Rut != "77777777-7" || a.RazonSocial != "Pérez & Hijos Ltda." {
				t.Errorf("created %+v", a)
			}
			if _, err := s.Catalog.CreateCliente(ctx, id, api.ClienteInput{Rut: "77777777-7", RazonSocial: "Otro"}); fault.As(err) == nil || fault.As(err).Code != fault.ClienteRUTConflict {
				t.Errorf("duplicate rut: %v", err)
			}
			for _, in := range []api.ClienteInput{{Rut: "77777777-8", RazonSocial: "x"}, {Rut: "", RazonSocial: "x"}, {Rut: "11111111-1", RazonSocial: " "},
				{Rut: "11111111-1", RazonSocial: "x", Email: "no-mail"}} {
				if _, err := s.Catalog.CreateCliente(ctx, id, in); fault.KindOf(err) != fault.KindValidation {
					t.Errorf("CreateCliente(%+v): %v, want validation", in, err)
				}
			}
			// A cliente's giro becomes the document's GiroRecep, which
			// DTE_v10.xsd bounds at 40 characters (not GiroEmis's 80).
			giro40, giro41 := strings.Repeat("g", 40), strings.Repeat("g", 41)
			if _, err := s.Catalog.CreateCliente(ctx, id, api.ClienteInput{Rut: "44444444-4", RazonSocial: "x", Giro: giro41}); fault.As(err) == nil ||
				len(fault.As(err).Details) != 1 || fault.As(err).Details[0].Field != "giro" || fault.As(err).Details[0].Code != dte.CodeTooLong {
				t.Errorf("giro of 41 characters: %v", err)
			}
			if _, err := s.Catalog.UpdateCliente(ctx, id, a.ID, api.ClienteUpdate{Giro: &giro41}); fault.KindOf(err) != fault.KindValidation {
				t.Errorf("update to a giro of 41 characters: %v", err)
			}
			if _, err := s.Catalog.UpdateCliente(ctx, id, a.ID, api.ClienteUpdate{Giro: &giro40}); err != nil {
				t.Errorf("update to a giro of 40 characters: %v", err)
			}
			for i, rut := range []string{"11111111-1", "22222222-2", "33333333-3"} {
				if _, err := s.Catalog.CreateCliente(ctx, id, api.ClienteInput{Rut: rut, RazonSocial: []string{"Alfa SpA", "Beta Ltda", "Gamma y Cía"}[i]}); err != nil {
					t.Fatal(err)
				}
			}
			// Pages of 2 over 4 clientes, oldest first, with the total.
			p1, err := s.Catalog.ListClientes(ctx, id, api.ClienteListParams{ListParams: api.ListParams{Limit: 2}})
			if err != nil || len(p1.Data) != 2 || p1.TotalCount != 4 || p1.NextCursor == nil {
				t.Fatalf("page 1: %+v, %v", p1, err)
			}
			p2, err := s.Catalog.ListClientes(ctx, id, api.ClienteListParams{ListParams: api.ListParams{Limit: 2, Cursor: *p1.NextCursor}})
			if err != nil || len(p2.Data) != 2 || p2.NextCursor != nil || p2.Data[1].RazonSocial != "Gamma y Cía" {
				t.Fatalf("page 2: %+v, %v", p2, err)
			}
			if _, err := s.Catalog.ListClientes(ctx, id, api.ClienteListParams{ListParams: api.ListParams{Cursor: "garbage"}}); fault.KindOf(err) != fault.KindValidation {
				t.Errorf("bad cursor: %v", err)
			}
			if _, err := s.Catalog.ListClientes(ctx, id, api.ClienteListParams{ListParams: api.ListParams{Limit: 101}}); fault.KindOf(err) != fault.KindValidation {
				t.Errorf("limit 101: %v", err)
			}
			for q, want := range map[string]int{"beta": 1, "22.222.222-2": 1, "ltda": 2, "zzz": 0} {
				p, err := s.Catalog.ListClientes(ctx, id, api.ClienteListParams{Q: q})
				if err != nil || len(p.Data) != want || p.TotalCount != int64(want) {
					t.Errorf("search %q: %d results (%v), want %d", q, len(p.Data), err, want)
				}
			}
			name := "Pérez Hermanos"
			up, err := s.Catalog.UpdateCliente(ctx, id, a.ID, api.ClienteUpdate{RazonSocial: &name})
			if err != nil || up.RazonSocial != name || up.Rut != a.Rut || up.Email != a.Email {
				t.Errorf("update: %+v, %v", up, err)
			}
			blank := ""
			if _, err := s.Catalog.UpdateCliente(ctx, id, a.ID, api.ClienteUpdate{RazonSocial: &blank}); fault.KindOf(err) != fault.KindValidation {
				t.Errorf("blank razon_social: %v", err)
			}
			if err := s.Catalog.DeleteCliente(ctx, id, a.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Catalog.GetCliente(ctx, id, a.ID); fault.KindOf(err) != fault.KindNotFound {
				t.Errorf("deleted cliente: %v", err)
			}
			if err := s.Catalog.DeleteCliente(ctx, id, a.ID); fault.KindOf(err) != fault.KindNotFound {
				t.Errorf("second delete: %v", err)
			}
			if _, err := s.Catalog.CreateCliente(ctx, id, api.ClienteInput{Rut: "77777777-7", RazonSocial: "De nuevo"}); err != nil {
				t.Errorf("the rut of a deleted cliente is free again: %v", err)
			}
		})
	}
}

func TestProductos(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			f := newFixture(t, b, false)
			ctx := context.Background()
			s, id := f.s, f.emp.ID
			p, err := s.Catalog.CreateProducto(ctx, id, api.ProductoInput{Codigo: "SKU-1", Nombre: "Resma carta", PrecioUnitario: 3990, Unidad: "UN"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Catalog.CreateProducto(ctx, id, api.ProductoInput{Codigo: "SKU-1", Nombre: "Otra"}); fault.As(err) == nil || fault.As(err).Code != fault.ProductoCodigoConflict {
				t.Errorf("duplicate codigo: %v", err)
			}
			// Products without codigo do not clash.
			for i := 0; i < 2; i++ {
				if _, err := s.Catalog.CreateProducto(ctx, id, api.ProductoInput{Nombre: "Servicio de despacho", EsExento: true}); err != nil {
					t.Fatal(err)
				}
			}
			for _, in := range []api.ProductoInput{{Nombre: ""}, {Nombre: "x", PrecioUnitario: -1}, {Nombre: "x", Unidad: "CAJAS"}} {
				if _, err := s.Catalog.CreateProducto(ctx, id, in); fault.KindOf(err) != fault.KindValidation {
					t.Errorf("CreateProducto(%+v): %v, want validation", in, err)
				}
			}
			for q, want := range map[string]int{"sku": 1, "despacho": 2, "resma": 1} {
				pg, err := s.Catalog.ListProductos(ctx, id, api.ProductoListParams{Q: q})
				if err != nil || len(pg.Data) != want {
					t.Errorf("search %q: %+v, %v; want %d", q, pg, err, want)
				}
			}
			price := int64(4200)
			exento := true
			up, err := s.Catalog.UpdateProducto(ctx, id, p.ID, api.ProductoUpdate{PrecioUnitario: &price, EsExento: &exento})
			if err != nil || up.PrecioUnitario != 4200 || !up.EsExento || up.Codigo != "SKU-1" {
				t.Errorf("update: %+v, %v", up, err)
			}
			neg := int64(-5)
			if _, err := s.Catalog.UpdateProducto(ctx, id, p.ID, api.ProductoUpdate{PrecioUnitario: &neg}); fault.KindOf(err) != fault.KindValidation {
				t.Errorf("negative price: %v", err)
			}
			if err := s.Catalog.DeleteProducto(ctx, id, p.ID); err != nil {
				t.Fatal(err)
			}
			if pg, err := s.Catalog.ListProductos(ctx, id, api.ProductoListParams{}); err != nil || pg.TotalCount != 2 {
				t.Errorf("after delete: %+v, %v", pg, err)
			}
			if _, err := s.Catalog.CreateProducto(ctx, id, api.ProductoInput{Codigo: "SKU-1", Nombre: "Resma carta nueva"}); err != nil {
				t.Errorf("the codigo of a deleted producto is free again: %v", err)
			}
		})
	}
}

func TestCAFRegistration(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			f := newFixture(t, b, true)
			ctx := context.Background()
			s, id := f.s, f.emp.ID
			l, err := s.CAFs.List(ctx, id, api.CAFListParams{TipoDTE: 33})
			if err != nil || len(l.Data) != 1 {
				t.Fatal(l, err)
			}
			c := l.Data[0]
			if c.FolioDesde != 1 || c.FolioHasta != 1000 || c.FoliosDisponibles != 1000 || !c.IsActive ||
				c.Ambiente != dte.AmbienteCertificacion || c.FechaAutorizacion == "" {
				t.Errorf("CAF %+v", c)
			}
			// Overlapping ranges are refused, adjacent ones are not.
			if _, err := s.CAFs.Register(ctx, id, api.CAFInput{TipoDTE: 33, CAFXML: issueCAF(t, 33, 1000, 1100)}); fault.As(err) == nil || fault.As(err).Code != fault.CAFRangeConflict {
				t.Errorf("overlapping CAF: %v", err)
			}
			if _, err := s.CAFs.Register(ctx, id, api.CAFInput{TipoDTE: 33, CAFXML: string(creds(t).CAFFiles[33])}); fault.KindOf(err) != fault.KindConflict {
				t.Errorf("the same CAF twice: %v", err)
			}
			next, err := s.CAFs.Register(ctx, id, api.CAFInput{TipoDTE: 33, CAFXML: issueCAF(t, 33, 1001, 1100)})
			if err != nil || next.IsActive || next.FoliosDisponibles != 100 {
				t.Errorf("adjacent CAF: %+v, %v", next, err)
			}
			// The same range of another type is independent.
			if _, err := s.CAFs.Register(ctx, id, api.CAFInput{TipoDTE: 34, CAFXML: string(creds(t).CAFFiles[34])}); err != nil {
				t.Errorf("tipo 34: %v", err)
			}
			if all, err := s.CAFs.List(ctx, id, api.CAFListParams{}); err != nil || len(all.Data) != 3 || all.TotalCount != 3 {
				t.Errorf("ListCAF all: %+v, %v", all, err)
			}
			emitOK(t, s, id, facturaBody(1))
			if c, _ := s.CAFs.Get(ctx, id, c.ID); c.FoliosDisponibles != 999 {
				t.Errorf("after one emission folios_disponibles = %d, want 999", c.FoliosDisponibles)
			}
			// A base64-encoded file is accepted too (another range).
			if _, err := s.CAFs.Register(ctx, id, api.CAFInput{TipoDTE: 39, CAFXML: base64.StdEncoding.EncodeToString(creds(t).CAFFiles[39])}); err != nil {
				t.Errorf("base64 CAF: %v", err)
			}
			if _, err := s.CAFs.Get(ctx, id, "00000000-0000-0000-0000-000000000000"); fault.KindOf(err) != fault.KindNotFound {
				t.Errorf("unknown CAF: %v", err)
			}
		})
	}
}

func TestCertificateAndEmpresa(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			creds(t)
			dsn := b.dsn(t)
			s := newService(t, b.name, dsn, Config{})
			ctx := context.Background()
			emp, err := s.Company.Create(ctx, demoEmpresa())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Company.Create(ctx, demoEmpresa()); fault.KindOf(err) != fault.KindConflict {
				t.Errorf("the same RUT twice: %v", err)
			}
			bad := demoEmpresa()
			bad.Rut, bad.Ambiente, bad.Acteco = "76192083-0", "pruebas", nil
			if err := fault.As(func() error { _, err := s.Company.Create(ctx, bad); return err }()); err == nil || len(err.Details) != 3 {
				t.Errorf("invalid company: %v", err)
			}
			st, err := s.Company.Certificate(ctx, emp.ID)
			if err != nil || st.HasCertificado {
				t.Errorf("status before upload: %+v, %v", st, err)
			}
			if _, err := emitBody(s, ctx, emp.ID, newKey(), facturaBody(1)); fault.As(err) == nil || fault.As(err).Code != fault.CertificateRequired {
				t.Errorf("emission without certificate: %v", err)
			}
			if _, err := s.Company.UploadCertificate(ctx, emp.ID, api.CertificadoUpload{File: creds(t).P12, Password: "wrong", RutFirmante: dtetest.SignerRUT}); fault.KindOf(err) != fault.KindValidation {
				t.Errorf("wrong password: %v", err)
			}
			up, err := s.Company.UploadCertificate(ctx, emp.ID, api.CertificadoUpload{File: creds(t).P12, Password: creds(t).Password, RutFirmante: dtetest.SignerRUT})
			if err != nil {
				t.Fatal(err)
			}
			st, err = s.Company.Certificate(ctx, emp.ID)
			if err != nil || !st.HasCertificado || !st.IsActive || *st.RutFirmante != dtetest.SignerRUT ||
				*st.DiasParaVencimiento != creds(t).Cert.DaysToExpiry(time.Now()) || up.FechaVencimiento == nil {
				t.Errorf("status: %+v, %v", st, err)
			}
			// Another Service on the same database (another process)
			// opens the sealed key.
			s2 := newService(t, b.name, dsn, Config{})
			c2, err := s2.signingCert(ctx, emp.ID)
			if err != nil || !c2.Key.(*rsa.PrivateKey).Equal(creds(t).Cert.Key) {
				t.Errorf("reopened certificate: %v", err)
			}
			// An expired certificate stops emission (the SII would refuse
			// the documents), with the reason.
			if _, err := s.CAFs.Register(ctx, emp.ID, api.CAFInput{TipoDTE: 33, CAFXML: string(creds(t).CAFFiles[33])}); err != nil {
				t.Fatal(err)
			}
			s3 := newService(t, b.name, dsn, Config{Now: func() time.Time { return time.Now().AddDate(3, 0, 0) }})
			if _, err := emitBody(s3, ctx, emp.ID, newKey(), facturaBody(1)); fault.As(err) == nil || fault.As(err).Details[0].Code != fault.DetailCertExpired {
				t.Errorf("emission with an expired certificate: %v", err)
			}
			g := "Servicios informáticos"
			e, err := s.Company.Update(ctx, emp.ID, api.EmpresaUpdate{Giro: &g})
			if err != nil || e.Giro != g || e.RazonSocial != emp.RazonSocial {
				t.Errorf("UpdateEmpresa: %+v, %v", e, err)
			}
			if got, _ := s.Company.Get(ctx, emp.ID); got.Giro != g {
				t.Errorf("GetEmpresa after update: %+v", got)
			}
			// An update is checked by the same rules as a creation (GiroEmis
			// holds 80 characters in DTE_v10.xsd), only on the fields it
			// changes, and changes nothing when it fails.
			long, blank := strings.Repeat("g", 81), " "
			ue := fault.As(func() error {
				_, err := s.Company.Update(ctx, emp.ID, api.EmpresaUpdate{Giro: &long, RazonSocial: &blank})
				return err
			}())
			if ue == nil || len(ue.Details) != 2 || ue.Details[0].Field != "razon_social" || ue.Details[0].Code != dte.CodeRequired ||
				ue.Details[1].Field != "giro" || ue.Details[1].Code != dte.CodeTooLong {
				t.Errorf("invalid update: %v", ue)
			}
			if got, _ := s.Company.Get(ctx, emp.ID); got.Giro != g || got.RazonSocial != emp.RazonSocial {
				t.Errorf("GetEmpresa after a refused update: %+v", got)
			}
		})
	}
}

func TestAPIKeys(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			f := newFixture(t, b, false)
			ctx := context.Background()
			s, id := f.s, f.emp.ID
			ro, err := s.Keys.Create(ctx, id, api.APIKeyInput{Write: false})
			if err != nil {
				t.Fatal(err)
			}
			rw, err := s.Keys.Create(ctx, id, api.APIKeyInput{Write: true})
			if err != nil {
				t.Fatal(err)
			}
			if ro.Key == rw.Key || len(ro.Key) < 40 {
				t.Errorf("keys %q %q", ro.Key, rw.Key)
			}
			if p, err := s.Keys.Authenticate(ctx, ro.Key); err != nil || p.EmpresaID != id || p.Write {
				t.Errorf("read-only key: %+v, %v", p, err)
			}
			if p, err := s.Keys.Authenticate(ctx, rw.Key); err != nil || !p.Write {
				t.Errorf("write key: %+v, %v", p, err)
			}
			for _, k := range []string{"", "dtk_nope", ro.Key + "x", "Bearer " + ro.Key} {
				if _, err := s.Keys.Authenticate(ctx, k); fault.KindOf(err) != fault.KindUnauthorized {
					t.Errorf("key %q: %v", k, err)
				}
			}
			keys, err := s.Keys.List(ctx, id)
			if err != nil || len(keys) != 2 || keys[0].Key != "" || keys[1].Key != "" {
				t.Errorf("ListAPIKeys shows %+v, %v", keys, err)
			}
			if err := s.Keys.Revoke(ctx, id, ro.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Keys.Authenticate(ctx, ro.Key); fault.KindOf(err) != fault.KindUnauthorized {
				t.Errorf("revoked key: %v", err)
			}
		})
	}
}

// TestIdempotencyPurge: keys older than the retention are deleted, newer
// ones kept.
func TestIdempotencyPurge(t *testing.T) {
	t.Parallel()
	b := backends[0]
	f := newFixture(t, b, true)
	ctx := context.Background()
	key := newKey()
	if _, err := emitBody(f.s, ctx, f.emp.ID, key, facturaBody(1)); err != nil {
		t.Fatal(err)
	}
	if n, err := f.s.purgeIdempotency(ctx); err != nil || n != 0 {
		t.Errorf("purge of fresh keys: %d, %v", n, err)
	}
	later := time.Now().Add(DefaultIdempotencyTTL + time.Minute)
	f.s.now = func() time.Time { return later }
	if n, err := f.s.purgeIdempotency(ctx); err != nil || n != 1 {
		t.Errorf("purge after 24 h: %d, %v", n, err)
	}
	if _, err := f.s.st.GetIdempotency(ctx, f.emp.ID, f.emp.Ambiente, key); fault.KindOf(storeErr(err, "", "", "")) != fault.KindNotFound {
		t.Errorf("purged key still there: %v", err)
	}
}

// TestTextRefusedBeforeTheStore: a control character (NUL among them,
// which PostgreSQL refuses with an error and SQLite stores), or a
// character ISO-8859-1 cannot hold, in a cliente, a producto, the company
// or a search is a validation error naming the field, on both backends,
// and nothing is stored (issue 20, point 7).
func TestTextRefusedBeforeTheStore(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			f := newFixture(t, b, false)
			s, ctx, id := f.s, context.Background(), f.emp.ID
			wantField := func(what string, err error, field string, code dte.DetailCode) {
				t.Helper()
				fe := fault.As(err)
				if fe == nil || fe.Kind != fault.KindValidation || len(fe.Details) == 0 ||
					fe.Details[0].Field != field || fe.Details[0].Code != code {
					t.Errorf("%s: %v, want a validation error on %s (%s)", what, err, field, code)
				}
			}
			_, err := s.Catalog.CreateCliente(ctx, id, api.ClienteInput{Rut: "76086428-5", RazonSocial: "Uno\x00Dos"})
			wantField("NUL in razon_social", err, "razon_social", dte.CodeInvalidCharacter)
			_, err = s.Catalog.CreateCliente(ctx, id, api.ClienteInput{Rut: "76086428-5", RazonSocial: "Uno", Giro: "Café ☕"})
			wantField("a character outside ISO-8859-1", err, "giro", dte.CodeNotLatin1)
			notas := "línea uno\nlínea dos"
			if _, err := s.Catalog.CreateCliente(ctx, id, api.ClienteInput{Rut: "76086428-5", RazonSocial: "Uno", Notas: notas}); err != nil {
				t.Errorf("line breaks in notas: %v", err)
			}
			_, err = s.Catalog.CreateProducto(ctx, id, api.ProductoInput{Nombre: "Resma\x07", PrecioUnitario: 100})
			wantField("BEL in nombre", err, "nombre", dte.CodeInvalidCharacter)
			giro := "Servicios\x00"
			_, err = s.Company.Update(ctx, id, api.EmpresaUpdate{Giro: &giro})
			wantField("NUL in the company's giro", err, "giro", dte.CodeInvalidCharacter)
			_, err = s.Catalog.ListClientes(ctx, id, api.ClienteListParams{Q: "a\x00b"})
			wantField("NUL in a search", err, "q", dte.CodeInvalidCharacter)
			_, err = s.Catalog.ListProductos(ctx, id, api.ProductoListParams{Q: "\x1b[2J"})
			wantField("ESC in a search", err, "q", dte.CodeInvalidCharacter)
			page, err := s.Catalog.ListClientes(ctx, id, api.ClienteListParams{})
			if err != nil || page.TotalCount != 1 {
				t.Errorf("clientes stored: %+v, %v; want only the one with notas", page, err)
			}
		})
	}
}

// TestCapsPerTenant: a company holds at most MaxWebhooks webhooks and
// MaxAPIKeys valid API keys; one more is LIMIT_EXCEEDED (409), and
// deleting or revoking one makes room (issue 20, point 9).
func TestCapsPerTenant(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			f := newFixture(t, b, false)
			s, ctx, id := f.s, context.Background(), f.emp.ID
			wantLimit := func(what string, err error) {
				t.Helper()
				if fe := fault.As(err); fe == nil || fe.Kind != fault.KindConflict || fe.Code != fault.LimitExceeded {
					t.Errorf("%s beyond the cap: %v, want LIMIT_EXCEEDED", what, err)
				}
			}
			var hooks []*api.Webhook
			for i := range MaxWebhooks {
				h, err := s.Webhooks.Create(ctx, id, api.WebhookInput{URL: fmt.Sprintf("https://hooks%d.example.com/", i), Events: []string{"dte.created"}})
				if err != nil {
					t.Fatalf("webhook %d: %v", i+1, err)
				}
				hooks = append(hooks, h)
			}
			_, err := s.Webhooks.Create(ctx, id, api.WebhookInput{URL: "https://one-more.example.com/", Events: []string{"dte.created"}})
			wantLimit("a webhook", err)
			if err := s.Webhooks.Delete(ctx, id, hooks[0].ID); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Webhooks.Create(ctx, id, api.WebhookInput{URL: "https://one-more.example.com/", Events: []string{"dte.created"}}); err != nil {
				t.Errorf("a webhook after deleting one: %v", err)
			}
			var keys []*api.APIKey
			for i := range MaxAPIKeys {
				k, err := s.Keys.Create(ctx, id, api.APIKeyInput{Write: false})
				if err != nil {
					t.Fatalf("API key %d: %v", i+1, err)
				}
				keys = append(keys, k)
			}
			_, err = s.Keys.Create(ctx, id, api.APIKeyInput{Write: true})
			wantLimit("an API key", err)
			if err := s.Keys.Revoke(ctx, id, keys[0].ID); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Keys.Create(ctx, id, api.APIKeyInput{Write: true}); err != nil {
				t.Errorf("an API key after revoking one: %v", err)
			}
		})
	}
}
