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
// Where no signature reaches (text between the root's, DTECedido's and
// each Cesion's elements, a Signature outside SignedInfo) the file must
// hold only white space, and a signature's base64 values (SignatureValue,
// Modulus, Exponent, X509Certificate) must be in canonical form, since
// the last character before "=" carries bits no value uses: so no byte of
// an accepted file can be changed, within the exceptions the next section
// names.
//
// # Signature policy
//
// Every signature is reported (Report.Firmas): the DTE's own, each receipt's,
// DocumentoDTECedido's, each cesión's and the file's. A nested one counts as
// verified when it verifies in place or with its parent cut out as a
// document of its own, as it was signed: the SII's portal signs the ceded
// document and its cesión with no namespace declared, and two production
// files the registry accepted (published with an open-source SII library;
// not kept here, since they name real people) verified that way when this
// package was written (xmlsec1 agreed), although they do not in place. The sources still report files whose inner signatures do not verify
// at all (sii-cesion-notes §9), so by default (PolicyRegistry) Verify
// refuses a file when its own signature (over DocumentoAEC), its DTE
// (signature, stamp, CAF, totals) or its chain fails, or when an inner
// signature is missing, references something else or has no certificate,
// while an inner signature whose digest or value does not verify is a
// warning. A RUTAutorizado that is not its signer's RUT is a warning too:
// the portal lists the company's RUT while a person signs. PolicyStrict
// refuses any signature that does not verify and a RUTAutorizado that is
// neither its signer's nor the cedente's; every file this package writes
// passes it. Under either policy VerifyOptions.DTE's AuthorizedSigners and
// ValidAtSigning hold each level's signer (the emisor's for the ceded
// document, each cedente's for its cesión, the last cedente's for the file),
// so a file signed again by someone else after an edit is refused when the
// caller states who may sign; a self-signed certificate whose own signature
// does not verify is refused. The certificate beside the file's signature
// is covered by no digest: bytes of a CA-issued one outside its public key
// can only be checked against the issuing authority, which the file does not
// carry.
package cesion
