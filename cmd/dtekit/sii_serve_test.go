package main

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// TestServeDemoSubmits: with "dtekit serve --demo" a factura emitted with
// auto_send reaches aceptado within a minute through the in-process fake
// SII, with its track id and status query recorded.
func TestServeDemoSubmits(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	t.Parallel()
	bin := buildDtekit(t)
	data := filepath.Join(t.TempDir(), "data")
	p := startServe(t, bin, data)
	defer p.stop(t)
	demo := readDemoFile(t, data)
	client := &http.Client{Timeout: 30 * time.Second}
	api := p.base + "/api/v1/billing"
	status, body := call(t, client, "POST", api+"/dte", demo.APIKey, []byte(demoFactura))
	if status != 201 {
		t.Fatalf("emit: %d %s", status, body)
	}
	var em struct{ ID string }
	json.Unmarshal(body, &em)
	start := time.Now()
	var d struct {
		Estado   string
		Tracking struct {
			TrackID   string `json:"track_id"`
			Aceptados int
		}
		SIIStatus struct {
			EstadoSII string `json:"estado_sii"`
		} `json:"sii_status"`
	}
	var seen []string
	for time.Since(start) < time.Minute {
		status, body = call(t, client, "GET", api+"/dte/"+em.ID, demo.APIKey, nil)
		if status != 200 || json.Unmarshal(body, &d) != nil {
			t.Fatalf("get: %d %s", status, body)
		}
		if len(seen) == 0 || seen[len(seen)-1] != d.Estado {
			seen = append(seen, d.Estado)
		}
		if d.Estado == "aceptado" {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if d.Estado != "aceptado" {
		t.Fatalf("after a minute the factura is %s (states %v): %s", d.Estado, seen, body)
	}
	if !regexp.MustCompile(`^[0-9]{10}$`).MatchString(d.Tracking.TrackID) || d.Tracking.Aceptados != 1 || d.SIIStatus.EstadoSII != "EPR" {
		t.Errorf("tracking %+v sii_status %+v", d.Tracking, d.SIIStatus)
	}
	t.Logf("aceptado %.1f s after emission (states %v)", time.Since(start).Seconds(), seen)
}
