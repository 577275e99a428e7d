package pdf_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/internal/oracle"
)

// The documents under test are real emitted DTEs: the project's sample
// requests (testdata/requests/*.json, one per type, with ñ, accents, &, '
// and " in names) run through dte.Emitter with the test credentials, then
// read back with dte.ParseDTE, as a caller of Render would.

// fixedNow is the emission clock: after every sample's fecha_emision.
var fixedNow = time.Date(2025, 6, 3, 10, 30, 0, 0, time.UTC)

var (
	emitOnce sync.Once
	emitter  *dte.Emitter
	emitErr  error
)

// sharedEmitter returns the shared emitter (one 2048-bit key per test
// binary).
func sharedEmitter() (*dte.Emitter, error) {
	emitOnce.Do(func() {
		c, err := dtetest.NewWith(dtetest.Options{
			Now:               fixedNow,
			FechaAutorizacion: time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC),
		})
		if err != nil {
			emitErr = err
			return
		}
		emitter, emitErr = c.Emitter(func() time.Time { return fixedNow })
	})
	return emitter, emitErr
}

// testEmitter is sharedEmitter failing the test on error.
func testEmitter(tb testing.TB) *dte.Emitter {
	tb.Helper()
	em, err := sharedEmitter()
	if err != nil {
		tb.Fatalf("test credentials: %v", err)
	}
	return em
}

// sample is one emitted document.
type sample struct {
	name string // request file name without extension
	xml  []byte
	doc  *dte.Document
}

var (
	samplesOnce sync.Once
	samplesVal  map[dte.TipoDTE]*sample
	samplesErr  error
)

// loadRequest reads a sample request from dir.
func loadRequest(dir, name string) (*dte.EmitirDTERequest, error) {
	p := filepath.Join(dir, name+".json")
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	var req dte.EmitirDTERequest
	if err := json.Unmarshal(b, &req); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", p, err)
	}
	return &req, nil
}

// readRequest loads a sample request from testdata/requests.
func readRequest(tb testing.TB, name string) *dte.EmitirDTERequest {
	tb.Helper()
	req, err := loadRequest(filepath.Join(oracle.RepoRoot(tb), "testdata", "requests"), name)
	if err != nil {
		tb.Fatal(err)
	}
	return req
}

// emitDoc runs a request through the pipeline and parses the result back.
func emitDoc(em *dte.Emitter, name string, req *dte.EmitirDTERequest) (*sample, error) {
	out, err := em.Emit(context.Background(), req)
	if err != nil {
		return nil, fmt.Errorf("emitting %s: %w", name, err)
	}
	doc, err := dte.ParseDTE(out.XML)
	if err != nil {
		return nil, fmt.Errorf("parsing the emitted %s: %w", name, err)
	}
	return &sample{name: name, xml: out.XML, doc: doc}, nil
}

// emit is emitDoc failing the test on error.
func emit(tb testing.TB, name string, req *dte.EmitirDTERequest) *sample {
	tb.Helper()
	s, err := emitDoc(testEmitter(tb), name, req)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// samples emits every request in testdata/requests once per test binary
// and returns them by type; it fails unless all twelve types are there.
func samples(tb testing.TB) map[dte.TipoDTE]*sample {
	tb.Helper()
	samplesOnce.Do(func() {
		dir := filepath.Join(oracle.RepoRoot(tb), "testdata", "requests")
		files, err := filepath.Glob(filepath.Join(dir, "*.json"))
		if err != nil || len(files) == 0 {
			samplesErr = fmt.Errorf("no sample requests in %s (%v)", dir, err)
			return
		}
		sort.Strings(files)
		em, err := sharedEmitter()
		if err != nil {
			samplesErr = err
			return
		}
		samplesVal = map[dte.TipoDTE]*sample{}
		for _, f := range files {
			name := strings.TrimSuffix(filepath.Base(f), ".json")
			req, err := loadRequest(dir, name)
			if err != nil {
				samplesErr = err
				return
			}
			s, err := emitDoc(em, name, req)
			if err != nil {
				samplesErr = err
				return
			}
			samplesVal[s.doc.Tipo] = s
		}
		for _, t := range dte.Tipos() {
			if samplesVal[t] == nil {
				samplesErr = fmt.Errorf("testdata/requests has no request of type %d", t)
			}
		}
	})
	if samplesErr != nil {
		tb.Fatal(samplesErr)
	}
	return samplesVal
}

// manyLines emits the sample factura with its detail repeated to n lines.
func manyLines(tb testing.TB, n int) *sample {
	tb.Helper()
	req := readRequest(tb, "factura")
	base := req.Detalle
	req.Detalle = nil
	for i := range n {
		l := base[i%len(base)]
		l.Nombre = fmt.Sprintf("%s, línea %d", l.Nombre, i+1)
		req.Detalle = append(req.Detalle, l)
	}
	return emit(tb, fmt.Sprintf("factura-%d-lineas", n), req)
}
