package webhook_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/dtekit/dtekit/webhook"
)

// An integrator's receiver: the middleware verifies each delivery before
// the handler sees it, and the handler parses the verified body.
func Example() {
	// The secret shown once when the webhook was registered; keep it in
	// configuration, never in code.
	secret, err := webhook.ParseSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		log.Fatal(err)
	}
	verifier, err := webhook.NewVerifier([]webhook.Secret{secret})
	if err != nil {
		log.Fatal(err)
	}
	handle := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body) // the verified raw bytes
		ev, err := webhook.ParseEvent(body)
		if err != nil {
			http.Error(w, "bad event", http.StatusBadRequest)
			return
		}
		switch ev.Type {
		case webhook.EventDTEAccepted, webhook.EventDTERejected, webhook.EventDTERepaired:
			d, err := ev.DTE()
			if err != nil {
				http.Error(w, "bad event data", http.StatusBadRequest)
				return
			}
			fmt.Printf("%s: tipo %d folio %d is %s\n", ev.Type, d.TipoDTE, d.Folio, d.Estado)
		default:
			// Other and future event types: acknowledge and ignore.
		}
		w.WriteHeader(http.StatusNoContent)
	})
	receiver := verifier.Middleware(handle, webhook.MiddlewareOptions{
		Deduper: webhook.NewMemoryDeduper(webhook.DefaultDedupTTL, nil),
	})
	// In production: http.Handle("/webhooks/dtekit", receiver).

	// What the dtekit server sends, to exercise the receiver here.
	trackID := "0248117921"
	body, _ := webhook.MarshalEvent(webhook.EventDTEAccepted, time.Now(), webhook.DTEData{
		ID: "5d0c7a2e-8f1b-4c3e-9a6d-2b7e1f0c9d84", TipoDTE: 33, Folio: 1532, Estado: "aceptado",
		RutReceptor: "76192083-9", RazonSocialReceptor: "Comercial Los Aromos SpA",
		MontoTotal: 119000, FechaEmision: "2026-03-02", TrackID: &trackID,
	})
	header, _ := webhook.Sign([]webhook.Secret{secret}, webhook.NewMessageID(), time.Now(), body)
	for range 2 { // the same delivery twice: processed once
		req := httptest.NewRequest(http.MethodPost, "/webhooks/dtekit", bytes.NewReader(body))
		req.Header = header
		rec := httptest.NewRecorder()
		receiver.ServeHTTP(rec, req)
		fmt.Println("answered", rec.Code)
	}
	// Output:
	// dte.accepted: tipo 33 folio 1532 is aceptado
	// answered 204
	// answered 200
}

// Verifying without the middleware, e.g. in a framework that already read
// the body. The clock is fixed here so the example's timestamp is fresh.
func ExampleVerifier_Verify() {
	secret, _ := webhook.ParseSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	verifier, _ := webhook.NewVerifier([]webhook.Secret{secret},
		webhook.WithClock(func() time.Time { return time.Unix(1614265330, 0) }))

	body := []byte(`{"test": 2432232314}`)
	header := http.Header{}
	header.Set("webhook-id", "msg_p5jXN8AQM9LWM0D4loKWxJek")
	header.Set("webhook-timestamp", "1614265330")
	header.Set("webhook-signature", "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
	fmt.Println(verifier.Verify(header, body))

	err := verifier.Verify(header, []byte(`{"test":2432232314}`)) // re-serialized: no longer the signed bytes
	fmt.Println(errors.Is(err, webhook.ErrNoMatchingSignature))
	// Output:
	// <nil>
	// true
}

// The sending side: one v1 entry per active secret while rotating keys.
func ExampleSign() {
	secret, _ := webhook.ParseSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	h, err := webhook.Sign([]webhook.Secret{secret}, "msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(h.Get("webhook-timestamp"))
	fmt.Println(h.Get("webhook-signature"))
	// Output:
	// 1614265330
	// v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=
}
