package cesion

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dtekit/dtekit/dte"
	chilerules "github.com/dtekit/dtekit/internal/chile"
	"github.com/dtekit/dtekit/internal/mailaddr"
	"github.com/dtekit/dtekit/internal/xmlflat"
	"github.com/dtekit/dtekit/internal/xmltree"
	"github.com/dtekit/dtekit/signer"
)

// Lengths the writer keeps: the stricter of AEC_v10.xsd and the SII's
// Formato Archivo Electrónico de Cesión v1.1 (sii-cesion-notes §2).
const (
	maxRazonSocial = 100
	maxDireccion   = 60
	minDireccion   = 5
	maxEmail       = 40
	minEmail       = 6
	maxNombre      = 40
	maxFono        = 40
	maxTexto       = 512
	// MaxCesiones is how many cesiones one document can pass through.
	MaxCesiones = 40
	// MaxAutorizados is how many people may sign one cesión.
	MaxAutorizados = 3
	// MaxRecibos is how many Ley 19.983 receipts DocumentoDTECedido holds.
	MaxRecibos = 40
)

// Cedible reports whether documents of type t can be ceded: facturas 33
// and 34, the liquidación-factura 43 and the factura de compra 46
// (dte.TipoDTE.Transferable, which the console reads too).
func Cedible(t dte.TipoDTE) bool { return t.Transferable() }

// Parte is a party of a cesión: the cedente or the cesionario.
type Parte struct {
	// RUT, RazonSocial, Direccion (5–60 characters) and Email (6–40) are
	// all required; Ceder fills the first cedente's RUT, RazonSocial and
	// Direccion from the DTE's emisor when they are empty.
	RUT         string `json:"rut"`
	RazonSocial string `json:"razon_social"`
	Direccion   string `json:"direccion"`
	Email       string `json:"email"`
}

// Autorizado is a person authorized to cede for the cedente (its legal
// representative or mandatario): one RUTAutorizado entry.
type Autorizado struct {
	RUT    string `json:"rut"`
	Nombre string `json:"nombre"`
}

// Cesion is what a caller asks of one cesión.
type Cesion struct {
	// Cedente is who cedes: the emitter in a first cesión, the last
	// cesionario in a re-cession. Its empty fields are taken from the
	// DTE's emisor (RUT, RazonSocial, Direccion) in a first cesión, and
	// from the last cesionario in a re-cession.
	Cedente Parte
	// Firmantes sign the DocumentoCesion, 1 to 3, in this order.
	Firmantes []*signer.Certificate
	// Autorizados is the RUTAutorizado table, one entry per firmante in
	// the same order. Empty means each firmante's RUT and common name.
	Autorizados []Autorizado
	// Cesionario receives the credit.
	Cesionario Parte
	// Monto is MontoCesion; 0 means the document's MntTotal.
	Monto int64
	// UltimoVencimiento is the last due date (YYYY-MM-DD, not before the
	// document's FchEmis); empty means FchEmis plus 30 days, the term both
	// real files of the SII's registry we know of carry.
	UltimoVencimiento string
	// DeclaracionJurada is the sworn declaration (at most 512
	// characters). Empty means the SII's template, filled with the
	// parties' and the debtor's names and RUTs, when no receipt travels
	// with the document or the previous cesión carried one; it is left out
	// otherwise.
	DeclaracionJurada string
	// OtrasCondiciones (512 characters) and EmailDeudor (40) are optional.
	OtrasCondiciones, EmailDeudor string
}

// Options are the file-level choices of Ceder and Receder.
type Options struct {
	// Sender signs the DocumentoAEC; nil means the cesión's first
	// firmante.
	Sender *signer.Certificate
	// NmbContacto, FonoContacto (40 characters each) and MailContacto (40)
	// are the carátula's optional contact.
	NmbContacto, FonoContacto, MailContacto string
	// At is the signing instant (TmstFirma, TmstCesion, TmstFirmaEnvio);
	// zero means now.
	At time.Time
}

// Cedido is the document ceded in a first cesión.
type Cedido struct {
	// DTE is the signed DTE of type 33, 34, 43 or 46 as package dte wrote
	// it (ISO-8859-1), pasted into the AEC byte for byte.
	DTE []byte
	// Recibos are the Ley 19.983 receipts of the document: each a signed
	// <Recibo> element, alone or as a file (at most 40).
	Recibos [][]byte
	// Firmante signs DocumentoDTECedido for the emitter.
	Firmante *signer.Certificate
	// ImagenDTE is the printed document as a PDF, and ImagenAR a PDF of the
	// acuse de recibo signed by hand on paper; both optional, at most
	// MaxImagen bytes each.
	ImagenDTE, ImagenAR []byte
}

// MaxImagen bounds ImagenDTE and ImagenAR: the format document's 3 MB,
// stricter than the schema's 4,000,000 octets of ImagenAR.
const MaxImagen = 3_000_000

// Names and fixed texts of the file.
const (
	xmlDecl    = `<?xml version="1.0" encoding="ISO-8859-1"?>` + "\n"
	nsXSI      = "http://www.w3.org/2001/XMLSchema-instance"
	nsDecls    = ` xmlns="` + dte.NamespaceSiiDte + `" xmlns:xsi="` + nsXSI + `"`
	tmstLayout = "2006-01-02T15:04:05"
	dateLayout = "2006-01-02"
)

// declaracionTemplate is the SII's sworn declaration (sii-cesion-notes §4):
// cedente name and RUT, cesionario name and RUT, debtor name and RUT.
const declaracionTemplate = "Se declara bajo juramento que %s, RUT %s ha puesto a disposición del cesionario %s, RUT %s, " +
	"el o los documentos donde constan los recibos de las mercaderías entregadas o servicios prestados, entregados por parte " +
	"del deudor de la factura %s, RUT %s, de acuerdo a lo establecido en la Ley N° 19.983"

// Ceder builds the AEC of a first cesión of d's document: DocumentoDTECedido
// signed by d.Firmante, the cesión (SeqCesion 1) signed by c.Firmantes, and
// the file signed by o.Sender. The cedente must be the DTE's emisor.
func Ceder(d Cedido, c Cesion, o Options) ([]byte, error) {
	if d.Firmante == nil {
		return nil, invalid("dte_cedido.firmante", dte.CodeRequired, "a certificate to sign the ceded document is required")
	}
	doc, dteXML, err := readDTE(d.DTE)
	if err != nil {
		return nil, err
	}
	if len(d.Recibos) > MaxRecibos {
		return nil, invalid("recibos", dte.CodeTooMany, fmt.Sprintf("%d receipts; at most %d", len(d.Recibos), MaxRecibos))
	}
	var recibos [][]byte
	for i, r := range d.Recibos {
		b, err := readRecibo(r, doc)
		if err != nil {
			return nil, invalid(fmt.Sprintf("recibos[%d]", i), dte.CodeInvalidValue, err.Error())
		}
		recibos = append(recibos, b)
	}
	for _, img := range []struct {
		field string
		b     []byte
	}{{"imagen_dte", d.ImagenDTE}, {"imagen_ar", d.ImagenAR}} {
		switch {
		case len(img.b) > MaxImagen:
			return nil, invalid(img.field, dte.CodeTooLarge, fmt.Sprintf("%d bytes; at most %d", len(img.b), MaxImagen))
		case len(img.b) > 0 && !bytes.HasPrefix(img.b, []byte("%PDF-")):
			return nil, invalid(img.field, dte.CodeInvalidFormat, "not a PDF file")
		}
	}
	at := instant(o.At)
	ids := idsFor(doc)
	c.Cedente = fill(c.Cedente, Parte{RUT: doc.Emisor.Rut, RazonSocial: doc.Emisor.RazonSocial, Direccion: clip(doc.Emisor.Direccion, maxDireccion)})
	if !sameRUT(c.Cedente.RUT, doc.Emisor.Rut) {
		return nil, invalid("cedente.rut", dte.CodeInvalidValue,
			fmt.Sprintf("the first cedente must be the document's emisor %s, not %s", doc.Emisor.Rut, c.Cedente.RUT))
	}
	// The ceded document, signed on its own.
	var w strings.Builder
	w.WriteString(xmlDecl + `<DTECedido` + nsDecls + ` version="1.0"><DocumentoDTECedido ID="` + ids.cedido + `">`)
	head, err := xmlflat.ToLatin1(w.String())
	if err != nil {
		return nil, err
	}
	part := append(head, dteXML...)
	part = appendImagen(part, "ImagenDTE", d.ImagenDTE)
	for _, r := range recibos {
		part = append(part, r...)
	}
	part = appendImagen(part, "ImagenAR", d.ImagenAR)
	part = append(part, "<TmstFirma>"+chile(at).Format(tmstLayout)+"</TmstFirma></DocumentoDTECedido></DTECedido>\n"...)
	signed, err := d.Firmante.SignEnveloped(part, ids.cedido)
	if err != nil {
		return nil, fmt.Errorf("cesion: signing DocumentoDTECedido: %w", err)
	}
	cedido := body(signed)
	ces, err := buildCesion(c, doc, 1, len(recibos) > 0, "", at)
	if err != nil {
		return nil, err
	}
	return buildAEC(ids.aec(1), c, cedido, nil, ces, o, at)
}

// Receder appends a cesión to a received AEC (which Verify should have
// accepted first): the new cedente is the last cesionario, and the ceded
// document and every earlier cesión are kept byte for byte with their
// signatures; only the new cesión and the file's signature are new.
func Receder(aec []byte, c Cesion, o Options) ([]byte, error) {
	p, err := parse(aec)
	if err != nil {
		return nil, err
	}
	if !p.latin1 && !ascii(aec) {
		return nil, invalid("aec", dte.CodeInvalidFormat, "the AEC is not ISO-8859-1, the encoding the SII writes; its parts cannot be pasted into a new file")
	}
	n := len(p.cesiones)
	if n >= MaxCesiones {
		return nil, invalid("cesiones", dte.CodeTooMany, fmt.Sprintf("the document has passed through %d cesiones; at most %d", n, MaxCesiones))
	}
	last := p.cesiones[n-1]
	c.Cedente = fill(c.Cedente, last.Cesionario)
	if !sameRUT(c.Cedente.RUT, last.Cesionario.RUT) {
		return nil, invalid("cedente.rut", dte.CodeInvalidValue,
			fmt.Sprintf("the cedente must be the last cesionario %s, not %s", last.Cesionario.RUT, c.Cedente.RUT))
	}
	at := instant(o.At)
	ces, err := buildCesion(c, p.doc, n+1, p.recibos > 0, last.DeclaracionJurada, at)
	if err != nil {
		return nil, err
	}
	var earlier [][]byte
	for _, e := range p.cesionRaw {
		earlier = append(earlier, aec[e[0]:e[1]])
	}
	return buildAEC(idsFor(p.doc).aec(n+1), c, aec[p.cedidoRaw[0]:p.cedidoRaw[1]], earlier, ces, o, at)
}

// fill returns p with its empty fields taken from def.
func fill(p, def Parte) Parte {
	for _, f := range []struct{ v, d *string }{{&p.RUT, &def.RUT}, {&p.RazonSocial, &def.RazonSocial}, {&p.Direccion, &def.Direccion}, {&p.Email, &def.Email}} {
		if strings.TrimSpace(*f.v) == "" {
			*f.v = *f.d
		}
	}
	return p
}

// buildCesion writes and signs cesión seq of doc for c; recibos tells
// whether receipts travel with the document, prevDecl is the previous
// cesión's sworn declaration.
func buildCesion(c Cesion, doc *dte.Document, seq int, recibos bool, prevDecl string, at time.Time) ([]byte, error) {
	var errs []dte.FieldError
	add := func(fe *dte.FieldError) {
		if fe != nil {
			errs = append(errs, *fe)
		}
	}
	checkParte(add, "cedente", c.Cedente)
	checkParte(add, "cesionario", c.Cesionario)
	if sameRUT(c.Cedente.RUT, c.Cesionario.RUT) {
		add(&dte.FieldError{Field: "cesionario.rut", Code: dte.CodeInvalidValue, Message: "the cesionario is the cedente itself"})
	}
	if len(c.Firmantes) == 0 {
		add(&dte.FieldError{Field: "firmantes", Code: dte.CodeRequired, Message: "at least one person must sign the cesión"})
	} else if len(c.Firmantes) > MaxAutorizados {
		add(&dte.FieldError{Field: "firmantes", Code: dte.CodeTooMany, Message: fmt.Sprintf("%d signers; at most %d", len(c.Firmantes), MaxAutorizados)})
	}
	aut := c.Autorizados
	if len(aut) == 0 {
		for _, f := range c.Firmantes {
			if f == nil {
				continue
			}
			rut, _ := f.RUT()
			aut = append(aut, Autorizado{RUT: rut, Nombre: clip(f.Leaf.Subject.CommonName, maxNombre)})
		}
	}
	if len(aut) != len(c.Firmantes) && len(c.Firmantes) > 0 {
		add(&dte.FieldError{Field: "autorizados", Code: dte.CodeInvalidValue,
			Message: fmt.Sprintf("%d authorized people for %d signers; the registry wants one per signature, in order", len(aut), len(c.Firmantes))})
	}
	for i, a := range aut {
		f := fmt.Sprintf("autorizados[%d]", i)
		add(dte.CheckRUT(f+".rut", a.RUT, true))
		add(dte.CheckText(f+".nombre", a.Nombre, maxNombre, true, false))
	}
	for i, f := range c.Firmantes {
		if f == nil {
			add(&dte.FieldError{Field: fmt.Sprintf("firmantes[%d]", i), Code: dte.CodeRequired, Message: "no certificate"})
		}
	}
	mnt, _ := doc.Totales.MntTotal.Int64()
	monto := c.Monto
	if monto == 0 {
		monto = mnt
	}
	if monto <= 0 || monto > mnt {
		add(&dte.FieldError{Field: "monto", Code: dte.CodeOutOfRange,
			Message: fmt.Sprintf("MontoCesion %d must be over 0 and at most the document's total %d", monto, mnt)})
	}
	venc := c.UltimoVencimiento
	emis, _ := time.Parse(dateLayout, doc.FechaEmision)
	if venc == "" {
		venc = emis.AddDate(0, 0, 30).Format(dateLayout)
	}
	if v, err := time.Parse(dateLayout, venc); err != nil || v.Year() > 2050 {
		add(&dte.FieldError{Field: "ultimo_vencimiento", Code: dte.CodeInvalidFormat, Message: "a date YYYY-MM-DD up to 2050-12-31"})
	} else if v.Before(emis) {
		add(&dte.FieldError{Field: "ultimo_vencimiento", Code: dte.CodeOutOfRange,
			Message: fmt.Sprintf("%s is before the document's issue date %s", venc, doc.FechaEmision)})
	}
	decl := strings.TrimSpace(c.DeclaracionJurada)
	if decl == "" && (!recibos || prevDecl != "") {
		decl = declaracion(c.Cedente, c.Cesionario, doc)
	}
	add(dte.CheckText("declaracion_jurada", decl, maxTexto, false, false))
	add(dte.CheckText("otras_condiciones", c.OtrasCondiciones, maxTexto, false, false))
	add(checkEmail("email_deudor", c.EmailDeudor, false))
	if len(errs) > 0 {
		return nil, &dte.ValidationError{Details: errs}
	}
	id := idsFor(doc).cesion(seq)
	var w xw
	w.raw(xmlDecl + `<Cesion` + nsDecls + ` version="1.0"><DocumentoCesion ID="` + id + `">`)
	w.el("SeqCesion", strconv.Itoa(seq))
	w.open("IdDTE")
	w.el("TipoDTE", strconv.Itoa(int(doc.Tipo)))
	w.el("RUTEmisor", doc.Emisor.Rut)
	w.el("RUTReceptor", doc.Receptor.Rut)
	w.el("Folio", strconv.FormatInt(doc.Folio, 10))
	w.el("FchEmis", doc.FechaEmision)
	w.el("MntTotal", strconv.FormatInt(mnt, 10))
	w.close("IdDTE")
	w.open("Cedente")
	w.parte(c.Cedente)
	for _, a := range aut {
		w.open("RUTAutorizado")
		w.el("RUT", a.RUT)
		w.el("Nombre", strings.TrimSpace(a.Nombre))
		w.close("RUTAutorizado")
	}
	w.opt("DeclaracionJurada", decl)
	w.close("Cedente")
	w.open("Cesionario")
	w.parte(c.Cesionario)
	w.close("Cesionario")
	w.el("MontoCesion", strconv.FormatInt(monto, 10))
	w.el("UltimoVencimiento", venc)
	w.opt("OtrasCondiciones", strings.TrimSpace(c.OtrasCondiciones))
	w.opt("eMailDeudor", strings.TrimSpace(c.EmailDeudor))
	w.el("TmstCesion", chile(at).Format(tmstLayout))
	w.close("DocumentoCesion")
	w.raw("</Cesion>\n")
	unsigned, err := xmlflat.ToLatin1(w.String())
	if err != nil {
		return nil, fmt.Errorf("cesion: %w", err)
	}
	// Each person signs the same DocumentoCesion; the signatures follow
	// it in the order of the table.
	end := bytes.Index(unsigned, []byte("</DocumentoCesion>")) + len("</DocumentoCesion>")
	out := append([]byte(nil), unsigned[:end]...)
	for i, f := range c.Firmantes {
		s, err := f.SignEnveloped(unsigned, id)
		if err != nil {
			return nil, fmt.Errorf("cesion: signing DocumentoCesion for %s: %w", aut[i].RUT, err)
		}
		out = append(out, s[end:end+len(s)-len(unsigned)]...)
	}
	out = append(out, unsigned[end:]...)
	return body(out), nil
}

// buildAEC assembles and signs the file: the carátula names c's parties,
// then the ceded document, the earlier cesiones and the new one.
func buildAEC(id string, c Cesion, cedido []byte, earlier [][]byte, ces []byte, o Options, at time.Time) ([]byte, error) {
	sender := o.Sender
	if sender == nil && len(c.Firmantes) > 0 {
		sender = c.Firmantes[0]
	}
	if sender == nil {
		return nil, invalid("sender", dte.CodeRequired, "a certificate to sign the AEC is required")
	}
	var errs []dte.FieldError
	for _, f := range []struct {
		field, v string
		max      int
	}{{"contacto.nombre", o.NmbContacto, maxNombre}, {"contacto.fono", o.FonoContacto, maxFono}} {
		if fe := dte.CheckText(f.field, f.v, f.max, false, false); fe != nil {
			errs = append(errs, *fe)
		}
	}
	if fe := checkEmail("contacto.email", o.MailContacto, false); fe != nil {
		errs = append(errs, *fe)
	}
	if len(errs) > 0 {
		return nil, &dte.ValidationError{Details: errs}
	}
	var w xw
	w.raw(xmlDecl + `<AEC` + nsDecls + ` xsi:schemaLocation="` + dte.NamespaceSiiDte + ` AEC_v10.xsd" version="1.0">`)
	w.raw(`<DocumentoAEC ID="` + id + `"><Caratula version="1.0">`)
	w.el("RutCedente", normRUT(c.Cedente.RUT))
	w.el("RutCesionario", normRUT(c.Cesionario.RUT))
	w.opt("NmbContacto", strings.TrimSpace(o.NmbContacto))
	w.opt("FonoContacto", strings.TrimSpace(o.FonoContacto))
	w.opt("MailContacto", strings.TrimSpace(o.MailContacto))
	w.el("TmstFirmaEnvio", chile(at).Format(tmstLayout))
	w.raw("</Caratula><Cesiones>\n")
	head, err := xmlflat.ToLatin1(w.String())
	if err != nil {
		return nil, fmt.Errorf("cesion: %w", err)
	}
	doc := append(head, cedido...)
	for _, e := range earlier {
		doc = append(append(doc, '\n'), e...)
	}
	doc = append(append(doc, '\n'), ces...)
	doc = append(doc, "\n</Cesiones></DocumentoAEC></AEC>\n"...)
	out, err := sender.SignEnveloped(doc, id)
	if err != nil {
		return nil, fmt.Errorf("cesion: signing DocumentoAEC: %w", err)
	}
	return out, nil
}

// appendImagen appends <name>base64 of b</name>, nothing when b is empty.
func appendImagen(dst []byte, name string, b []byte) []byte {
	if len(b) == 0 {
		return dst
	}
	dst = append(dst, "<"+name+">"...)
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, "</"+name+">"...)
}

// readDTE parses the signed DTE to cede and returns it with the bytes of
// its <DTE> element.
func readDTE(b []byte) (*dte.Document, []byte, error) {
	doc, err := dte.ParseDTE(b)
	if err != nil {
		return nil, nil, invalid("dte", dte.CodeInvalidFormat, err.Error())
	}
	if !Cedible(doc.Tipo) {
		return nil, nil, invalid("dte.tipo_dte", dte.CodeNotAllowed,
			fmt.Sprintf("a document of type %d cannot be ceded; only 33, 34, 43 and 46 can", doc.Tipo))
	}
	if doc.SignatureValue == "" {
		return nil, nil, invalid("dte", dte.CodeInvalidValue, "the DTE is not signed")
	}
	t, err := xmltree.Parse(b)
	if err != nil {
		return nil, nil, invalid("dte", dte.CodeInvalidFormat, err.Error())
	}
	if t.Encoding != xmltree.Latin1 && !ascii(b) {
		return nil, nil, invalid("dte", dte.CodeInvalidFormat, "the DTE is not ISO-8859-1, the encoding of the AEC it is pasted into")
	}
	return doc, b[t.Root.Start:t.Root.End], nil
}

// readRecibo returns the <Recibo> element of b after checking that it
// receipts doc.
func readRecibo(b []byte, doc *dte.Document) ([]byte, error) {
	t, err := xmltree.Parse(b)
	if err != nil {
		return nil, err
	}
	if !t.Root.Is(dte.NamespaceSiiDte, "Recibo") {
		return nil, errors.New("not a Recibo of the SII namespace")
	}
	if t.Encoding != xmltree.Latin1 && !ascii(b) {
		return nil, errors.New("not ISO-8859-1")
	}
	dr := t.Root.Child(dte.NamespaceSiiDte, "DocumentoRecibo")
	if dr == nil {
		return nil, errors.New("no DocumentoRecibo")
	}
	txt := func(n string) string {
		if e := dr.Child(dte.NamespaceSiiDte, n); e != nil {
			return strings.TrimSpace(e.Text())
		}
		return ""
	}
	if txt("TipoDoc") != strconv.Itoa(int(doc.Tipo)) || txt("Folio") != strconv.FormatInt(doc.Folio, 10) || !sameRUT(txt("RUTEmisor"), doc.Emisor.Rut) {
		return nil, errors.New("the receipt names another document")
	}
	if _, err := signer.Verify(b[t.Root.Start:t.Root.End]); err != nil {
		if _, err2 := signer.Verify(b); err2 != nil {
			return nil, fmt.Errorf("its signature: %w", err2)
		}
	}
	return b[t.Root.Start:t.Root.End], nil
}

// ids names the signed elements of one document's AEC: readable IDs made
// of the type, the folio and the cesión's sequence.
type ids struct{ base, cedido string }

func idsFor(d *dte.Document) ids {
	b := fmt.Sprintf("T%dF%d", d.Tipo, d.Folio)
	return ids{base: b, cedido: "DTECedido_" + b}
}
func (i ids) cesion(seq int) string { return fmt.Sprintf("Cesion_%s_S%d", i.base, seq) }
func (i ids) aec(seq int) string    { return fmt.Sprintf("AEC_%s_S%d", i.base, seq) }

// declaracion fills the SII's template, shortening the names (never the
// RUTs) until it fits 512 characters.
func declaracion(ced, ces Parte, d *dte.Document) string {
	names := []string{ced.RazonSocial, ces.RazonSocial, d.Receptor.RazonSocial}
	for n := maxRazonSocial; ; n -= 10 {
		s := fmt.Sprintf(declaracionTemplate, clip(names[0], n), normRUT(ced.RUT), clip(names[1], n), normRUT(ces.RUT),
			clip(names[2], n), normRUT(d.Receptor.Rut))
		if len([]rune(s)) <= maxTexto || n <= 10 {
			return s
		}
	}
}

func checkParte(add func(*dte.FieldError), field string, p Parte) {
	add(dte.CheckRUT(field+".rut", p.RUT, true))
	add(dte.CheckText(field+".razon_social", p.RazonSocial, maxRazonSocial, true, false))
	if fe := dte.CheckText(field+".direccion", p.Direccion, maxDireccion, true, false); fe != nil {
		add(fe)
	} else if n := len([]rune(strings.TrimSpace(p.Direccion))); n < minDireccion {
		add(&dte.FieldError{Field: field + ".direccion", Code: dte.CodeInvalidValue, Message: fmt.Sprintf("%d characters; the schema asks for at least %d", n, minDireccion)})
	}
	add(checkEmail(field+".email", p.Email, true))
}

// checkEmail checks an e-mail address of the AEC: 6 to 40 characters, an
// address the SII takes (mailaddr.CheckEmail).
func checkEmail(field, s string, required bool) *dte.FieldError {
	if fe := dte.CheckText(field, s, maxEmail, required, false); fe != nil {
		return fe
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	if len(s) < minEmail {
		return &dte.FieldError{Field: field, Code: dte.CodeInvalidFormat, Message: fmt.Sprintf("%q is not an e-mail address of 6 to %d characters", s, maxEmail)}
	}
	if err := mailaddr.CheckEmail(s); err != nil {
		return &dte.FieldError{Field: field, Code: dte.CodeInvalidFormat, Message: fmt.Sprintf("%q %v", s, err)}
	}
	return nil
}

func invalid(field string, code dte.DetailCode, msg string) error {
	return &dte.ValidationError{Details: []dte.FieldError{{Field: field, Code: code, Message: msg}}}
}

// body drops the XML declaration (and surrounding blanks) of a signed part.
func body(b []byte) []byte {
	if d, err := xmltree.ParseDeclaration(b); err == nil && d.Present {
		b = b[d.Len:]
	}
	return bytes.TrimSpace(b)
}

// normRUT is a RUT as written in an AEC: the canonical form, or the
// trimmed text when it is not a RUT.
func normRUT(s string) string { return chilerules.CanonRUT(strings.TrimSpace(s)) }

// sameRUT reports whether a and b are one RUT (chile.SameRUT).
func sameRUT(a, b string) bool { return chilerules.SameRUT(a, b) }

func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > n {
		return strings.TrimSpace(string(r[:n]))
	}
	return s
}

func ascii(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

func instant(t time.Time) time.Time {
	if t.IsZero() {
		return time.Now()
	}
	return t
}

func chile(t time.Time) time.Time { return dte.ChileTime(t) }

// xw writes the AEC's markup in schema order, text escaped as canonical
// XML, so what is signed is what the file says.
type xw struct{ b strings.Builder }

func (w *xw) raw(s string)      { w.b.WriteString(s) }
func (w *xw) open(name string)  { w.b.WriteString("<" + name + ">") }
func (w *xw) close(name string) { w.b.WriteString("</" + name + ">") }
func (w *xw) String() string    { return w.b.String() }
func (w *xw) el(name, text string) {
	w.open(name)
	xmlflat.EscapeText(&w.b, text)
	w.close(name)
}
func (w *xw) opt(name, v string) {
	if v != "" {
		w.el(name, v)
	}
}
func (w *xw) parte(p Parte) {
	w.el("RUT", normRUT(p.RUT))
	w.el("RazonSocial", strings.TrimSpace(p.RazonSocial))
	w.el("Direccion", strings.TrimSpace(p.Direccion))
	w.el("eMail", strings.TrimSpace(p.Email))
}
