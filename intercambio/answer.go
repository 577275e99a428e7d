package intercambio

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/xmlflat"
	"github.com/dtekit/dtekit/signer"
)

// Declaracion is the text every Recibo carries in Declaracion: a fixed value
// of Recibos_v10.xsd, so it must be byte for byte this one (no "°" after
// the article numbers, no accent on "mercaderias"). The legend printed on
// a cedible copy is a different text and does not belong here.
const Declaracion = "El acuse de recibo que se declara en este acto, de acuerdo a lo dispuesto en la letra b) del Art. 4, y la letra c) del Art. 5 de la Ley 19.983, acredita que la entrega de mercaderias o servicio(s) prestado(s) ha(n) sido recibido(s)."

// Errors of the answer builders; test with errors.Is.
var (
	// ErrNoDocuments means no document of the envelope can be named in the
	// answer asked for: the envelope could not be read, its documents are
	// of types RespuestaDTE cannot name, or (for receipts) none was
	// received.
	ErrNoDocuments = errors.New("intercambio: no document of the envelope can be answered")
	// ErrUnknownEmitter means the envelope is too damaged to name its
	// emitter, to whom the answer goes: give Options.RutEmisor.
	ErrUnknownEmitter = errors.New("intercambio: the envelope's emitter is unknown (set Options.RutEmisor)")
)

// Contacto is the optional contact an answer's Carátula gives.
type Contacto struct {
	// Nombre (at most 40 characters), Fono (40) and Mail (80) are written
	// in NmbContacto, FonoContacto and MailContacto when not empty.
	Nombre, Fono, Mail string
}

// AnswerOptions are what an answer carries besides the envelope's data.
type AnswerOptions struct {
	// IdRespuesta numbers a RespuestaDTE (acuse or resultado), from 1 to
	// MaxCodigo; EnvioRecibos has no such number and ignores it.
	IdRespuesta int64
	// At is the signing time written in TmstFirmaResp, TmstFirmaEnv and
	// TmstFirmaRecibo (Chile local time); zero means now.
	At time.Time
	// Contacto is the Carátula's optional contact.
	Contacto Contacto
}

// Decision is a commercial decision on one document (ResultadoDTE).
type Decision struct {
	// Estado is DTEAceptadoOK, DTEAceptadoConDiscrepancias or DTERechazado.
	Estado EstadoDTE
	// Motivo is the reason, required with discrepancies and for a
	// rejection, which Ley 19.983 wants stated "expresa y claramente". It
	// follows the code's text in EstadoDTEGlosa, within 256 characters.
	Motivo string
	// CodRchDsc is the code of the reason of a rejection or discrepancy,
	// from -1 to -999; 0 means -1. It is not written for DTEAceptadoOK.
	CodRchDsc int
}

// Decide chooses the decision on each document received.
type Decide func(DocumentoRecibido) Decision

// Todos applies one decision to every document received.
func Todos(d Decision) Decide { return func(DocumentoRecibido) Decision { return d } }

// ResultadoDTE is the decision on one document as a ResultadoDTE states it.
type ResultadoDTE struct {
	DocRef
	// CodEnvio is our number of the envelope that carried the document.
	CodEnvio int64 `json:"cod_envio"`
	// Estado is the decision and Glosa its text with the reason.
	Estado EstadoDTE `json:"estado"`
	Glosa  string    `json:"glosa"`
	// CodRchDsc is the code of a rejection or discrepancy (negative), 0
	// for an acceptance.
	CodRchDsc int `json:"cod_rch_dsc,omitempty"`
}

// Acuse builds the acuse de recibo of the envelope: a RespuestaDTE holding
// one RecepcionEnvio with the envelope's state and one RecepcionDTE per
// document RespuestaDTE can name, signed with cert over Resultado (its ID
// is "Resp" and IdRespuesta). RutResponde is Empresa and RutRecibe the
// envelope's emitter.
func (r *Recepcion) Acuse(cert *signer.Certificate, o AnswerOptions) ([]byte, error) {
	var recep []DocumentoRecibido
	for _, d := range r.Documentos {
		if d.Respondible {
			recep = append(recep, d)
		}
	}
	var w xw
	w.open("RecepcionEnvio")
	w.el("NmbEnvio", r.NmbEnvio)
	w.el("FchRecep", timestamp(r.FchRecep))
	w.el("CodEnvio", formatCodigo(r.CodEnvio))
	w.el("EnvioDTEID", r.EnvioDTEID)
	w.opt("Digest", r.Digest)
	if r.Caratula {
		w.el("RutEmisor", r.RutEmisor)
	}
	if rut, err := schemaRUT(r.RutReceptor); err == nil {
		w.el("RutReceptor", rut)
	}
	w.el("EstadoRecepEnv", fmt.Sprint(int(r.Estado)))
	w.el("RecepEnvGlosa", r.Glosa)
	if len(recep) > 0 {
		w.el("NroDTE", fmt.Sprint(len(recep)))
	}
	for _, d := range recep {
		w.open("RecepcionDTE")
		w.docRef("TipoDTE", d.DocRef)
		w.el("EstadoRecepDTE", fmt.Sprint(int(d.Estado)))
		w.el("RecepDTEGlosa", d.Glosa)
		w.close("RecepcionDTE")
	}
	w.close("RecepcionEnvio")
	return r.respuesta(cert, o, 1, w.String())
}

// Resultado builds the commercial answer on the envelope's documents: a
// RespuestaDTE holding one ResultadoDTE per document RespuestaDTE can name,
// signed as Acuse signs. decide chooses for each document received
// (EstadoRecepDTE 0); nil accepts them all. A document not received is
// always rejected, with its reception glosa as the reason and CodRchDsc -1.
// It also returns the decisions as written.
func (r *Recepcion) Resultado(cert *signer.Certificate, o AnswerOptions, decide Decide) ([]byte, []ResultadoDTE, error) {
	var out []ResultadoDTE
	for _, d := range r.Documentos {
		if !d.Respondible {
			continue
		}
		dec := Decision{Estado: DTEAceptadoOK}
		switch {
		case d.Estado != DTERecibidoOK:
			dec = Decision{Estado: DTERechazado, Motivo: d.Glosa}
		case decide != nil:
			dec = decide(d)
		}
		res, err := resultado(d.DocRef, r.CodEnvio, dec)
		if err != nil {
			return nil, nil, fmt.Errorf("intercambio: resultado of %s: %w", d.DocRef, err)
		}
		out = append(out, res)
	}
	if len(out) == 0 {
		return nil, nil, ErrNoDocuments
	}
	var w xw
	for _, res := range out {
		w.open("ResultadoDTE")
		w.docRef("TipoDTE", res.DocRef)
		w.el("CodEnvio", formatCodigo(res.CodEnvio))
		w.el("EstadoDTE", fmt.Sprint(int(res.Estado)))
		w.el("EstadoDTEGlosa", res.Glosa)
		if res.CodRchDsc != 0 {
			w.el("CodRchDsc", fmt.Sprint(res.CodRchDsc))
		}
		w.close("ResultadoDTE")
	}
	xml, err := r.respuesta(cert, o, len(out), w.String())
	if err != nil {
		return nil, nil, err
	}
	return xml, out, nil
}

// resultado checks a decision and writes it out for one document.
func resultado(ref DocRef, codEnvio int64, d Decision) (ResultadoDTE, error) {
	res := ResultadoDTE{DocRef: ref, CodEnvio: codEnvio, Estado: d.Estado}
	if !d.Estado.Valid() {
		return res, fmt.Errorf("EstadoDTE %d is not one of the SII's codes (0, 1, 2)", int(d.Estado))
	}
	motivo := strings.TrimSpace(d.Motivo)
	if err := checkLatin1("Motivo", motivo); err != nil {
		return res, err
	}
	if motivo == "" && d.Estado != DTEAceptadoOK {
		return res, fmt.Errorf("a decision %s needs a Motivo", d.Estado)
	}
	res.Glosa = glosa(texto(tablaDTE, int(d.Estado)), motivo)
	if d.Estado != DTEAceptadoOK {
		res.CodRchDsc = d.CodRchDsc
		if res.CodRchDsc == 0 {
			res.CodRchDsc = -1
		}
		if res.CodRchDsc > 0 || res.CodRchDsc < -999 {
			return res, fmt.Errorf("CodRchDsc %d: the schema wants a number from -1 to -999", d.CodRchDsc)
		}
	}
	return res, nil
}

// respuesta wraps a RespuestaDTE's details in its Carátula and signs it.
func (r *Recepcion) respuesta(cert *signer.Certificate, o AnswerOptions, n int, details string) ([]byte, error) {
	if cert == nil {
		return nil, errors.New("intercambio: no signing certificate")
	}
	if r.RutEmisor == "" {
		return nil, ErrUnknownEmitter
	}
	if o.IdRespuesta < 1 || o.IdRespuesta > MaxCodigo {
		return nil, fmt.Errorf("intercambio: IdRespuesta %d: the schema wants a number from 1 to %d", o.IdRespuesta, int64(MaxCodigo))
	}
	if n > maxDetalles {
		return nil, fmt.Errorf("intercambio: %d details; NroDetalles has at most 4 digits", n)
	}
	contact, err := contacto(o.Contacto)
	if err != nil {
		return nil, err
	}
	id := "Resp" + formatCodigo(o.IdRespuesta)
	var w xw
	w.root("RespuestaDTE", "RespuestaEnvioDTE_v10.xsd")
	w.raw(`<Resultado ID="` + id + `">`)
	w.raw(`<Caratula version="1.0">`)
	w.el("RutResponde", r.Empresa)
	w.el("RutRecibe", r.RutEmisor)
	w.el("IdRespuesta", formatCodigo(o.IdRespuesta))
	w.el("NroDetalles", fmt.Sprint(n))
	w.raw(contact)
	w.el("TmstFirmaResp", timestamp(at(o.At)))
	w.close("Caratula")
	w.raw(details)
	w.raw("</Resultado></RespuestaDTE>\n")
	return sign(cert, w.String(), id)
}

// Recibos builds the Ley 19.983 receipt of the goods or services of every
// document received (EstadoRecepDTE 0) that a Recibo can name: an
// EnvioRecibos whose SetRecibos holds one Recibo per document, each with
// the place of reception (recinto, at most 80 characters), the signer's RUT
// (from cert) and Declaracion, signed on its own over DocumentoRecibo (ID
// "Recibo" plus the document's "T<tipo>F<folio>"), and the whole SetRecibos
// (ID "SetRecibos") signed after them. It also returns the documents
// receipted.
func (r *Recepcion) Recibos(cert *signer.Certificate, o AnswerOptions, recinto string) ([]byte, []DocRef, error) {
	if cert == nil {
		return nil, nil, errors.New("intercambio: no signing certificate")
	}
	recinto = strings.TrimSpace(recinto)
	switch {
	case recinto == "":
		return nil, nil, errors.New("intercambio: Recinto, the place where the goods or services were received, is required")
	case len([]rune(recinto)) > maxNombre:
		return nil, nil, fmt.Errorf("intercambio: Recinto has %d characters; the schema allows %d", len([]rune(recinto)), maxNombre)
	}
	if err := checkLatin1("Recinto", recinto); err != nil {
		return nil, nil, err
	}
	rutFirma, ok := cert.RUT()
	if !ok {
		return nil, nil, errors.New("intercambio: the certificate carries no RUT for RutFirma")
	}
	if r.RutEmisor == "" {
		return nil, nil, ErrUnknownEmitter
	}
	contact, err := contacto(o.Contacto)
	if err != nil {
		return nil, nil, err
	}
	tmst := timestamp(at(o.At))
	var refs []DocRef
	var recibos [][]byte
	for _, d := range r.Documentos {
		if !d.Respondible || d.Estado != DTERecibidoOK {
			continue
		}
		id := fmt.Sprintf("ReciboT%dF%d", d.Tipo, d.Folio)
		var w xw
		w.raw(xmlDecl + `<Recibo xmlns="` + dte.NamespaceSiiDte + `" xmlns:xsi="` + nsXSI + `" version="1.0">`)
		w.raw(`<DocumentoRecibo ID="` + id + `">`)
		w.docRef("TipoDoc", d.DocRef)
		w.el("Recinto", recinto)
		w.el("RutFirma", rutFirma)
		w.el("Declaracion", Declaracion)
		w.el("TmstFirmaRecibo", tmst)
		w.close("DocumentoRecibo")
		w.raw("</Recibo>\n")
		signed, err := sign(cert, w.String(), id)
		if err != nil {
			return nil, nil, err
		}
		// The Recibo goes into the set as signed, without its declaration:
		// it declares the same namespaces as the set's root, so its
		// DocumentoRecibo has the same canonical form in both places.
		body := bytes.TrimSpace(signed[bytes.Index(signed, []byte("<Recibo ")):])
		recibos = append(recibos, body)
		refs = append(refs, d.DocRef)
	}
	if len(refs) == 0 {
		return nil, nil, ErrNoDocuments
	}
	var w xw
	w.root("EnvioRecibos", "EnvioRecibos_v10.xsd")
	w.raw(`<SetRecibos ID="SetRecibos">`)
	w.raw(`<Caratula version="1.0">`)
	w.el("RutResponde", r.Empresa)
	w.el("RutRecibe", r.RutEmisor)
	w.raw(contact)
	w.el("TmstFirmaEnv", tmst)
	w.close("Caratula")
	head, err := xmlflat.ToLatin1(w.String())
	if err != nil {
		return nil, nil, fmt.Errorf("intercambio: %w", err)
	}
	doc := head
	for _, b := range recibos {
		doc = append(append(doc, '\n'), b...)
	}
	doc = append(doc, "\n</SetRecibos></EnvioRecibos>\n"...)
	out, err := cert.SignEnveloped(doc, "SetRecibos")
	if err != nil {
		return nil, nil, fmt.Errorf("intercambio: signing SetRecibos: %w", err)
	}
	return out, refs, nil
}

// contacto writes the Carátula's optional contact, checked against the
// schema's lengths.
func contacto(c Contacto) (string, error) {
	var w xw
	for _, f := range []struct {
		name, value string
		max         int
	}{{"NmbContacto", c.Nombre, 40}, {"FonoContacto", c.Fono, 40}, {"MailContacto", c.Mail, 80}} {
		v := strings.TrimSpace(f.value)
		if v == "" {
			continue
		}
		if n := len([]rune(v)); n > f.max {
			return "", fmt.Errorf("intercambio: %s has %d characters; the schema allows %d", f.name, n, f.max)
		}
		if err := checkLatin1(f.name, v); err != nil {
			return "", err
		}
		w.el(f.name, v)
	}
	return w.String(), nil
}

// checkLatin1 refuses a text chosen by the caller that ISO-8859-1 XML
// cannot carry.
func checkLatin1(field, s string) error {
	for _, c := range s {
		if c > 0xff || c == '\uFFFD' || (c < 0x20 && c != '\t' && c != '\n') || (c >= 0x7f && c < 0xa0) {
			return fmt.Errorf("intercambio: %s: character %q (U+%04X) cannot be written in the answer's ISO-8859-1", field, c, c)
		}
	}
	return nil
}

// sign encodes an answer in ISO-8859-1 and signs the element with ID id.
func sign(cert *signer.Certificate, doc, id string) ([]byte, error) {
	b, err := xmlflat.ToLatin1(doc)
	if err != nil {
		return nil, fmt.Errorf("intercambio: %w", err)
	}
	out, err := cert.SignEnveloped(b, id)
	if err != nil {
		return nil, fmt.Errorf("intercambio: signing %s: %w", id, err)
	}
	return out, nil
}

// XML of the answers.
const (
	xmlDecl = `<?xml version="1.0" encoding="ISO-8859-1"?>` + "\n"
	nsXSI   = "http://www.w3.org/2001/XMLSchema-instance"
	// tmstLayout is the layout of the answers' timestamps (Chile local
	// time, no offset), as the SII's other timestamps.
	tmstLayout = "2006-01-02T15:04:05"
)

// timestamp formats an instant as the SII's local timestamp.
func timestamp(t time.Time) string { return dte.ChileTime(t).Format(tmstLayout) }

// at returns t, or now when t is zero.
func at(t time.Time) time.Time {
	if t.IsZero() {
		return time.Now()
	}
	return t
}

// xw writes an answer's markup: elements in schema order, text escaped
// as canonical XML (xmlflat.EscapeText), so what is signed is what the
// file says. Texts are ISO-8859-1-safe by the time they get here.
type xw struct{ b strings.Builder }

func (w *xw) raw(s string)      { w.b.WriteString(s) }
func (w *xw) open(name string)  { w.b.WriteString("<" + name + ">") }
func (w *xw) close(name string) { w.b.WriteString("</" + name + ">") }
func (w *xw) String() string    { return w.b.String() }
func (w *xw) opt(name, v string) {
	if v != "" {
		w.el(name, v)
	}
}

// root writes the XML declaration and the start tag of an answer's root,
// with the schema it follows. Its namespace declarations are the ones a
// Recibo signed on its own declares too.
func (w *xw) root(name, schema string) {
	w.raw(xmlDecl + `<` + name + ` xmlns="` + dte.NamespaceSiiDte + `" xmlns:xsi="` + nsXSI + `" xsi:schemaLocation="` +
		dte.NamespaceSiiDte + ` ` + schema + `" version="1.0">`)
}

// el writes <name>text</name>.
func (w *xw) el(name, text string) {
	w.open(name)
	xmlflat.EscapeText(&w.b, text)
	w.close(name)
}

// docRef writes the six fields that identify a document; tipo is the name
// of the first (TipoDTE, or TipoDoc in a Recibo).
func (w *xw) docRef(tipo string, d DocRef) {
	w.el(tipo, d.Tipo.String())
	w.el("Folio", fmt.Sprint(d.Folio))
	w.el("FchEmis", d.FchEmis)
	w.el("RUTEmisor", d.RUTEmisor)
	w.el("RUTRecep", d.RUTRecep)
	w.el("MntTotal", fmt.Sprint(d.MntTotal))
}
