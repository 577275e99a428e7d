package server

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing"
	"github.com/dtekit/dtekit/billing/billingtest"
	"github.com/dtekit/dtekit/billing/fault"
)

// TestWebhookReadAndUpdate: GET and PATCH of one webhook through the
// server, every answer checked against the OpenAPI document. A read
// shows the secret masked as the list does; an update passes the checks
// of registration, leaves out what it does not name, is not held back
// by the cap on registrations, and turns the webhook off and on: off, an
// event recorded meanwhile gets no delivery to it; on again, the next
// one does.
func TestWebhookReadAndUpdate(t *testing.T) {
	if testing.Short() {
		t.Skip("opens a database and signs documents; run without -short")
	}
	t.Parallel()
	f := newFixture(t, billingtest.Backends()[0].NewStore(t), RateLimit{PerSecond: -1})
	c := f.A
	r := f.do("POST", apiBase+"/webhooks", map[string]any{"url": "https://hooks.example.com/a", "events": []string{"dte.created"}}, c.writeHdr...)
	want(t, r, 201)
	var created api.Webhook
	r.JSON(t, &created)
	hook := apiBase + "/webhooks/" + created.ID

	// Read one: as in the list, the secret masked (whsec_…XYZ, the last
	// three characters of its base64), never in full.
	r = f.do("GET", hook, nil, c.readHdr...)
	want(t, r, 200)
	var got api.Webhook
	r.JSON(t, &got)
	full := strings.TrimRight(created.Secret, "=")
	if got.ID != created.ID || got.URL != "https://hooks.example.com/a" || !got.IsActive ||
		got.Secret != "whsec_…"+full[len(full)-3:] || strings.Contains(string(r.Body), created.Secret) {
		t.Errorf("GET: %s (created with secret %s)", r.Body, created.Secret)
	}
	want(t, f.do("GET", apiBase+"/webhooks/"+newUUID(), nil, c.readHdr...), 404, fault.NotFound)
	want(t, f.do("GET", hook, nil, f.B.readHdr...), 404, fault.NotFound)
	want(t, f.do("GET", hook+"?expand=1", nil, c.readHdr...), 400, fault.Validation)

	// Update: write access, the checks of registration, strict fields.
	patch := func(body any, hdr []string) *response { return f.do("PATCH", hook, body, hdr...) }
	want(t, patch(map[string]any{"url": "https://hooks.example.com/b"}, c.readHdr), 403, fault.WriteNotAllowed)
	want(t, patch(map[string]any{"url": "https://hooks.example.com/b"}, f.B.writeHdr), 404, fault.NotFound)
	want(t, f.do("PATCH", apiBase+"/webhooks/"+newUUID(), map[string]any{"is_active": false}, c.writeHdr...), 404, fault.NotFound)
	for _, bad := range []struct {
		body  any
		field string
	}{
		{map[string]any{"url": "http://hooks.example.com/b"}, "url"},
		{map[string]any{"url": "https://10.0.0.1/b"}, "url"},
		{map[string]any{"url": "https://localhost/b"}, "url"},
		{map[string]any{"events": []string{}}, "events"},
		{map[string]any{"events": []string{"dte.created", "dte.deleted"}}, "events[1]"},
		{map[string]any{"secret": "whsec_x"}, "secret"},
		{map[string]any{"is_active": "yes"}, "is_active"},
	} {
		r := patch(bad.body, c.writeHdr)
		want(t, r, 400, fault.Validation)
		if !strings.Contains(string(r.Body), `"field":"`+bad.field+`"`) {
			t.Errorf("PATCH %v: the answer does not name %s: %s", bad.body, bad.field, r.Body)
		}
	}
	// Nothing of the refused updates was kept.
	r = f.do("GET", hook, nil, c.readHdr...)
	r.JSON(t, &got)
	if got.URL != "https://hooks.example.com/a" || len(got.Events) != 1 || !got.IsActive {
		t.Fatalf("after refused updates: %s", r.Body)
	}

	// An empty update changes nothing; a real one changes only what it
	// names, events without repeats, in the order given.
	r = patch(map[string]any{}, c.writeHdr)
	want(t, r, 200)
	r = patch(map[string]any{"url": "https://hooks.example.com/b", "events": []string{"dte.accepted", "dte.created", "dte.accepted"}}, c.writeHdr)
	want(t, r, 200)
	r.JSON(t, &got)
	if got.URL != "https://hooks.example.com/b" || fmt.Sprint(got.Events) != "[dte.accepted dte.created]" || !got.IsActive ||
		got.Secret != "whsec_…"+full[len(full)-3:] {
		t.Errorf("after PATCH url and events: %s", r.Body)
	}

	// Off: an event recorded meanwhile is not delivered to it.
	deliveries := func() string {
		t.Helper()
		r := f.do("GET", hook+"/deliveries", nil, c.readHdr...)
		want(t, r, 200)
		var page struct {
			TotalCount int `json:"total_count"`
		}
		r.JSON(t, &page)
		return fmt.Sprint(page.TotalCount)
	}
	r = patch(map[string]any{"is_active": false}, c.writeHdr)
	want(t, r, 200)
	r.JSON(t, &got)
	if got.IsActive {
		t.Fatalf("after is_active false: %s", r.Body)
	}
	f.emit(c, factura(1))
	if n := deliveries(); n != "0" {
		t.Errorf("a webhook turned off got %s deliveries of a dte.created", n)
	}
	// On again (PATCH does what POST …/enable does): the next event is.
	r = patch(map[string]any{"is_active": true}, c.writeHdr)
	want(t, r, 200)
	r.JSON(t, &got)
	if !got.IsActive {
		t.Fatalf("after is_active true: %s", r.Body)
	}
	f.emit(c, factura(1))
	if n := deliveries(); n != "1" {
		t.Errorf("a webhook turned on again has %s deliveries after one dte.created, want 1", n)
	}
	// POST …/enable and PATCH agree.
	want(t, patch(map[string]any{"is_active": false}, c.writeHdr), 200)
	r = f.do("POST", hook+"/enable", nil, c.writeHdr...)
	want(t, r, 200)
	r.JSON(t, &got)
	if !got.IsActive {
		t.Errorf("enable after PATCH off: %s", r.Body)
	}

	// The cap counts registrations only: with 16 webhooks, a 17th is
	// refused and an update still goes through.
	for i := 1; i < billing.MaxWebhooks; i++ {
		want(t, f.do("POST", apiBase+"/webhooks", map[string]any{"url": fmt.Sprintf("https://hooks.example.com/%d", i), "events": []string{"dte.created"}}, c.writeHdr...), 201)
	}
	want(t, f.do("POST", apiBase+"/webhooks", map[string]any{"url": "https://hooks.example.com/17", "events": []string{"dte.created"}}, c.writeHdr...), 409, fault.LimitExceeded)
	want(t, patch(map[string]any{"url": "https://hooks.example.com/c"}, c.writeHdr), 200)
}
