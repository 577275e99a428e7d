package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
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

const apiBase = "/api/v1/billing"

// submitting is a fixture whose service submits to fakes (one per
// environment: certificación's first) with quick schedules, its runner
// started.
func submitting(t *testing.T, st store.Store, cfg billing.Config, fakes ...*siitest.Fake) *fixture {
	t.Helper()
	cfg.Submission = &billing.SubmitConfig{
		Endpoints: func(env sii.Environment) sii.Endpoints {
			if env == sii.Produccion && len(fakes) > 1 {
				return fakes[1].Endpoints()
			}
			return fakes[0].Endpoints()
		},
		UploadBackoff: []time.Duration{0}, PollBackoff: []time.Duration{0}, Timeout: 5 * time.Second,
		BoletaCheckDelay: 2 * time.Second, BoletaSafetyDelay: 2 * time.Second}
	f := newFixtureWith(t, st, RateLimit{PerSecond: -1}, cfg)
	if err := f.b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return f
}

// newFake starts a fake SII that lets any certificate send for any
// company and reviews an envelope in two quick steps.
func newFake(t *testing.T) *siitest.Fake {
	t.Helper()
	fake := siitest.New(siitest.Options{AnySigner: true, Steps: []string{"SOK", "FOK"}, StepEvery: 100 * time.Millisecond}).Start()
	t.Cleanup(fake.Close)
	return fake
}

// boletaReq is a held boleta of n units.
func boletaReq(n int) map[string]any {
	return map[string]any{"tipo_dte": 39, "receptor": map[string]any{"rut": "66666666-6", "razon_social": "Consumidor final"},
		"detalle": []map[string]any{{"nombre": "Empanada de pino", "cantidad": n, "precio": 2500}}, "ind_servicio": 3, "auto_send": false}
}

// waitEnvio polls GET /envios/{id} until the envelope is procesado.
func (f *fixture) waitEnvio(c company, id string) api.Envio {
	f.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := f.do("GET", apiBase+"/envios/"+id, nil, c.readHdr...)
		want(f.t, r, 200)
		var e api.Envio
		r.JSON(f.t, &e)
		if e.Estado == api.EnvioProcesado {
			return e
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("envelope %s still %s after 30 s: %s", id, e.Estado, r.Body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// detailFields lists the fields of an error answer's details.
func detailFields(t testing.TB, r *response) []string {
	t.Helper()
	var env struct {
		Details []struct {
			Field string `json:"field"`
			Code  string `json:"code"`
		} `json:"details"`
	}
	r.JSON(t, &env)
	var out []string
	for _, d := range env.Details {
		out = append(out, d.Field+" "+d.Code)
	}
	return out
}

// TestEnvios, on both backends: documents emitted with auto_send false
// stay firmado until sent. Three facturas go in one EnvioDTE (POST
// /envios) and two boletas in one EnvioBOLETA; a fourth factura alone
// (POST /dte/{id}/enviar). The fake SII files each envelope once with all
// its documents, and GET /envios/{id} shows the track id and each
// document's result from the review (the rejected factura found through
// its own status, the boleta with reparos named by the review). Every
// request the contract's rules refuse is refused: mixed kinds, unknown,
// repeated or malformed ids, another company's documents, a document
// already sent or on its way (409), a key reused with another body (422);
// a replay answers the first bytes.
func TestEnvios(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, open func(t *testing.T) store.Store) {
		fake := newFake(t)
		f := submitting(t, open(t), billing.Config{}, fake)
		c := f.A
		// Factura folio 2 is rejected by the review, boleta folio 2
		// accepted with reparos.
		fake.Script(c.rut, 33, 2, siitest.Outcome{Result: siitest.Rejected, Detail: "DTE-3-101"})
		fake.Script(c.rut, 39, 2, siitest.Outcome{Result: siitest.Reparo, Detail: "REF-2-750"})
		var facturas, boletas []string
		for i := range 4 {
			id, _ := f.emit(c, factura(i+1))
			facturas = append(facturas, id)
		}
		for i := range 2 {
			id, _ := f.emit(c, boletaReq(i+1))
			boletas = append(boletas, id)
		}
		time.Sleep(300 * time.Millisecond)
		r := f.do("GET", apiBase+"/dte/"+facturas[0], nil, c.readHdr...)
		if !bytes.Contains(r.Body, []byte(`"estado":"firmado"`)) || bytes.Contains(r.Body, []byte(`envio_id`)) {
			t.Fatalf("a held document before it is sent: %s", r.Body)
		}

		post := func(body any, key string, hdr []string) *response {
			t.Helper()
			return f.do("POST", apiBase+"/envios", body, append(slices.Clone(hdr), "Idempotency-Key", key)...)
		}
		ids := func(v ...string) map[string]any { return map[string]any{"dte_ids": v} }
		// Refusals: nothing is sent.
		r = f.do("POST", apiBase+"/envios", ids(facturas[0]), c.writeHdr...)
		want(t, r, 400, fault.Validation)
		if !bytes.Contains(r.Body, []byte("Idempotency-Key")) {
			t.Errorf("no key: %s", r.Body)
		}
		want(t, post(ids(facturas[0]), newUUID(), c.readHdr), 403, fault.WriteNotAllowed)
		const unknown = "0190a0a0-0000-7000-8000-000000000000"
		for _, tc := range []struct {
			name string
			body any
			want []string
		}{
			{"a boleta beside facturas", ids(facturas[0], boletas[0], facturas[1]), []string{"dte_ids[1] TIPO_MISMATCH"}},
			{"an unknown id", ids(facturas[0], unknown), []string{"dte_ids[1] NOT_FOUND"}},
			{"an id twice", ids(facturas[0], facturas[1], strings.ToUpper(facturas[0])), []string{"dte_ids[2] DUPLICATE"}},
			{"not a UUID", ids("folio-1"), []string{"dte_ids[0] INVALID_FORMAT"}},
			{"no ids", ids(), []string{"dte_ids REQUIRED"}},
			{"an unknown field", map[string]any{"dte_ids": []string{facturas[0]}, "track_id": "1"}, []string{"track_id UNKNOWN_FIELD"}},
			{"a number for an id", map[string]any{"dte_ids": []int{1}}, []string{"dte_ids INVALID_TYPE"}},
		} {
			r := post(tc.body, newUUID(), c.writeHdr)
			want(t, r, 400, fault.Validation)
			if got := detailFields(t, r); !slices.Equal(got, tc.want) {
				t.Errorf("%s: details %v, want %v", tc.name, got, tc.want)
			}
		}
		// Another company's documents are not its own.
		r = post(ids(facturas[0]), newUUID(), f.B.writeHdr)
		want(t, r, 400, fault.Validation)
		if got := detailFields(t, r); !slices.Equal(got, []string{"dte_ids[0] NOT_FOUND"}) {
			t.Errorf("another company's document: details %v", got)
		}
		want(t, f.do("POST", apiBase+"/dte/"+facturas[0]+"/enviar", nil, append(slices.Clone(f.B.writeHdr), "Idempotency-Key", newUUID())...), 404, fault.NotFound)
		if n := len(fake.Requests(siitest.Upload)) + len(fake.Requests(siitest.BoletaUpload)); n != 0 {
			t.Fatalf("%d uploads after refused requests", n)
		}

		// The envelope of three facturas.
		key := newUUID()
		r = post(ids(facturas[:3]...), key, c.writeHdr)
		want(t, r, 201)
		first := r.Body
		var env api.Envio
		r.JSON(t, &env)
		if env.Tipo != "EnvioDTE" || env.Ambiente != "certificacion" || env.Estado != api.EnvioPendiente || env.TrackID != nil || len(env.Documentos) != 3 {
			t.Fatalf("the new envelope: %s", first)
		}
		for i, d := range env.Documentos {
			if d.DTEID != facturas[i] || d.Estado != "enviando" || d.TipoDTE != 33 || d.Folio != int64(i+1) {
				t.Errorf("document %d of the envelope: %+v, want factura %d enviando", i, d, i+1)
			}
		}
		// The same key and body: the first answer's bytes; another body or
		// another operation: 422.
		r = post(ids(facturas[:3]...), key, c.writeHdr)
		want(t, r, 201)
		if !bytes.Equal(r.Body, first) || r.Header.Get("X-Idempotency-Replay") != "true" {
			t.Errorf("replay: %s (replay header %q), want the first answer's bytes %s", r.Body, r.Header.Get("X-Idempotency-Replay"), first)
		}
		want(t, post(ids(facturas[2], facturas[1], facturas[0]), key, c.writeHdr), 422, fault.IdempotencyMismatch)
		want(t, f.do("POST", apiBase+"/dte", factura(9), append(slices.Clone(c.writeHdr), "Idempotency-Key", key)...), 422, fault.IdempotencyMismatch)
		want(t, f.do("POST", apiBase+"/dte/"+facturas[3]+"/enviar", nil, append(slices.Clone(c.writeHdr), "Idempotency-Key", key)...), 422, fault.IdempotencyMismatch)
		// A document already on its way: 409, through either route.
		r = post(ids(facturas[3], facturas[1]), newUUID(), c.writeHdr)
		want(t, r, 409, fault.InvalidState)
		if got := detailFields(t, r); !slices.Equal(got, []string{"dte_ids[1] INVALID_STATE"}) {
			t.Errorf("a document on its way: details %v", got)
		}
		want(t, f.do("POST", apiBase+"/dte/"+facturas[0]+"/enviar", nil, append(slices.Clone(c.writeHdr), "Idempotency-Key", newUUID())...), 409, fault.InvalidState)

		// The boletas' envelope, and the fourth factura alone (with an
		// empty object for a body).
		r = post(ids(boletas...), newUUID(), c.writeHdr)
		want(t, r, 201)
		var benv api.Envio
		r.JSON(t, &benv)
		if benv.Tipo != "EnvioBOLETA" || len(benv.Documentos) != 2 {
			t.Fatalf("the boletas' envelope: %s", r.Body)
		}
		r = f.do("POST", apiBase+"/dte/"+facturas[3]+"/enviar", map[string]any{}, append(slices.Clone(c.writeHdr), "Idempotency-Key", newUUID())...)
		want(t, r, 201)
		var alone api.Envio
		r.JSON(t, &alone)
		if alone.Tipo != "EnvioDTE" || len(alone.Documentos) != 1 || alone.Documentos[0].DTEID != facturas[3] {
			t.Fatalf("the factura alone: %s", r.Body)
		}

		// Each reaches its result.
		got := f.waitEnvio(c, env.ID)
		if got.TrackID == nil || !regexp.MustCompile(`^[0-9]{10}$`).MatchString(*got.TrackID) || got.Intentos != 1 {
			t.Errorf("the facturas' envelope: %+v, want its 10-digit track id after one upload", got)
		}
		wantEstados := []string{"aceptado", "rechazado", "aceptado"}
		for i, d := range got.Documentos {
			if string(d.Estado) != wantEstados[i] || d.CodigoSII == nil {
				t.Errorf("factura %d: %s codigo %v glosa %v, want %s", i+1, d.Estado, d.CodigoSII, d.GlosaSII, wantEstados[i])
			}
		}
		gotB := f.waitEnvio(c, benv.ID)
		if gotB.TrackID == nil || gotB.Documentos[0].Estado != "aceptado" || gotB.Documentos[1].Estado != "con_reparos" ||
			gotB.Documentos[1].CodigoSII == nil || *gotB.Documentos[1].CodigoSII != "REF-2-750" {
			t.Errorf("the boletas' envelope: %+v, want the first aceptado and the second con_reparos REF-2-750", gotB)
		}
		if gotA := f.waitEnvio(c, alone.ID); gotA.Documentos[0].Estado != "aceptado" {
			t.Errorf("the factura alone: %+v", gotA)
		}
		// Each document's own tracking names its envelope and track id.
		for i, id := range facturas[:3] {
			r := f.do("GET", apiBase+"/dte/"+id, nil, c.readHdr...)
			var d api.DTE
			r.JSON(t, &d)
			if d.Tracking == nil || d.Tracking.EnvioID == nil || *d.Tracking.EnvioID != env.ID || d.Tracking.TrackID == nil ||
				*d.Tracking.TrackID != *got.TrackID || string(d.Estado) != wantEstados[i] {
				t.Errorf("factura %d: %s tracking %+v, want %s in envelope %s", i+1, d.Estado, d.Tracking, wantEstados[i], env.ID)
			}
		}
		// The fake filed each envelope once, with all its documents.
		var shapes []string
		for _, e := range fake.Envelopes() {
			var docs []string
			for _, d := range e.Docs {
				docs = append(docs, fmt.Sprintf("%d/%d", d.Tipo, d.Folio))
			}
			shapes = append(shapes, strings.Join(docs, ","))
		}
		slices.Sort(shapes)
		if want := []string{"33/1,33/2,33/3", "33/4", "39/1,39/2"}; !slices.Equal(shapes, want) {
			t.Errorf("the fake filed envelopes %v, want %v", shapes, want)
		}

		// The list: newest first, paged; A's alone.
		r = f.do("GET", apiBase+"/envios?limit=2", nil, c.readHdr...)
		want(t, r, 200)
		var page api.Page[api.Envio]
		r.JSON(t, &page)
		if len(page.Data) != 2 || page.TotalCount != 3 || page.NextCursor == nil || page.Data[0].ID != alone.ID {
			t.Fatalf("the first page: %s", r.Body)
		}
		r = f.do("GET", apiBase+"/envios?limit=2&cursor="+*page.NextCursor, nil, c.readHdr...)
		want(t, r, 200)
		r.JSON(t, &page)
		if len(page.Data) != 1 || page.NextCursor != nil || page.Data[0].ID != env.ID || len(page.Data[0].Documentos) != 3 {
			t.Errorf("the second page: %s", r.Body)
		}
		want(t, f.do("GET", apiBase+"/envios?folio=1", nil, c.readHdr...), 400, fault.Validation)
		r = f.do("GET", apiBase+"/envios", nil, f.B.readHdr...)
		want(t, r, 200)
		r.JSON(t, &page)
		if len(page.Data) != 0 || page.TotalCount != 0 {
			t.Errorf("company B lists %s", r.Body)
		}
		want(t, f.do("GET", apiBase+"/envios/"+env.ID, nil, f.B.readHdr...), 404, fault.NotFound)
	})
}

// TestEnviosKeepTheirEnvironment: a document held firmado in
// certificación and sent after the company moved to produccion goes to the
// certification SII, with the Caratula of its own environment
// (resolution 0); a production document goes to the production SII; one
// envelope never carries both (400 AMBIENTE_MISMATCH).
func TestEnviosKeepTheirEnvironment(t *testing.T) {
	t.Parallel()
	prod, err := caftest.NewAuthority(nil, 300)
	if err != nil {
		t.Fatal(err)
	}
	trust := billingtest.Creds(t).TrustedKeys.With(300, prod.PublicKey())
	certSII, prodSII := newFake(t), newFake(t)
	f := submitting(t, billingtest.Backends()[0].NewStore(t), billing.Config{TrustedKeys: trust}, certSII, prodSII)
	c := f.A
	held, _ := f.emit(c, factura(1))
	want(t, f.do("PUT", apiBase+"/empresa", map[string]any{"ambiente": "produccion", "numero_resolucion": 102, "fecha_resolucion": "2026-11-20"}, c.writeHdr...), 200)
	file, err := prod.Issue(caftest.IssueRequest{RutEmisor: c.rut, RazonSocial: "Empresa A", Tipo: 33, Desde: 7001, Hasta: 7100,
		FechaAutorizacion: dte.ChileTime(time.Now()).AddDate(0, 0, -1)})
	if err != nil {
		t.Fatal(err)
	}
	want(t, f.do("POST", apiBase+"/caf", map[string]any{"tipo_dte": 33, "caf_xml": base64.StdEncoding.EncodeToString(file)}, c.writeHdr...), 201)
	produced, _ := f.emit(c, factura(2))

	r := f.do("POST", apiBase+"/envios", map[string]any{"dte_ids": []string{held, produced}}, append(slices.Clone(c.writeHdr), "Idempotency-Key", newUUID())...)
	want(t, r, 400, fault.Validation)
	if got := detailFields(t, r); !slices.Equal(got, []string{"dte_ids[1] AMBIENTE_MISMATCH"}) {
		t.Errorf("both environments in one envelope: details %v", got)
	}
	for _, tc := range []struct {
		id, ambiente string
		folio        int64
		fake, other  *siitest.Fake
		resolution   string
	}{
		{held, "certificacion", 1, certSII, prodSII, "<NroResol>0</NroResol>"},
		{produced, "produccion", 7001, prodSII, certSII, "<NroResol>102</NroResol>"},
	} {
		r := f.do("POST", apiBase+"/dte/"+tc.id+"/enviar", nil, append(slices.Clone(c.writeHdr), "Idempotency-Key", newUUID())...)
		want(t, r, 201)
		var e api.Envio
		r.JSON(t, &e)
		if e.Ambiente != tc.ambiente {
			t.Errorf("folio %d: envelope ambiente %s, want %s", tc.folio, e.Ambiente, tc.ambiente)
		}
		if got := f.waitEnvio(c, e.ID); got.Documentos[0].Estado != "aceptado" {
			t.Errorf("folio %d: %+v", tc.folio, got)
		}
		filed := func(fake *siitest.Fake) (n int, caratula bool) {
			for _, env := range fake.Envelopes() {
				for _, d := range env.Docs {
					if d.Folio == tc.folio {
						n++
						caratula = bytes.Contains(env.Raw, []byte(tc.resolution))
					}
				}
			}
			return n, caratula
		}
		if n, ok := filed(tc.fake); n != 1 || !ok {
			t.Errorf("folio %d (%s): filed %d times by its environment's SII, Caratula with %s: %v", tc.folio, tc.ambiente, n, tc.resolution, ok)
		}
		if n, _ := filed(tc.other); n != 0 {
			t.Errorf("folio %d (%s) reached the other environment's SII", tc.folio, tc.ambiente)
		}
	}
}

// TestEnvioKeysOfEarlierVersions: an envelope request's Idempotency-Key
// recorded by a version before billing named its operations (the
// fingerprint hashed the route that reached it, written out here by hand)
// still replays its first answer through each route, which passes billing
// its own route; on the other route, or with other documents, the key is
// a mismatch. No document exists: a replay answers before any is read.
func TestEnvioKeysOfEarlierVersions(t *testing.T) {
	t.Parallel()
	f := newFixture(t, billingtest.Backends()[0].NewStore(t), RateLimit{PerSecond: -1})
	ctx := context.Background()
	c := f.A
	emp, err := f.st.GetEmpresa(ctx, c.id)
	if err != nil {
		t.Fatal(err)
	}
	const a, b = "0190f1a2-0000-7000-8000-00000000000a", "0190f1a2-0000-7000-8000-00000000000b"
	record := func(fingerprint, envio string) string {
		t.Helper()
		key := newUUID()
		at := time.Now().UTC().Truncate(time.Microsecond)
		body, _ := json.Marshal(api.Envio{ID: envio, Tipo: "EnvioDTE", Ambiente: emp.Ambiente, Estado: api.EnvioPendiente,
			Documentos: []api.EnvioDocumento{}, CreatedAt: at, UpdatedAt: at})
		hash := sha256.Sum256([]byte(fingerprint))
		rec := &store.Idempotency{EmpresaID: c.id, Ambiente: emp.Ambiente, Key: key, BodyHash: hash[:],
			State: store.IdempotencyDone, ResponseStatus: 201, ResponseBody: body, CreatedAt: at, UpdatedAt: at}
		if err := f.st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertIdempotency(ctx, rec) }); err != nil {
			t.Fatal(err)
		}
		return key
	}
	envios := func(key string, ids ...string) *response {
		return f.do("POST", apiBase+"/envios", map[string]any{"dte_ids": ids}, append(slices.Clone(c.writeHdr), "Idempotency-Key", key)...)
	}
	enviar := func(key, id string) *response {
		return f.do("POST", apiBase+"/dte/"+id+"/enviar", nil, append(slices.Clone(c.writeHdr), "Idempotency-Key", key)...)
	}
	replayed := func(r *response, envio string) {
		t.Helper()
		want(t, r, 201)
		var e api.Envio
		r.JSON(t, &e)
		if e.ID != envio || r.Header.Get("X-Idempotency-Replay") != "true" {
			t.Errorf("got envelope %s, replay %q; want %s replayed: %s", e.ID, r.Header.Get("X-Idempotency-Replay"), envio, r.Body)
		}
	}
	const e1, e2 = "0190f1a2-0000-7000-8000-0000000000e1", "0190f1a2-0000-7000-8000-0000000000e2"
	old := record("POST /api/v1/billing/envios\n"+a+"\n"+b, e1)
	replayed(envios(old, a, b), e1)
	want(t, envios(old, b, a), 422, fault.IdempotencyMismatch)
	want(t, enviar(old, a), 422, fault.IdempotencyMismatch)
	// The path's id in capitals is the same document, so the same route.
	old = record("POST /api/v1/billing/dte/"+a+"/enviar\n"+a, e2)
	replayed(enviar(old, strings.ToUpper(a)), e2)
	want(t, enviar(old, b), 422, fault.IdempotencyMismatch)
	want(t, envios(old, a), 422, fault.IdempotencyMismatch)
}
