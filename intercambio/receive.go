package intercambio

import (
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/xmlflat"
	"github.com/dtekit/dtekit/internal/xmltree"
)

// Limits of the answers' fields (RespuestaEnvioDTE_v10.xsd).
const (
	// MaxCodigo is the largest IdRespuesta and CodEnvio: the schema's
	// positiveInteger of at most 10 digits. The smallest is 1.
	MaxCodigo = 9999999999
	// MaxGlosa is the length of RecepEnvGlosa, RecepDTEGlosa and
	// EstadoDTEGlosa, in characters.
	MaxGlosa = 256
	// maxNombre bounds NmbEnvio, EnvioDTEID and Recinto.
	maxNombre = 80
	// maxDetalles is the most RecepcionDTE or ResultadoDTE entries an
	// answer carries: NroDTE and NroDetalles have at most 4 digits.
	maxDetalles = 9999
)

// DefaultNmbEnvio is the file name an acuse reports when Options.NmbEnvio is
// empty.
const DefaultNmbEnvio = "EnvioDTE.xml"

// Options configures Receive.
type Options struct {
	// Empresa is our company's RUT: the envelope's Carátula and every
	// document must be addressed to it.
	Empresa string
	// Verify is what dte.VerifyWith checks beyond the signatures
	// themselves: Keys, the trusted CAF keys the stamps are checked with
	// (caf.SIIKeys() in production), and the optional signer policy.
	Verify dte.VerifyOptions
	// RutEmisor, when set, is the emitter we expect (the sender of the
	// e-mail, for instance): a document of another emitter is not received
	// (EstadoRecepDTE 2), and an envelope too damaged to name its emitter
	// is answered to this one.
	RutEmisor string
	// NmbEnvio is the name of the file received, reported back in the
	// acuse (at most 80 characters; DefaultNmbEnvio when empty).
	NmbEnvio string
	// CodEnvio is the number we give this envelope, from 1 to MaxCodigo:
	// the acuse reports it and each ResultadoDTE refers to it.
	CodEnvio int64
	// At is when the envelope was received (FchRecep); zero means now.
	At time.Time
	// Repetido, when set, reports whether an envelope with this SetDTE ID
	// and signature digest was received before (EstadoRecepEnv 90). Keeping
	// that record is the receptor's policy; the SII does not require it.
	Repetido func(envioDTEID, digest string) bool
	// DTERepetido, when set, reports whether the document was received
	// before this envelope (EstadoRecepDTE 4). It is asked once the
	// document's signature and RUTs passed, with its verification at hand
	// (Verificacion.CAFAmbiente names the stamp's environment, in which a
	// receptor may keep its records apart). A document repeated within
	// the envelope is caught without it.
	DTERepetido func(*DocumentoRecibido) bool
}

// DocRef identifies a DTE the way every answer repeats it (RecepcionDTE,
// ResultadoDTE and DocumentoRecibo start with these six fields): type,
// folio, emission date (YYYY-MM-DD), the emitter's and the receptor's
// RUTs in canonical form ("76192083-9") and the total.
type DocRef struct {
	Tipo      dte.TipoDTE `json:"tipo_dte"`
	Folio     int64       `json:"folio"`
	FchEmis   string      `json:"fecha_emision"`
	RUTEmisor string      `json:"rut_emisor"`
	RUTRecep  string      `json:"rut_receptor"`
	MntTotal  int64       `json:"monto_total"`
}

// String names the document: "tipo 33 folio 12 of 76192083-9".
func (d DocRef) String() string {
	return fmt.Sprintf("tipo %d folio %d of %s", d.Tipo, d.Folio, d.RUTEmisor)
}

// Respondible reports whether RespuestaDTE and Recibo can name a document
// of type t: their TipoDTE and TipoDoc take 33, 34, 46, 52, 56 and 61 only,
// so liquidaciones (43), export documents (110-112) and boletas are left
// out of the answers.
func Respondible(t dte.TipoDTE) bool {
	switch t {
	case 33, 34, 46, 52, 56, 61:
		return true
	}
	return false
}

// Recepcion is what Receive found in an envelope: the envelope's reception
// state and each document's, with what an acuse (RespuestaDTE /
// RecepcionEnvio) reports.
type Recepcion struct {
	// Empresa is our RUT (RutResponde of the answers).
	Empresa string `json:"empresa"`
	// RutEmisor is the envelope's emitter, to whom the answers go
	// (RutRecibe): the Carátula's, else Options.RutEmisor, else "" when
	// the file is too damaged to tell.
	RutEmisor string `json:"rut_emisor,omitempty"`
	// RutReceptor is the Carátula's RutReceptor as written.
	RutReceptor string `json:"rut_receptor,omitempty"`
	// NmbEnvio, FchRecep and CodEnvio are the file's name, when it was
	// received and the number we gave it.
	NmbEnvio string    `json:"nombre_envio"`
	FchRecep time.Time `json:"fecha_recepcion"`
	CodEnvio int64     `json:"cod_envio"`
	// EnvioDTEID is SetDTE's ID and Digest the DigestValue of the
	// envelope's signature (base64), both "" when unreadable.
	EnvioDTEID string `json:"envio_dte_id,omitempty"`
	Digest     string `json:"digest,omitempty"`
	// Estado is the envelope's reception state and Glosa the text the
	// acuse carries for it: the SII's glosa, then Detalle after a colon.
	Estado  EstadoRecepEnv `json:"estado"`
	Glosa   string         `json:"glosa"`
	Detalle string         `json:"detalle,omitempty"`
	// Documentos holds one entry per DTE of the envelope, in file order
	// (none when the envelope could not be read).
	Documentos []DocumentoRecibido `json:"documentos"`
	// Verificacion is dte.VerifyWith's report (nil when the file could
	// not be read as a DTE envelope).
	Verificacion *dte.VerifyReport `json:"-"`
	// Caratula is true when RutEmisor was read from the Carátula (the
	// acuse then names it); kept in the JSON form, so that a Recepcion
	// read back from it builds the same acuse without the file.
	Caratula bool `json:"rut_emisor_caratula,omitempty"`
}

// DocumentoRecibido is the reception of one DTE of an envelope.
type DocumentoRecibido struct {
	DocRef
	// Estado is the document's reception state and Glosa the text the
	// acuse carries for it; Detalle is the reason alone.
	Estado  EstadoRecepDTE `json:"estado"`
	Glosa   string         `json:"glosa"`
	Detalle string         `json:"detalle,omitempty"`
	// Respondible is false for the types RespuestaDTE cannot name (see
	// Respondible): the answers leave such a document out.
	Respondible bool `json:"respondible"`
	// Documento is the document as parsed; its Raw is the DTE's bytes.
	Documento *dte.Document `json:"-"`
	// Verificacion is the document's entry of the verification report.
	Verificacion dte.DocumentReport `json:"-"`
}

// Recibido reports whether the envelope was received (EstadoRecepEnv 0).
func (r *Recepcion) Recibido() bool { return r.Estado == EnvioRecibidoConforme }

// Receive reads an EnvioDTE addressed to our company, as it arrived (the
// bytes of the file, attacker-controlled), and decides its reception:
// dte.VerifyWith checks its shape, every signature, stamp and total (with
// the size and cost limits that make a hostile file cheap to refuse), and
// the envelope and each document are then given the SII's codes in the
// order the SII's manual implies (sii-wave3-notes.md §1.4):
//
//   - 91 when the file cannot be read as XML (malformed, an unknown
//     encoding, a DOCTYPE, over the reader's limits), 99 when it is larger
//     than dte.MaxEnvioBytes (a caller reading a file may stop after
//     dte.MaxEnvioBytes+1 bytes and pass those);
//   - 1 when it is XML but not an EnvioDTE the schema accepts (another
//     root, elements out of place, a signed element where none belongs, an
//     ID twice, a number or date that is not one);
//   - 2 when the signature over SetDTE is missing, does not verify, or its
//     signer fails Verify's policy;
//   - 3 when the Carátula's RutReceptor is not Empresa;
//   - 90 when Options.Repetido says the envelope was received before;
//   - 0 otherwise.
//
// Each document readable in the envelope gets, in this order: 1 when its
// own signature fails, 2 when its RUTEmisor is not the Carátula's (or the
// one expected), 3 when its RUTRecep is not Empresa, 4 when it repeats an
// earlier one, 99 when its signer fails the policy, its stamp or CAF does
// not verify or its totals do not add up, and 99 as well when everything
// passed but the envelope was refused (a document is never reported
// received from a refused envelope); else 0.
//
// The error is not nil only when opts are wrong (Empresa not a RUT,
// CodEnvio out of range): whatever the input, a Recepcion is returned and
// the acuse can be built from it.
func Receive(data []byte, opts Options) (*Recepcion, error) {
	empresa, err := canonicalRUT(opts.Empresa)
	if err != nil {
		return nil, fmt.Errorf("intercambio: Empresa: %w", err)
	}
	if opts.CodEnvio < 1 || opts.CodEnvio > MaxCodigo {
		return nil, fmt.Errorf("intercambio: CodEnvio %d: the schema wants a number from 1 to %d", opts.CodEnvio, int64(MaxCodigo))
	}
	expected := ""
	if opts.RutEmisor != "" {
		if expected, err = canonicalRUT(opts.RutEmisor); err != nil {
			return nil, fmt.Errorf("intercambio: RutEmisor: %w", err)
		}
	}
	name := opts.NmbEnvio
	if strings.TrimSpace(name) == "" {
		name = DefaultNmbEnvio
	}
	at := opts.At
	if at.IsZero() {
		at = time.Now()
	}
	r := &Recepcion{Empresa: empresa, RutEmisor: expected, NmbEnvio: clip(latin1Text(name), maxNombre),
		FchRecep: at, CodEnvio: opts.CodEnvio, Documentos: []DocumentoRecibido{}}
	r.receive(data, opts, expected)
	return r, nil
}

// receive fills r from the envelope.
func (r *Recepcion) receive(data []byte, opts Options, expected string) {
	if len(data) > dte.MaxEnvioBytes {
		r.set(EnvioOtros, fmt.Sprintf("the file is larger than the %d bytes accepted", dte.MaxEnvioBytes))
		return
	}
	rep, err := dte.VerifyWith(data, opts.Verify)
	if rep == nil {
		if errors.Is(err, xmltree.ErrInvalidXML) || errors.Is(err, xmltree.ErrLimit) {
			r.set(EnvioArchivoIlegible, reason(err))
		} else {
			r.set(EnvioErrorSchema, reason(err))
		}
		return
	}
	r.Verificacion = rep
	if rep.Kind != "EnvioDTE" {
		r.set(EnvioErrorSchema, fmt.Sprintf("the file is a %s, not an EnvioDTE", rep.Kind))
		return
	}
	env, err := dte.ParseEnvio(data)
	if err != nil {
		r.set(EnvioErrorSchema, reason(err))
		return
	}
	if len(env.Documentos) != len(rep.Documents) {
		r.set(EnvioErrorSchema, "the envelope's documents could not be told apart")
		return
	}
	if n := len(env.Documentos); n > dte.MaxEnvioDTE {
		r.set(EnvioErrorSchema, fmt.Sprintf("the envelope carries %d documents; EnvioDTE_v10.xsd allows %d", n, dte.MaxEnvioDTE))
		return
	}
	r.EnvioDTEID = clip(latin1Text(env.SetID), maxNombre)
	r.Digest = envelopeDigest(data)
	r.RutReceptor = env.Caratula.RutReceptor
	emisor, err := schemaRUT(env.Caratula.RutEmisor)
	if err != nil {
		r.set(EnvioErrorSchema, "Caratula/RutEmisor: "+err.Error())
		return
	}
	r.RutEmisor, r.Caratula = emisor, true
	receptor, err := schemaRUT(env.Caratula.RutReceptor)
	if err != nil {
		r.set(EnvioErrorSchema, "Caratula/RutReceptor: "+err.Error())
		return
	}
	// Every document the answers will name must be schema-valid where
	// they repeat it; one that is not makes the envelope invalid.
	docs := make([]DocumentoRecibido, len(env.Documentos))
	for i, d := range env.Documentos {
		ref, err := docRef(d)
		if err != nil && Respondible(d.Tipo) {
			r.set(EnvioErrorSchema, fmt.Sprintf("document %d (tipo %d folio %d): %v", i+1, d.Tipo, d.Folio, err))
			return
		}
		docs[i] = DocumentoRecibido{DocRef: ref, Respondible: Respondible(d.Tipo), Documento: d, Verificacion: rep.Documents[i]}
	}
	switch {
	case rep.Envelope == nil || !rep.Envelope.OK:
		detail := "SetDTE is not signed"
		if rep.Envelope != nil {
			detail = rep.Envelope.Error
		}
		r.set(EnvioErrorFirma, detail)
	case receptor != r.Empresa:
		r.set(EnvioRUTReceptorNoCorresponde, fmt.Sprintf("the envelope is addressed to %s, not to %s", receptor, r.Empresa))
	case opts.Repetido != nil && opts.Repetido(env.SetID, r.Digest):
		r.set(EnvioArchivoRepetido, fmt.Sprintf("SetDTE %q with this digest was received before", env.SetID))
	default:
		r.set(EnvioRecibidoConforme, "")
	}
	seen := make(map[DocRef]bool, len(docs))
	for i := range docs {
		d := &docs[i]
		code, detail := r.document(d, expected, opts, seen)
		if code == DTERecibidoOK && !r.Recibido() {
			code, detail = DTEOtros, "the envelope was refused: "+r.Glosa
		}
		d.Estado, d.Detalle, d.Glosa = code, detail, glosa(texto(tablaRecepDTE, int(code)), detail)
	}
	r.Documentos = docs
}

// document decides one document's reception state.
func (r *Recepcion) document(d *DocumentoRecibido, expected string, opts Options, seen map[DocRef]bool) (EstadoRecepDTE, string) {
	v := d.Verificacion
	key := DocRef{Tipo: d.Tipo, Folio: d.Folio, RUTEmisor: d.RUTEmisor}
	dup := seen[key]
	seen[key] = true
	switch {
	case !v.Signature.OK:
		return DTEErrorFirma, v.Signature.Error
	case d.RUTEmisor != r.RutEmisor:
		return DTEErrorRUTEmisor, fmt.Sprintf("RUTEmisor %s is not the envelope's emitter %s", d.RUTEmisor, r.RutEmisor)
	case expected != "" && d.RUTEmisor != expected:
		return DTEErrorRUTEmisor, fmt.Sprintf("RUTEmisor %s is not the emitter expected, %s", d.RUTEmisor, expected)
	case d.RUTRecep != r.Empresa:
		return DTEErrorRUTReceptor, fmt.Sprintf("RUTRecep %s is not %s", d.RUTRecep, r.Empresa)
	case dup:
		return DTERepetido, "the envelope carries this document twice"
	case opts.DTERepetido != nil && opts.DTERepetido(d):
		return DTERepetido, "this document was received before"
	case !v.Policy.OK:
		return DTEOtros, "signer: " + v.Policy.Error
	case !v.TED.OK:
		return DTEOtros, "TED: " + v.TED.Error
	case !v.Totals.OK:
		return DTEOtros, "totals: " + v.Totals.Error
	}
	return DTERecibidoOK, ""
}

// set records the envelope's state.
func (r *Recepcion) set(code EstadoRecepEnv, detail string) {
	r.Estado, r.Detalle = code, latin1Text(detail)
	r.Glosa = glosa(texto(tablaRecepEnv, int(code)), r.Detalle)
}

// texto returns the answer text of a code of table.
func texto(table []Code, v int) string {
	c, _ := lookup(table, v)
	return c.Texto
}

// glosa joins a code's text and a detail, within MaxGlosa characters.
func glosa(text, detail string) string {
	detail = latin1Text(detail)
	if detail == "" {
		return text
	}
	return clip(text+": "+detail, MaxGlosa)
}

// reason is an error's text without the package prefixes of the layers
// below ("dte: parse: ").
func reason(err error) string {
	s := err.Error()
	for _, p := range []string{"dte: verify: ", "dte: parse: ", "dte: "} {
		s = strings.ReplaceAll(s, p, "")
	}
	return s
}

// docRef reads the six fields the answers repeat, as the schema types
// them: a real date, a positive folio of at most 10 digits, RUTs of the
// form 12345678-9 and a non-negative integer total.
func docRef(d *dte.Document) (DocRef, error) {
	ref := DocRef{Tipo: d.Tipo, Folio: d.Folio, FchEmis: d.FechaEmision, RUTEmisor: d.Emisor.Rut, RUTRecep: d.Receptor.Rut}
	var bad []string
	if d.Folio < 1 || d.Folio > MaxCodigo {
		bad = append(bad, fmt.Sprintf("Folio %d is not a folio of at most 10 digits", d.Folio))
	}
	if _, err := time.Parse("2006-01-02", d.FechaEmision); err != nil {
		bad = append(bad, fmt.Sprintf("FchEmis %q is not a date", d.FechaEmision))
	}
	if r, err := schemaRUT(d.Emisor.Rut); err != nil {
		bad = append(bad, "RUTEmisor: "+err.Error())
	} else {
		ref.RUTEmisor = r
	}
	if r, err := schemaRUT(d.Receptor.Rut); err != nil {
		bad = append(bad, "RUTRecep: "+err.Error())
	} else {
		ref.RUTRecep = r
	}
	if n, ok := d.Totales.MntTotal.Int64(); ok && n >= 0 && n < 1e18 {
		ref.MntTotal = n
	} else {
		bad = append(bad, fmt.Sprintf("MntTotal %q is not an amount of at most 18 digits", d.Totales.MntTotal))
	}
	if len(bad) > 0 {
		return ref, errors.New(strings.Join(bad, "; "))
	}
	return ref, nil
}

// rutForm is the schema's RUTType pattern.
var rutForm = regexp.MustCompile(`^[0-9]+-[0-9K]$`)

// schemaRUT checks a RUT as the schema's RUTType writes it (digits, a
// hyphen, the check digit; 3 to 10 characters) with a valid check digit,
// and returns its canonical form.
func schemaRUT(s string) (string, error) {
	if len(s) < 3 || len(s) > 10 || !rutForm.MatchString(s) {
		return "", fmt.Errorf("%q is not written as the schema's RUTType (12345678-9)", latin1Text(s))
	}
	return canonicalRUT(s)
}

// canonicalRUT parses a RUT and returns its canonical form.
func canonicalRUT(s string) (string, error) {
	r, err := dte.ParseRUT(s)
	if err != nil {
		return "", errors.New(reason(err))
	}
	return r.String(), nil
}

// envelopeDigest returns the DigestValue of the envelope's own signature
// (the Signature after SetDTE), base64 in its plain form, or "" when it
// cannot be read. Only that Signature is kept while the file is read.
func envelopeDigest(data []byte) string {
	opts := xmltree.Options{MaxBytes: dte.MaxEnvioBytes, MaxDepth: dte.MaxXMLDepth, MaxElements: len(data)/16 + 256}
	opts.Keep = func(el *xmltree.Element) (bool, error) {
		if el.Parent.Parent == nil {
			return el.Is(nsDSig, "Signature"), nil
		}
		return el.Parent.Kept() && el.URI == nsDSig, nil
	}
	d, err := xmltree.ParseWith(data, opts)
	if err != nil {
		return ""
	}
	v := d.Root.Child(nsDSig, "Signature").Child(nsDSig, "SignedInfo").Child(nsDSig, "Reference").Child(nsDSig, "DigestValue")
	b, err := xmlflat.DecodeBase64(v.Text())
	if err != nil || len(b) == 0 {
		return ""
	}
	return base64.StdEncoding.EncodeToString(b)
}

// nsDSig is the XML-DSig namespace.
const nsDSig = "http://www.w3.org/2000/09/xmldsig#"

// latin1Text makes a text safe for the answers' ISO-8859-1 elements:
// whitespace runs become one space, and characters outside ISO-8859-1 or
// control characters become '?'. It is for texts dtekit writes (error
// details, names of files); a text the caller chose is checked instead.
func latin1Text(s string) string {
	var b strings.Builder
	space := false
	for _, c := range s {
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			space = true
			continue
		case c < 0x20 || (c >= 0x7f && c < 0xa0) || c > 0xff:
			c = '?'
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(c)
	}
	return b.String()
}

// clip cuts s to at most n characters.
func clip(s string, n int) string {
	i := 0
	for k := range s {
		if i == n {
			return s[:k]
		}
		i++
	}
	return s
}

// formatCodigo writes an IdRespuesta or CodEnvio.
func formatCodigo(n int64) string { return strconv.FormatInt(n, 10) }
