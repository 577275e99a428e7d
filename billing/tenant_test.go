package billing

import (
	"context"
	"testing"

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
			cafPage, err := s.ListCAF(ctx, a.ID, CAFFilter{})
			if err != nil || len(cafPage.Data) != 1 {
				t.Fatal(cafPage, err)
			}
			cafs := cafPage.Data
			cli, err := s.CreateCliente(ctx, a.ID, ClienteInput{Rut: "77777777-7", RazonSocial: "Cliente A"})
			if err != nil {
				t.Fatal(err)
			}
			prod, err := s.CreateProducto(ctx, a.ID, ProductoInput{Codigo: "P1", Nombre: "Producto A", PrecioUnitario: 100})
			if err != nil {
				t.Fatal(err)
			}
			key, err := s.CreateAPIKey(ctx, a.ID, true)
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
				{"GetDTE", func() error { _, err := s.GetDTE(ctx, b, r.ID, true); return err }},
				{"DTEXML", func() error { _, err := s.DTEXML(ctx, b, r.ID); return err }},
				{"DTEPDF", func() error { _, err := s.DTEPDF(ctx, b, r.ID, PDFOptions{}); return err }},
				{"GetCAF", func() error { _, err := s.GetCAF(ctx, b, cafs[0].ID); return err }},
				{"GetCliente", func() error { _, err := s.GetCliente(ctx, b, cli.ID); return err }},
				{"UpdateCliente", func() error { _, err := s.UpdateCliente(ctx, b, cli.ID, ClienteUpdate{RazonSocial: &name}); return err }},
				{"DeleteCliente", func() error { return s.DeleteCliente(ctx, b, cli.ID) }},
				{"GetProducto", func() error { _, err := s.GetProducto(ctx, b, prod.ID); return err }},
				{"UpdateProducto", func() error {
					_, err := s.UpdateProducto(ctx, b, prod.ID, ProductoUpdate{Nombre: &name, PrecioUnitario: &price})
					return err
				}},
				{"DeleteProducto", func() error { return s.DeleteProducto(ctx, b, prod.ID) }},
				{"RevokeAPIKey", func() error { return s.RevokeAPIKey(ctx, b, key.ID) }},
				// Company-level methods with an id that is no company.
				{"GetEmpresa", func() error { _, err := s.GetEmpresa(ctx, "00000000-0000-0000-0000-000000000000"); return err }},
				{"UpdateEmpresa", func() error {
					_, err := s.UpdateEmpresa(ctx, "00000000-0000-0000-0000-000000000000", EmpresaUpdate{Giro: &name})
					return err
				}},
				{"ListDTE", func() error {
					_, err := s.ListDTE(ctx, "00000000-0000-0000-0000-000000000000", DTEFilter{})
					return err
				}},
				{"ListCAF", func() error {
					_, err := s.ListCAF(ctx, "00000000-0000-0000-0000-000000000000", CAFFilter{})
					return err
				}},
				{"Emit", func() error {
					_, err := emitBody(s, ctx, "00000000-0000-0000-0000-000000000000", newKey(), facturaBody(1))
					return err
				}},
				{"RegisterCAF", func() error {
					_, err := s.RegisterCAF(ctx, "00000000-0000-0000-0000-000000000000", CAFInput{TipoDTE: 33, CAFXML: issueCAF(t, 33, 5000, 5010)})
					return err
				}},
				{"UploadCertificate", func() error {
					_, err := s.UploadCertificate(ctx, "00000000-0000-0000-0000-000000000000", creds(t).P12, creds(t).Password, dtetest.SignerRUT)
					return err
				}},
				{"CertificateStatus", func() error { _, err := s.CertificateStatus(ctx, "00000000-0000-0000-0000-000000000000"); return err }},
				{"CreateCliente", func() error {
					_, err := s.CreateCliente(ctx, "00000000-0000-0000-0000-000000000000", ClienteInput{Rut: "77777777-7", RazonSocial: "x"})
					return err
				}},
				{"CreateProducto", func() error {
					_, err := s.CreateProducto(ctx, "00000000-0000-0000-0000-000000000000", ProductoInput{Nombre: "x"})
					return err
				}},
				{"ListClientes", func() error {
					_, err := s.ListClientes(ctx, "00000000-0000-0000-0000-000000000000", ListParams{})
					return err
				}},
				{"ListProductos", func() error {
					_, err := s.ListProductos(ctx, "00000000-0000-0000-0000-000000000000", ListParams{})
					return err
				}},
				{"CreateAPIKey", func() error { _, err := s.CreateAPIKey(ctx, "00000000-0000-0000-0000-000000000000", false); return err }},
				{"ListAPIKeys", func() error { _, err := s.ListAPIKeys(ctx, "00000000-0000-0000-0000-000000000000"); return err }},
			} {
				if err := c.call(); fault.KindOf(err) != fault.KindNotFound {
					t.Errorf("%s with another company's id: %v, want not found", c.name, err)
				}
			}
			// The other company's lists show none of A's records.
			if p, err := s.ListDTE(ctx, b, DTEFilter{}); err != nil || p.TotalCount != 0 {
				t.Errorf("ListDTE of the other company: %+v, %v", p, err)
			}
			if l, err := s.ListCAF(ctx, b, CAFFilter{}); err != nil || len(l.Data) != 0 || l.TotalCount != 0 {
				t.Errorf("ListCAF of the other company: %+v, %v", l, err)
			}
			if p, err := s.ListClientes(ctx, b, ListParams{}); err != nil || p.TotalCount != 0 {
				t.Errorf("ListClientes of the other company: %+v, %v", p, err)
			}
			if p, err := s.ListProductos(ctx, b, ListParams{}); err != nil || p.TotalCount != 0 {
				t.Errorf("ListProductos of the other company: %+v, %v", p, err)
			}
			// A's records are untouched.
			if c, err := s.GetCliente(ctx, a.ID, cli.ID); err != nil || c.RazonSocial != "Cliente A" {
				t.Errorf("A's cliente after the other company's writes: %+v, %v", c, err)
			}
			if p, err := s.GetProducto(ctx, a.ID, prod.ID); err != nil || p.Nombre != "Producto A" {
				t.Errorf("A's producto after the other company's writes: %+v, %v", p, err)
			}
			if pr, err := s.AuthenticateAPIKey(ctx, key.Key); err != nil || pr.EmpresaID != a.ID || !pr.Write {
				t.Errorf("A's key after the other company's revoke: %+v, %v", pr, err)
			}
		})
	}
}
