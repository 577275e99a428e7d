// Package billing is dtekit's application service: every rule of the REST
// API without HTTP. A Service emits DTEs for a company with the folio
// protocol (a folio, once taken, ends in exactly one signed document, even
// across crashes), keeps idempotency keys, registers CAFs and the signing
// certificate, keeps the clientes and productos catalogs, lists and renders
// documents, and authenticates API keys.
//
// A Service is also the one face of the rooms under billing/internal,
// each built by New from Config and the store, joined to the face by the
// small interfaces it declares for what it asks of it (seams.go holds the
// face's side), each tested against a store alone, with fakes of those
// interfaces (docs/architecture.md describes them and the rules between
// them):
//
//   - internal/outbox records each event, its payload frozen, in the
//     transaction that changes what it reports, and fans it out to the
//     company's webhooks subscribed to its type;
//   - internal/periodic registers the periodic jobs and walks every
//     company for those that visit them all;
//   - internal/delivery keeps the webhooks and delivers each event,
//     signed, with retries, keeping every attempt;
//   - internal/alerts records caf.low_stock and certificado.expiring;
//   - internal/submission sends signed documents to the SII and follows
//     them until reviewed, when Config.Submission is set;
//   - internal/inbox receives the documents suppliers send and the answers
//     customers send about the company's own, decides them in the SII's
//     registry and answers them;
//   - internal/mailer sends each company's mail and reads its mailbox,
//     handing what it reads to the inbox through the face (its Handoff);
//   - internal/cesiones cedes the company's accepted facturas to factoring
//     companies: it builds and signs the AEC, uploads it to the SII's
//     registry of credit transfers and follows it until recorded or
//     refused.
//
// Start runs their background jobs with emission's own; Stop ends them
// and everything else New began. billing/demo provisions the demo's
// companies through the face, for dtekit serve --demo and the fixture
// billing/billingtest, and holds no test code.
//
// The operations are grouped by resource, as the REST API is: Documents,
// Envelopes, Received, Catalog, CAFs, Company, Mail, Webhooks, Keys and
// Cesiones are service values on Service (and ConsoleSessions, the web
// console's sessions, which no route serves and which are found by the
// browser's id rather than a company's). Every method takes a context and then the id
// of the company (tenant) the caller's credential belongs to, at most one
// resource id and one params struct of package api; everything it reads or
// writes is scoped by that company, and another company's id yields a
// not-found Error. Lists return an *api.Page.
//
// Errors are *fault.Error values carrying a Kind (what happened, for the HTTP
// status), a stable Code and per-field Details. The requests and responses
// are package api's models, which carry the contract's JSON names, so an
// HTTP layer encodes them as they are.
//
// Emission runs in two short transactions around the signature:
//
//  1. record the Idempotency-Key, take the next folio of the company's
//     active CAF for the type, insert the DTE row pendiente with the
//     request, the issuer's data and the emission instant, and make sure
//     a recovery job covers it (key, CAF and row are of the company's
//     current environment: the SII numbers folios from 1 in certificación
//     and again in producción, and a document keeps its environment);
//  2. once transaction 1 has committed and the document is signed
//     (outside any transaction), store the signed XML and totals, set
//     firmado, store the idempotency response and the dte.created event.
//
// A process that dies between the two leaves a pendiente row; the recovery
// job finishes it with the same folio and instant, and since Prepare and
// Stamp are deterministic the signed bytes are those the first attempt
// would have stored.
//
// No transaction computes or waits for an RSA signature: the database
// write lock is held only while statements and commits run. The
// signature starts once transaction 1 has taken its folio, while that
// transaction commits, so the commit's wait for the disk overlaps the RSA
// work; the signed document is stored only if transaction 1 committed the
// folio it carries, and is signed again for the committed folio otherwise.
// Concurrent emissions share transactions and commits (group commit); a
// group waits for announced members before it opens its transaction, not
// inside it.
package billing
