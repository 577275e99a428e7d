package client

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/dtekit/dtekit/webhook"
)

// TestWebhookHandler: a delivery signed with the secret reaches the
// function decoded (type, data) and is answered 204; a wrong signature is
// 401 and never reaches it; the function's error answers 500.
func TestWebhookHandler(t *testing.T) {
	t.Parallel()
	secret := webhook.GenerateSecret()
	var got []Received
	fail := false
	h, err := WebhookHandler([]webhook.Secret{secret}, func(ctx context.Context, d Received) error {
		got = append(got, d)
		if fail {
			return errors.New("db down")
		}
		return nil
	}, webhook.MiddlewareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"type":"dte.accepted","timestamp":"2026-11-29T10:00:00Z","data":{"id":"d1","tipo_dte":33,"folio":7,"estado":"aceptado"}}`)
	post := func(secrets []webhook.Secret) int {
		hdr, err := webhook.Sign(secrets, "msg_1", time.Now(), body)
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest(http.MethodPost, "/hook", bytes.NewReader(body))
		for k, v := range hdr {
			r.Header[k] = v
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	if code := post([]webhook.Secret{secret}); code != http.StatusNoContent {
		t.Fatalf("signed delivery answered %d, want 204", code)
	}
	if len(got) != 1 || got[0].ID != "msg_1" || got[0].Event.Type != "dte.accepted" {
		t.Fatalf("handed %+v", got)
	}
	if d, err := got[0].Event.DTE(); err != nil || d.ID != "d1" || d.Folio != 7 {
		t.Errorf("data decoded as %+v, %v; want folio 7", d, err)
	}
	if code := post([]webhook.Secret{webhook.GenerateSecret()}); code != http.StatusUnauthorized || len(got) != 1 {
		t.Errorf("wrong secret answered %d and reached the function %d times, want 401 and never", code, len(got)-1)
	}
	fail = true
	if code := post([]webhook.Secret{secret}); code != http.StatusInternalServerError {
		t.Errorf("failing function answered %d, want 500", code)
	}
}
