package webhook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// sampleEvents reads testdata/webhook/events.json, the hand-written
// payload reference.
func sampleEvents(t *testing.T) []json.RawMessage { return sampleEventsF(t) }

// sampleEventsF is sampleEvents for any testing.TB, fuzz targets included.
func sampleEventsF(t testing.TB) []json.RawMessage {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "webhook", "events.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Events []json.RawMessage `json:"events"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	return f.Events
}

// jsonFields lists the JSON names of a struct type's fields.
func jsonFields(typ reflect.Type) []string {
	var names []string
	for i := 0; i < typ.NumField(); i++ {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

func TestSampleEventsMatchTypes(t *testing.T) {
	samples := sampleEvents(t)
	seen := map[EventType]bool{}
	for _, raw := range samples {
		e, err := ParseEvent(raw)
		if err != nil {
			t.Fatalf("ParseEvent(%s): %v", raw, err)
		}
		seen[e.Type] = true
		var data any
		switch {
		case e.Type.IsDTE():
			data, err = e.DTE()
		case e.Type == EventCAFLowStock:
			data, err = e.CAFLowStock()
		case e.Type == EventCertificadoExpiring:
			data, err = e.CertificadoExpiring()
		case e.Type == EventRecibidoCreated || e.Type == EventRecibidoPlazoPorVencer:
			data, err = e.Recibido()
		default:
			t.Fatalf("sample of unknown type %q", e.Type)
		}
		if err != nil {
			t.Fatalf("%s data: %v", e.Type, err)
		}
		// Every field of the sample is documented in the Go type, and
		// every documented field appears in the sample.
		var m map[string]json.RawMessage
		if err := json.Unmarshal(e.Data, &m); err != nil {
			t.Fatal(err)
		}
		var keys []string
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		want := jsonFields(reflect.TypeOf(data))
		if e.Type == EventDTECreated { // codigo_sii and glosa_sii are omitted before submission
			want = without(want, "codigo_sii", "glosa_sii")
		}
		if e.Type.IsDTE() && !strings.HasPrefix(string(e.Type), "dte.receptor_") && e.Type != EventDTEMercaderiasRecibidas {
			want = without(want, "receptor") // only the receptor's answers carry it
		}
		if e.Type != EventDTECedido && e.Type != EventDTECesionRechazada {
			want = without(want, "cesion") // only the cesión's events carry it
		}
		if !reflect.DeepEqual(keys, want) {
			t.Errorf("%s: sample fields %v, Go type fields %v", e.Type, keys, want)
		}
		// Re-encoding the decoded data through MarshalEvent gives the
		// sample back, field for field.
		out, err := MarshalEvent(e.Type, e.Timestamp, data)
		if err != nil {
			t.Fatal(err)
		}
		var a, b any
		json.Unmarshal(raw, &a)
		json.Unmarshal(out, &b)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: MarshalEvent gives\n%s\nwant\n%s", e.Type, out, raw)
		}
	}
	for _, typ := range EventTypes() {
		if !seen[typ] {
			t.Errorf("no sample for %s", typ)
		}
	}
}

func without(list []string, drop ...string) []string {
	var out []string
	for _, s := range list {
		keep := true
		for _, d := range drop {
			keep = keep && s != d
		}
		if keep {
			out = append(out, s)
		}
	}
	return out
}

func TestSampleValues(t *testing.T) {
	samples := sampleEvents(t)
	e, err := ParseEvent(samples[1])
	if err != nil {
		t.Fatal(err)
	}
	d, err := e.DTE()
	if err != nil {
		t.Fatal(err)
	}
	if e.Type != EventDTEAccepted || !e.Timestamp.Equal(time.Date(2026, 3, 2, 14, 21, 47, 0, time.UTC)) {
		t.Errorf("envelope = %s %s", e.Type, e.Timestamp)
	}
	if d.TipoDTE != 33 || d.Folio != 1532 || d.Estado != "aceptado" || d.MontoTotal != 119000 || d.TrackID == nil || *d.TrackID != "0248117921" || d.RutReceptor != "76192083-9" {
		t.Errorf("data = %+v", d)
	}
	if d.Ambiente != "produccion" {
		t.Errorf("dte.accepted ambiente = %q, want produccion", d.Ambiente)
	}
	e, _ = ParseEvent(samples[2])
	if d, err := e.DTE(); err != nil || d.Ambiente != "certificacion" {
		t.Errorf("dte.rejected ambiente = %q, %v; want certificacion", d.Ambiente, err)
	}
	e, _ = ParseEvent(samples[0])
	if d, _ := e.DTE(); d.TrackID != nil {
		t.Errorf("dte.created track_id = %v, want null", *d.TrackID)
	}
	e, _ = ParseEvent(samples[4])
	if c, err := e.CAFLowStock(); err != nil || c.FoliosDisponibles != 50 || c.Umbral != 50 || c.FolioHasta != 1600 {
		t.Errorf("caf.low_stock = %+v, %v", c, err)
	}
	e, _ = ParseEvent(samples[5])
	if c, err := e.CertificadoExpiring(); err != nil || c.DiasParaVencimiento != 30 || c.FechaVencimiento != "2026-04-01" {
		t.Errorf("certificado.expiring = %+v, %v", c, err)
	}
	if _, err := e.DTE(); err == nil {
		t.Error("DTE() on a certificado.expiring event succeeded")
	}
	if _, err := e.CAFLowStock(); err == nil {
		t.Error("CAFLowStock() on a certificado.expiring event succeeded")
	}
}

// TestDTEDataWithoutAmbiente: a dte.* body recorded before ambiente joined
// the payload (an event stored earlier and delivered or resent now) still
// decodes, with Ambiente empty, and a DTEData without one is marshalled
// without the key.
func TestDTEDataWithoutAmbiente(t *testing.T) {
	body := `{"type":"dte.accepted","timestamp":"2026-03-02T14:21:47Z","data":{"id":"5d0c7a2e-8f1b-4c3e-9a6d-2b7e1f0c9d84",` +
		`"tipo_dte":33,"folio":1532,"estado":"aceptado","rut_receptor":"76192083-9","razon_social_receptor":"Comercial Los Aromos SpA",` +
		`"monto_total":119000,"fecha_emision":"2026-03-02","track_id":"0248117921","codigo_sii":"EPR","glosa_sii":"Envio Procesado"}}`
	e, err := ParseEvent([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	d, err := e.DTE()
	if err != nil || d.Ambiente != "" || d.Folio != 1532 || d.TrackID == nil || *d.TrackID != "0248117921" {
		t.Fatalf("an old dte.accepted body: %+v, %v", d, err)
	}
	out, err := MarshalEvent(e.Type, e.Timestamp, d)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != body {
		t.Errorf("re-encoded:\n%s\nwant\n%s", out, body)
	}
}

func TestParseEventErrors(t *testing.T) {
	for _, body := range []string{
		``,
		`null`,
		`[]`,
		`{"type":"dte.created","timestamp":"2026-03-02T14:05:09Z"}`,
		`{"type":"dte.created","timestamp":"2026-03-02T14:05:09Z","data":null}`,
		`{"type":"dte.created","timestamp":"2026-03-02T14:05:09Z","data":[1]}`,
		`{"timestamp":"2026-03-02T14:05:09Z","data":{}}`,
		`{"type":"dte.created","data":{}}`,
		`{"type":"dte.created","timestamp":"yesterday","data":{}}`,
		`{"type":"dte.created","timestamp":"2026-03-02T14:05:09Z","data":{}`,
	} {
		if e, err := ParseEvent([]byte(body)); err == nil {
			t.Errorf("ParseEvent(%q) = %+v, want an error", body, e)
		}
	}
	// Forward compatibility: unknown types and fields pass.
	e, err := ParseEvent([]byte(`{"type":"dte.archived","timestamp":"2026-03-02T14:05:09-03:00","data":{"x":1},"extra":true}`))
	if err != nil || e.Type.Known() || e.Type != "dte.archived" {
		t.Errorf("unknown type: %+v, %v", e, err)
	}
}

func TestMarshalEventErrors(t *testing.T) {
	ts := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		typ  EventType
		ts   time.Time
		data any
	}{
		{EventDTECreated, ts, CAFLowStockData{}},
		{EventCAFLowStock, ts, DTEData{}},
		{EventCertificadoExpiring, ts, map[string]any{}},
		{"dte.archived", ts, DTEData{}},
		{EventDTECreated, time.Time{}, DTEData{}},
		{EventDTECreated, ts, (*DTEData)(nil)},
		{EventDTECreated, ts, nil},
	}
	for _, c := range cases {
		if out, err := MarshalEvent(c.typ, c.ts, c.data); err == nil {
			t.Errorf("MarshalEvent(%s, %T) = %s, want an error", c.typ, c.data, out)
		}
	}
	out, err := MarshalEvent(EventCAFLowStock, time.Date(2026, 3, 2, 12, 0, 0, 0, time.FixedZone("CLT", -3*3600)), &CAFLowStockData{ID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"timestamp":"2026-03-02T15:00:00Z"`) {
		t.Errorf("timestamp not written in UTC: %s", out)
	}
}

func TestEventTypes(t *testing.T) {
	want := []string{"dte.created", "dte.accepted", "dte.rejected", "dte.repaired", "caf.low_stock", "certificado.expiring",
		"dte.receptor_recibido", "dte.receptor_aceptado", "dte.receptor_rechazado", "dte.mercaderias_recibidas",
		"recibido.created", "recibido.plazo_por_vencer", "dte.cedido", "dte.cesion_rechazada"}
	got := EventTypes()
	if len(got) != len(want) {
		t.Fatalf("EventTypes() = %v", got)
	}
	for i := range want {
		if string(got[i]) != want[i] || !got[i].Known() {
			t.Errorf("EventTypes()[%d] = %q, want %q", i, got[i], want[i])
		}
		if got[i].IsDTE() != strings.HasPrefix(want[i], "dte.") {
			t.Errorf("%s.IsDTE() = %v", got[i], got[i].IsDTE())
		}
	}
	if EventType("DTE.CREATED").Known() {
		t.Error("event types must match exactly")
	}
}

func TestPingEvent(t *testing.T) {
	ts := time.Date(2026, 3, 2, 14, 5, 9, 0, time.UTC)
	b, err := MarshalEvent(EventPing, ts, PingData{WebhookID: "0b9c6f1e-8d2a-4e57-9a61-3f0c2d7b5e48"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"webhook.ping","timestamp":"2026-03-02T14:05:09Z","data":{"webhook_id":"0b9c6f1e-8d2a-4e57-9a61-3f0c2d7b5e48"}}`
	if string(b) != want {
		t.Errorf("ping body\n%s\nwant\n%s", b, want)
	}
	e, err := ParseEvent(b)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := e.Ping(); err != nil || p.WebhookID != "0b9c6f1e-8d2a-4e57-9a61-3f0c2d7b5e48" {
		t.Errorf("Ping() = %+v, %v", p, err)
	}
	if EventPing.Known() || slices.Contains(EventTypes(), EventPing) {
		t.Error("webhook.ping is subscribable")
	}
	if _, err := MarshalEvent(EventDTECreated, ts, PingData{}); err == nil {
		t.Error("ping data accepted for dte.created")
	}
	if _, err := e.DTE(); err == nil {
		t.Error("DTE data read from a ping")
	}
}
