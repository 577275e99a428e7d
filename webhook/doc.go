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
// decodes the envelope; [Event.DTE], [Event.CAFLowStock],
// [Event.CertificadoExpiring] and [Event.Ping] decode its data into
// [DTEData], [CAFLowStockData], [CertificadoExpiringData] and [PingData],
// whose field docs are the payload reference. Unknown event types should be
// acknowledged with a 2xx and ignored: new kinds may be added without a new
// API version.
//
// # Events
//
// The six kinds a webhook can subscribe to ([EventTypes]), with their data:
//
//	dte.created           DTEData, estado "firmado", track_id null
//	dte.accepted          DTEData, estado "aceptado", track_id and codigo_sii set
//	dte.rejected          DTEData, estado "rechazado", glosa_sii gives the reason
//	dte.repaired          DTEData, estado "con_reparos", glosa_sii the observations
//	caf.low_stock         CAFLowStockData, once each time a CAF's free folios
//	                      fall to its threshold or below
//	certificado.expiring  CertificadoExpiringData, once at 30, 15, 7 and 1 days
//	                      before the certificate expires
//
// and, beyond the contract, the receptor's answers (dte.receptor_*,
// dte.mercaderias_recibidas), the inbox's recibido.created and
// recibido.plazo_por_vencer, and the cesiones of the company's documents:
//
//	dte.cedido            DTEData with Cesion, estado "aceptada": the SII's
//	                      registry of credit transfers recorded the cesión
//	dte.cesion_rechazada  DTEData with Cesion, estado "rechazada", its codigo
//	                      and glosa the registry's reason
//
// plus webhook.ping ([EventPing], [PingData]), sent only when the integrator
// asks for a test delivery. Every dte.* event's data says the document's
// environment (DTEData.Ambiente: "certificacion" for a test document,
// "produccion" for a real one); it is empty in events recorded before it
// was added. A dte.accepted body, for example:
//
//	{"type":"dte.accepted","timestamp":"2026-03-02T14:05:09Z",
//	 "data":{"id":"a3e9f0b1-2c4d-4e6f-8a0b-1c2d3e4f5a6b","tipo_dte":33,"folio":1042,
//	  "estado":"aceptado","rut_receptor":"76192083-9",
//	  "razon_social_receptor":"Comercial Los Andes SpA","monto_total":119000,
//	  "fecha_emision":"2026-03-02","ambiente":"produccion","track_id":"8312764","codigo_sii":"EPR",
//	  "glosa_sii":"Envio Procesado"}}
//
// The envelope's timestamp is when the event happened and its bytes never
// change between attempts; webhook-timestamp and webhook-signature are new
// on every attempt, webhook-id is the event id on all of them.
//
// # Sending
//
// [Sign] produces the three headers for a body (one v1 entry per active
// secret), [NewMessageID] a fresh webhook-id, [GenerateSecret] a new secret
// and [MarshalEvent] an event body. [Sender] makes one signed attempt and
// classifies its [Result] (2xx, 410 Gone, other status, timeout, dns,
// connect, tls, blocked destination, with the receiver's Retry-After and
// the start of its response); [RetryPolicy] (see [DefaultRetryPolicy])
// says when to try again and when to disable an endpoint that keeps
// failing. The sender expects an http.Client that refuses redirects and
// internal destinations; dtekit's server builds one with such a guard.
//
// The package uses the standard library only.
package webhook
