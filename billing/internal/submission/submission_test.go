package submission

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/billing/internal/outbox"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/clocktest"
	"github.com/dtekit/dtekit/signer"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/sqlite"
)

// errNoCert is what the fixture's SigningCert answers: no company of
// these tests has a certificate.
var errNoCert = errors.New("no signing certificate")

// fixture is a Submitter over a fresh SQLite store alone, with one
// company; its runner is not started, so enqueued steps stay queued.
type fixture struct {
	sb      *Submitter
	st      store.Store
	empresa string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), sqlite.FileName), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	clock := clocktest.New(time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC))
	sb := New(Config{Store: st, Outbox: outbox.New(clock.Now), Now: clock.Now, Logger: slog.New(slog.DiscardHandler),
		SigningCert: func(context.Context, string) (*signer.Certificate, error) { return nil, errNoCert },
		Emisor:      func(*store.DTE) (dte.Emisor, error) { return dte.Emisor{}, nil },
		Timeout:     time.Second, UploadBackoff: []time.Duration{time.Hour}, PollBackoff: []time.Duration{time.Hour},
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

// TestSignedAndEnqueue: a signed document goes to the SII on its own only
// when emitted with auto_send; Enqueue queues a firmado one and refuses a
// document past firmado or of another company.
func TestSignedAndEnqueue(t *testing.T) {
	f := newFixture(t)
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
	if err := Enqueue(ctx, f.st, f.empresa, manual.ID); err != nil {
		t.Fatal(err)
	}
	if n := f.queued(t); n != 2 {
		t.Fatalf("%d jobs after Enqueue, want 2", n)
	}
	done := f.addDTE(t, 3, string(dte.EstadoAceptado), false)
	if err := Enqueue(ctx, f.st, f.empresa, done.ID); fault.KindOf(err) != fault.KindConflict || fault.As(err).Code != fault.InvalidState {
		t.Errorf("Enqueue of an aceptado document: %v", err)
	}
	if err := Enqueue(ctx, f.st, "otra-empresa", manual.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Enqueue through another company: %v", err)
	}
}

// TestUploadFailureSchedulesTheNext: an upload step that cannot even
// build its client (no certificate) records why in the tracking, leaves
// the document firmado, and schedules the next upload.
func TestUploadFailureSchedulesTheNext(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	d := f.addDTE(t, 1, string(dte.EstadoFirmado), true)
	if err := f.sb.upload(ctx, submitArgs{EmpresaID: f.empresa, DTEID: d.ID, Step: stepUpload}); err != nil {
		t.Fatal(err)
	}
	got, err := f.st.GetDTE(ctx, f.empresa, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	tr := outbox.TrackingOf(got)
	if got.Estado != string(dte.EstadoFirmado) || tr.GlosaSII == nil || !strings.Contains(*tr.GlosaSII, errNoCert.Error()) {
		t.Errorf("after a failed upload: %s, tracking %s", got.Estado, got.Tracking)
	}
	if n := f.queued(t); n != 1 {
		t.Errorf("%d jobs after a failed upload, want the next upload", n)
	}
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
// upload job is already completed, so the runner will not rescue it and
// upload beside the next step.
func TestStepCompletesItsJobWithTheNext(t *testing.T) {
	f := newFixture(t)
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
	// The upload step fails (no certificate): its one transaction records
	// why and schedules the next upload.
	fs.armed.Store(true)
	if err := f.st.Jobs().Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stop, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		f.st.Jobs().Stop(stop)
	}()
	select {
	case <-fs.frozen:
	case <-time.After(30 * time.Second):
		t.Fatal("the upload step did not run within 30 s")
	}
	info, err := f.st.Jobs().Job(ctx, jobID)
	close(fs.release)
	if err != nil {
		t.Fatal(err)
	}
	if info.State != store.JobCompleted {
		t.Errorf("right after the transaction that scheduled the next upload the upload job is %s, want completed", info.State)
	}
	if n := f.queued(t); n != 1 {
		t.Errorf("%d jobs unfinished after the failed upload, want the next upload alone", n)
	}
}
