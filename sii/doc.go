// Package sii speaks to the web services of Chile's Servicio de Impuestos
// Internos (SII): authentication (seed, signed seed, token), the upload of
// signed envelopes, the queries of an envelope's and a document's state,
// and the registry of acceptances and claims of received documents.
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
//
// The registry of acceptances and claims (registroreclamodteservice, on
// ws2.sii.cl in certificación and ws1.sii.cl in producción) is where a
// receptor accepts (ACD) or claims (RCD, RFP, RFT) a document, or gives the
// Ley 19.983 receipt of goods (ERM), within 8 days of the SII's reception:
// RegisterRCV, RCVEvents, RCVCedible and RCVReceptionDate. Its answers
// carry a codResp, read through one table (RCVCodes) into an RCVOutcome.
// It is a document/literal SOAP service whose token travels only as the
// TOKEN cookie; the client takes that token from Endpoints.RCVAuth (palena
// in both environments) and caches it apart from the classic one.
//
// The registry of credit transfers (Registro Público Electrónico de
// Transferencia de Créditos, "RTC") records who holds a ceded factura.
// UploadAEC sends an Archivo Electrónico de Cesión (built with package
// cesion) to RTCAnotEnvio.cgi on the Upload host, with the classic token
// as its cookie; AECStatus (getEstEnvio), CesionStatus (getEstCesion) and
// CesionStatusRelac (getEstCesionRelac) ask the wsRPETCConsulta service on
// the Classic host, which takes the token as the call's first part. A
// rejected token (upload STATUS 5, RESP_HDR ESTADO 3 to 5) is renewed and
// the call made once more. AECUploadOutcome and AECStatusOutcome read the
// answers through one table (CesionCodes) into a CesionKind: pending,
// accepted (EOK), rejected (RSC, RFS, RCR, RDC, RCS, EAN, upload STATUS 1,
// 2, 4, 6), or a failure to report and retry, which says nothing about the
// AEC. As for envelopes, an upload is never repeated on a transport error.
package sii
