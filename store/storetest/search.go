package storetest

import (
	"context"
	"slices"
	"testing"

	"github.com/dtekit/dtekit/store"
)

// spanishClientes are customers whose names hold what an ASCII-only
// lower() misses: Ñ, accented capitals, a name written decomposed (N and
// a combining tilde, as some systems export it).
var spanishClientes = []store.Cliente{
	{Rut: "11111111-1", RazonSocial: "Comercial ÑUÑOA Ltda"},
	{Rut: "22222222-2", RazonSocial: "Ñires del Sur SpA"},
	{Rut: "33333333-3", RazonSocial: "Árboles y Jardines EIRL"},
	{Rut: "44444444-4", RazonSocial: "Panadería Ñandú"},
	{Rut: "55555555-5", RazonSocial: "Distribuidora Ü\u0308ber CAFE\u0301"}, // decomposed É after a doubled diaeresis
	{Rut: "66666666-6", RazonSocial: "Constructora Peñalolén S.A."},
}

// spanishProductos are products likewise, one found by its codigo.
var spanishProductos = []store.Producto{
	{Codigo: "AÑO-2026", Nombre: "Calendario"},
	{Codigo: "PIN-1", Nombre: "Piñón de ÁRBOL"},
	{Codigo: "ACC-9", Nombre: "Acción de limpieza"},
}

// searchCases are queries and the indexes of spanishClientes they find,
// each written by hand: case and accents never matter, on either side.
var searchCases = []struct {
	q    string
	want []int
}{
	{"ÑUÑOA", []int{0}},
	{"ñuñoa", []int{0}},
	{"Ñuñoa", []int{0}},
	{"nunoa", []int{0}}, // no accents typed
	{"Ñires", []int{1}},
	{"ÑIRES", []int{1}},
	{"N\u0303ires", []int{1}}, // the query decomposed
	{"Árboles", []int{2}},
	{"árboles", []int{2}},
	{"ARBOLES", []int{2}},
	{"PANADERÍA ÑANDÚ", []int{3}},
	{"panaderia nandu", []int{3}},
	{"café", []int{4}}, // stored decomposed, asked composed
	{"über", []int{4}},
	{"peñalolén", []int{5}},
	{"PENALOLEN", []int{5}},
	{"ltda", []int{0}},
	{"ltda\x1f1111", nil}, // a control character is a space: no match across name and rut
	{"ltda1111", nil},
	{"55555555", []int{4}}, // by rut
	{"ñoño", nil},
}

// testCatalogSearch: clientes and productos are found regardless of case
// and accents (issue 29, point 7), by name and by rut or codigo, after an
// update too.
func (h *harness) testCatalogSearch(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "76999999-9")
	other := empresa(t, s, "77888888-8")
	clientes := insertSpanish(t, s, a.ID)
	// Another company's namesakes are never found.
	insertSpanish(t, s, other.ID)

	for _, tc := range searchCases {
		var want []string
		for _, i := range tc.want {
			want = append(want, clientes[i].ID)
		}
		if got := clienteIDs(t, s, a.ID, tc.q); !slices.Equal(got, want) {
			t.Errorf("ListClientes(Query %q) = %v, want %v", tc.q, got, want)
		}
	}

	// A renamed cliente is found by its new name only.
	c := clientes[1]
	c.RazonSocial = "Ñandúes Australes SpA"
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.UpdateCliente(ctx, &c) })
	if got := clienteIDs(t, s, a.ID, "NANDUES"); !slices.Equal(got, []string{c.ID}) {
		t.Errorf("after renaming: NANDUES finds %v, want %v", got, []string{c.ID})
	}
	if got := clienteIDs(t, s, a.ID, "ñires"); len(got) != 0 {
		t.Errorf("after renaming: the old name still finds %v", got)
	}
	if got := clienteIDs(t, s, a.ID, "22222222"); !slices.Equal(got, []string{c.ID}) {
		t.Errorf("after renaming: the rut finds %v", got)
	}

	var prods []store.Producto
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		for _, p := range spanishProductos {
			p.EmpresaID = a.ID
			if err := tx.InsertProducto(ctx, &p); err != nil {
				return err
			}
			prods = append(prods, p)
		}
		return nil
	})
	for _, tc := range []struct {
		q    string
		want []int
	}{
		{"año", []int{0}},   // by codigo
		{"ANO-2", []int{0}}, // by codigo, without the tilde
		{"piñon", []int{1}},
		{"árbol", []int{1}},
		{"ACCIÓN", []int{2}},
		{"accion", []int{2}},
	} {
		var want []string
		for _, i := range tc.want {
			want = append(want, prods[i].ID)
		}
		p, err := s.ListProductos(ctx, a.ID, store.CatalogFilter{Query: tc.q})
		if err != nil {
			t.Fatal(err)
		}
		if got := productoIDs(p); !slices.Equal(got, want) || p.TotalCount != int64(len(want)) {
			t.Errorf("ListProductos(Query %q) = %v (total %d), want %v", tc.q, got, p.TotalCount, want)
		}
	}
	// A product renamed and given another codigo.
	pr := prods[2]
	pr.Nombre, pr.Codigo = "Limpiador de Baño", "BAÑ-1"
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.UpdateProducto(ctx, &pr) })
	for _, q := range []string{"BANO", "bañ-1"} {
		p, err := s.ListProductos(ctx, a.ID, store.CatalogFilter{Query: q})
		if err != nil || !slices.Equal(productoIDs(p), []string{pr.ID}) {
			t.Errorf("after the update, ListProductos(Query %q) = %v, %v", q, p, err)
		}
	}
}

// testCatalogSearchMigrates: a database whose clientes and productos were
// written before migration 00012 (left without searchable text, as 00012
// leaves them) finds them by their Spanish names once the store opens it
// again.
func (h *harness) testCatalogSearchMigrates(t *testing.T) {
	if h.b.Exec == nil {
		t.Skip("the backend gives no Exec")
	}
	loc := h.b.NewDB(t)
	s, err := h.b.Open(t, loc, testJobs)
	if err != nil {
		t.Fatal(err)
	}
	a := empresa(t, s, "76999999-9")
	clientes := insertSpanish(t, s, a.ID)
	p := store.Producto{EmpresaID: a.ID, Codigo: "PIN-1", Nombre: "Piñón de ÁRBOL"}
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertProducto(ctx, &p) })
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// The rows as 00012 leaves those written before it: no searchable
	// text. (Taking the schema back and running 00012 again would run
	// every later migration again too: goose refuses a missing version
	// below the newest, and an ADD COLUMN cannot run twice.)
	h.b.Exec(t, loc,
		"UPDATE clientes SET busqueda = NULL",
		"UPDATE productos SET busqueda = NULL",
	)
	s = h.openAt(t, loc, testJobs)
	ctx := ctxT(t)
	for _, tc := range searchCases {
		var want []string
		for _, i := range tc.want {
			want = append(want, clientes[i].ID)
		}
		if got := clienteIDs(t, s, a.ID, tc.q); !slices.Equal(got, want) {
			t.Errorf("after migrating, ListClientes(Query %q) = %v, want %v", tc.q, got, want)
		}
	}
	list, err := s.ListProductos(ctx, a.ID, store.CatalogFilter{Query: "PINON DE ARBOL"})
	if err != nil || !slices.Equal(productoIDs(list), []string{p.ID}) {
		t.Errorf("after migrating, ListProductos = %v, %v", list, err)
	}
}

// insertSpanish inserts spanishClientes for the company and returns them
// as stored, in order.
func insertSpanish(t *testing.T, s store.Store, empresaID string) []store.Cliente {
	t.Helper()
	out := make([]store.Cliente, len(spanishClientes))
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		for i, c := range spanishClientes {
			c.EmpresaID = empresaID
			if err := tx.InsertCliente(ctx, &c); err != nil {
				return err
			}
			out[i] = c
		}
		return nil
	})
	return out
}

// clienteIDs lists the ids of the company's clientes a query finds,
// checking the page's total against them.
func clienteIDs(t *testing.T, s store.Store, empresaID, q string) []string {
	t.Helper()
	p, err := s.ListClientes(ctxT(t), empresaID, store.CatalogFilter{Query: q})
	if err != nil {
		t.Fatalf("ListClientes(Query %q): %v", q, err)
	}
	var ids []string
	for _, c := range p.Items {
		ids = append(ids, c.ID)
	}
	if p.TotalCount != int64(len(ids)) {
		t.Errorf("ListClientes(Query %q).TotalCount = %d, listed %d", q, p.TotalCount, len(ids))
	}
	return ids
}

func productoIDs(p *store.Page[store.Producto]) []string {
	if p == nil {
		return nil
	}
	var ids []string
	for _, x := range p.Items {
		ids = append(ids, x.ID)
	}
	return ids
}
