package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/sii/siitest"
)

// TestServeEnvios: the built "dtekit serve --demo", sending to a fake SII
// in this process (DTEKIT_SII_URL), holds documents emitted with
// auto_send false, sends three facturas in one envelope and two boletas in
// another (POST /envios) and a fourth factura alone (POST
// /dte/{id}/enviar), and GET /envios/{id} reads each envelope's track id
// and each document's result: the fake's review rejects one factura and
// objects to one boleta, and each document ends in its own state. The
// fake filed exactly those three envelopes, each document once.
func TestServeEnvios(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	t.Parallel()
	fake := siitest.New(siitest.Options{Steps: []string{"SOK", "FOK"}, StepEvery: 200 * time.Millisecond}).Start()
	defer fake.Close()
	fake.Register(dtetest.SignerRUT, dtetest.EmisorRUT)
	fake.Script(dtetest.EmisorRUT, 33, 2, siitest.Outcome{Result: siitest.Rejected, Detail: "DTE-3-101"})
	fake.Script(dtetest.EmisorRUT, 39, 2, siitest.Outcome{Result: siitest.Reparo, Detail: "REF-2-750"})
	bin := buildDtekit(t)
	data := filepath.Join(t.TempDir(), "data")
	p := startServeFlags(t, bin, data, nil, siiURLEnv+"="+fake.Endpoints().Classic)
	defer p.stop(t)
	demo := readDemoFile(t, data)
	client := &http.Client{Timeout: 30 * time.Second}
	api := p.base + "/api/v1/billing"

	emit := func(tipo int) (string, int64) {
		t.Helper()
		status, body := call(t, client, "POST", api+"/dte", demo.APIKey, e2eRequest(tipo, false))
		var r struct {
			ID    string
			Folio int64
		}
		if status != 201 || json.Unmarshal(body, &r) != nil {
			t.Fatalf("emitting tipo %d: %d %s", tipo, status, body)
		}
		return r.ID, r.Folio
	}
	var facturas, boletas []string
	for range 4 {
		id, _ := emit(33)
		facturas = append(facturas, id)
	}
	for range 2 {
		id, _ := emit(39)
		boletas = append(boletas, id)
	}
	type envio struct {
		ID         string  `json:"id"`
		Tipo       string  `json:"tipo"`
		Estado     string  `json:"estado"`
		TrackID    *string `json:"track_id"`
		Documentos []struct {
			DTEID     string  `json:"dte_id"`
			Folio     int64   `json:"folio"`
			Estado    string  `json:"estado"`
			CodigoSII *string `json:"codigo_sii"`
		} `json:"documentos"`
	}
	send := func(url string, body []byte) envio {
		t.Helper()
		if body == nil {
			body = []byte(`{}`) // call sends an Idempotency-Key with a body
		}
		status, answer := call(t, client, "POST", url, demo.APIKey, body)
		var e envio
		if status != 201 || json.Unmarshal(answer, &e) != nil {
			t.Fatalf("POST %s: %d %s", url, status, answer)
		}
		return e
	}
	body := func(ids []string) []byte {
		b, _ := json.Marshal(map[string]any{"dte_ids": ids})
		return b
	}
	// Still held: firmado, in no envelope.
	status, answer := call(t, client, "GET", api+"/dte/"+facturas[0], demo.APIKey, nil)
	var d struct {
		Estado string `json:"estado"`
	}
	if status != 200 || json.Unmarshal(answer, &d) != nil || d.Estado != "firmado" {
		t.Fatalf("a held factura: %d %s", status, answer)
	}
	// A boleta and a factura do not share an envelope.
	if status, answer := call(t, client, "POST", api+"/envios", demo.APIKey, body([]string{facturas[0], boletas[0]})); status != 400 {
		t.Errorf("a mixed envelope: %d %s, want 400", status, answer)
	}
	envs := []envio{send(api+"/envios", body(facturas[:3])), send(api+"/envios", body(boletas)), send(api+"/dte/"+facturas[3]+"/enviar", nil)}
	if status, answer := call(t, client, "POST", api+"/dte/"+facturas[0]+"/enviar", demo.APIKey, []byte(`{}`)); status != 409 {
		t.Errorf("sending a factura on its way again: %d %s, want 409", status, answer)
	}
	want := [][]string{{"aceptado", "rechazado", "aceptado"}, {"aceptado", "con_reparos"}, {"aceptado"}}
	kinds := []string{"EnvioDTE", "EnvioBOLETA", "EnvioDTE"}
	deadline := time.Now().Add(time.Minute)
	for i, e := range envs {
		for e.Estado != "procesado" {
			if time.Now().After(deadline) {
				t.Fatalf("envelope %s still %s a minute on", e.ID, e.Estado)
			}
			time.Sleep(200 * time.Millisecond)
			status, answer := call(t, client, "GET", api+"/envios/"+e.ID, demo.APIKey, nil)
			if status != 200 || json.Unmarshal(answer, &e) != nil {
				t.Fatalf("GET /envios/%s: %d %s", e.ID, status, answer)
			}
		}
		var got []string
		for _, doc := range e.Documentos {
			got = append(got, doc.Estado)
		}
		if e.Tipo != kinds[i] || e.TrackID == nil || !slices.Equal(got, want[i]) {
			t.Errorf("envelope %d: %s track id %v, results %v; want an %s with its track id and %v", i, e.Tipo, e.TrackID, got, kinds[i], want[i])
		}
	}
	var shapes []string
	for _, e := range fake.Envelopes() {
		shape := ""
		for _, doc := range e.Docs {
			shape += fmt.Sprintf("%d/%d ", doc.Tipo, doc.Folio)
		}
		shapes = append(shapes, shape)
	}
	slices.Sort(shapes)
	if wantShapes := []string{"33/1 33/2 33/3 ", "33/4 ", "39/1 39/2 "}; !slices.Equal(shapes, wantShapes) {
		t.Errorf("the fake filed %q, want %q", shapes, wantShapes)
	}
	// The list shows the three, newest first.
	status, answer = call(t, client, "GET", api+"/envios", demo.APIKey, nil)
	var page struct {
		Data       []envio `json:"data"`
		TotalCount int     `json:"total_count"`
	}
	if status != 200 || json.Unmarshal(answer, &page) != nil || page.TotalCount != 3 || len(page.Data) != 3 || page.Data[0].ID != envs[2].ID {
		t.Errorf("GET /envios: %d %s", status, answer)
	}
}
