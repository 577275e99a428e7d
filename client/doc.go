// Package client calls a running dtekit server from Go: one method per
// operation of the REST API, grouped by resource as the billing service is,
// taking and returning the models of package api.
//
// A Client authenticates every request with an API key (WithAPIKey) or a
// bearer token from a TokenSource (WithTokenSource, for JWTs that expire),
// over the caller's *http.Client if given.
//
// Every mutating call carries an Idempotency-Key: the caller's, when the
// call's params give one, or one the client makes; every retry of that
// call sends the same key, so a retry after a lost answer gets the first
// answer back (a document is emitted once, its folio taken once). Calls
// are retried on network errors, 429 (after its Retry-After), 409
// IDEMPOTENCY_IN_PROGRESS and 5xx answers, with exponential backoff and
// full jitter, bounded by RetryPolicy's attempts and elapsed time and by
// the context.
//
// A call whose route neither reads the key nor is idempotent (creating a
// webhook, a customer, a product or a CAF, a document's mail, a ping, a
// resent delivery, a decision on a received document) is not sent again
// after a network error, when the server may have acted on it; the error
// is returned, and the caller reads the state before trying again.
//
// An answer of status 400 or more is an *Error with the HTTP status, the
// stable code, the message, the per-field details and the request id;
// errors.Is(err, fault.NotFound) matches it by code.
//
// The resources are fields of the Client: Documents, Envelopes, CAFs,
// Company, Webhooks, Catalog, Received and Mail. Each list has List (one
// page, api.Page) and an All… iterator over every page; PDF and XML
// downloads are streams of the bytes the server holds. WithResponse
// reports a call's status, request id, key, attempts and replay.
// WebhookHandler is the receiving side of webhooks.
package client
