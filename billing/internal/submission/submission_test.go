package submission

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/billing/internal/outbox"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/clocktest"
	"github.com/dtekit/dtekit/internal/pgtest"
	"github.com/dtekit/dtekit/signer"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/backendtest"
)

// errNoCert is what the fixture's SigningCert answers: no company of
// these tests has a certificate.
var errNoCert = errors.New("no signing certificate")

func TestMain(m *testing.M) { pgtest.Main(m) }

// noCerts is the fixture's Tenants: no company has a certificate.
type noCerts struct{}

func (noCerts) SigningCert(context.Context, string) (*signer.Certificate, error) {
	return nil, errNoCert
}

// fakeDocuments is the fixture's Documents: every document has the zero
// issuer, and its environment is its CAFID (the tests name it), else
// certificacion.
type fakeDocuments struct{}

func (fakeDocuments) Emisor(*store.DTE) (dte.Emisor, error) { return dte.Emisor{}, nil }

func (fakeDocuments) Ambiente(_ context.Context, _ store.Reader, d *store.DTE) (string, error) {
	if d.CAFID == "" {
		return "certificacion", nil
	}
	return d.CAFID, nil
}

// fixture is a Submitter over a fresh store alone, with one company; its
// runner is not started, so enqueued steps stay queued.
type fixture struct {
	sb      *Submitter
	st      store.Store
	empresa string
}

func newFixture(t *testing.T, b backendtest.Backend) *fixture {
	t.Helper()
	ctx := context.Background()
	st := b.NewStore(t, store.JobsConfig{})
	clock := clocktest.New(time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC))
	sb := New(Config{Store: st, Outbox: outbox.New(clock.Now), Now: clock.Now, Logger: slog.New(slog.DiscardHandler),
		Tenants: noCerts{}, Documents: fakeDocuments{},
		Timeout: time.Second, UploadBackoff: []time.Duration{time.Hour}, PollBackoff: []time.Duration{time.Hour},
		ReconcileWindow: time.Hour, Workers: 1})
	if err := sb.Register(st.Jobs()); err != nil {
		t.Fatal(err)
	}
	e := &store.Empresa{Rut: "76192083-9", RazonSocial: "Comercial Los Andes SpA", Ambiente: "certificacion"}
	if err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertEmpresa(ctx, e) }); err != nil {
		t.Fatal(err)
	}
	return &fixture{sb: sb, st: st, empresa: e.ID}
}

// addDTE stores a document of the company in the given state.
func (f *fixture) addDTE(t *testing.T, folio int64, estado string, autoSend bool) *store.DTE {
	t.Helper()
	d := &store.DTE{EmpresaID: f.empresa, TipoDTE: 33, Folio: folio, Estado: estado, AutoSend: autoSend,
		RutReceptor: "96790240-3", FechaEmision: "2026-03-02", MontoTotal: 119000}
	if err := f.st.Write(context.Background(), func(ctx context.Context, tx store.Tx) error { return tx.InsertDTE(ctx, d) }); err != nil {
		t.Fatal(err)
	}
	return d
}

// queued counts the jobs that have not finished.
func (f *fixture) queued(t *testing.T) int64 {
	t.Helper()
	depth, err := f.st.Jobs().Depth(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, c := range depth {
		n += c
	}
	return n
}

// TestSignedAndCreate: a signed document goes to the SII on its own only
// when emitted with auto_send (Signed queues the job that packs it);
// Create packs firmado documents into one envelope, each then enviando
// and tracked in it, and queues its upload.
func TestSignedAndCreate(t *testing.T) {
	t.Parallel()
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		f := newFixture(t, b)
		ctx := context.Background()
		manual, auto := f.addDTE(t, 1, string(dte.EstadoFirmado), false), f.addDTE(t, 2, string(dte.EstadoFirmado), true)
		for _, d := range []*store.DTE{manual, auto} {
			if err := f.st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return f.sb.Signed(ctx, tx, d) }); err != nil {
				t.Fatal(err)
			}
		}
		if n := f.queued(t); n != 1 {
			t.Fatalf("%d jobs after signing one document with auto_send and one without, want 1", n)
		}
		other := f.addDTE(t, 3, string(dte.EstadoFirmado), false)
		e, err := f.create(t, "dte_ids", manual.ID, other.ID)
		if err != nil {
			t.Fatal(err)
		}
		if n := f.queued(t); n != 2 {
			t.Fatalf("%d jobs after Create, want 2", n)
		}
		got, err := f.st.GetEnvio(ctx, f.empresa, e.ID)
		if err != nil {
			t.Fatal(err)
		}
		rs, err := ParseResults(got.Results)
		if err != nil || len(rs) != 2 || rs[0].DTEID != manual.ID || rs[1].DTEID != other.ID || rs[0].Estado != "enviando" ||
			got.Ambiente != "certificacion" || got.Estado != envioNew || got.XML != nil {
			t.Errorf("the envelope %+v, results %+v, %v; want both documents enviando in request order, not built yet", got, rs, err)
		}
		for _, id := range []string{manual.ID, other.ID} {
			d, _ := f.st.GetDTE(ctx, f.empresa, id)
			if d.Estado != string(dte.EstadoEnviando) || deref(outbox.TrackingOf(d).EnvioID) != e.ID {
				t.Errorf("DTE %s: %s tracking %s; want enviando in envelope %s", id, d.Estado, d.Tracking, e.ID)
			}
		}
	})
}

// create runs Create for the fixture's company in its own transaction.
func (f *fixture) create(t *testing.T, field string, ids ...string) (*store.Envio, error) {
	t.Helper()
	var e *store.Envio
	err := f.st.Write(context.Background(), func(ctx context.Context, tx store.Tx) error {
		var err error
		e, _, err = Create(ctx, tx, f.sb.cfg.Documents.Ambiente, NewEnvelope{ID: newID(), EmpresaID: f.empresa, DTEIDs: ids, At: time.Now(), Field: field})
		return err
	})
	return e, err
}

// TestCreateRefuses: Create names every document at fault and changes
// nothing: one the company does not have, a boleta beside a factura, a
// document of another environment (a validation error each, on
// dte_ids[i]); one already sent or on its way, one in an envelope (a
// conflict, INVALID_STATE). Asked about one document (no field), an
// unknown one is not found and a busy one a conflict without details.
func TestCreateRefuses(t *testing.T) {
	t.Parallel()
	backendtest.Each(t, func(t *testing.T, be backendtest.Backend) {
		f := newFixture(t, be)
		ctx := context.Background()
		a, b := f.addDTE(t, 1, string(dte.EstadoFirmado), false), f.addDTE(t, 2, string(dte.EstadoFirmado), false)
		done := f.addDTE(t, 3, string(dte.EstadoAceptado), false)
		boleta := &store.DTE{EmpresaID: f.empresa, TipoDTE: 39, Folio: 1, Estado: string(dte.EstadoFirmado)}
		prod := &store.DTE{EmpresaID: f.empresa, TipoDTE: 33, Folio: 4, Estado: string(dte.EstadoFirmado), CAFID: "produccion"}
		if err := f.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			return errors.Join(tx.InsertDTE(ctx, boleta), tx.InsertDTE(ctx, prod))
		}); err != nil {
			t.Fatal(err)
		}
		check := func(name string, err error, kind fault.Kind, code fault.Code, fields ...string) {
			t.Helper()
			fe := fault.As(err)
			var got []string
			if fe != nil {
				for _, d := range fe.Details {
					got = append(got, d.Field)
				}
			}
			if fe == nil || fe.Kind != kind || fe.Code != code || strings.Join(got, ",") != strings.Join(fields, ",") {
				t.Errorf("%s: %v (details %v), want %s %s on %v", name, err, got, kind, code, fields)
			}
		}
		_, err := f.create(t, "dte_ids", a.ID, "0190a0a0-0000-7000-8000-000000000000", b.ID)
		check("an unknown document", err, fault.KindValidation, fault.Validation, "dte_ids[1]")
		_, err = f.create(t, "dte_ids", a.ID, boleta.ID)
		check("a boleta beside a factura", err, fault.KindValidation, fault.Validation, "dte_ids[1]")
		_, err = f.create(t, "dte_ids", prod.ID, a.ID, b.ID)
		check("two environments", err, fault.KindValidation, fault.Validation, "dte_ids[1]", "dte_ids[2]")
		_, err = f.create(t, "dte_ids", a.ID, done.ID)
		check("an aceptado document", err, fault.KindConflict, fault.InvalidState, "dte_ids[1]")
		if n := f.queued(t); n != 0 {
			t.Fatalf("%d jobs after refused requests, want none", n)
		}
		if _, err := f.create(t, "dte_ids", b.ID); err != nil {
			t.Fatal(err)
		}
		_, err = f.create(t, "dte_ids", a.ID, b.ID)
		check("a document in an envelope", err, fault.KindConflict, fault.InvalidState, "dte_ids[1]")
		_, err = f.create(t, "", b.ID)
		check("one document in an envelope", err, fault.KindConflict, fault.InvalidState)
		_, err = f.create(t, "", "0190a0a0-0000-7000-8000-000000000000")
		check("one unknown document", err, fault.KindNotFound, fault.NotFound)
		if d, _ := f.st.GetDTE(ctx, f.empresa, a.ID); d.Estado != string(dte.EstadoFirmado) || d.Tracking != nil {
			t.Errorf("a document of refused requests: %s tracking %s; want firmado, untouched", d.Estado, d.Tracking)
		}

		// The limits of one envelope: 500 boletas (EnvioBOLETA_v11.xsd), and
		// MaxEnvioBytes of signed XML (two documents of 5 MiB here).
		var many []string
		big := make([]byte, 5<<20)
		if err := f.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			for i := range 501 {
				d := &store.DTE{EmpresaID: f.empresa, TipoDTE: 41, Folio: int64(i + 1), Estado: string(dte.EstadoFirmado)}
				if err := tx.InsertDTE(ctx, d); err != nil {
					return err
				}
				many = append(many, d.ID)
			}
			for i := range 2 {
				d := &store.DTE{EmpresaID: f.empresa, TipoDTE: 33, Folio: int64(100 + i), Estado: string(dte.EstadoFirmado), XML: big}
				if err := tx.InsertDTE(ctx, d); err != nil {
					return err
				}
				many = append(many, d.ID)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		_, err = f.create(t, "dte_ids", many[:501]...)
		check("501 boletas", err, fault.KindValidation, fault.Validation, "dte_ids")
		if _, err := f.create(t, "dte_ids", many[:500]...); err != nil {
			t.Errorf("500 boletas: %v", err)
		}
		_, err = f.create(t, "dte_ids", many[501:]...)
		check("10 MiB of signed XML", err, fault.KindValidation, fault.Validation, "dte_ids")
		if fe := fault.As(err); fe == nil || len(fe.Details) != 1 || fe.Details[0].Code != dte.CodeTooLarge {
			t.Errorf("10 MiB of signed XML: %+v, want TOO_LARGE", fe)
		}
	})
}

// TestUploadFailureSchedulesTheNext: an upload step that cannot even
// build its client (no certificate) records why in the tracking, leaves
// the document firmado, and schedules the next upload.
func TestUploadFailureSchedulesTheNext(t *testing.T) {
	t.Parallel()
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		f := newFixture(t, b)
		ctx := context.Background()
		d := f.addDTE(t, 1, string(dte.EstadoFirmado), true)
		if err := f.sb.adopt(ctx, submitArgs{EmpresaID: f.empresa, DTEID: d.ID, Step: stepUpload}); err != nil {
			t.Fatal(err)
		}
		got, err := f.st.GetDTE(ctx, f.empresa, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		envioID := deref(outbox.TrackingOf(got).EnvioID)
		if got.Estado != string(dte.EstadoFirmado) || envioID == "" {
			t.Fatalf("after its adoption: %s, tracking %s; want firmado in an envelope", got.Estado, got.Tracking)
		}
		if err := f.sb.upload(ctx, submitArgs{EmpresaID: f.empresa, EnvioID: envioID, Step: stepUpload}); err != nil {
			t.Fatal(err)
		}
		got, err = f.st.GetDTE(ctx, f.empresa, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		tr := outbox.TrackingOf(got)
		if got.Estado != string(dte.EstadoFirmado) || tr.GlosaSII == nil || !strings.Contains(*tr.GlosaSII, errNoCert.Error()) {
			t.Errorf("after a failed upload: %s, tracking %s", got.Estado, got.Tracking)
		}
		if n := f.queued(t); n != 2 {
			t.Errorf("%d jobs after a failed upload, want the envelope's first upload and the next", n)
		}
	})
}

// freezingStore is a store whose Write, once armed, does not return after
// its transaction has committed until released: the process is as good as
// killed right after that commit, and the test reads what the database
// says then.
type freezingStore struct {
	store.Store
	armed   atomic.Bool
	frozen  chan struct{}
	release chan struct{}
}

func (s *freezingStore) Write(ctx context.Context, fn func(ctx context.Context, tx store.Tx) error) error {
	err := s.Store.Write(ctx, fn)
	if err == nil && s.armed.CompareAndSwap(true, false) {
		s.frozen <- struct{}{}
		<-s.release
	}
	return err
}

// TestStepCompletesItsJobWithTheNext: the transaction that schedules a
// document's next step also completes the job of the step that scheduled
// it. Frozen right after that commit (as a process killed there), the
// job is already completed, so the runner will not rescue it and run it
// beside the next step: the job that packs an auto_send document in its
// envelope, then the envelope's upload.
func TestStepCompletesItsJobWithTheNext(t *testing.T) {
	t.Parallel()
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		f := newFixture(t, b)
		ctx := context.Background()
		fs := &freezingStore{Store: f.st, frozen: make(chan struct{}), release: make(chan struct{})}
		f.sb.st = fs
		d := f.addDTE(t, 1, string(dte.EstadoFirmado), true)
		var jobID int64
		if err := f.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			res, err := tx.Enqueue(ctx, submitArgs{EmpresaID: f.empresa, DTEID: d.ID, Step: stepUpload}, nil)
			if err == nil {
				jobID = res.ID
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		// The job packs the document in an envelope and queues the envelope's
		// upload (the next job id); that upload fails (no certificate), and its
		// one transaction records why and schedules the next upload.
		fs.armed.Store(true)
		if err := f.st.Jobs().Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer func() {
			stop, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			f.st.Jobs().Stop(stop)
		}()
		for i, step := range []string{"the adoption", "the envelope's upload"} {
			select {
			case <-fs.frozen:
			case <-time.After(30 * time.Second):
				t.Fatalf("%s did not run within 30 s", step)
			}
			info, err := f.st.Jobs().Job(ctx, jobID+int64(i))
			if i == 0 {
				fs.armed.Store(true)
			}
			fs.release <- struct{}{}
			if err != nil {
				t.Fatal(err)
			}
			if info.State != store.JobCompleted {
				t.Errorf("right after the transaction that scheduled the step after %s, its job is %s, want completed", step, info.State)
			}
			if n := f.queued(t); n != 1 {
				t.Errorf("%d jobs unfinished after %s, want the next step alone", n, step)
			}
		}
	})
}
