package server

import (
	"encoding/base64"
	"slices"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing"
	"github.com/dtekit/dtekit/billing/billingtest"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/caf/caftest"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/sii/siitest"
	"github.com/dtekit/dtekit/store"
)

// TestRecibidosKeepTheirEnvironment, on both backends: A receives two
// facturas (folios 1 and 2) from supplier B while both work in
// certificación, then both move to producción, where B's production CAF
// numbers from 1 again and B sends A its production folio 1. The two
// folios 1 are two records (deduplication is per environment), each
// showing its environment; the certificación ones keep theirs after the
// move. The lists show the current environment unless asked otherwise
// (ambiente=certificacion|produccion|todos; any other value is a 400
// naming it), for documents and files alike. The refresh takes each
// document's window from its own environment's registry (the two fakes
// received folio 1 on different days), and an acceptance goes to the
// registry of the document's environment only. A certificación document
// packed again in a new file after the move is the same record (its
// stamp says certificación), and the file is of certificación. B never
// sees A's records.
func TestRecibidosKeepTheirEnvironment(t *testing.T) {
	t.Parallel()
	prodAuth, err := caftest.NewAuthority(nil, 300)
	if err != nil {
		t.Fatal(err)
	}
	trust := billingtest.Creds(t).TrustedKeys.With(300, prodAuth.PublicKey())
	backends(t, func(t *testing.T, open func(t *testing.T) store.Store) {
		certSII, prodSII := newFake(t), newFake(t)
		f := submitting(t, open(t), billing.Config{TrustedKeys: trust, Mail: billing.MailConfig{Backoff: []time.Duration{time.Hour}}},
			certSII, prodSII)
		a, b := f.A, f.B

		// In certificación.
		cert1, _ := f.emit(b, facturaTo(a.rut, 1))
		cert2, _ := f.emit(b, facturaTo(a.rut, 2))
		certFile := f.envioFrom(b, a.rut, cert1, cert2)
		r := f.postXML(apiBase+"/recibidos", certFile, a.writeHdr...)
		want(t, r, 201)
		var certRec api.Recepcion
		r.JSON(t, &certRec)
		if certRec.Ambiente != "certificacion" || len(certRec.Recibidos) != 2 {
			t.Fatalf("the certificación file: %s", r.Body)
		}

		// The move, and B's production folio 1.
		for _, c := range []company{a, b} {
			want(t, f.do("PUT", apiBase+"/empresa", map[string]any{"ambiente": "produccion", "numero_resolucion": 102,
				"fecha_resolucion": "2026-11-20"}, c.writeHdr...), 200)
		}
		caf, err := prodAuth.Issue(caftest.IssueRequest{RutEmisor: b.rut, RazonSocial: "Empresa B de Prueba", Tipo: 33, Desde: 1, Hasta: 100,
			FechaAutorizacion: dte.ChileTime(time.Now()).AddDate(0, 0, -1)})
		if err != nil {
			t.Fatal(err)
		}
		want(t, f.do("POST", apiBase+"/caf", map[string]any{"tipo_dte": 33, "caf_xml": base64.StdEncoding.EncodeToString(caf)}, b.writeHdr...), 201)
		prod1, _ := f.emit(b, facturaTo(a.rut, 3))
		r = f.postXML(apiBase+"/recibidos", f.envioFrom(b, a.rut, prod1), a.writeHdr...)
		want(t, r, 201)
		var prodRec api.Recepcion
		r.JSON(t, &prodRec)
		if prodRec.Ambiente != "produccion" || len(prodRec.Recibidos) != 1 || slices.Contains(certRec.Recibidos, prodRec.Recibidos[0]) {
			t.Fatalf("the production file: %s (the certificación documents are %v)", r.Body, certRec.Recibidos)
		}
		get := func(id string) api.Recibido {
			t.Helper()
			r := f.do("GET", apiBase+"/recibidos/"+id, nil, a.readHdr...)
			want(t, r, 200)
			var out api.Recibido
			r.JSON(t, &out)
			return out
		}
		certDoc, prodDoc := get(certRec.Recibidos[0]), get(prodRec.Recibidos[0])
		if certDoc.Folio != 1 || certDoc.Ambiente != "certificacion" || prodDoc.Folio != 1 || prodDoc.Ambiente != "produccion" ||
			certDoc.RutEmisor != prodDoc.RutEmisor {
			t.Fatalf("the two folios 1 of B: certificación %+v, producción %+v", certDoc, prodDoc)
		}

		// A certificación document packed again after the move: the same
		// record, in a file of certificación.
		r = f.postXML(apiBase+"/recibidos", f.envioFrom(b, a.rut, cert2), a.writeHdr...)
		want(t, r, 201)
		var again api.Recepcion
		r.JSON(t, &again)
		if again.Ambiente != "certificacion" || !slices.Equal(again.Recibidos, certRec.Recibidos[1:]) {
			t.Errorf("folio 2 of certificación again, after the move: %s, want the record %s in a certificación file", r.Body, certRec.Recibidos[1])
		}

		// The lists.
		recibidos := func(c company, query string) []string {
			t.Helper()
			r := f.do("GET", apiBase+"/recibidos"+query, nil, c.readHdr...)
			want(t, r, 200)
			var p api.Page[api.Recibido]
			r.JSON(t, &p)
			var ids []string
			for _, d := range p.Data {
				ids = append(ids, d.ID+" "+d.Ambiente)
			}
			if p.TotalCount != int64(len(ids)) {
				t.Errorf("GET /recibidos%s: total %d for %d items", query, p.TotalCount, len(ids))
			}
			return ids
		}
		recepciones := func(c company, query string) []string {
			t.Helper()
			r := f.do("GET", apiBase+"/recepciones"+query, nil, c.readHdr...)
			want(t, r, 200)
			var p api.Page[api.Recepcion]
			r.JSON(t, &p)
			var ids []string
			for _, d := range p.Data {
				ids = append(ids, d.ID+" "+d.Ambiente)
			}
			return ids
		}
		c1, c2, p1 := certRec.Recibidos[0]+" certificacion", certRec.Recibidos[1]+" certificacion", prodDoc.ID+" produccion"
		for _, tc := range []struct {
			query string
			want  []string
		}{
			{"", []string{p1}},
			{"?ambiente=produccion", []string{p1}},
			{"?ambiente=certificacion", []string{c2, c1}},
			{"?ambiente=todos", []string{p1, c2, c1}},
			{"?ambiente=todos&estado=pendiente", []string{p1, c2, c1}},
		} {
			if got := recibidos(a, tc.query); !slices.Equal(got, tc.want) {
				t.Errorf("GET /recibidos%s = %v, want %v", tc.query, got, tc.want)
			}
		}
		fc, fp, fa := certRec.ID+" certificacion", prodRec.ID+" produccion", again.ID+" certificacion"
		for _, tc := range []struct {
			query string
			want  []string
		}{
			{"", []string{fp}},
			{"?ambiente=certificacion", []string{fa, fc}},
			{"?ambiente=todos", []string{fa, fp, fc}},
		} {
			if got := recepciones(a, tc.query); !slices.Equal(got, tc.want) {
				t.Errorf("GET /recepciones%s = %v, want %v", tc.query, got, tc.want)
			}
		}
		for _, path := range []string{"/recibidos", "/recepciones"} {
			r := f.do("GET", apiBase+path+"?ambiente=pruebas", nil, a.readHdr...)
			want(t, r, 400, fault.Validation)
			if got := detailFields(t, r); !slices.Equal(got, []string{"ambiente INVALID_VALUE"}) {
				t.Errorf("GET %s?ambiente=pruebas: details %v", path, got)
			}
		}
		// B, in either environment, sees none of A's.
		if got := recibidos(b, "?ambiente=todos"); len(got) != 0 {
			t.Errorf("B lists A's received documents: %v", got)
		}
		if got := recepciones(b, "?ambiente=todos"); len(got) != 0 {
			t.Errorf("B lists A's received files: %v", got)
		}
		want(t, f.do("GET", apiBase+"/recibidos/"+certDoc.ID, nil, b.readHdr...), 404, fault.NotFound)

		// Each registry knows its own folio 1, received on another day.
		certReceived := time.Now().Add(-(3*24 + 1) * time.Hour).Truncate(time.Second)
		prodReceived := time.Now().Add(-(1*24 + 1) * time.Hour).Truncate(time.Second)
		for _, s := range []struct {
			fake *siitest.Fake
			at   time.Time
		}{{certSII, certReceived}, {prodSII, prodReceived}} {
			s.fake.SeedRCV(siitest.RCVSeed{RutEmisor: b.rut, RutReceptor: a.rut, Tipo: 33, Folio: 1, Received: s.at, FmaPago: 2})
		}
		want(t, f.do("POST", apiBase+"/recibidos/actualizar", nil, a.writeHdr...), 200)
		for _, tc := range []struct {
			id       string
			received time.Time
		}{{certDoc.ID, certReceived}, {prodDoc.ID, prodReceived}} {
			d := get(tc.id)
			if d.FechaRecepcionSII == nil || !d.FechaRecepcionSII.Equal(tc.received) {
				t.Errorf("%s folio 1 after the refresh: received by the SII %v, want %v (its own registry's)", d.Ambiente, d.FechaRecepcionSII, tc.received)
			}
		}

		// An acceptance goes to the registry of the document's environment.
		accepted := func(fake *siitest.Fake) bool {
			for _, e := range fake.RCVHistory(b.rut, 33, 1) {
				if e.Action == sii.RCVAccept {
					return true
				}
			}
			return false
		}
		want(t, f.do("POST", apiBase+"/recibidos/"+certDoc.ID+"/aceptar", nil, a.writeHdr...), 200)
		if !accepted(certSII) || accepted(prodSII) {
			t.Errorf("accepting certificación folio 1 after the move: registered in certificación %v, in producción %v; want only certificación",
				accepted(certSII), accepted(prodSII))
		}
		if d := get(prodDoc.ID); d.Estado != "pendiente" {
			t.Errorf("accepting the certificación folio 1 changed the production one: %+v", d)
		}
		want(t, f.do("POST", apiBase+"/recibidos/"+prodDoc.ID+"/aceptar", nil, a.writeHdr...), 200)
		if !accepted(prodSII) {
			t.Error("accepting production folio 1: not registered in producción")
		}
	})
}
