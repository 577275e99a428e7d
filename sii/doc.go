// Package sii speaks to the web services of Chile's Servicio de Impuestos
// Internos (SII): authentication (seed, signed seed, token), the upload of
// signed envelopes, and the queries of an envelope's and a document's state.
//
// Two protocols are covered. The classic one, used for every document type
// except boletas, is a set of Apache Axis SOAP services (CrSeed, GetTokenFromSeed,
// QueryEstUp, QueryEstDte, QueryEstDteAv) plus the multipart upload DTEUpload, all on
// maullin.sii.cl (certificación) or palena.sii.cl (producción). Boletas (types
// 39 and 41) go through a REST API whose seed, token and status calls live on
// apicert.sii.cl / api.sii.cl and whose upload lives on pangal.sii.cl /
// rahue.sii.cl. Every base URL is configurable (Endpoints), so the same client
// talks to a test server such as the fake in sii/siitest.
//
// The client hand-rolls its SOAP envelopes (it never fetches a WSDL), reads
// the escaped XML the services return by local name, in any element order and
// in ISO-8859-1 or UTF-8 whatever the declaration claims, and keeps track ids
// as the strings the SII wrote (they are zero-padded). Tokens are cached per
// environment, base URL and certificate for a short time and refreshed once
// when the SII signals an authentication failure (upload STATUS 5, ESTADO
// 001–003, HTTP 401, the "TOKEN invalido" fault). HTML pages, the literal
// "Error 500", SOAP faults, empty bodies, timeouts and network errors are
// reported as *TransportError, which is always worth retrying later.
//
// Uploads are never retried on a transport error by the client: the SII may
// have accepted the envelope before the connection failed, and a blind
// resend produces a second track id whose documents come back rejected as
// duplicates (DTE-3-100/DTE-3-101). The caller decides: DocumentStatusAdvanced
// (getEstDteAv) names the envelope that carried a document, so the lost
// track id can be recovered instead of sending again, and DocumentStatus
// (getEstDte) is asked before believing a duplicate's rejection. The mapping
// from the SII's codes to the contract's DTE states is UploadOutcome,
// EnvelopeOutcome and DocumentOutcome.
package sii
