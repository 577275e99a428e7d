package main

import (
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/internal/pgtest"
	"github.com/dtekit/dtekit/sii/siitest"
)

// TestTwoServersOnePostgres runs two "dtekit serve" processes on one
// PostgreSQL database, emits through both at once, kills one with SIGKILL in
// the middle, and checks that every acknowledged document is stored and
// that the folios are unique and contiguous once the surviving process has
// recovered the emissions the killed one left half-way.
func TestTwoServersOnePostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs two servers on PostgreSQL; skipped with -short")
	}
	t.Parallel()
	dbURL := pgtest.URL(t)
	bin := buildDtekit(t)
	// The data directory holds only the demo's keys and demo.json; both
	// processes share it, and the records live in PostgreSQL.
	data := filepath.Join(t.TempDir(), "data")
	// Both submit to one fake SII in this process, whose log shows that
	// each submission job ran once.
	fake := siitest.New(siitest.Options{Steps: []string{"SOK"}, StepEvery: 500 * time.Millisecond}).Start()
	defer fake.Close()
	fake.Register(dtetest.SignerRUT, dtetest.EmisorRUT)
	env := []string{"DTEKIT_DATABASE_URL=" + dbURL, "DTEKIT_KEK=" + hex.EncodeToString([]byte("0123456789abcdef0123456789abcdef")),
		siiURLEnv + "=" + fake.Endpoints().Classic, rescueAfterEnv + "=1m"}
	p1 := startServe(t, bin, data, env...)
	p2 := startServe(t, bin, data, env...)
	demo := readDemoFile(t, data)

	var mu sync.Mutex
	acked := map[string]bool{}
	load := func(base string, clients, each int, wg *sync.WaitGroup) {
		for c := 0; c < clients; c++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				hc := &http.Client{Timeout: 30 * time.Second}
				for n := 0; n < each; n++ {
					status, b, err := postDemoFactura(hc, base+"/api/v1/billing", demo.APIKey)
					if err != nil {
						return // the process was killed
					}
					if status == 201 {
						var r struct{ ID string }
						json.Unmarshal(b, &r)
						mu.Lock()
						acked[r.ID] = true
						mu.Unlock()
					} else if status >= 500 {
						t.Errorf("emit through %s: %d %s", base, status, b)
						return
					}
				}
			}()
		}
	}
	var wg1, wg2 sync.WaitGroup
	load(p1.base, 3, 40, &wg1)
	load(p2.base, 3, 1000, &wg2)
	time.Sleep(2 * time.Second)
	p2.kill(t)
	wg2.Wait()
	wg1.Wait()
	if len(acked) < 20 {
		t.Fatalf("only %d documents acknowledged", len(acked))
	}

	// The survivor's recovery job finishes what the killed process left
	// half-way (after billing's recovery delay, 30 s by default).
	list := func() []dteRow { return listFacturas(t, p1.base, demo.APIKey) }
	deadline := time.Now().Add(150 * time.Second)
	var rows []dteRow
	for {
		rows = list()
		pending := 0
		for _, r := range rows {
			// Signed documents move on (--demo submits them to a fake
			// SII); only an unfinished emission is still a borrador.
			if r.Estado == "borrador" || r.Estado == "generado" {
				pending++
			}
		}
		if pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d documents still not signed 150 s after the kill", pending)
		}
		time.Sleep(2 * time.Second)
	}
	// Every submission job ran once: each document is aceptado and
	// reached the fake in exactly one envelope.
	for notFinal := -1; notFinal != 0; {
		notFinal = 0
		for _, r := range list() {
			if r.Estado != "aceptado" {
				notFinal++
			}
		}
		if notFinal > 0 && time.Now().After(deadline) {
			t.Fatalf("%d documents not aceptado 150 s after the kill", notFinal)
		}
		if notFinal > 0 {
			time.Sleep(2 * time.Second)
		}
	}
	perFolio := map[int64]int{}
	for _, e := range fake.Envelopes() {
		for _, d := range e.Docs {
			perFolio[d.Folio]++
		}
	}
	for _, r := range rows {
		if perFolio[r.Folio] != 1 {
			t.Errorf("folio %d reached the fake SII in %d envelopes, want 1", r.Folio, perFolio[r.Folio])
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Folio < rows[j].Folio })
	for i, r := range rows {
		if r.Folio != int64(i+1) {
			t.Fatalf("folios are not 1..%d without gaps or repeats: position %d holds folio %d", len(rows), i, r.Folio)
		}
	}
	stored := map[string]bool{}
	for _, r := range rows {
		stored[r.ID] = true
	}
	for id := range acked {
		if !stored[id] {
			t.Errorf("acknowledged document %s is missing", id)
		}
	}
	t.Logf("%d documents acknowledged through two processes (one killed); %d stored, folios 1..%d contiguous, each uploaded once (%d uploads)",
		len(acked), len(rows), len(rows), len(fake.Requests(siitest.Upload)))
	p1.stop(t)
}

// dteRow is a document as the list of documents shows it.
type dteRow struct {
	ID     string
	Folio  int64
	Estado string
}

// listFacturas lists every factura (tipo 33) of the company of key,
// through the server at base, page after page.
func listFacturas(t *testing.T, base, key string) []dteRow {
	t.Helper()
	var all []dteRow
	cursor := ""
	for {
		u := base + "/api/v1/billing/dte?tipo_dte=33&limit=100"
		if cursor != "" {
			u += "&cursor=" + url.QueryEscape(cursor)
		}
		status, body := call(t, &http.Client{Timeout: 30 * time.Second}, "GET", u, key, nil)
		if status != 200 {
			t.Fatalf("list: %d %s", status, body)
		}
		var page struct {
			Items      []dteRow
			NextCursor *string `json:"next_cursor"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			t.Fatalf("list: %v: %s", err, body)
		}
		all = append(all, page.Items...)
		if page.NextCursor == nil {
			return all
		}
		cursor = *page.NextCursor
	}
}
