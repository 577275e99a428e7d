package billing

import (
	"context"
	"testing"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte/dtetest"
)

// TestCrossTenant: every read and write method given another company's id
// and this company's resource ids answers not found, and changes nothing.
func TestCrossTenant(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			f := newFixture(t, b, true)
			ctx := context.Background()
			s, a := f.s, f.emp
			other := setupOther(t, s)
			r := emitOK(t, s, a.ID, facturaBody(1))
			cafPage, err := s.CAFs.List(ctx, a.ID, api.CAFListParams{})
			if err != nil || len(cafPage.Data) != 1 {
				t.Fatal(cafPage, err)
			}
			cafs := cafPage.Data
			cli, err := s.Catalog.CreateCliente(ctx, a.ID, api.ClienteInput{Rut: "77777777-7", RazonSocial: "Cliente A"})
			if err != nil {
				t.Fatal(err)
			}
			prod, err := s.Catalog.CreateProducto(ctx, a.ID, api.ProductoInput{Codigo: "P1", Nombre: "Producto A", PrecioUnitario: 100})
			if err != nil {
				t.Fatal(err)
			}
			key, err := s.Keys.Create(ctx, a.ID, api.APIKeyInput{Write: true})
			if err != nil {
				t.Fatal(err)
			}
			name := "Otro nombre"
			price := int64(1)
			b := other.ID
			for _, c := range []struct {
				name string
				call func() error
			}{
				{"GetDTE", func() error { _, err := s.Documents.Get(ctx, b, r.ID, api.DTEGetParams{IncludeXML: true}); return err }},
				{"DTEXML", func() error { _, err := s.Documents.XML(ctx, b, r.ID); return err }},
				{"DTEPDF", func() error { _, err := s.Documents.PDF(ctx, b, r.ID, api.PDFOptions{}); return err }},
				{"GetCAF", func() error { _, err := s.CAFs.Get(ctx, b, cafs[0].ID); return err }},
				{"GetCliente", func() error { _, err := s.Catalog.GetCliente(ctx, b, cli.ID); return err }},
				{"UpdateCliente", func() error {
					_, err := s.Catalog.UpdateCliente(ctx, b, cli.ID, api.ClienteUpdate{RazonSocial: &name})
					return err
				}},
				{"DeleteCliente", func() error { return s.Catalog.DeleteCliente(ctx, b, cli.ID) }},
				{"GetProducto", func() error { _, err := s.Catalog.GetProducto(ctx, b, prod.ID); return err }},
				{"UpdateProducto", func() error {
					_, err := s.Catalog.UpdateProducto(ctx, b, prod.ID, api.ProductoUpdate{Nombre: &name, PrecioUnitario: &price})
					return err
				}},
				{"DeleteProducto", func() error { return s.Catalog.DeleteProducto(ctx, b, prod.ID) }},
				{"RevokeAPIKey", func() error { return s.Keys.Revoke(ctx, b, key.ID) }},
				// Company-level methods with an id that is no company.
				{"GetEmpresa", func() error { _, err := s.Company.Get(ctx, "00000000-0000-0000-0000-000000000000"); return err }},
				{"UpdateEmpresa", func() error {
					_, err := s.Company.Update(ctx, "00000000-0000-0000-0000-000000000000", api.EmpresaUpdate{Giro: &name})
					return err
				}},
				{"ListDTE", func() error {
					_, err := s.Documents.List(ctx, "00000000-0000-0000-0000-000000000000", api.DTEListParams{})
					return err
				}},
				{"ListCAF", func() error {
					_, err := s.CAFs.List(ctx, "00000000-0000-0000-0000-000000000000", api.CAFListParams{})
					return err
				}},
				{"Emit", func() error {
					_, err := emitBody(s, ctx, "00000000-0000-0000-0000-000000000000", newKey(), facturaBody(1))
					return err
				}},
				{"RegisterCAF", func() error {
					_, err := s.CAFs.Register(ctx, "00000000-0000-0000-0000-000000000000", api.CAFInput{TipoDTE: 33, CAFXML: issueCAF(t, 33, 5000, 5010)})
					return err
				}},
				{"UploadCertificate", func() error {
					_, err := s.Company.UploadCertificate(ctx, "00000000-0000-0000-0000-000000000000", api.CertificadoUpload{File: creds(t).P12, Password: creds(t).Password, RutFirmante: dtetest.SignerRUT})
					return err
				}},
				{"CertificateStatus", func() error { _, err := s.Company.Certificate(ctx, "00000000-0000-0000-0000-000000000000"); return err }},
				{"CreateCliente", func() error {
					_, err := s.Catalog.CreateCliente(ctx, "00000000-0000-0000-0000-000000000000", api.ClienteInput{Rut: "77777777-7", RazonSocial: "x"})
					return err
				}},
				{"CreateProducto", func() error {
					_, err := s.Catalog.CreateProducto(ctx, "00000000-0000-0000-0000-000000000000", api.ProductoInput{Nombre: "x"})
					return err
				}},
				{"ListClientes", func() error {
					_, err := s.Catalog.ListClientes(ctx, "00000000-0000-0000-0000-000000000000", api.ClienteListParams{})
					return err
				}},
				{"ListProductos", func() error {
					_, err := s.Catalog.ListProductos(ctx, "00000000-0000-0000-0000-000000000000", api.ProductoListParams{})
					return err
				}},
				{"CreateAPIKey", func() error {
					_, err := s.Keys.Create(ctx, "00000000-0000-0000-0000-000000000000", api.APIKeyInput{Write: false})
					return err
				}},
				{"ListAPIKeys", func() error { _, err := s.Keys.List(ctx, "00000000-0000-0000-0000-000000000000"); return err }},
			} {
				if err := c.call(); fault.KindOf(err) != fault.KindNotFound {
					t.Errorf("%s with another company's id: %v, want not found", c.name, err)
				}
			}
			// The other company's lists show none of A's records.
			if p, err := s.Documents.List(ctx, b, api.DTEListParams{}); err != nil || p.TotalCount != 0 {
				t.Errorf("ListDTE of the other company: %+v, %v", p, err)
			}
			if l, err := s.CAFs.List(ctx, b, api.CAFListParams{}); err != nil || len(l.Data) != 0 || l.TotalCount != 0 {
				t.Errorf("ListCAF of the other company: %+v, %v", l, err)
			}
			if p, err := s.Catalog.ListClientes(ctx, b, api.ClienteListParams{}); err != nil || p.TotalCount != 0 {
				t.Errorf("ListClientes of the other company: %+v, %v", p, err)
			}
			if p, err := s.Catalog.ListProductos(ctx, b, api.ProductoListParams{}); err != nil || p.TotalCount != 0 {
				t.Errorf("ListProductos of the other company: %+v, %v", p, err)
			}
			// A's records are untouched.
			if c, err := s.Catalog.GetCliente(ctx, a.ID, cli.ID); err != nil || c.RazonSocial != "Cliente A" {
				t.Errorf("A's cliente after the other company's writes: %+v, %v", c, err)
			}
			if p, err := s.Catalog.GetProducto(ctx, a.ID, prod.ID); err != nil || p.Nombre != "Producto A" {
				t.Errorf("A's producto after the other company's writes: %+v, %v", p, err)
			}
			if pr, err := s.Keys.Authenticate(ctx, key.Key); err != nil || pr.EmpresaID != a.ID || !pr.Write {
				t.Errorf("A's key after the other company's revoke: %+v, %v", pr, err)
			}
		})
	}
}
