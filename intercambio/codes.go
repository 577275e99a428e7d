package intercambio

import "fmt"

// Code is one entry of the SII's code tables of the intercambio answers:
// the number written in the XML, the glosa the SII attaches to it (the
// schema's own text, which an answer repeats in its *Glosa element) and
// what it means in practice.
type Code struct {
	// Value is the code as written in the XML.
	Value int
	// Glosa is the SII's text for the code, as RespuestaEnvioDTE_v10.xsd
	// documents it (ASCII, no accents: the schema's spelling).
	Glosa string
	// Texto is what an answer dtekit writes puts in the code's glosa
	// element before any detail: the Glosa, except for EstadoDTE, where the
	// SII's manual asks for "ACEPTADO OK", "ACEPTADO CON DISCREPANCIAS" or
	// "RECHAZADO" followed by the reason.
	Texto string
	// Meaning says when the code applies, in dtekit's words.
	Meaning string
}

// The three tables. They are the one place these codes live: the types
// below, the answers Receive builds and the classification Read makes all
// read them. Sources: RespuestaEnvioDTE_v10.xsd (enumerations and their
// documentation) and the SII's "Formato Mensaje de Respuesta a DTE"
// (sii-wave3-notes.md §1.2, §1.4).
var (
	tablaRecepEnv = []Code{
		{0, "Envio Recibido Conforme", "Envio Recibido Conforme", "the envelope was read, its signature verified and it is addressed to us; its documents are answered one by one"},
		{1, "Envio Rechazado - Error de Schema", "Envio Rechazado - Error de Schema", "the file is XML but not a valid EnvioDTE: wrong root, elements out of place, values of the wrong type, an ID twice"},
		{2, "Envio Rechazado - Error de Firma", "Envio Rechazado - Error de Firma", "the signature over SetDTE is missing or does not verify (or its signer is not allowed to sign)"},
		{3, "Envio Rechazado - RUT Receptor No Corresponde", "Envio Rechazado - RUT Receptor No Corresponde", "the Caratula's RutReceptor is not our company"},
		{90, "Envio Rechazado - Archivo Repetido", "Envio Rechazado - Archivo Repetido", "the same envelope (SetDTE ID and digest) was already received: the receptor's policy, not required by the SII"},
		{91, "Envio Rechazado - Archivo Ilegible", "Envio Rechazado - Archivo Ilegible", "the file cannot be read as XML: not well-formed, an encoding other than UTF-8 or ISO-8859-1, a DOCTYPE, nesting or element counts over the limits"},
		{99, "Envio Rechazado - Otros", "Envio Rechazado - Otros", "any other reason, stated after the glosa (for example a file larger than dtekit reads)"},
	}
	tablaRecepDTE = []Code{
		{0, "DTE Recibido OK", "DTE Recibido OK", "the document's signature, stamp (TED) and totals verified, and it is from the envelope's emitter to us"},
		{1, "DTE No Recibido - Error de Firma", "DTE No Recibido - Error de Firma", "the document's own signature is missing or does not verify"},
		{2, "DTE No Recibido - Error en RUT Emisor", "DTE No Recibido - Error en RUT Emisor", "RUTEmisor differs from the Caratula's RutEmisor or from the emitter expected"},
		{3, "DTE No Recibido - Error en RUT Receptor", "DTE No Recibido - Error en RUT Receptor", "RUTRecep is not our company"},
		{4, "DTE No Recibido - DTE Repetido", "DTE No Recibido - DTE Repetido", "the same emitter, type and folio was already received (earlier in the envelope, or before: the receptor's policy)"},
		{99, "DTE No Recibido - Otros", "DTE No Recibido - Otros", "any other reason, stated after the glosa: a stamp (TED) or CAF that does not verify, totals that do not add up, a signer the policy refuses, or an envelope refused as a whole"},
	}
	tablaDTE = []Code{
		{0, "DTE Aceptado OK", "ACEPTADO OK", "the receptor accepts the document commercially"},
		{1, "DTE Aceptado con Discrepancias", "ACEPTADO CON DISCREPANCIAS", "the receptor accepts the document but states discrepancies (CodRchDsc and the reason)"},
		{2, "DTE Rechazado", "RECHAZADO", "the receptor rejects the document, stating the reason (CodRchDsc negative)"},
	}
)

// lookup returns the entry of table for v.
func lookup(table []Code, v int) (Code, bool) {
	for _, c := range table {
		if c.Value == v {
			return c, true
		}
	}
	return Code{}, false
}

// EstadoRecepEnv is the reception state of a whole envelope
// (RecepcionEnvio/EstadoRecepEnv): 0 accepted, any other value rejected.
type EstadoRecepEnv int

// The values of EstadoRecepEnv (EstadosRecepEnv has their glosas).
const (
	EnvioRecibidoConforme         EstadoRecepEnv = 0
	EnvioErrorSchema              EstadoRecepEnv = 1
	EnvioErrorFirma               EstadoRecepEnv = 2
	EnvioRUTReceptorNoCorresponde EstadoRecepEnv = 3
	EnvioArchivoRepetido          EstadoRecepEnv = 90
	EnvioArchivoIlegible          EstadoRecepEnv = 91
	EnvioOtros                    EstadoRecepEnv = 99
)

// EstadosRecepEnv returns the table of EstadoRecepEnv (a new slice on each
// call).
func EstadosRecepEnv() []Code { return append([]Code(nil), tablaRecepEnv...) }

// Valid reports whether e is one of the SII's codes.
func (e EstadoRecepEnv) Valid() bool { _, ok := lookup(tablaRecepEnv, int(e)); return ok }

// Glosa returns the SII's text for the code ("" for an unknown code).
func (e EstadoRecepEnv) Glosa() string { c, _ := lookup(tablaRecepEnv, int(e)); return c.Glosa }

// String gives the code and its glosa.
func (e EstadoRecepEnv) String() string { return codeString(int(e), e.Glosa()) }

// EstadoRecepDTE is the reception state of one document
// (RecepcionDTE/EstadoRecepDTE): 0 received, any other value not received.
type EstadoRecepDTE int

// The values of EstadoRecepDTE (EstadosRecepDTE has their glosas).
const (
	DTERecibidoOK       EstadoRecepDTE = 0
	DTEErrorFirma       EstadoRecepDTE = 1
	DTEErrorRUTEmisor   EstadoRecepDTE = 2
	DTEErrorRUTReceptor EstadoRecepDTE = 3
	DTERepetido         EstadoRecepDTE = 4
	DTEOtros            EstadoRecepDTE = 99
)

// EstadosRecepDTE returns the table of EstadoRecepDTE (a new slice on each
// call).
func EstadosRecepDTE() []Code { return append([]Code(nil), tablaRecepDTE...) }

// Valid reports whether e is one of the SII's codes.
func (e EstadoRecepDTE) Valid() bool { _, ok := lookup(tablaRecepDTE, int(e)); return ok }

// Glosa returns the SII's text for the code ("" for an unknown code).
func (e EstadoRecepDTE) Glosa() string { c, _ := lookup(tablaRecepDTE, int(e)); return c.Glosa }

// String gives the code and its glosa.
func (e EstadoRecepDTE) String() string { return codeString(int(e), e.Glosa()) }

// EstadoDTE is the commercial decision on one document
// (ResultadoDTE/EstadoDTE).
type EstadoDTE int

// The values of EstadoDTE (EstadosDTE has their glosas).
const (
	DTEAceptadoOK               EstadoDTE = 0
	DTEAceptadoConDiscrepancias EstadoDTE = 1
	DTERechazado                EstadoDTE = 2
)

// EstadosDTE returns the table of EstadoDTE (a new slice on each call).
func EstadosDTE() []Code { return append([]Code(nil), tablaDTE...) }

// Valid reports whether e is one of the SII's codes.
func (e EstadoDTE) Valid() bool { _, ok := lookup(tablaDTE, int(e)); return ok }

// Glosa returns the SII's text for the code ("" for an unknown code).
func (e EstadoDTE) Glosa() string { c, _ := lookup(tablaDTE, int(e)); return c.Glosa }

// String gives the code and its glosa.
func (e EstadoDTE) String() string { return codeString(int(e), e.Glosa()) }

func codeString(v int, glosa string) string {
	if glosa == "" {
		return fmt.Sprintf("%d (not a code of the SII)", v)
	}
	return fmt.Sprintf("%d (%s)", v, glosa)
}
