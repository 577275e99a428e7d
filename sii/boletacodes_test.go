package sii_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/sii/siitest"
)

// TestBoletaArrival checks the arrival check's reading of every
// per-boleta codigo against the rule of the protocol notes' addendum
// (written out here, not derived from the table): DOK, DNK, FAN, TMD,
// TMC, MMD, MMC, AND and ANC mean the SII has the boleta; FAU alone means
// it does not; FNA, EMP and anything else (an unknown code, an empty one)
// tell nothing.
func TestBoletaArrival(t *testing.T) {
	want := map[string]sii.Arrival{
		"DOK": sii.ArrivalReceived, "DNK": sii.ArrivalReceived, "FAN": sii.ArrivalReceived,
		"TMD": sii.ArrivalReceived, "TMC": sii.ArrivalReceived, "MMD": sii.ArrivalReceived,
		"MMC": sii.ArrivalReceived, "AND": sii.ArrivalReceived, "ANC": sii.ArrivalReceived,
		"FAU": sii.ArrivalNotReceived,
		"FNA": sii.ArrivalUnknown, "EMP": sii.ArrivalUnknown, "": sii.ArrivalUnknown, "XYZ": sii.ArrivalUnknown,
		"dok": sii.ArrivalUnknown, "EPR": sii.ArrivalUnknown, "REC": sii.ArrivalUnknown,
	}
	for code, w := range want {
		if got := sii.BoletaArrival(code); got != w {
			t.Errorf("BoletaArrival(%q) = %s, want %s", code, got, w)
		}
	}
	if m := sii.BoletaCodeMeaning("FAU"); m != "Documento no recibido por el SII" {
		t.Errorf("BoletaCodeMeaning(FAU) = %q", m)
	}
	if m := sii.BoletaCodeMeaning("XYZ"); m != "" {
		t.Errorf("BoletaCodeMeaning(XYZ) = %q, want empty", m)
	}
}

// TestBoletaStatusAnswers: the per-boleta status is an answer only as a
// JSON 200 with a codigo. FAU before the envelope's review, DOK after;
// an injected FNA is returned as FNA (unknown to the arrival check); plain
// text, an HTML page, "Error 500" and a JSON without codigo are errors,
// never a status.
func TestBoletaStatusAnswers(t *testing.T) {
	r := newRig(t, siitest.Options{Steps: []string{"SOK"}}, func(c *sii.Config) { c.Retries = -1 })
	ctx := context.Background()
	env, docs := r.envelope(39, 39)
	res, err := r.client.Upload(ctx, dtetest.EmisorRUT, env)
	if err != nil || res.Status != 0 {
		t.Fatalf("upload: %+v, %v", res, err)
	}
	q := query(docs[1], "66666666-6")
	if ds, err := r.client.BoletaStatus(ctx, q); err != nil || ds.Estado != "FAU" || sii.BoletaArrival(ds.Estado) != sii.ArrivalNotReceived {
		t.Errorf("before the review: %+v, %v; want FAU", ds, err)
	}
	for range 2 { // SOK, then EPR
		if _, err := r.client.BoletaEnvelopeStatus(ctx, dtetest.EmisorRUT, res.TrackID); err != nil {
			t.Fatal(err)
		}
	}
	ds, err := r.client.BoletaStatus(ctx, q)
	if err != nil || ds.Estado != "DOK" || sii.BoletaArrival(ds.Estado) != sii.ArrivalReceived {
		t.Errorf("after the review: %+v, %v; want DOK", ds, err)
	}
	if ds != nil && (strings.Contains(string(ds.Raw), "track") || strings.Contains(string(ds.Raw), "err_code")) {
		t.Errorf("the answer %s carries more than codigo and descripcion", ds.Raw)
	}
	// The same boleta with another amount: received, data differ.
	q2 := q
	q2.Monto++
	if ds, err := r.client.BoletaStatus(ctx, q2); err != nil || ds.Estado != "DNK" {
		t.Errorf("another amount: %+v, %v; want DNK", ds, err)
	}

	r.fake.Inject(siitest.BoletaDTE, siitest.Fault{Kind: siitest.FaultCodigo, Code: "FNA"})
	if ds, err := r.client.BoletaStatus(ctx, q); err != nil || ds.Estado != "FNA" || ds.GlosaEstado != "Documento no autorizado" ||
		sii.BoletaArrival(ds.Estado) != sii.ArrivalUnknown {
		t.Errorf("FNA: %+v, %v", ds, err)
	}
	for _, f := range []siitest.Fault{
		{Kind: siitest.FaultPlainText, Code: "falta monto"},
		{Kind: siitest.FaultPlainText, Code: `{"descripcion":"sin codigo"}`},
		{Kind: siitest.FaultHTML200},
		{Kind: siitest.FaultError500},
		{Kind: siitest.FaultHTML503},
	} {
		r.fake.Inject(siitest.BoletaDTE, f)
		if ds, err := r.client.BoletaStatus(ctx, q); err == nil {
			t.Errorf("fault %+v: answered %+v, want an error", f, ds)
		}
	}
}

// TestBoletaRepeatedFolio: a boleta the SII has, sent again in a new
// envelope (even with other data), is refused in that envelope's review as
// detalle_rep_rech RCH with error code 100, "DTE Repetido"; the first
// envelope's boleta stays accepted.
func TestBoletaRepeatedFolio(t *testing.T) {
	r := newRig(t, siitest.Options{Steps: []string{}}, nil)
	ctx := context.Background()
	x, e := r.emit(39)
	first, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: r.creds.Emisor}, r.creds.Cert, x)
	if err != nil {
		t.Fatal(err)
	}
	res1, err := r.client.Upload(ctx, dtetest.EmisorRUT, first)
	if err != nil || res1.Status != 0 {
		t.Fatalf("first upload: %+v, %v", res1, err)
	}
	// A new envelope (another signing time) with the same boleta.
	r.clock.Advance(2 * time.Second)
	second, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: r.creds.Emisor, At: r.clock.Now().Add(time.Minute)}, r.creds.Cert, x)
	if err != nil {
		t.Fatal(err)
	}
	res2, err := r.client.Upload(ctx, dtetest.EmisorRUT, second)
	if err != nil || res2.Status != 0 || res2.TrackID == res1.TrackID {
		t.Fatalf("second upload: %+v, %v", res2, err)
	}
	st, err := r.client.BoletaEnvelopeStatus(ctx, dtetest.EmisorRUT, res2.TrackID)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Issues) != 1 || st.Issues[0].Estado != "RCH" || st.Issues[0].Folio != e.Folio || len(st.Issues[0].Errors) != 1 ||
		st.Issues[0].Errors[0].Codigo != "100" || st.Issues[0].Errors[0].Descripcion != "DTE Repetido" {
		t.Errorf("the repeat's review: %+v, want RCH with error 100 DTE Repetido", st.Issues)
	}
	if o := sii.EnvelopeOutcome(st, 39); o.Estado != dte.EstadoRechazado || !o.Reconcile {
		t.Errorf("the repeat's outcome %+v, want rechazado to reconcile", o)
	}
	st1, err := r.client.BoletaEnvelopeStatus(ctx, dtetest.EmisorRUT, res1.TrackID)
	if err != nil || sii.EnvelopeOutcome(st1, 39).Estado != dte.EstadoAceptado {
		t.Errorf("the first envelope: %+v, %v; want accepted", st1, err)
	}
}

// TestEnvelopeDocument: one document's outcome in an envelope of several.
// A state other than EPR, and an unfinished boleta review, apply to all;
// counts that agree settle every document of the type; the boleta API's
// entries settle the documents they name (an entry without folio the whole
// envelope), and the others once the entries account for every rejection
// and reparo; mixed counts without entries leave the document to its own
// status (ok false).
func TestEnvelopeDocument(t *testing.T) {
	epr := func(counts ...sii.TypeCounts) *sii.EnvelopeStatus {
		return &sii.EnvelopeStatus{Estado: "EPR", Glosa: "Envio Procesado", Counts: counts}
	}
	rch := sii.DocumentIssue{Tipo: 39, Folio: 7, Estado: "RCH", Errors: []sii.DetailError{{Seccion: "DTE", Nivel: "3", Codigo: "101", Descripcion: "folio repetido"}}}
	rpr := sii.DocumentIssue{Tipo: 39, Folio: 8, Estado: "RPR", Errors: []sii.DetailError{{Seccion: "REF", Nivel: "2", Codigo: "750"}}}
	boletas := epr(sii.TypeCounts{Tipo: 39, Informados: 3, Aceptados: 1, Rechazados: 1, Reparos: 1})
	boletas.Issues = []sii.DocumentIssue{rch, rpr}
	short := epr(sii.TypeCounts{Tipo: 39, Informados: 3, Aceptados: 1, Rechazados: 2})
	short.Issues = []sii.DocumentIssue{rch}
	whole := epr(sii.TypeCounts{Tipo: 39, Informados: 2, Rechazados: 2})
	whole.Issues = []sii.DocumentIssue{{Tipo: 39, Estado: "RCH", Descripcion: "envio rechazado"}}
	cases := []struct {
		name   string
		st     *sii.EnvelopeStatus
		tipo   int
		folio  int64
		estado dte.Estado
		code   string
		ok     bool
	}{
		{"in progress", &sii.EnvelopeStatus{Estado: "SOK"}, 33, 1, dte.EstadoProcesando, "SOK", true},
		{"envelope rejected", &sii.EnvelopeStatus{Estado: "RCT"}, 33, 1, dte.EstadoRechazado, "RCT", true},
		{"boleta review pending", &sii.EnvelopeStatus{Estado: "EPR", Pending: true}, 39, 1, dte.EstadoProcesando, "EPR", true},
		{"all accepted", epr(sii.TypeCounts{Tipo: 33, Informados: 3, Aceptados: 3}), 33, 2, dte.EstadoAceptado, "EPR", true},
		{"all reparos", epr(sii.TypeCounts{Tipo: 33, Informados: 2, Reparos: 2}), 33, 2, dte.EstadoConReparos, "EPR", true},
		{"all rejected", epr(sii.TypeCounts{Tipo: 33, Informados: 2, Rechazados: 2}), 33, 2, dte.EstadoRechazado, "EPR", true},
		{"another type's rejection", epr(sii.TypeCounts{Tipo: 33, Informados: 1, Aceptados: 1}, sii.TypeCounts{Tipo: 34, Informados: 1, Rechazados: 1}),
			33, 1, dte.EstadoAceptado, "EPR", true},
		{"mixed, no entries", epr(sii.TypeCounts{Tipo: 33, Informados: 3, Aceptados: 2, Rechazados: 1}), 33, 1, dte.EstadoProcesando, "EPR", false},
		{"no counts of the type yet", epr(sii.TypeCounts{Tipo: 34, Informados: 1, Aceptados: 1}), 33, 1, dte.EstadoProcesando, "EPR", true},
		{"named rejected", boletas, 39, 7, dte.EstadoRechazado, "DTE-3-101", true},
		{"named with reparos", boletas, 39, 8, dte.EstadoConReparos, "REF-2-750", true},
		{"not named, every issue named", boletas, 39, 9, dte.EstadoAceptado, "EPR", true},
		{"not named, an issue not named", short, 39, 9, dte.EstadoProcesando, "EPR", false},
		{"the whole envelope rejected", whole, 39, 3, dte.EstadoRechazado, "RCH", true},
	}
	for _, tc := range cases {
		o, ok := sii.EnvelopeDocument(tc.st, tc.tipo, tc.folio)
		if o.Estado != tc.estado || o.Code != tc.code || ok != tc.ok {
			t.Errorf("%s: %s %q ok %v, want %s %q ok %v", tc.name, o.Estado, o.Code, ok, tc.estado, tc.code, tc.ok)
		}
	}
	if o, _ := sii.EnvelopeDocument(boletas, 39, 7); !o.Reconcile || o.Glosa != "folio repetido" {
		t.Errorf("a named rejection: %+v, want it checked against the document's own status, with its text", o)
	}
}

// TestBoletaReviewDelay: with the fake's ReviewDelay the review of an
// envelope ends no sooner than that long after it arrived, however often
// it is polled: before, its status stays at its last step and the
// per-boleta status reads FAU; after, EPR and DOK. SetReviewDelay changes
// the delay for envelopes received later only.
func TestBoletaReviewDelay(t *testing.T) {
	r := newRig(t, siitest.Options{Steps: []string{"SOK"}, ReviewDelay: 10 * time.Minute}, nil)
	ctx := context.Background()
	env, docs := r.envelope(39)
	res, err := r.client.Upload(ctx, dtetest.EmisorRUT, env)
	if err != nil || res.Status != 0 {
		t.Fatalf("upload: %+v, %v", res, err)
	}
	r.fake.SetReviewDelay(0) // not for the envelope already received
	q := query(docs[0], "66666666-6")
	for i := range 5 {
		st, err := r.client.BoletaEnvelopeStatus(ctx, dtetest.EmisorRUT, res.TrackID)
		if err != nil || st.Estado != "SOK" {
			t.Fatalf("poll %d before the review delay: %+v, %v; want SOK", i+1, st, err)
		}
	}
	if ds, err := r.client.BoletaStatus(ctx, q); err != nil || ds.Estado != "FAU" {
		t.Errorf("the boleta's status during the review: %+v, %v; want FAU", ds, err)
	}
	r.clock.Advance(9*time.Minute + 59*time.Second)
	if st, err := r.client.BoletaEnvelopeStatus(ctx, dtetest.EmisorRUT, res.TrackID); err != nil || st.Estado != "SOK" {
		t.Errorf("a second before the review delay: %+v, %v; want SOK", st, err)
	}
	r.clock.Advance(time.Second)
	if st, err := r.client.BoletaEnvelopeStatus(ctx, dtetest.EmisorRUT, res.TrackID); err != nil || st.Estado != "EPR" {
		t.Errorf("at the review delay: %+v, %v; want EPR", st, err)
	}
	if ds, err := r.client.BoletaStatus(ctx, q); err != nil || ds.Estado != "DOK" {
		t.Errorf("the boleta's status after the review: %+v, %v; want DOK", ds, err)
	}
}

// TestRepeated: the rejection codes that say the SII already has the
// document (DTE-3-100, the boleta API's 100 with or without its section
// and level), and those that do not (101, another section's 100).
func TestRepeated(t *testing.T) {
	t.Parallel()
	for code, want := range map[string]bool{"DTE-3-100": true, "100": true, "3-100": true, "DTE--100": true,
		"DTE-3-101": false, "101": false, "CAF-3-100": false, "": false, "1000": false, "DTE-3-1000": false} {
		if got := sii.Repeated(code); got != want {
			t.Errorf("Repeated(%q) = %v, want %v", code, got, want)
		}
	}
}
