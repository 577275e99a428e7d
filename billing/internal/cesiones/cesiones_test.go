package cesiones

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/billing/internal/outbox"
	"github.com/dtekit/dtekit/cesion"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/internal/pgtest"
	"github.com/dtekit/dtekit/signer"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/backendtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// cesionario is the factoring company of these tests.
var cesionario = api.Cesionario{Rut: "96790240-3", RazonSocial: "Factoring Austral S.A.", Direccion: "Av. Apoquindo 3000",
	Email: "cesiones@factoring.cl"}

// signed is one factura of the test authority, emitted once for the
// package (a certificate and a CAF take seconds to make).
var signed = sync.OnceValues(func() (*fixtureDoc, error) {
	creds, err := dtetest.NewWith(dtetest.Options{FechaAutorizacion: time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC),
		Now: time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)})
	if err != nil {
		return nil, err
	}
	em, err := creds.Emitter(func() time.Time { return time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC) })
	if err != nil {
		return nil, err
	}
	f, err := os.Open("../../../testdata/requests/factura.json")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	req, err := dte.DecodeRequest(f)
	if err != nil {
		return nil, err
	}
	doc, err := em.Emit(context.Background(), req)
	if err != nil {
		return nil, err
	}
	total, ok := doc.MontoTotal.Int64()
	if !ok || doc.FechaEmision != "2026-03-02" {
		return nil, errors.New("the factura's total or date is not what the tests assume")
	}
	return &fixtureDoc{creds: creds, xml: doc.XML, total: total, fecha: doc.FechaEmision}, nil
})

type fixtureDoc struct {
	creds *dtetest.Creds
	xml   []byte
	total int64
	fecha string
}

// tenants is the fixture's Tenants: the test certificate for every
// company.
type tenants struct{ cert *signer.Certificate }

func (t tenants) SigningCert(context.Context, string) (*signer.Certificate, error) {
	return t.cert, nil
}

// documents is the fixture's Documents: every document is the test
// emisor's.
type documents struct{}

func (documents) Emisor(*store.DTE) (dte.Emisor, error) { return dtetest.DemoEmisor(), nil }

// stubRTC is a registry whose answers the test sets, counting calls.
type stubRTC struct {
	mu      sync.Mutex
	uploads [][]byte
	upload  func(n int) (Outcome, error)
	status  func() (Outcome, error)
	holder  string
	asked   int
}

func (s *stubRTC) Registry(context.Context, string, string) (RTC, error) { return s, nil }

func (s *stubRTC) Upload(_ context.Context, rut, email string, aec []byte) (Outcome, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.uploads = append(s.uploads, aec)
	return s.upload(len(s.uploads))
}

func (s *stubRTC) Status(context.Context, string) (Outcome, error) { return s.status() }

func (s *stubRTC) Ceded(_ context.Context, q Query) (Holding, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked++
	if q.RutEmisor != dtetest.EmisorRUT || q.TipoDTE != 33 || q.Folio != 1 {
		return Holding{}, errors.New("asked about another document")
	}
	return Holding{Ceded: s.holder != "", Holder: s.holder}, nil
}

type fixture struct {
	room    *Room
	st      store.Store
	rtc     *stubRTC
	empresa string
	doc     *store.DTE
	fd      *fixtureDoc
}

// newFixture is the room over a fresh store of b with one company and its
// factura, accepted by the SII; the runner is not started, the test runs
// the steps.
func newFixture(t *testing.T, b backendtest.Backend) *fixture {
	t.Helper()
	fd, err := signed()
	if err != nil {
		t.Fatal(err)
	}
	st := b.NewStore(t, store.JobsConfig{})
	rtc := &stubRTC{}
	now := func() time.Time { return time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC) }
	room := New(Config{Store: st, Outbox: outbox.New(now), Now: now, Tenants: tenants{fd.creds.Cert}, Documents: documents{},
		Registry: rtc, Workers: 1, MaxUploads: 3, UploadBackoff: []time.Duration{time.Hour}, PollBackoff: []time.Duration{time.Hour}})
	if err := room.Register(st.Jobs()); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	e := &store.Empresa{Rut: dtetest.EmisorRUT, RazonSocial: dtetest.EmisorRazonSocial, Ambiente: "certificacion"}
	d := &store.DTE{TipoDTE: 33, Folio: 1, Estado: string(dte.EstadoAceptado), Ambiente: "certificacion", RutReceptor: "77777777-7",
		FechaEmision: fd.fecha, MontoTotal: fd.total, XML: fd.xml}
	err = st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertEmpresa(ctx, e); err != nil {
			return err
		}
		d.EmpresaID = e.ID
		return tx.InsertDTE(ctx, d)
	})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{room: room, st: st, rtc: rtc, empresa: e.ID, doc: d, fd: fd}
}

// cede prepares and records a cesión of the factura.
func (f *fixture) cede(t *testing.T, p api.CesionParams) *store.Cesion {
	t.Helper()
	ctx := context.Background()
	c, err := f.room.Prepare(ctx, f.empresa, f.doc, p)
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	if err := f.st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return f.room.Insert(ctx, tx, c) }); err != nil {
		t.Fatalf("Insert: %v", err)
	}
	return c
}

func (f *fixture) get(t *testing.T, id string) *store.Cesion {
	t.Helper()
	c, err := f.st.GetCesion(context.Background(), f.empresa, id)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// events returns the types of the company's events, oldest first.
func (f *fixture) events(t *testing.T) []string {
	t.Helper()
	p, err := f.st.ListEvents(context.Background(), f.empresa, store.ListFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := len(p.Items) - 1; i >= 0; i-- {
		out = append(out, p.Items[i].Type)
	}
	return out
}

func params() api.CesionParams {
	return api.CesionParams{Cesionario: cesionario, EmailNotificacion: "finanzas@empresa.cl"}
}

// TestPrepareBuildsTheAEC: the AEC the room records verifies with package
// cesion (every signature, the DTE's stamp, the chain), cedes the whole
// total to the cesionario by default, and names the company as cedente
// and the certificate's holder as the authorized person.
func TestPrepareBuildsTheAEC(t *testing.T) {
	t.Parallel()
	f := newFixture(t, backendtest.SQLite)
	c, err := f.room.Prepare(context.Background(), f.empresa, f.doc, params())
	if err != nil {
		t.Fatal(err)
	}
	rep, err := cesion.Verify(c.AEC, cesion.VerifyOptions{DTE: dte.VerifyOptions{Keys: f.fd.creds.Keys}, Policy: cesion.PolicyStrict})
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	last := rep.Cesiones[len(rep.Cesiones)-1]
	if last.Cedente.RUT != dtetest.EmisorRUT || last.Cesionario.RUT != cesionario.Rut || last.Monto != f.fd.total {
		t.Errorf("cesión %+v: want cedente %s, cesionario %s, monto %d", last, dtetest.EmisorRUT, cesionario.Rut, f.fd.total)
	}
	if len(last.Autorizados) != 1 || last.Autorizados[0].RUT != dtetest.SignerRUT {
		t.Errorf("autorizados %+v, want the certificate's holder %s", last.Autorizados, dtetest.SignerRUT)
	}
	if c.Estado != store.CesionPendiente || c.Monto != f.fd.total || c.RutCesionario != cesionario.Rut {
		t.Errorf("cesión to record: %+v", c)
	}
	a, err := FromStore(c)
	// FechaEmision plus 30 days, written by hand: 2026-03-02 → 2026-04-01.
	if err != nil || a.UltimoVencimiento != "2026-04-01" || a.EmailNotificacion != "finanzas@empresa.cl" || a.Cesionario != cesionario {
		t.Errorf("FromStore = %+v, %v", a, err)
	}
}

// TestPrepareRefuses: each precondition refused with its field, its
// stable code and a message, and nothing recorded.
func TestPrepareRefuses(t *testing.T) {
	t.Parallel()
	f := newFixture(t, backendtest.SQLite)
	ctx := context.Background()
	withDoc := func(change func(d *store.DTE)) *store.DTE {
		d := *f.doc
		change(&d)
		return &d
	}
	cases := []struct {
		name  string
		doc   *store.DTE
		p     func(p *api.CesionParams)
		code  fault.Code
		field string
		dcode string
	}{
		{"boleta", withDoc(func(d *store.DTE) { d.TipoDTE = 39 }), nil, fault.Validation, "tipo_dte", "NOT_CEDIBLE"},
		{"nota de crédito", withDoc(func(d *store.DTE) { d.TipoDTE = 61 }), nil, fault.Validation, "tipo_dte", "NOT_CEDIBLE"},
		{"not sent", withDoc(func(d *store.DTE) { d.Estado = "firmado" }), nil, fault.InvalidState, "estado", "DTE_NOT_ACCEPTED"},
		{"rejected", withDoc(func(d *store.DTE) { d.Estado = "rechazado" }), nil, fault.InvalidState, "estado", "DTE_NOT_ACCEPTED"},
		{"cesionario is the emisor", f.doc, func(p *api.CesionParams) { p.Cesionario.Rut = "76.192.083-9" }, fault.Validation, "cesionario.rut", "SAME_AS_EMISOR"},
		{"monto over the total", f.doc, func(p *api.CesionParams) { p.Monto = f.fd.total + 1 }, fault.Validation, "monto", "OUT_OF_RANGE"},
		{"due before the document", f.doc, func(p *api.CesionParams) { p.UltimoVencimiento = "2026-03-01" }, fault.Validation, "ultimo_vencimiento", "OUT_OF_RANGE"},
		// What the AEC cannot carry, as package cesion refuses it.
		{"not ISO-8859-1", f.doc, func(p *api.CesionParams) { p.Cesionario.RazonSocial = "Factoring \U0001F600 S.A." }, fault.Validation, "cesionario.razon_social", "NOT_LATIN1"},
		{"cedente e-mail", f.doc, func(p *api.CesionParams) { p.EmailNotificacion = "a b@c.cl" }, fault.Validation, "email_notificacion", "INVALID_FORMAT"},
	}
	for _, tc := range cases {
		p := params()
		if tc.p != nil {
			tc.p(&p)
		}
		_, err := f.room.Prepare(ctx, f.empresa, tc.doc, p)
		fe := fault.As(err)
		if err == nil || fe.Code != tc.code || len(fe.Details) != 1 || fe.Details[0].Field != tc.field || string(fe.Details[0].Code) != tc.dcode || fe.Message == "" {
			t.Errorf("%s: got %v (%+v), want %s on %s (%s)", tc.name, err, fe, tc.code, tc.field, tc.dcode)
		}
	}
	// A document con_reparos may be ceded.
	if _, err := f.room.Prepare(ctx, f.empresa, withDoc(func(d *store.DTE) { d.Estado = "con_reparos" }), params()); err != nil {
		t.Errorf("con_reparos: %v", err)
	}
	if p, _ := f.st.ListCesiones(ctx, f.empresa, f.doc.ID, store.ListFilter{}); p.TotalCount != 0 {
		t.Errorf("%d cesiones recorded by refusals", p.TotalCount)
	}
}

// TestJourney runs a cesión through a registry that accepts it, and
// another through one that rejects it, on both backends: the states, the
// registry's codes, the events, and a second cesión refused while one is
// in flight or recorded but taken once the first is rechazada.
func TestJourney(t *testing.T) {
	t.Parallel()
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		f := newFixture(t, b)
		ctx := context.Background()
		polls := 0
		f.rtc.upload = func(int) (Outcome, error) {
			return Outcome{Kind: Pending, TrackID: "0000038936", Code: "0", Message: "recibido", Raw: []byte("<RECEPCIONAEC/>")}, nil
		}
		f.rtc.status = func() (Outcome, error) {
			polls++
			if polls == 1 {
				return Outcome{Kind: Pending, Code: "VCS", Message: "validación de cesiones"}, nil
			}
			return Outcome{Kind: Rejected, Code: "RCS", Message: "cesión inválida", Raw: []byte("<RESPUESTA/>")}, nil
		}
		first := f.cede(t, params())
		// A second cesión while the first is in flight.
		if _, err := f.room.Prepare(ctx, f.empresa, f.doc, params()); fault.As(err).Code != fault.AlreadyCeded {
			t.Errorf("second Prepare: %v", err)
		}
		dup := *first
		dup.ID = ""
		err := f.st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return f.room.Insert(ctx, tx, &dup) })
		if fault.As(err).Code != fault.AlreadyCeded {
			t.Errorf("second Insert: %v", err)
		}
		a := jobArgs{EmpresaID: f.empresa, CesionID: first.ID}
		if err := f.room.upload(ctx, a); err != nil {
			t.Fatal(err)
		}
		c := f.get(t, first.ID)
		if c.Estado != store.CesionEnviada || c.TrackID != "0000038936" || c.Attempts != 1 || !bytes.Equal(f.rtc.uploads[0], first.AEC) {
			t.Fatalf("after the upload: %+v", c)
		}
		for range 2 {
			if err := f.room.poll(ctx, a); err != nil {
				t.Fatal(err)
			}
		}
		c = f.get(t, first.ID)
		if c.Estado != store.CesionRechazada || c.Codigo != "RCS" || c.Glosa != "cesión inválida" {
			t.Fatalf("after the rejection: %+v", c)
		}
		if got := f.events(t); len(got) != 1 || got[0] != "dte.cesion_rechazada" {
			t.Errorf("events %v", got)
		}

		// Rejected, the document may be ceded again; this time the
		// registry records it.
		polls = 0
		f.rtc.status = func() (Outcome, error) { return Outcome{Kind: Accepted, Code: "EOK", Message: "envío aceptado"}, nil }
		second := f.cede(t, params())
		a = jobArgs{EmpresaID: f.empresa, CesionID: second.ID}
		if err := f.room.upload(ctx, a); err != nil {
			t.Fatal(err)
		}
		if err := f.room.poll(ctx, a); err != nil {
			t.Fatal(err)
		}
		c = f.get(t, second.ID)
		if c.Estado != store.CesionAceptada || c.Codigo != "EOK" {
			t.Fatalf("after EOK: %+v", c)
		}
		got := f.events(t)
		if len(got) != 2 || got[1] != "dte.cedido" {
			t.Fatalf("events %v", got)
		}
		p, _ := f.st.ListEvents(ctx, f.empresa, store.ListFilter{Limit: 1})
		var ev struct {
			Data struct {
				ID     string `json:"id"`
				Cesion struct {
					ID, Estado, RutCesionario, Codigo string
				} `json:"cesion"`
			} `json:"data"`
		}
		if err := json.Unmarshal(p.Items[0].Payload, &ev); err != nil || ev.Data.ID != f.doc.ID || ev.Data.Cesion.ID != second.ID || ev.Data.Cesion.Estado != "aceptada" {
			t.Errorf("dte.cedido payload %s: %v", p.Items[0].Payload, err)
		}
		if _, err := f.room.Prepare(ctx, f.empresa, f.doc, params()); fault.As(err).Code != fault.AlreadyCeded {
			t.Errorf("a cesión of a ceded document: %v", err)
		}
		// A step run again after the end changes nothing.
		if err := f.room.poll(ctx, a); err != nil || len(f.events(t)) != 2 {
			t.Errorf("a late poll: %v, events %v", err, f.events(t))
		}
	})
}

// TestLostAnswerAdopted: a process killed while its upload was on the way
// leaves the cesión pendiente with one attempt counted; the next run asks
// the registry first and, the document being held by the cesionario,
// records the cesión aceptada without uploading it again. When the
// registry shows no cesión, it uploads again.
func TestLostAnswerAdopted(t *testing.T) {
	t.Parallel()
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		f := newFixture(t, b)
		ctx := context.Background()
		c := f.cede(t, params())
		// The crash: the attempt was counted, its answer never recorded.
		c.Attempts = 1
		if err := f.st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.UpdateCesion(ctx, c) }); err != nil {
			t.Fatal(err)
		}
		f.rtc.holder = "96790240-3"
		f.rtc.upload = func(int) (Outcome, error) { t.Error("uploaded again"); return Outcome{Kind: Failure}, nil }
		if err := f.room.upload(ctx, jobArgs{EmpresaID: f.empresa, CesionID: c.ID}); err != nil {
			t.Fatal(err)
		}
		got := f.get(t, c.ID)
		if got.Estado != store.CesionAceptada || got.Codigo != CodeAdopted || len(f.rtc.uploads) != 0 || f.rtc.asked != 1 {
			t.Errorf("after the lost answer: %+v, %d uploads, %d questions", got, len(f.rtc.uploads), f.rtc.asked)
		}
		if ev := f.events(t); len(ev) != 1 || ev[0] != "dte.cedido" {
			t.Errorf("events %v", ev)
		}
	})
}

// TestSecondCopyRefusedAdopted: an upload whose answer was lost is
// uploaded again (the registry had not recorded the first yet); the
// registry then records the first and refuses the second copy. The
// refusal of a cesión uploaded twice is checked with the holder, and the
// cesión is aceptada.
func TestSecondCopyRefusedAdopted(t *testing.T) {
	t.Parallel()
	f := newFixture(t, backendtest.SQLite)
	ctx := context.Background()
	c := f.cede(t, params())
	c.Attempts = 1
	if err := f.st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.UpdateCesion(ctx, c) }); err != nil {
		t.Fatal(err)
	}
	f.rtc.upload = func(int) (Outcome, error) { return Outcome{Kind: Pending, TrackID: "0000038937", Code: "0"}, nil }
	a := jobArgs{EmpresaID: f.empresa, CesionID: c.ID}
	if err := f.room.upload(ctx, a); err != nil {
		t.Fatal(err)
	}
	f.rtc.holder = "96790240-3"
	f.rtc.status = func() (Outcome, error) {
		return Outcome{Kind: Rejected, Code: "RCS", Message: "documento ya cedido"}, nil
	}
	if err := f.room.poll(ctx, a); err != nil {
		t.Fatal(err)
	}
	if got := f.get(t, c.ID); got.Estado != store.CesionAceptada || got.Attempts != 2 || len(f.rtc.uploads) != 1 {
		t.Errorf("after the second copy's refusal: %+v", got)
	}
}

// TestFailuresBounded: uploads the registry cannot take (its internal
// errors, transport failures) are tried MaxUploads times, 3 here, each
// scheduled as a new step; then, the registry showing no cesión, the
// cesión is rechazada with SIN_ENVIO and its event.
func TestFailuresBounded(t *testing.T) {
	t.Parallel()
	f := newFixture(t, backendtest.SQLite)
	ctx := context.Background()
	c := f.cede(t, params())
	f.rtc.upload = func(n int) (Outcome, error) {
		if n == 2 {
			return Outcome{}, errors.New("connection reset")
		}
		return Outcome{Kind: Failure, Code: "9", Message: "error interno"}, nil
	}
	a := jobArgs{EmpresaID: f.empresa, CesionID: c.ID}
	for i := range 4 {
		a.N = i
		if err := f.room.upload(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	got := f.get(t, c.ID)
	if got.Estado != store.CesionRechazada || got.Codigo != CodeNoUpload || got.Attempts != 3 || len(f.rtc.uploads) != 3 {
		t.Errorf("after the failures: %+v, %d uploads", got, len(f.rtc.uploads))
	}
	if ev := f.events(t); len(ev) != 1 || ev[0] != "dte.cesion_rechazada" {
		t.Errorf("events %v", ev)
	}
}

// TestLocalRefusalFinal: an upload the registry's client refuses before
// sending it (ErrNotSent: an address the registry would refuse) is
// rechazada NO_ENVIADO at once, with its event, not tried MaxUploads
// times.
func TestLocalRefusalFinal(t *testing.T) {
	t.Parallel()
	f := newFixture(t, backendtest.SQLite)
	ctx := context.Background()
	c := f.cede(t, params())
	f.rtc.upload = func(int) (Outcome, error) {
		return Outcome{}, fmt.Errorf("%w: sii: RTCAnotEnvio: emailNotif: \"finanzas@empresa\" has a domain without a dot", ErrNotSent)
	}
	a := jobArgs{EmpresaID: f.empresa, CesionID: c.ID}
	for i := range 2 {
		a.N = i
		if err := f.room.upload(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	got := f.get(t, c.ID)
	if got.Estado != store.CesionRechazada || got.Codigo != CodeNotSent || !strings.Contains(got.Glosa, "finanzas@empresa") ||
		len(f.rtc.uploads) != 1 || f.rtc.asked != 0 {
		t.Errorf("after the local refusal: %s %s %q, %d uploads, %d questions", got.Estado, got.Codigo, got.Glosa, len(f.rtc.uploads), f.rtc.asked)
	}
	if ev := f.events(t); len(ev) != 1 || ev[0] != "dte.cesion_rechazada" {
		t.Errorf("events %v", ev)
	}
}

// TestPollsBounded: a review the registry never settles (a Failure
// answer, every time) is queried MaxPolls times, 3 here; then the
// registry's holder decides: none, the cesión is rechazada SIN_REVISION
// (and the document may be ceded again); the cesionario written without
// its check digit (96790240 for 96790240-3), it is aceptada CEDIDO.
func TestPollsBounded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		holder, estado, codigo, event string
	}{
		{"", store.CesionRechazada, CodeNoReview, "dte.cesion_rechazada"},
		{"96790240", store.CesionAceptada, CodeAdopted, "dte.cedido"},
	} {
		t.Run("holder="+tc.holder, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, backendtest.SQLite)
			f.room.cfg.MaxPolls = 3
			ctx := context.Background()
			c := f.cede(t, params())
			f.rtc.upload = func(int) (Outcome, error) { return Outcome{Kind: Pending, TrackID: "0000038940", Code: "0"}, nil }
			statuses := 0
			f.rtc.status = func() (Outcome, error) {
				statuses++
				return Outcome{Kind: Failure, Code: "HDR-2", Message: "error interno"}, nil
			}
			a := jobArgs{EmpresaID: f.empresa, CesionID: c.ID}
			if err := f.room.upload(ctx, a); err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				a.N = i
				if err := f.room.poll(ctx, a); err != nil {
					t.Fatal(err)
				}
				if got := f.get(t, c.ID); got.Estado != store.CesionEnviada || f.rtc.asked != 0 {
					t.Fatalf("poll %d: %s %s, %d questions", i, got.Estado, got.Codigo, f.rtc.asked)
				}
			}
			f.rtc.holder = tc.holder
			a.N = 3
			if err := f.room.poll(ctx, a); err != nil {
				t.Fatal(err)
			}
			got := f.get(t, c.ID)
			if got.Estado != tc.estado || got.Codigo != tc.codigo || statuses != 3 || f.rtc.asked != 1 {
				t.Errorf("after the bound: %s %s, %d status queries, %d questions", got.Estado, got.Codigo, statuses, f.rtc.asked)
			}
			if ev := f.events(t); len(ev) != 1 || ev[0] != tc.event {
				t.Errorf("events %v", ev)
			}
		})
	}
}

// TestRunnerCarriesIt: with the runner started and schedules of zero, the
// jobs Insert queues carry a cesión to aceptada by themselves.
func TestRunnerCarriesIt(t *testing.T) {
	t.Parallel()
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		f := newFixture(t, b)
		f.room.cfg.UploadBackoff, f.room.cfg.PollBackoff = []time.Duration{0}, []time.Duration{0}
		f.rtc.upload = func(int) (Outcome, error) { return Outcome{Kind: Pending, TrackID: "0000000001", Code: "0"}, nil }
		var polls int
		var mu sync.Mutex
		f.rtc.status = func() (Outcome, error) {
			mu.Lock()
			defer mu.Unlock()
			polls++
			if polls < 3 {
				return Outcome{Kind: Pending, Code: "RCP"}, nil
			}
			return Outcome{Kind: Accepted, Code: "EOK"}, nil
		}
		c := f.cede(t, params())
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := f.st.Jobs().Start(ctx); err != nil {
			t.Fatal(err)
		}
		for {
			if got := f.get(t, c.ID); got.Estado == store.CesionAceptada {
				break
			}
			select {
			case <-ctx.Done():
				t.Fatalf("the cesión stays %s", f.get(t, c.ID).Estado)
			case <-time.After(20 * time.Millisecond):
			}
		}
	})
}

// TestLostAnswerNotRecorded: an upload whose answer was lost and which the
// registry does not show (the document not ceded, or held by someone
// else) is uploaded again, the same bytes.
func TestLostAnswerNotRecorded(t *testing.T) {
	t.Parallel()
	for _, holder := range []string{"", "11111111-1"} {
		f := newFixture(t, backendtest.SQLite)
		ctx := context.Background()
		c := f.cede(t, params())
		c.Attempts = 1
		if err := f.st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.UpdateCesion(ctx, c) }); err != nil {
			t.Fatal(err)
		}
		f.rtc.holder = holder
		f.rtc.upload = func(int) (Outcome, error) { return Outcome{Kind: Pending, TrackID: "0000000002", Code: "0"}, nil }
		if err := f.room.upload(ctx, jobArgs{EmpresaID: f.empresa, CesionID: c.ID}); err != nil {
			t.Fatal(err)
		}
		got := f.get(t, c.ID)
		if got.Estado != store.CesionEnviada || got.Attempts != 2 || len(f.rtc.uploads) != 1 || !bytes.Equal(f.rtc.uploads[0], c.AEC) || f.rtc.asked != 1 {
			t.Errorf("holder %q: %+v, %d uploads, %d questions", holder, got, len(f.rtc.uploads), f.rtc.asked)
		}
	}
}
