// Package intercambio is the receiving side of the exchange of DTEs between
// companies (intercambio entre contribuyentes): what a company does with an
// EnvioDTE a supplier sends it, and how it reads the answers its own
// customers send back.
//
// Receive verifies an incoming envelope with dte.VerifyWith (shape,
// signatures, stamps, totals, signer policy, size and cost limits), checks
// it is addressed to our company and decides, with the SII's codes, the
// reception of the envelope (EstadoRecepEnv) and of each document
// (EstadoRecepDTE). From that Recepcion it builds the three answers, each
// signed in the SII's profile and valid against its official schema:
//
//   - Acuse: RespuestaDTE with RecepcionEnvio, the acuse de recibo;
//   - Resultado: RespuestaDTE with ResultadoDTE, the commercial acceptance
//     or rejection of each document (EstadoDTE);
//   - Recibos: EnvioRecibos, the Ley 19.983 receipt of goods or services.
//
// Read does the reverse for answers about our documents: it verifies their
// signatures and reports, per document, received, received with problems,
// accepted, rejected with its reason, or goods received.
//
// The code tables (EstadosRecepEnv, EstadosRecepDTE, EstadosDTE) are data
// in this package alone, each code with the SII's glosa and its meaning.
//
// The XML answers are what the SII's certification tests and what many
// suppliers expect, but since Ley 20.956 (2017) the acceptance, claim and
// receipt with legal effect are registered in the SII's registry (RCV), not
// sent as XML.
//
// An incoming envelope is attacker-controlled: whatever the bytes,
// Receive returns a Recepcion (a file it cannot read is refused with the
// matching code), within the limits of dte.VerifyWith.
package intercambio
