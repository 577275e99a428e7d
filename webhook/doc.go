// Package webhook signs and verifies dtekit webhook deliveries.
//
// Deliveries follow the Standard Webhooks scheme (version 1.0.0): every HTTP
// request carries three headers,
//
//	webhook-id         unique message id, identical on every retry
//	webhook-timestamp  Unix seconds of this attempt
//	webhook-signature  space-separated "v1,<base64 HMAC-SHA256>" entries
//
// and the signature is HMAC-SHA256, keyed with the decoded secret, over the
// bytes "<id>.<timestamp>.<raw body>". Several entries appear while a secret
// is being rotated; a delivery is accepted when any of them matches any of
// the receiver's secrets.
//
// # Receiving
//
// An integrator needs three calls: [ParseSecret] for the secret shown once
// when the webhook was registered, [NewVerifier], and either
// [Verifier.Verify] on the raw request body or [Verifier.Middleware] around
// an http.Handler. The middleware checks the headers and the timestamp before
// reading any of the body, then reads the body with a size cap (413 beyond
// it) into a buffer that grows only as bytes arrive, verifies it before
// anything parses it, answers 401 with a generic body when it cannot, and
// hands the verified bytes on unchanged in r.Body and in
// [DeliveryFromContext]. With a [Deduper] (for example [MemoryDeduper]) it
// answers a repeated webhook-id with 200 without calling the handler again.
//
// The verified body is an [Event]: {"type", "timestamp", "data"}. [ParseEvent]
// decodes the envelope; [Event.DTE], [Event.CAFLowStock] and
// [Event.CertificadoExpiring] decode its data into [DTEData],
// [CAFLowStockData] and [CertificadoExpiringData], whose field docs are the
// payload reference. Unknown event types should be acknowledged with a 2xx
// and ignored: new kinds may be added without a new API version.
//
// # Sending
//
// [Sign] produces the three headers for a body (one v1 entry per active
// secret), [NewMessageID] a fresh webhook-id, [GenerateSecret] a new secret
// and [MarshalEvent] an event body.
//
// The package uses the standard library only.
package webhook
