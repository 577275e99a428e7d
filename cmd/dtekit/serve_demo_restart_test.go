package main

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"
	"time"
)

// TestServeDemoRestartKeepsItsSII: "serve --demo" started, used, stopped
// and started again over the same data directory (in process): the
// demo's fake SII remembers what it accepted, so the README's claim step
// on a supplier's factura answers 200 after the restart (the registry
// knows the document), and the track ids it gives after the restart are
// new ones.
func TestServeDemoRestartKeepsItsSII(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo server twice; skipped with -short")
	}
	t.Parallel()
	data := filepath.Join(t.TempDir(), "data")
	hc := &http.Client{Timeout: 30 * time.Second}
	type doc struct {
		ID       string
		Estado   string
		Tracking *struct {
			TrackID *string `json:"track_id"`
		}
	}
	// settled waits until every document of the company with this key is
	// aceptado and returns their track ids.
	settled := func(api, key string, want int) map[string]string {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			status, body := call(t, hc, "GET", api+"/dte?limit=100", key, nil)
			var page struct{ Items []doc }
			if status != 200 || json.Unmarshal(body, &page) != nil {
				t.Fatalf("GET /dte: %d %s", status, body)
			}
			tracks := map[string]string{}
			for _, d := range page.Items {
				if d.Estado == "aceptado" && d.Tracking != nil && d.Tracking.TrackID != nil {
					tracks[d.ID] = *d.Tracking.TrackID
				}
			}
			if len(page.Items) == want && len(tracks) == want {
				return tracks
			}
			if time.Now().After(deadline) {
				t.Fatalf("documents not accepted within a minute: %s", body)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	pending := func(api, key string) []string {
		t.Helper()
		status, body := call(t, hc, "GET", api+"/recibidos?estado=pendiente", key, nil)
		var page struct{ Data []struct{ ID string } }
		if status != 200 || json.Unmarshal(body, &page) != nil {
			t.Fatalf("GET /recibidos: %d %s", status, body)
		}
		var ids []string
		for _, r := range page.Data {
			ids = append(ids, r.ID)
		}
		return ids
	}

	seen, before := map[string]bool{}, map[string]bool{}
	r := serveOnce(t, data, nil, true, func(base string) {
		api := base + "/api/v1/billing"
		demo := readDemoFile(t, data)
		if status, body := call(t, hc, "POST", api+"/dte", demo.APIKey, []byte(demoFactura)); status != 201 {
			t.Fatalf("emit: %d %s", status, body)
		}
		for id, tr := range settled(api, demo.APIKey, 1) {
			seen[tr], before[id] = true, true
		}
		for _, tr := range settled(api, demo.Proveedor.APIKey, demoSupplierDocs) {
			seen[tr] = true
		}
		ids := pending(api, demo.APIKey)
		if len(ids) != demoSupplierDocs {
			t.Fatalf("%d pending recibidos, want %d", len(ids), demoSupplierDocs)
		}
		if status, body := call(t, hc, "POST", api+"/recibidos/"+ids[0]+"/aceptar", demo.APIKey, nil); status != 200 {
			t.Fatalf("accept before the restart: %d %s", status, body)
		}
	})
	if r.code != 0 || t.Failed() {
		t.Fatalf("first run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	r = serveOnce(t, data, nil, true, func(base string) {
		api := base + "/api/v1/billing"
		demo := readDemoFile(t, data)
		ids := pending(api, demo.APIKey)
		if len(ids) != demoSupplierDocs-1 {
			t.Fatalf("%d pending recibidos after the restart, want %d", len(ids), demoSupplierDocs-1)
		}
		status, body := call(t, hc, "POST", api+"/recibidos/"+ids[0]+"/reclamar", demo.APIKey,
			[]byte(`{"tipo":"RCD","motivo":"Precio distinto al pactado"}`))
		if status != 200 {
			t.Errorf("claim after the restart: %d %s", status, body)
		}
		if status, body := call(t, hc, "POST", api+"/dte", demo.APIKey, []byte(demoFactura)); status != 201 {
			t.Fatalf("emit after the restart: %d %s", status, body)
		}
		for id, tr := range settled(api, demo.APIKey, 2) {
			if !before[id] && seen[tr] {
				t.Errorf("document %s got track id %s, given before the restart too", id, tr)
			}
		}
	})
	if r.code != 0 {
		t.Fatalf("second run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}
