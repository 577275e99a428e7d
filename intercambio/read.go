package intercambio

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/xmltree"
	"github.com/dtekit/dtekit/signer"
)

// MaxRespuestaBytes bounds the answers Read accepts: an EnvioRecibos of
// 2,000 receipts, each with its signature and certificate, is about 8 MB.
const MaxRespuestaBytes = 16 << 20

// MaxDocumentos bounds the documents one answer may name (RecepcionDTE,
// ResultadoDTE and Recibo elements together): NroDetalles and NroDTE
// have at most four digits.
const MaxDocumentos = 9999

// maxAnswerDepth bounds the nesting of an answer: a Recibo's signature
// key is eight levels down.
const maxAnswerDepth = 16

// Kind names the three answers a receptor sends about our documents.
type Kind string

// The kinds of answer.
const (
	// KindAcuse is a RespuestaDTE holding RecepcionEnvio: the acuse de
	// recibo of envelopes.
	KindAcuse Kind = "RecepcionEnvio"
	// KindResultado is a RespuestaDTE holding ResultadoDTE: the commercial
	// acceptance or rejection of documents.
	KindResultado Kind = "ResultadoDTE"
	// KindRecibos is an EnvioRecibos: the Ley 19.983 receipt of goods or
	// services.
	KindRecibos Kind = "EnvioRecibos"
)

// Outcome is what an answer says of one of our documents.
type Outcome string

// The outcomes Read reports, one per document named in an answer.
const (
	// Recibido: the receptor received the document (EstadoRecepDTE 0 in
	// an envelope received, EstadoRecepEnv 0).
	Recibido Outcome = "recibido"
	// RecibidoConReparos: the receptor got the file but refused the
	// document at reception (EstadoRecepDTE other than 0, "DTE No
	// Recibido", or a refused envelope); Motivo says why.
	RecibidoConReparos Outcome = "recibido_con_reparos"
	// Aceptado: commercially accepted (EstadoDTE 0).
	Aceptado Outcome = "aceptado"
	// AceptadoConDiscrepancias: accepted with discrepancies (EstadoDTE 1);
	// Motivo states them.
	AceptadoConDiscrepancias Outcome = "aceptado_con_discrepancias"
	// Rechazado: commercially rejected (EstadoDTE 2); Motivo is the reason.
	Rechazado Outcome = "rechazado"
	// MercaderiasRecibidas: the receptor signed the receipt of the goods or
	// services (a Recibo).
	MercaderiasRecibidas Outcome = "mercaderias_recibidas"
)

// ErrNotForUs is returned by Read when ReadOptions.Empresa is set and the
// answer is addressed to another company or names another emitter's
// document.
var ErrNotForUs = errors.New("intercambio: the answer is not about our documents")

// ReadOptions configures Read.
type ReadOptions struct {
	// Empresa, when set, is our RUT: the answer must be addressed to it
	// (RutRecibe) and name only documents it issued.
	Empresa string
}

// Respuesta is an answer read by Read.
type Respuesta struct {
	// Kind says which of the three answers it is.
	Kind Kind `json:"kind"`
	// RutResponde is the receptor answering and RutRecibe the company the
	// answer is addressed to (canonical RUTs).
	RutResponde string `json:"rut_responde"`
	RutRecibe   string `json:"rut_recibe"`
	// IdRespuesta is the receptor's number of a RespuestaDTE (0 for
	// EnvioRecibos, which has none).
	IdRespuesta int64 `json:"id_respuesta,omitempty"`
	// Contacto is the Carátula's contact, as written.
	Contacto Contacto `json:"contacto"`
	// TmstFirma is TmstFirmaResp or TmstFirmaEnv as written.
	TmstFirma string `json:"tmst_firma"`
	// Firmante is the certificate that signed the answer (Resultado, or
	// SetRecibos).
	Firmante *dte.Signer `json:"firmante"`
	// Envios are the envelopes an acuse answers.
	Envios []EnvioRespondido `json:"envios,omitempty"`
	// Documentos holds one entry per document the answer names, in order.
	Documentos []DocumentoRespondido `json:"documentos"`
	// Avisos lists departures from the schema that leave the meaning clear
	// (a count that does not match, an IdRespuesta of 0).
	Avisos []string `json:"avisos,omitempty"`
}

// EnvioRespondido is one RecepcionEnvio of an acuse: the file's name as
// the receptor saw it, when it received it and the number it gave it, the
// SetDTE ID and signature digest it read, the Carátula's RUTs it read, and
// its reception state with the glosa it wrote.
type EnvioRespondido struct {
	NmbEnvio    string         `json:"nombre_envio"`
	FchRecep    string         `json:"fecha_recepcion"`
	CodEnvio    int64          `json:"cod_envio"`
	EnvioDTEID  string         `json:"envio_dte_id"`
	Digest      string         `json:"digest,omitempty"`
	RutEmisor   string         `json:"rut_emisor,omitempty"`
	RutReceptor string         `json:"rut_receptor,omitempty"`
	Estado      EstadoRecepEnv `json:"estado"`
	Glosa       string         `json:"glosa"`
}

// DocumentoRespondido is what an answer says of one document.
type DocumentoRespondido struct {
	DocRef
	// Outcome classifies the answer by which answer it is, then by code.
	Outcome Outcome `json:"outcome"`
	// Motivo is the receptor's reason for anything but a plain reception,
	// acceptance or receipt: the glosa it wrote.
	Motivo string `json:"motivo,omitempty"`
	// Codigo is the code as written: EstadoRecepDTE in an acuse, EstadoDTE
	// in a resultado (0 in a receipt).
	Codigo int `json:"codigo"`
	// Glosa is the code's glosa as written.
	Glosa string `json:"glosa,omitempty"`
	// CodEnvio is the receptor's number of the envelope (acuse, resultado).
	CodEnvio int64 `json:"cod_envio,omitempty"`
	// CodRchDsc is the code of a rejection or discrepancy (resultado).
	CodRchDsc int `json:"cod_rch_dsc,omitempty"`
	// Recinto, RutFirma and TmstFirmaRecibo are a receipt's place, signer
	// and time; Firmante the certificate that signed it.
	Recinto         string      `json:"recinto,omitempty"`
	RutFirma        string      `json:"rut_firma,omitempty"`
	TmstFirmaRecibo string      `json:"tmst_firma_recibo,omitempty"`
	Firmante        *dte.Signer `json:"firmante,omitempty"`
}

// Read reads an answer a receptor sent about our documents: a RespuestaDTE
// (acuse or resultado) or an EnvioRecibos, UTF-8 or ISO-8859-1. It checks
// the shape the schemas give signed answers (each signed element where the
// schema puts it, its Signature right after it, no Signature anywhere else
// and no ID twice, so a signature cannot cover one element while another
// is read), verifies every signature and that each covers its element by
// ID and by position (Resultado; SetRecibos and each DocumentoRecibo),
// reads every field it reports with the schema's types,
// and classifies each document: an acuse gives Recibido or
// RecibidoConReparos, a resultado Aceptado, AceptadoConDiscrepancias or
// Rechazado, a receipt MercaderiasRecibidas. The answer is judged by which
// branch it holds and then by its codes, never by the absence of a code
// (an acuse is never read as a rejection).
//
// A signature proves the answer is intact and was signed by the certificate
// beside it; whether its holder speaks for RutResponde is the caller's
// policy (Firmante names them). The answers have no legal effect: the
// acceptance or claim that counts is the one in the SII's registry.
//
// Input is bounded (MaxRespuestaBytes, MaxDocumentos, nesting, element
// count, signature count and canonicalization cost), and only the elements
// the schemas give an answer are kept while it is read: anything else is
// refused where it appears. Anything malformed is an error, never a panic.
func Read(data []byte, opts ReadOptions) (*Respuesta, error) {
	if len(data) > MaxRespuestaBytes {
		return nil, fmt.Errorf("intercambio: read: the answer is %d bytes, more than the %d accepted", len(data), MaxRespuestaBytes)
	}
	k := &answerKeep{}
	d, err := xmltree.ParseWith(data, xmltree.Options{MaxBytes: MaxRespuestaBytes, MaxDepth: maxAnswerDepth,
		MaxElements: len(data)/16 + 256, Keep: k.keep})
	if err != nil {
		return nil, fmt.Errorf("intercambio: read: %w", err)
	}
	root := d.Root
	var res *Respuesta
	switch {
	case root.Is(dte.NamespaceSiiDte, "RespuestaDTE"):
		res, err = readRespuestaDTE(data, root)
	case root.Is(dte.NamespaceSiiDte, "EnvioRecibos"):
		res, err = readEnvioRecibos(data, root)
	default:
		return nil, fmt.Errorf("intercambio: read: the root is <%s> (namespace %q), not RespuestaDTE or EnvioRecibos of the SII", root.QName(), root.URI)
	}
	if err != nil {
		return nil, fmt.Errorf("intercambio: read: %w", err)
	}
	if opts.Empresa != "" {
		if err := res.forUs(opts.Empresa); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// forUs checks that the answer is addressed to empresa and names only its
// documents.
func (r *Respuesta) forUs(empresa string) error {
	us, err := canonicalRUT(empresa)
	if err != nil {
		return fmt.Errorf("intercambio: read: Empresa: %w", err)
	}
	if r.RutRecibe != us {
		return fmt.Errorf("%w: it is addressed to %s, not to %s", ErrNotForUs, r.RutRecibe, us)
	}
	for _, d := range r.Documentos {
		if d.RUTEmisor != us {
			return fmt.Errorf("%w: it names %s, issued by %s", ErrNotForUs, d.DocRef, d.RUTEmisor)
		}
	}
	return nil
}

// answerFields lists, for each element of an answer that holds others,
// the elements the schemas allow in it (RespuestaEnvioDTE_v10.xsd,
// EnvioRecibos_v10.xsd, Recibos_v10.xsd); the Caratula entry serves both
// answers. Elements not listed hold text only.
var answerFields = func() map[string]map[string]bool {
	set := func(names string) map[string]bool {
		m := map[string]bool{}
		for _, n := range strings.Fields(names) {
			m[n] = true
		}
		return m
	}
	ref := "TipoDTE Folio FchEmis RUTEmisor RUTRecep MntTotal "
	return map[string]map[string]bool{
		"RespuestaDTE": set("Resultado"),
		"Resultado":    set("Caratula RecepcionEnvio ResultadoDTE"),
		"Caratula": set("RutResponde RutRecibe IdRespuesta NroDetalles NmbContacto FonoContacto MailContacto " +
			"TmstFirmaResp TmstFirmaEnv"),
		"RecepcionEnvio": set("NmbEnvio FchRecep CodEnvio EnvioDTEID Digest RutEmisor RutReceptor EstadoRecepEnv " +
			"RecepEnvGlosa NroDTE RecepcionDTE"),
		"RecepcionDTE":    set(ref + "EstadoRecepDTE RecepDTEGlosa"),
		"ResultadoDTE":    set(ref + "CodEnvio EstadoDTE EstadoDTEGlosa CodRchDsc"),
		"EnvioRecibos":    set("SetRecibos"),
		"SetRecibos":      set("Caratula Recibo"),
		"Recibo":          set("DocumentoRecibo"),
		"DocumentoRecibo": set("TipoDoc Folio FchEmis RUTEmisor RUTRecep MntTotal Recinto RutFirma Declaracion TmstFirmaRecibo"),
	}
}()

// signedParents are the elements whose Signature follows their signed
// child: RespuestaDTE (Resultado), EnvioRecibos (SetRecibos) and Recibo
// (DocumentoRecibo).
var signedParents = map[string]bool{"RespuestaDTE": true, "EnvioRecibos": true, "Recibo": true}

// answerKeep is Read's xmltree Options.Keep: it keeps what the schemas put
// in an answer and refuses, as it meets it, anything else in the SII's
// namespace, any element inside a text field, a Signature anywhere but
// after a signed element, and more than MaxDocumentos documents; of a
// Signature it keeps what signer reads. So a hostile answer costs the
// memory of the elements an answer has, never more.
type answerKeep struct{ docs int }

func (k *answerKeep) keep(el *xmltree.Element) (bool, error) {
	p := el.Parent
	if !p.Kept() {
		if el.Is(nsDSig, "Signature") {
			return false, fmt.Errorf("a <%s> inside <%s>, where the schema has none", el.QName(), p.QName())
		}
		return false, nil
	}
	if p.URI == nsDSig {
		if el.Is(nsDSig, "Signature") {
			return false, fmt.Errorf("a <%s> inside <%s>, where the schema has none", el.QName(), p.QName())
		}
		return el.URI == nsDSig, nil
	}
	if p.URI != dte.NamespaceSiiDte {
		return false, nil
	}
	if el.Is(nsDSig, "Signature") {
		if !signedParents[p.Local] {
			return false, fmt.Errorf("a <%s> inside <%s>, where the schema has none", el.QName(), p.QName())
		}
		return true, nil
	}
	fields, ok := answerFields[p.Local]
	if p.Parent == nil && p.Local != "RespuestaDTE" && p.Local != "EnvioRecibos" {
		return false, fmt.Errorf("the root is <%s>, not RespuestaDTE or EnvioRecibos", p.QName())
	}
	switch {
	case !ok:
		return false, fmt.Errorf("<%s> holds an element, <%s>; the schema gives it text only", p.QName(), el.QName())
	case el.URI != dte.NamespaceSiiDte || !fields[el.Local]:
		return false, fmt.Errorf("<%s> holds <%s>, which the schema does not put there", p.QName(), el.QName())
	}
	switch el.Local {
	case "RecepcionDTE", "ResultadoDTE", "Recibo":
		if k.docs++; k.docs > MaxDocumentos {
			return false, fmt.Errorf("the answer names more than %d documents", MaxDocumentos)
		}
	}
	return true, nil
}

// readRespuestaDTE reads a RespuestaDTE: Resultado, then its Signature.
func readRespuestaDTE(data []byte, root *xmltree.Element) (*Respuesta, error) {
	kids := root.Elements()
	if len(kids) != 2 || !kids[0].Is(dte.NamespaceSiiDte, "Resultado") || !kids[1].Is(nsDSig, "Signature") {
		return nil, errors.New("a RespuestaDTE holds Resultado and then its Signature, and nothing else")
	}
	result := kids[0]
	rd := &reader{}
	items := result.Elements()
	if len(items) < 2 || !items[0].Is(dte.NamespaceSiiDte, "Caratula") {
		return nil, errors.New("Resultado must hold its Caratula and then RecepcionEnvio or ResultadoDTE elements")
	}
	branch := items[1].Local
	if items[1].URI != dte.NamespaceSiiDte || (branch != "RecepcionEnvio" && branch != "ResultadoDTE") {
		return nil, fmt.Errorf("Resultado holds <%s> after its Caratula; only RecepcionEnvio or ResultadoDTE may follow", items[1].QName())
	}
	for _, e := range items[2:] {
		if !e.Is(dte.NamespaceSiiDte, branch) {
			return nil, fmt.Errorf("Resultado mixes <%s> with %s: the schema allows one kind only", e.QName(), branch)
		}
	}
	if err := onlyHere(root, kids[1]); err != nil {
		return nil, err
	}
	sigs, err := verify(data, 1)
	if err != nil {
		return nil, err
	}
	if err := covers(sigs[0], result, "Resultado"); err != nil {
		return nil, err
	}
	res := &Respuesta{Kind: Kind(branch), Firmante: signerOf(sigs[0]), Documentos: []DocumentoRespondido{}}
	c := items[0]
	res.RutResponde = rd.rut(c, "RutResponde")
	res.RutRecibe = rd.rut(c, "RutRecibe")
	res.IdRespuesta = rd.int64(c, "IdRespuesta")
	nro := rd.int64(c, "NroDetalles")
	res.Contacto = Contacto{Nombre: rd.opt(c, "NmbContacto"), Fono: rd.opt(c, "FonoContacto"), Mail: rd.opt(c, "MailContacto")}
	res.TmstFirma = rd.req(c, "TmstFirmaResp")
	if res.IdRespuesta == 0 && rd.err == nil {
		res.Avisos = append(res.Avisos, "IdRespuesta is 0; the schema wants 1 or more")
	}
	details := items[1:]
	if nro != int64(len(details)) && rd.err == nil {
		res.Avisos = append(res.Avisos, fmt.Sprintf("NroDetalles says %d, the answer holds %d %s", nro, len(details), branch))
	}
	for i, e := range details {
		rd.where = fmt.Sprintf("%s %d: ", branch, i+1)
		if branch == "RecepcionEnvio" {
			rd.recepcionEnvio(res, e)
		} else {
			rd.resultadoDTE(res, e)
		}
		if rd.err != nil {
			break
		}
	}
	if rd.err != nil {
		return nil, rd.err
	}
	return res, nil
}

// recepcionEnvio reads one envelope of an acuse and its documents.
func (rd *reader) recepcionEnvio(res *Respuesta, e *xmltree.Element) {
	env := EnvioRespondido{
		NmbEnvio:   rd.req(e, "NmbEnvio"),
		FchRecep:   rd.req(e, "FchRecep"),
		CodEnvio:   rd.int64(e, "CodEnvio"),
		EnvioDTEID: rd.opt(e, "EnvioDTEID"),
		Digest:     rd.opt(e, "Digest"),
		Estado:     EstadoRecepEnv(rd.code(e, "EstadoRecepEnv", tablaRecepEnv)),
		Glosa:      rd.opt(e, "RecepEnvGlosa"),
	}
	if rd.opt(e, "RutEmisor") != "" {
		env.RutEmisor = rd.rut(e, "RutEmisor")
	}
	if rd.opt(e, "RutReceptor") != "" {
		env.RutReceptor = rd.rut(e, "RutReceptor")
	}
	docs := children(e, "RecepcionDTE")
	if n := rd.opt(e, "NroDTE"); n != "" && n != strconv.Itoa(len(docs)) {
		res.Avisos = append(res.Avisos, fmt.Sprintf("%sNroDTE says %s, the answer holds %d RecepcionDTE", rd.where, n, len(docs)))
	}
	if env.CodEnvio == 0 && rd.err == nil {
		res.Avisos = append(res.Avisos, rd.where+"CodEnvio is 0; the schema wants 1 or more")
	}
	res.Envios = append(res.Envios, env)
	where := rd.where
	for i, de := range docs {
		rd.where = fmt.Sprintf("%sRecepcionDTE %d: ", where, i+1)
		doc := DocumentoRespondido{DocRef: rd.docRef(de, "TipoDTE"), CodEnvio: env.CodEnvio,
			Codigo: rd.code(de, "EstadoRecepDTE", tablaRecepDTE), Glosa: rd.opt(de, "RecepDTEGlosa")}
		switch {
		case env.Estado != EnvioRecibidoConforme:
			doc.Outcome, doc.Motivo = RecibidoConReparos, firstOf(env.Glosa, env.Estado.Glosa())
			if doc.Codigo != 0 {
				doc.Motivo = firstOf(doc.Glosa, EstadoRecepDTE(doc.Codigo).Glosa())
			}
		case doc.Codigo == int(DTERecibidoOK):
			doc.Outcome = Recibido
		default:
			doc.Outcome, doc.Motivo = RecibidoConReparos, firstOf(doc.Glosa, EstadoRecepDTE(doc.Codigo).Glosa())
		}
		res.Documentos = append(res.Documentos, doc)
	}
}

// resultadoDTE reads one document of a resultado.
func (rd *reader) resultadoDTE(res *Respuesta, e *xmltree.Element) {
	doc := DocumentoRespondido{DocRef: rd.docRef(e, "TipoDTE"), CodEnvio: rd.int64(e, "CodEnvio"),
		Codigo: rd.code(e, "EstadoDTE", tablaDTE), Glosa: rd.opt(e, "EstadoDTEGlosa")}
	if v := rd.opt(e, "CodRchDsc"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n >= 0 {
			rd.fail("CodRchDsc %q is not a negative number", v)
		}
		doc.CodRchDsc = n
	}
	switch EstadoDTE(doc.Codigo) {
	case DTEAceptadoOK:
		doc.Outcome = Aceptado
	case DTEAceptadoConDiscrepancias:
		doc.Outcome, doc.Motivo = AceptadoConDiscrepancias, firstOf(doc.Glosa, EstadoDTE(doc.Codigo).Glosa())
	default:
		doc.Outcome, doc.Motivo = Rechazado, firstOf(doc.Glosa, EstadoDTE(doc.Codigo).Glosa())
	}
	res.Documentos = append(res.Documentos, doc)
}

// readEnvioRecibos reads an EnvioRecibos: SetRecibos (Caratula, then each
// Recibo with its DocumentoRecibo and Signature), then SetRecibos'
// Signature.
func readEnvioRecibos(data []byte, root *xmltree.Element) (*Respuesta, error) {
	kids := root.Elements()
	if len(kids) != 2 || !kids[0].Is(dte.NamespaceSiiDte, "SetRecibos") || !kids[1].Is(nsDSig, "Signature") {
		return nil, errors.New("an EnvioRecibos holds SetRecibos and then its Signature, and nothing else")
	}
	set := kids[0]
	items := set.Elements()
	if len(items) < 2 || !items[0].Is(dte.NamespaceSiiDte, "Caratula") {
		return nil, errors.New("SetRecibos must hold its Caratula and then one or more Recibo")
	}
	allowed := []*xmltree.Element{kids[1]}
	recibos := items[1:]
	bodies := make([]*xmltree.Element, len(recibos))
	for i, e := range recibos {
		rk := e.Elements()
		if !e.Is(dte.NamespaceSiiDte, "Recibo") || len(rk) != 2 || !rk[0].Is(dte.NamespaceSiiDte, "DocumentoRecibo") || !rk[1].Is(nsDSig, "Signature") {
			return nil, fmt.Errorf("SetRecibos item %d: after the Caratula come Recibo elements, each holding DocumentoRecibo and then its Signature", i+1)
		}
		bodies[i] = rk[0]
		allowed = append(allowed, rk[1])
	}
	if err := onlyHere(root, allowed...); err != nil {
		return nil, err
	}
	verified, err := verify(data, len(allowed))
	if err != nil {
		return nil, err
	}
	// Each Signature element found above, by its position in the file.
	sigs := make([]signer.VerifiedSignature, len(allowed))
	for i, el := range allowed {
		for _, s := range verified {
			if s.Offset == el.Start {
				sigs[i] = s
			}
		}
	}
	if err := covers(sigs[0], set, "SetRecibos"); err != nil {
		return nil, err
	}
	rd := &reader{}
	res := &Respuesta{Kind: KindRecibos, Firmante: signerOf(sigs[0]), Documentos: []DocumentoRespondido{}}
	c := items[0]
	res.RutResponde = rd.rut(c, "RutResponde")
	res.RutRecibe = rd.rut(c, "RutRecibe")
	res.Contacto = Contacto{Nombre: rd.opt(c, "NmbContacto"), Fono: rd.opt(c, "FonoContacto"), Mail: rd.opt(c, "MailContacto")}
	res.TmstFirma = rd.req(c, "TmstFirmaEnv")
	for i, b := range bodies {
		rd.where = fmt.Sprintf("Recibo %d: ", i+1)
		if err := covers(sigs[i+1], b, "DocumentoRecibo"); err != nil {
			return nil, fmt.Errorf("%s%w", rd.where, err)
		}
		doc := DocumentoRespondido{DocRef: rd.docRef(b, "TipoDoc"), Outcome: MercaderiasRecibidas,
			Recinto: rd.req(b, "Recinto"), RutFirma: rd.rut(b, "RutFirma"), TmstFirmaRecibo: rd.req(b, "TmstFirmaRecibo"),
			Firmante: signerOf(sigs[i+1])}
		if decl := text(b, "Declaracion"); decl != Declaracion && rd.err == nil {
			rd.fail("Declaracion differs from the text Recibos_v10.xsd fixes from character %d on", differsAt(decl, Declaracion)+1)
		}
		if rd.err != nil {
			return nil, rd.err
		}
		res.Documentos = append(res.Documentos, doc)
	}
	if rd.err != nil {
		return nil, rd.err
	}
	return res, nil
}

// onlyHere refuses a Signature element anywhere but at the places given.
func onlyHere(root *xmltree.Element, sigs ...*xmltree.Element) error {
	ok := make(map[*xmltree.Element]bool, len(sigs))
	for _, s := range sigs {
		ok[s] = true
	}
	var bad *xmltree.Element
	xmltree.Walk(root, func(e *xmltree.Element) {
		if bad != nil || ok[e] {
			return
		}
		if e.Is(nsDSig, "Signature") {
			bad = e
		}
	})
	if bad != nil {
		return fmt.Errorf("a <%s> inside <%s>, where the schema has none", bad.QName(), bad.Parent.QName())
	}
	return nil
}

// verify checks every signature of the answer with signer.Verify and
// expects n of them.
func verify(data []byte, n int) ([]signer.VerifiedSignature, error) {
	sigs, err := signer.Verify(data)
	if err != nil {
		for i, s := range sigs {
			if s.Err != nil {
				return nil, fmt.Errorf("signature %d of %d (Reference %q) does not verify: %w", i+1, len(sigs), s.URI, s.Err)
			}
		}
		return nil, err
	}
	if len(sigs) != n {
		return nil, fmt.Errorf("%d signatures, the answer's shape has %d", len(sigs), n)
	}
	return sigs, nil
}

// covers checks that a verified signature covers el, by its ID and by its
// offsets.
func covers(s signer.VerifiedSignature, el *xmltree.Element, what string) error {
	id, _ := el.Attr("ID")
	switch {
	case id == "":
		return fmt.Errorf("%s has no ID for its signature to reference", what)
	case s.URI != "#"+id || s.RefStart != el.Start || s.RefEnd != el.End:
		return fmt.Errorf("the signature beside %s %q references %q, not it", what, id, s.URI)
	}
	return nil
}

// signerOf describes the certificate of a verified signature.
func signerOf(s signer.VerifiedSignature) *dte.Signer {
	c := s.Certificate
	if c == nil {
		return nil
	}
	return &dte.Signer{Subject: c.Subject.String(), RUT: s.RUT, Serial: c.SerialNumber.String(), Issuer: c.Issuer.String(),
		NotBefore: c.NotBefore, NotAfter: c.NotAfter}
}

// reader reads an answer's fields, keeping the first problem.
type reader struct {
	where string // e.g. "ResultadoDTE 2: "
	err   error
}

func (rd *reader) fail(format string, args ...any) {
	if rd.err == nil {
		rd.err = fmt.Errorf(rd.where+format, args...)
	}
}

// text returns the trimmed text of e's child name in the SII namespace.
func text(e *xmltree.Element, name string) string {
	return strings.TrimSpace(e.Child(dte.NamespaceSiiDte, name).Text())
}

// children returns e's children named name in the SII namespace.
func children(e *xmltree.Element, name string) []*xmltree.Element {
	var out []*xmltree.Element
	for _, k := range e.Elements() {
		if k.Is(dte.NamespaceSiiDte, name) {
			out = append(out, k)
		}
	}
	return out
}

// opt returns an optional field's text.
func (rd *reader) opt(e *xmltree.Element, name string) string { return text(e, name) }

// req returns a required field's text.
func (rd *reader) req(e *xmltree.Element, name string) string {
	if e.Child(dte.NamespaceSiiDte, name) == nil {
		rd.fail("%s is missing", name)
	}
	return text(e, name)
}

// int64 reads a required non-negative integer field.
func (rd *reader) int64(e *xmltree.Element, name string) int64 {
	v := rd.req(e, name)
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > 999999999999999999 {
		rd.fail("%s %.30q is not a number", name, v)
		return 0
	}
	return n
}

// rut reads a required RUT field and returns its canonical form.
func (rd *reader) rut(e *xmltree.Element, name string) string {
	v := rd.req(e, name)
	r, err := canonicalRUT(v)
	if err != nil {
		rd.fail("%s: %v", name, err)
		return v
	}
	return r
}

// code reads a required code field that must be in table.
func (rd *reader) code(e *xmltree.Element, name string, table []Code) int {
	n := int(rd.int64(e, name))
	if _, ok := lookup(table, n); !ok {
		rd.fail("%s %d is not one of the SII's codes", name, n)
	}
	return n
}

// docRef reads the six fields that identify a document; tipo is the first
// one's name.
func (rd *reader) docRef(e *xmltree.Element, tipo string) DocRef {
	d := DocRef{Tipo: dte.TipoDTE(rd.int64(e, tipo)), Folio: rd.int64(e, "Folio"), FchEmis: rd.req(e, "FchEmis"),
		RUTEmisor: rd.rut(e, "RUTEmisor"), RUTRecep: rd.rut(e, "RUTRecep"), MntTotal: rd.int64(e, "MntTotal")}
	if !d.Tipo.Valid() && rd.err == nil {
		rd.fail("%s %d is not a DTE type", tipo, d.Tipo)
	}
	return d
}

// differsAt returns the index of the first character where a and b
// differ.
func differsAt(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	i := 0
	for i < len(ra) && i < len(rb) && ra[i] == rb[i] {
		i++
	}
	return i
}

// firstOf returns the first non-empty text.
func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// ErrSignerPolicy is returned by CheckSigners when a signature of an
// answer breaks the signer policy.
var ErrSignerPolicy = errors.New("intercambio: the answer's signer is refused")

// CheckSigners applies a signer policy to an answer: every signature
// (Resultado's, SetRecibos' and each Recibo's) must come from a signer
// opts.AuthorizedSigners lists for RutResponde, the company answering,
// and with opts.ValidAtSigning from a certificate valid at the time the
// answer states (TmstFirmaResp, TmstFirmaEnv, each TmstFirmaRecibo), as
// dte.VerifyOptions.CheckSigner says; SignerIsRutEnvia, a rule of
// envelopes, does not apply. Whatever the policy, a receipt's RutFirma
// must be the RUT of the certificate that signed it, when that
// certificate names one. The error wraps ErrSignerPolicy and names the
// signature.
func (r *Respuesta) CheckSigners(opts dte.VerifyOptions) error {
	what := "Resultado"
	if r.Kind == KindRecibos {
		what = "SetRecibos"
	}
	if err := opts.CheckSigner(r.RutResponde, r.Firmante, r.TmstFirma); err != nil {
		return fmt.Errorf("%w: the signature of %s: %v", ErrSignerPolicy, what, err)
	}
	for i, d := range r.Documentos {
		if r.Kind != KindRecibos {
			break
		}
		if d.Firmante != nil && d.Firmante.RUT != "" && d.Firmante.RUT != d.RutFirma {
			return fmt.Errorf("%w: Recibo %d: RutFirma is %s, but its signature's certificate is %s's", ErrSignerPolicy, i+1, d.RutFirma, d.Firmante.RUT)
		}
		if err := opts.CheckSigner(r.RutResponde, d.Firmante, d.TmstFirmaRecibo); err != nil {
			return fmt.Errorf("%w: the signature of Recibo %d: %v", ErrSignerPolicy, i+1, err)
		}
	}
	return nil
}
