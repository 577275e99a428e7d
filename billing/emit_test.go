package billing

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/store"
)

// emitOK emits body under a new key and decodes the 201 answer.
func emitOK(t testing.TB, s *Service, empresaID string, body []byte) api.EmitResponse {
	t.Helper()
	res, err := emitBody(s, context.Background(), empresaID, newKey(), body)
	if err != nil {
		t.Fatal(err)
	}
	var r api.EmitResponse
	if res.Replay || json.Unmarshal(res.Body, &r) != nil || r.ID != res.ID {
		t.Fatalf("emission answered replay=%v %s", res.Replay, res.Body)
	}
	return r
}

// TestConcurrentEmission: 1,000 emissions (100 under -short) from 32
// goroutines over two CAFs of tipo 33 give folios that are unique and
// contiguous, the second CAF is used once the first runs out, and
// folios_disponibles counts exactly what is left.
func TestConcurrentEmission(t *testing.T) {
	t.Parallel()
	total, split := 1000, int64(600)
	if testing.Short() {
		total, split = 100, 60
	}
	const workers = 32
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			f := newFixture(t, b, false)
			ctx := context.Background()
			s, emp := f.s, f.emp
			// Registered out of order: the lower range must still go first.
			second, err := s.CAFs.Register(ctx, emp.ID, api.CAFInput{TipoDTE: 33, CAFXML: issueCAF(t, 33, split+1, 2*int64(total))})
			if err != nil {
				t.Fatal(err)
			}
			first, err := s.CAFs.Register(ctx, emp.ID, api.CAFInput{TipoDTE: 33, CAFXML: issueCAF(t, 33, 1, split)})
			if err != nil {
				t.Fatal(err)
			}
			var (
				mu     sync.Mutex
				folios []int64
				next   atomic.Int64
				wg     sync.WaitGroup
				errs   = make(chan error, workers)
			)
			for w := 0; w < workers; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for next.Add(1) <= int64(total) {
						res, err := emitBody(s, ctx, emp.ID, newKey(), facturaBody(1))
						if err != nil {
							errs <- err
							return
						}
						var r api.EmitResponse
						if err := json.Unmarshal(res.Body, &r); err != nil {
							errs <- err
							return
						}
						mu.Lock()
						folios = append(folios, r.Folio)
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			sort.Slice(folios, func(i, j int) bool { return folios[i] < folios[j] })
			if len(folios) != total {
				t.Fatalf("%d emissions acknowledged, want %d", len(folios), total)
			}
			for i, f := range folios {
				if f != int64(i+1) {
					t.Fatalf("folios not unique and contiguous: position %d holds folio %d", i, f)
				}
			}
			c1, err := s.CAFs.Get(ctx, emp.ID, first.ID)
			if err != nil {
				t.Fatal(err)
			}
			c2, err := s.CAFs.Get(ctx, emp.ID, second.ID)
			if err != nil {
				t.Fatal(err)
			}
			// By hand: the first CAF (1..split) is used up; the second
			// (split+1..2·total) gave total−split folios.
			if c1.FoliosDisponibles != 0 || c2.FoliosDisponibles != 2*int64(total)-int64(total) {
				t.Errorf("folios_disponibles %d and %d, want 0 and %d", c1.FoliosDisponibles, c2.FoliosDisponibles, total)
			}
			if c1.IsActive || !c2.IsActive {
				t.Errorf("is_active %v and %v, want the second CAF active", c1.IsActive, c2.IsActive)
			}
			page, err := s.Documents.List(ctx, emp.ID, api.DTEListParams{TipoDTE: 33, Estado: dte.EstadoFirmado, ListParams: api.ListParams{Limit: 1}})
			if err != nil || page.TotalCount != int64(total) {
				t.Fatalf("ListDTE total_count %v, %v; want %d firmado", page, err, total)
			}
		})
	}
}

// TestIdempotencyConcurrent: 50 concurrent requests with one key give one
// DTE; every other answer is the first response byte for byte (a replay)
// or IDEMPOTENCY_IN_PROGRESS; the same key with another body is refused.
func TestIdempotencyConcurrent(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			f := newFixture(t, b, true)
			ctx := context.Background()
			key := newKey()
			const n = 50
			type answer struct {
				res *emitAnswer
				err error
			}
			answers := make([]answer, n)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := 0; i < n; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					body := facturaBody(7)
					if i%2 == 1 { // the same request, written differently
						var v map[string]any
						_ = json.Unmarshal(body, &v)
						body, _ = json.MarshalIndent(v, "", "  ")
					}
					res, err := emitBody(f.s, ctx, f.emp.ID, key, body)
					answers[i] = answer{res, err}
				}()
			}
			close(start)
			wg.Wait()
			var firsts, replays, busy int
			var first []byte
			for _, a := range answers {
				switch {
				case a.err != nil && fault.KindOf(a.err) == fault.KindIdempotencyInProgress:
					if fault.As(a.err).Code != fault.IdempotencyInProgress {
						t.Errorf("in-progress code %s", fault.As(a.err).Code)
					}
					busy++
				case a.err != nil:
					t.Fatalf("unexpected error: %v", a.err)
				case !a.res.Replay:
					firsts++
					first = a.res.Body
				default:
					replays++
				}
			}
			if firsts != 1 || firsts+replays+busy != n {
				t.Fatalf("%d first answers, %d replays, %d in progress; want exactly one first", firsts, replays, busy)
			}
			t.Logf("%d requests: 1 first answer, %d byte-equal replays, %d IDEMPOTENCY_IN_PROGRESS", n, replays, busy)
			for _, a := range answers {
				if a.err == nil && !bytes.Equal(a.res.Body, first) {
					t.Errorf("answer %s differs from the first %s", a.res.Body, first)
				}
			}
			again, err := emitBody(f.s, ctx, f.emp.ID, key, facturaBody(7))
			if err != nil || !again.Replay || !bytes.Equal(again.Body, first) {
				t.Errorf("replay after completion: %v, %v", again, err)
			}
			page, err := f.s.Documents.List(ctx, f.emp.ID, api.DTEListParams{})
			if err != nil || page.TotalCount != 1 {
				t.Fatalf("%v DTEs (%v), want 1", page.TotalCount, err)
			}
			_, err = emitBody(f.s, ctx, f.emp.ID, key, facturaBody(8))
			if e := fault.As(err); e == nil || e.Kind != fault.KindIdempotencyMismatch || e.Code != fault.IdempotencyMismatch {
				t.Errorf("changed body: %v, want IDEMPOTENCY_BODY_MISMATCH", err)
			}
			// Keys are per company: another company may use the same key.
			other := setupOther(t, f.s)
			if _, err := emitBody(f.s, ctx, other.ID, key, facturaBody(8)); fault.KindOf(err) == fault.KindIdempotencyMismatch {
				t.Errorf("another company's key collided: %v", err)
			}
		})
	}
}

// setupOther creates a second company (another RUT) with no CAF.
func setupOther(t testing.TB, s *Service) *api.Empresa {
	t.Helper()
	in := demoEmpresa()
	in.Rut, in.RazonSocial = "11111111-1", "Otra Empresa SpA"
	emp, err := s.Company.Create(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return emp
}

func TestEmitAndRead(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			f := newFixture(t, b, true)
			ctx := context.Background()
			r := emitOK(t, f.s, f.emp.ID, facturaBody(3))
			// By hand: 3 × 1990 = 5970; 10000 − 5% = 9500; neto 15470,
			// IVA 19% = 2939.3 → 2939, total 18409.
			if r.Folio != 1 || r.TipoDTE != 33 || r.Estado != dte.EstadoFirmado || r.MontoTotal != 18409 {
				t.Errorf("response %+v", r)
			}
			d, err := f.s.Documents.Get(ctx, f.emp.ID, r.ID, api.DTEGetParams{IncludeXML: true})
			if err != nil {
				t.Fatal(err)
			}
			if d.MontoNeto == nil || *d.MontoNeto != 15470 || d.IVA == nil || *d.IVA != 2939 || d.MontoTotal != 18409 ||
				d.RutReceptor != "77777777-7" || len(d.Detalle) != 2 || d.Metadata["pedido"] != "A-3" || d.XMLDocumento == "" {
				t.Errorf("GetDTE %+v", d)
			}
			xml, err := f.s.Documents.XML(ctx, f.emp.ID, r.ID)
			if err != nil {
				t.Fatal(err)
			}
			if rep, err := dte.Verify(xml, creds(t).Keys); err != nil {
				t.Fatalf("the stored XML does not verify: %v %+v", err, rep)
			}
			if d, _ := f.s.Documents.Get(ctx, f.emp.ID, r.ID, api.DTEGetParams{}); d.XMLDocumento != "" {
				t.Error("xml_documento without include_xml")
			}
			xmlsecVerify(t, "dte", xml)
			for _, o := range []api.PDFOptions{{}, {Cedible: true}, {Formato: "80mm"}} {
				p, err := f.s.Documents.PDF(ctx, f.emp.ID, r.ID, o)
				if err != nil || !bytes.HasPrefix(p, []byte("%PDF-")) {
					t.Fatalf("DTEPDF %+v: %v", o, err)
				}
				text := pdfText(t, p)
				if !strings.Contains(text, "18.409") || strings.Contains(text, "CEDIBLE") != o.Cedible {
					t.Errorf("DTEPDF %+v: the text lacks the total or the cedible mark is wrong:\n%s", o, text)
				}
			}
			if _, err := f.s.Documents.PDF(ctx, f.emp.ID, r.ID, api.PDFOptions{Formato: "a4"}); fault.KindOf(err) != fault.KindValidation {
				t.Errorf("unknown format: %v", err)
			}
			// Validation failures take no folio.
			_, err = emitBody(f.s, ctx, f.emp.ID, newKey(), []byte(`{"tipo_dte":33,"receptor":{"rut":"1-1","razon_social":"x"},"detalle":[]}`))
			if e := fault.As(err); e == nil || e.Kind != fault.KindValidation || len(e.Details) == 0 {
				t.Errorf("invalid request: %v", err)
			}
			if _, err := emitBody(f.s, ctx, f.emp.ID, newKey(), []byte(`{"tipo_dte":33,"bogus":true}`)); fault.KindOf(err) != fault.KindValidation {
				t.Errorf("unknown field: %v", err)
			}
			if _, err := emitBody(f.s, ctx, f.emp.ID, "", facturaBody(1)); fault.KindOf(err) != fault.KindValidation {
				t.Errorf("no key: %v", err)
			}
			if r2 := emitOK(t, f.s, f.emp.ID, facturaBody(1)); r2.Folio != 2 {
				t.Errorf("after refused requests the next folio is %d, want 2", r2.Folio)
			}
			// No CAF for the type: conflict, no row.
			body := bytes.Replace(facturaBody(1), []byte(`"tipo_dte":33`), []byte(`"tipo_dte":34`), 1)
			body = bytes.Replace(body, []byte(`,"descuento_pct":5`), nil, 1)
			if _, err := emitBody(f.s, ctx, f.emp.ID, newKey(), body); fault.As(err) == nil || fault.As(err).Code != fault.NoFolios {
				t.Errorf("no CAF for 34: %v", err)
			}
		})
	}
}

// TestRecoveryFinishesPending simulates a crash after transaction 1: the
// pending row is finished by the recovery job with the same folio and
// instant, and the idempotency key then replays its response.
func TestRecoveryFinishesPending(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			f, cs := newCrashFixture(t, b)
			ctx := context.Background()
			key := newKey()
			// Transaction 1 commits; transaction 2 "crashes".
			cs.crash.Store(true)
			if _, err := emitBody(f.s, ctx, f.emp.ID, key, facturaBody(2)); !errors.Is(err, errSimulatedCrash) {
				t.Fatalf("simulated crash: %v", err)
			}
			cs.crash.Store(false)
			if _, err := emitBody(f.s, ctx, f.emp.ID, key, facturaBody(2)); fault.KindOf(err) != fault.KindIdempotencyInProgress {
				t.Errorf("retry while pending: %v, want in progress", err)
			}
			page, _ := f.s.st.ListDTEs(ctx, f.emp.ID, store.DTEFilter{Estado: store.EstadoPendiente})
			if page == nil || len(page.Items) != 1 {
				t.Fatalf("pending rows: %+v", page)
			}
			pend := page.Items[0]
			if d, _ := f.s.Documents.Get(ctx, f.emp.ID, pend.ID, api.DTEGetParams{}); d.Estado != dte.EstadoBorrador {
				t.Errorf("a pending DTE shows estado %q, want borrador", d.Estado)
			}
			if err := f.s.recoverDTE(ctx, f.emp.ID, pend.ID); err != nil {
				t.Fatal(err)
			}
			d, err := f.s.st.GetDTE(ctx, f.emp.ID, pend.ID)
			if err != nil || d.Estado != string(dte.EstadoFirmado) || d.Folio != pend.Folio || !d.EmittedAt.Equal(pend.EmittedAt) {
				t.Fatalf("recovered row %+v, %v", d, err)
			}
			doc, err := dte.ParseDTE(d.XML)
			if err != nil {
				t.Fatal(err)
			}
			if want := dte.ChileTime(pend.EmittedAt).Format("2006-01-02T15:04:05"); doc.TmstFirma != want || doc.Folio != pend.Folio {
				t.Errorf("recovered document TmstFirma %s folio %d, want %s and %d", doc.TmstFirma, doc.Folio, want, pend.Folio)
			}
			if _, err := dte.Verify(d.XML, creds(t).Keys); err != nil {
				t.Errorf("recovered XML: %v", err)
			}
			res, err := emitBody(f.s, ctx, f.emp.ID, key, facturaBody(2))
			if err != nil || !res.Replay || res.ID != pend.ID {
				t.Errorf("replay after recovery: %+v, %v", res, err)
			}
			events, err := f.s.st.ListEvents(ctx, f.emp.ID, store.ListFilter{})
			if err != nil || events.TotalCount != 1 || events.Items[0].Type != "dte.created" {
				t.Errorf("events after recovery: %+v, %v", events, err)
			}
			// Running recovery again changes nothing.
			if err := f.s.recoverDTE(ctx, f.emp.ID, pend.ID); err != nil {
				t.Fatal(err)
			}
			if n, err := f.s.recoverPendingOlder(ctx, f.s.now().Add(1e12)); n != 0 || err != nil {
				t.Errorf("sweep after recovery: %d, %v", n, err)
			}
		})
	}
}

// TestRecoveryJobFinishesPending leaves emissions pending as a crash after
// transaction 1 would, in two windows of the recovery job, and waits for
// the recovery jobs (not the sweep, which runs every few minutes) to sign
// them with their folios: one job covers every emission of its window.
func TestRecoveryJobFinishesPending(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			f, cs := newCrashFixture(t, b)
			ctx := context.Background()
			// The sweep leaves rows younger than an hour alone; the jobs
			// run 300 ms after their one-second window.
			f.s.recAge, f.s.recDelay = time.Hour, 300*time.Millisecond
			if err := f.s.Start(ctx); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.s.Stop(context.Background()) })
			crash := func() {
				t.Helper()
				cs.crash.Store(true)
				defer cs.crash.Store(false)
				if _, err := emitBody(f.s, ctx, f.emp.ID, newKey(), facturaBody(1)); !errors.Is(err, errSimulatedCrash) {
					t.Fatalf("simulated crash: %v", err)
				}
			}
			crash()
			crash() // same window: no second job
			time.Sleep(recoveryWindow + 100*time.Millisecond)
			crash() // a later window
			deadline := time.Now().Add(20 * time.Second)
			for {
				page, err := f.s.st.ListDTEs(ctx, f.emp.ID, store.DTEFilter{Estado: string(dte.EstadoFirmado)})
				if err != nil {
					t.Fatal(err)
				}
				if len(page.Items) == 3 {
					folios := map[int64]bool{}
					for _, it := range page.Items {
						d, err := f.s.st.GetDTE(ctx, f.emp.ID, it.ID)
						if err != nil {
							t.Fatal(err)
						}
						folios[d.Folio] = true
						if _, err := dte.Verify(d.XML, creds(t).Keys); err != nil {
							t.Errorf("recovered folio %d: %v", d.Folio, err)
						}
					}
					if !folios[1] || !folios[2] || !folios[3] {
						t.Errorf("recovered folios %v, want 1, 2 and 3", folios)
					}
					return
				}
				if time.Now().After(deadline) {
					pend, _ := f.s.st.ListDTEs(ctx, f.emp.ID, store.DTEFilter{Estado: store.EstadoPendiente})
					t.Fatalf("after 20 s %d documents signed, %d still pending", len(page.Items), len(pend.Items))
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}

// stealStore passes writes through until armed; the first write after
// that is rolled back, another transaction takes the next folio, and the
// write runs again: transaction 1 then commits another folio than the one
// it took on its first run.
type stealStore struct {
	store.Store
	empresaID string
	armed     atomic.Bool
}

func (w *stealStore) Write(ctx context.Context, fn func(ctx context.Context, tx store.Tx) error) error {
	if !w.armed.CompareAndSwap(true, false) {
		return w.Store.Write(ctx, fn)
	}
	return rerunStore{Store: w.Store, between: func(ctx context.Context) error {
		// Time for the emission to start signing the first run's folio.
		time.Sleep(100 * time.Millisecond)
		return w.Store.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			_, _, err := tx.TakeFolio(ctx, w.empresaID, 33)
			return err
		})
	}}.Write(ctx, fn)
}

// TestEmitSignsTheCommittedFolio: the signature starts while transaction
// 1 commits; when that transaction runs again after a rollback and commits
// another folio, the stored document must carry and sign the committed
// folio, not the one the first run took.
func TestEmitSignsTheCommittedFolio(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			f := newFixture(t, b, true)
			ctx := context.Background()
			st := &stealStore{Store: f.s.st, empresaID: f.emp.ID}
			f.s.group.st = st
			st.armed.Store(true)
			r := emitOK(t, f.s, f.emp.ID, facturaBody(1))
			if st.armed.Load() {
				t.Fatal("the emission never wrote through the rolling-back store")
			}
			if r.Folio != 2 {
				t.Fatalf("folio %d, want 2 (folio 1 went to another transaction)", r.Folio)
			}
			xml, err := f.s.Documents.XML(ctx, f.emp.ID, r.ID)
			if err != nil {
				t.Fatal(err)
			}
			if rep, err := dte.Verify(xml, creds(t).Keys); err != nil {
				t.Fatalf("the stored XML does not verify: %v %+v", err, rep)
			}
			if !bytes.Contains(xml, []byte("<Folio>2</Folio>")) || !bytes.Contains(xml, []byte(`ID="T33F2"`)) {
				t.Fatalf("the stored XML is not the document of folio 2:\n%s", xml)
			}
		})
	}
}

// emitAnswer is Emit's answer as the tests compare it: the response, its
// JSON and whether it was a replay.
type emitAnswer struct {
	Resp   *api.EmitResponse
	Body   []byte
	Replay bool
	ID     string
}

// emitBody emits the JSON request body as an HTTP layer does: strict
// decoding (dte.DecodeRequest), then Emit.
func emitBody(s *Service, ctx context.Context, empresaID, key string, body []byte) (*emitAnswer, error) {
	if _, err := ParseIdempotencyKey(key); err != nil {
		return nil, err
	}
	req, err := dte.DecodeRequest(bytes.NewReader(body))
	if err != nil {
		return nil, fault.As(err)
	}
	resp, replayed, err := s.Documents.Emit(ctx, empresaID, api.EmitParams{IdempotencyKey: key, Request: req})
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(resp)
	if err != nil {
		return nil, err
	}
	return &emitAnswer{Resp: resp, Body: b, Replay: replayed, ID: resp.ID}, nil
}

// TestIdempotencyKeySpellings: one UUID written five ways (the canonical
// form, upper case, braces, urn:uuid: and without dashes, all of which
// uuid.Parse reads) is one key: one document, one folio, four replays.
func TestIdempotencyKeySpellings(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			f := newFixture(t, b, true)
			ctx := context.Background()
			const canon = "0b6f3c1e-5d7a-4c8e-9f10-2a3b4c5d6e7f"
			spellings := []string{canon, "0B6F3C1E-5D7A-4C8E-9F10-2A3B4C5D6E7F", "{" + canon + "}",
				"urn:uuid:" + canon, "0b6f3c1e5d7a4c8e9f102a3b4c5d6e7f"}
			var first *emitAnswer
			for i, key := range spellings {
				res, err := emitBody(f.s, ctx, f.emp.ID, key, facturaBody(1))
				if err != nil {
					t.Fatalf("key %q: %v", key, err)
				}
				if i == 0 {
					first = res
					if res.Replay {
						t.Fatal("the first emission answered as a replay")
					}
					continue
				}
				if !res.Replay || res.ID != first.ID {
					t.Errorf("key %q: replay %v, id %s; want a replay of %s", key, res.Replay, res.ID, first.ID)
				}
			}
			page, err := f.s.Documents.List(ctx, f.emp.ID, api.DTEListParams{})
			if err != nil || page.TotalCount != 1 {
				t.Fatalf("documents after five spellings of one key: %v, %v; want 1", page, err)
			}
			rec, err := f.s.st.GetIdempotency(ctx, f.emp.ID, f.emp.Ambiente, canon)
			if err != nil || rec.DTEID != first.ID {
				t.Errorf("the key is not stored in its canonical form: %+v, %v", rec, err)
			}
		})
	}
}
