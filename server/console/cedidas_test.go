package console

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
)

// badge is how the documents list marks a ceded factura.
const badge = `<span class="cedida">Cedida</span>`

// listRows maps each document row of a list page to its id.
func listRows(body string) map[string]string {
	rows := map[string]string{}
	for _, m := range regexp.MustCompile(`(?s)<tr><td><a href="/console/documentos/([0-9a-f-]{36})">.*?</tr>`).FindAllStringSubmatch(body, -1) {
		rows[m[1]] = m[0]
	}
	return rows
}

// cede has company c cede its document d to the fixture's factoring
// company through the face, and returns once the fake registry recorded
// it (EOK).
func (f *fixture) cede(t *testing.T, c company, d *api.DTE) {
	t.Helper()
	_, _, err := f.b.Cesiones.Create(context.Background(), c.id, d.ID, api.CesionParams{IdempotencyKey: newUUID(),
		Cesionario:        api.Cesionario{Rut: rutFactoring, RazonSocial: "Factoring Austral S.A.", Direccion: "Av. Apoquindo 3000", Email: "cesiones@factoring.cl"},
		EmailNotificacion: "finanzas@empresa.cl"})
	if err != nil {
		t.Fatalf("ceding %s: %v", d.ID, err)
	}
}

// waitCedida waits until the registry recorded company c's cesión of d.
func (f *fixture) waitCedida(t *testing.T, c company, d *api.DTE) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		l := f.cesiones(t, c, d.ID)
		if l.TotalCount == 1 && l.Data[0].Estado == api.CesionAceptada {
			return
		}
		if l.TotalCount != 1 || l.Data[0].Estado == api.CesionRechazada || time.Now().After(deadline) {
			t.Fatalf("the cesión of %s: %+v", d.ID, l)
		}
	}
}

// The documents list marks each factura the registry recorded ceded with
// a "Cedida" badge, and its "Cedidas" filter keeps only those: A's ceded
// factura has the badge, one not ceded has none, and B's factura of the
// same folio, ceded too, marks no document of A's (the list reads the
// company's own cesiones); B's lists never show A's ceded factura. Each
// document the filter lists is cedido as the document's own page reads
// it (its cesión, not the list's query).
func (f *fixture) testListaCedidas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// A's second and fourth facturas to B, and the fifth of each company:
	// 2.000, 4.000 and 5.000 net + 19% IVA = 2.380, 4.760 and 5.950.
	ceded, kept := f.acceptedTo(t, f.A, rutB, 2380), f.acceptedTo(t, f.A, rutB, 4760)
	twinA, twinB := f.acceptedTo(t, f.A, rutB, 5950), f.acceptedTo(t, f.B, f.A.rut, 5950)
	if twinA.Folio != twinB.Folio {
		t.Fatalf("A's and B's fifth facturas have folios %d and %d: the fixture changed", twinA.Folio, twinB.Folio)
	}
	f.cede(t, f.A, ceded)
	f.cede(t, f.B, twinB)
	f.waitCedida(t, f.A, ceded)
	f.waitCedida(t, f.B, twinB)

	a := f.session(t, f.A.readKey)
	row := func(b *browser, what, query string, d *api.DTE) string {
		t.Helper()
		p := b.get(Prefix + "documentos?" + query)
		wantStatus(t, what, p, http.StatusOK)
		r, ok := listRows(p.body)[d.ID]
		if !ok {
			t.Fatalf("%s: no row of %s: %s", what, d.ID, p.body)
		}
		return r
	}
	if r := row(a, "A's ceded factura", fmt.Sprintf("tipo=33&folio=%d", ceded.Folio), ceded); !strings.Contains(r, "Aceptado<br>"+badge+"</td>") {
		t.Errorf("A's ceded factura's row has no badge: %s", r)
	}
	for what, d := range map[string]*api.DTE{"A's factura not ceded": kept, "A's factura of B's ceded folio": twinA} {
		if r := row(a, what, fmt.Sprintf("tipo=33&folio=%d", d.Folio), d); strings.Contains(r, "Cedida") {
			t.Errorf("%s has the badge: %s", what, r)
		}
	}

	// The filter: every row ceded, A's ceded factura among them, the
	// others not; the count is the rows'.
	p := a.get(Prefix + "documentos?cedidas=si")
	wantStatus(t, "A's cedidas", p, http.StatusOK)
	rows := listRows(p.body)
	if _, ok := rows[ceded.ID]; !ok {
		t.Errorf("A's cedidas lack the ceded factura: %s", p.body)
	}
	for _, d := range []*api.DTE{kept, twinA, twinB} {
		if _, ok := rows[d.ID]; ok {
			t.Errorf("A's cedidas list %s", d.ID)
		}
	}
	if !strings.Contains(p.body, fmt.Sprintf("<p>%d documentos.</p>", len(rows))) || !strings.Contains(p.body, `name="cedidas" value="si" checked>`) {
		t.Errorf("A's cedidas: %d rows, count or checkbox wrong: %s", len(rows), p.body)
	}
	for id, r := range rows {
		if !strings.Contains(r, badge) {
			t.Errorf("a row of the cedidas has no badge: %s", r)
		}
		if d, err := f.b.Documents.Get(ctx, f.A.id, id, api.DTEGetParams{}); err != nil || !d.Cedido {
			t.Errorf("A's cedidas list %s, whose page says cedido %v (%v)", id, d != nil && d.Cedido, err)
		}
	}
	// With another filter: the factura not ceded's folio lists nothing.
	if p = a.get(Prefix + fmt.Sprintf("documentos?cedidas=si&tipo=33&folio=%d", kept.Folio)); !strings.Contains(p.body, "<p>0 documentos.</p>") {
		t.Errorf("the cedidas of a folio not ceded: %s", p.body)
	}
	// Only "si" or nothing: anything else is refused naming the field.
	p = a.get(Prefix + "documentos?cedidas=todas")
	wantStatus(t, "cedidas=todas", p, http.StatusBadRequest)
	if !strings.Contains(p.body, "cedidas:") {
		t.Errorf("the refused filter: %s", p.body)
	}

	// Tenancy: B's lists show B's own ceded factura, never A's.
	b := f.session(t, f.B.readKey)
	if r := row(b, "B's ceded factura", fmt.Sprintf("tipo=33&folio=%d", twinB.Folio), twinB); !strings.Contains(r, badge) {
		t.Errorf("B's ceded factura's row has no badge: %s", r)
	}
	for _, q := range []string{"", "cedidas=si", fmt.Sprintf("tipo=33&folio=%d", ceded.Folio), fmt.Sprintf("cedidas=si&folio=%d", ceded.Folio)} {
		p := b.get(Prefix + "documentos?" + q)
		wantStatus(t, "B's list "+q, p, http.StatusOK)
		if strings.Contains(p.body, ceded.ID) {
			t.Errorf("B's list %q shows A's ceded factura: %s", q, p.body)
		}
		for id := range listRows(p.body) {
			if _, err := f.b.Documents.Get(ctx, f.B.id, id, api.DTEGetParams{}); err != nil {
				t.Errorf("B's list %q shows %s, not B's: %v", q, id, err)
			}
		}
	}
}

// The next page's link keeps the filter.
func TestDocumentoFiltroCedidas(t *testing.T) {
	t.Parallel()
	if got := (documentoFiltro{Cedidas: "si", Tipo: "33"}).query().Encode(); got != "cedidas=si&tipo=33" {
		t.Errorf("query = %q", got)
	}
}
