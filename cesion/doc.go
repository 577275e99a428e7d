// Package cesion builds, reads and verifies the Archivo Electrónico de Cesión
// (AEC): the file by which a company cedes a factura (types 33, 34, 43 and 46)
// to a factoring company, recorded by the SII's Registro Público Electrónico
// de Transferencia de Créditos (AEC_v10.xsd).
//
// An AEC has three signature levels: the ceded document (DocumentoDTECedido:
// the emitter's signed DTE as it was signed, the Ley 19.983 receipts when
// there are any, TmstFirma), signed for the emitter; one to forty cesiones
// (DocumentoCesion), each signed by one to three people in the order its
// RUTAutorizado table names them; and the whole file (DocumentoAEC), signed by
// the sender, the last cedente. Ceder writes a first cesión from a DTE made by
// package dte, Receder appends a cesión to an AEC a company received. Each
// level is signed as a document of its own, declaring the same namespaces as
// the AEC's root, and pasted byte for byte, so every signature verifies both in
// place and with its parent cut out; earlier levels of a received AEC are
// never rewritten.
//
// Where the schema and the SII's format document disagree on a length, the
// writer keeps the stricter (Direccion 60, eMail 40, Nombre 40, SeqCesion
// 1..40); the Cesionario's RUT, untyped in the schema, must be a valid RUT.
// Problems with what a caller asks are a *dte.ValidationError naming each field
// in dot notation ("cesionario.email", "autorizados[1].rut").
//
// Verify reads an AEC within bounds (MaxBytes, the XML reader's depth and
// element limits, at most MaxCesiones cesiones, at most three signatures a
// cesión) and checks every signature, the DTE (its own signature, stamp, CAF
// and totals, through dte.VerifyWith with the caller's trusted keys and signer
// policy), and the chain: SeqCesion 1..n, the first cedente the emitter, each
// next cedente the previous cesionario, IdDTE the ceded document, MontoCesion
// at most MntTotal, UltimoVencimiento not before FchEmis, a sworn declaration
// when no receipt travels, and the carátula naming the last cesión's parties.
//
// # Signature policy
//
// Files the SII's portal wrote and the registry recorded carry inner
// signatures (over DocumentoDTECedido and over the portal's DocumentoCesion)
// that do not verify as the files stand. Verify therefore reports each
// signature's result, and by default (PolicyRegistry) refuses a file only
// when its own signature (DocumentoAEC), its DTE (signature, stamp, CAF,
// totals) or its chain fails, or when an inner signature is missing or has
// no certificate; an inner signature whose digest or value does not verify is
// a warning. PolicyStrict refuses those too, and is what a file this package
// writes always passes. Under either policy the AEC's signer is held to
// VerifyOptions.DTE's AuthorizedSigners for the last cedente, so a file
// re-signed by someone else after an edit is refused when the caller states
// who may sign.
package cesion
