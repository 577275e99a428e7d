package siitest

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dtekit/dtekit/cesion"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/chile"
	"github.com/dtekit/dtekit/internal/xmlflat"
	"github.com/dtekit/dtekit/sii"
)

// The registry of credit transfers (RTC): the upload of an AEC
// (RTCAnotEnvio.cgi) and the wsRPETCConsulta queries, as strict as
// sii-cesion-notes.md §8 describes the real one.
//
// The upload checks, in order, the TOKEN cookie (STATUS 5), the four
// fields emailNotif, rutCompany, dvCompany, archivo (4), the token
// holder's permission to send for the cedente (1), the cedente being an
// authorised DTE company (6) and the file's size (2); then it gives a
// track id. The review is done at once but reported as the registry
// reports it (and its end, which records the cesión, comes in the order
// the files arrived), one state per getEstEnvio (or per Options.StepEvery of
// clock time, held back by Options.ReviewDelay like an envelope's):
// RCP, SOK, FSO, COK, VDC, VCS, cut where the review failed, and then
// the final state. Its checks, each refusing with the state of its step:
//
//   - RSC: the root is <AEC>, Options.Schema("AEC", file) finds nothing,
//     and cesion.Verify can read the file;
//   - RFS: the DocumentoAEC signature (and the shape of every signature);
//   - RCR: the carátula names the last cesión's cedente and cesionario,
//     and its cedente is the uploaded rutCompany;
//   - RDC: the DTE's signature, stamp (with Options.CAFKeys) and totals,
//     a cedible type (33, 34, 43, 46), DocumentoDTECedido signed, and the
//     document known to the fake: the same signed DTE (its
//     SignatureValue) in an envelope whose review accepted it;
//   - RCS: at most 40 cesiones in sequence, each cedente the previous
//     cesionario (the first the emisor), IdDTE the document, MontoCesion
//     at most MntTotal, UltimoVencimiento not before FchEmis, TmstCesion
//     not in the future, the sworn declaration carried over, each cesión
//     signed by exactly its RUTAutorizado people in order (a company RUT
//     standing for a person, which the portal writes, is refused: the
//     fake holds what dtekit writes to the stricter reading), and, when
//     the review ends, the earlier cesiones the ones on record and the
//     document not ceded meanwhile by another AEC.
//
// cesion.Verify does the signature, stamp and chain work under
// PolicyStrict; its problems map to the states by the field they name.
// When the review ends in EOK the registry records the new cesión: the
// holder, the time, the sworn declaration and an access key (IdCesion),
// which getEstCesion and getEstCesionRelac then report.

// The registry's endpoints, for fault injection and request recording.
const (
	RTCUpload      Endpoint = "RTCAnotEnvio"
	EstEnvio       Endpoint = "getEstEnvio"
	EstCesion      Endpoint = "getEstCesion"
	EstCesionRelac Endpoint = "getEstCesionRelac"
)

// aecFields are the upload's multipart fields, in order ([UP] §2.2).
var aecFields = []string{"emailNotif", "rutCompany", "dvCompany", "archivo"}

// aecSteps are the states an AEC reports while under review.
var aecSteps = []string{"RCP", "SOK", "FSO", "COK", "VDC", "VCS"}

// aecStepsBefore is how many of aecSteps an AEC walks through before each
// final state.
var aecStepsBefore = map[string]int{"RSC": 1, "RFS": 2, "RCR": 3, "RDC": 5, "RCS": 6, "EOK": 6, "EAN": 6}

// aecStage orders the refusals by the review's steps.
var aecStage = map[string]int{"RSC": 0, "RFS": 1, "RCR": 2, "RDC": 3, "RCS": 4}

// aecDesc is the registry's text for each ESTADO_ENVIO.
var aecDesc = map[string]string{
	"UPL": "Envio en Proceso de Upload", "RCP": "Envio Recibido", "RSC": "Rechazado por Error en Schema",
	"SOK": "Schema Validado", "RFS": "Rechazado por Error en Firma del Sobre", "FSO": "Firma del Sobre Validada",
	"RCR": "Rechazado por Error en Caratula", "COK": "Caratula OK", "VDC": "Validacion de Documento",
	"RDC": "Documento Invalido", "VCS": "Validacion de Cesiones", "RCS": "Cesion Invalida",
	"EOK": "Envio Aceptado", "EAN": "Envio Anulado",
}

// rtcRegistry is the fake's registry of credit transfers.
type rtcRegistry struct {
	uploads  []*AECUpload
	scripts  map[string][2]string // docKey → scripted final state and detail
	cesiones map[string][]Cesion  // docKey → the cesiones recorded, in order
}

// Cesion is one cesión the registry recorded.
type Cesion struct {
	// RutEmisor, Tipo, Folio and RutReceptor identify the document.
	RutEmisor   string `json:"rut_emisor"`
	Tipo        int    `json:"tipo"`
	Folio       int64  `json:"folio"`
	RutReceptor string `json:"rut_receptor"`
	// Seq is SeqCesion.
	Seq               int    `json:"seq"`
	Cedente           string `json:"cedente"`
	Cesionario        string `json:"cesionario"`
	Monto             int64  `json:"monto"`
	UltimoVencimiento string `json:"ultimo_vencimiento"`
	// DeclaracionJurada reports that the cesión carried one.
	DeclaracionJurada bool `json:"declaracion_jurada,omitempty"`
	// TrackID is the upload that recorded it, At when (FECHA_ULT_ANOT),
	// IdCesion the holder's access key.
	TrackID  string    `json:"track_id"`
	At       time.Time `json:"at"`
	IdCesion string    `json:"id_cesion"`
}

// AECUpload is an AEC the registry gave a track id.
type AECUpload struct {
	TrackID string
	// Company is the cedente as uploaded (rutCompany-dvCompany), Sender
	// the token's holder, Email the emailNotif.
	Company, Sender, Email string
	Received               time.Time
	// ReviewedAt, when not zero, is the earliest time the review may end.
	ReviewedAt time.Time
	// Steps are the states before Final: RSC, RFS, RCR, RDC, RCS, EOK or
	// EAN, and Detail why it was refused. Until Settled, an EOK may still
	// turn RCS (another AEC recorded first).
	Steps         []string
	Final, Detail string
	Settled       bool
	// Polls counts the getEstEnvio answers.
	Polls int
	// Chain is the AEC's cesiones as read (the last is the new one).
	Chain []Cesion
	Raw   []byte
}

// ScriptAEC makes every AEC of a document (issuer RUT, type, folio) end
// in estado (RSC, RFS, RCR, RDC, RCS or EAN) with detail, whatever its
// content; an empty estado removes the script.
func (f *Fake) ScriptAEC(rutEmisor string, tipo int, folio int64, estado, detail string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.rtc.scripts == nil {
		f.rtc.scripts = map[string][2]string{}
	}
	k := docKey(rutEmisor, tipo, folio)
	if estado == "" {
		delete(f.rtc.scripts, k)
		return
	}
	f.rtc.scripts[k] = [2]string{estado, detail}
}

// Cesiones returns the cesiones the registry recorded, in the order it
// recorded them (reviews that are due end first).
func (f *Fake) Cesiones() []Cesion {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.settleDue()
	var out []Cesion
	for _, u := range f.rtc.uploads {
		if u.Settled && u.Final == "EOK" {
			out = append(out, u.Chain[len(u.Chain)-1])
		}
	}
	return out
}

// AECUploads returns copies of the AECs given a track id, in order.
func (f *Fake) AECUploads() []AECUpload {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.settleDue()
	out := make([]AECUpload, len(f.rtc.uploads))
	for i, u := range f.rtc.uploads {
		out[i] = *u
		out[i].Steps = slices.Clone(u.Steps)
		out[i].Chain = slices.Clone(u.Chain)
	}
	return out
}

// serveRTCUpload is RTCAnotEnvio.cgi.
func (f *Fake) serveRTCUpload(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	u := f.readUpload(w, r)
	token := cookieToken(r)
	idx, fault, done := f.begin(RTCUpload, w, r, u.fields, token)
	if done {
		return
	}
	ts := f.now().In(chile.Location()).Format(sii.RCVDateLayout)
	company := u.values["rutCompany"] + "-" + u.values["dvCompany"]
	answer := func(sender string, status int, track string) {
		f.result(idx, "STATUS %d%s", status, map[bool]string{true: " TRACKID " + track, false: ""}[track != ""])
		if fault.Kind == FaultAcceptThenHang {
			hang(r.Context())
			reset(w)
			return
		}
		var b strings.Builder
		b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n<RECEPCIONAEC>\n")
		for _, kv := range [][2]string{{"RUTSENDER", sender}, {"RUTCOMPANY", company}, {"FILE", u.filename},
			{"TIMESTAMP", ts}, {"STATUS", strconv.Itoa(status)}, {"TRACKID", track}} {
			if kv[0] == "TRACKID" && track == "" {
				continue
			}
			b.WriteString("<" + kv[0] + ">")
			xmlflat.EscapeText(&b, kv[1])
			b.WriteString("</" + kv[0] + ">\n")
		}
		b.WriteString("</RECEPCIONAEC>\n")
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, b.String())
	}
	rut, code := f.checkToken(token, false)
	if code != "" || !f.browserLike(r.UserAgent()) {
		answer("-", 5, "")
		return
	}
	if fault.Kind == FaultStatus {
		n, _ := strconv.Atoi(fault.Code)
		answer(rut, n, "")
		return
	}
	if u.err != nil || !slices.Equal(u.fields, aecFields) || u.values["emailNotif"] == "" {
		answer(rut, 4, "")
		return
	}
	cedente, err := dte.ParseRUT(company)
	if err != nil {
		answer(rut, 4, "")
		return
	}
	company = cedente.String()
	if status, _ := f.permission(rut, rut, company); status != 0 {
		answer(rut, status, "")
		return
	}
	if u.tooBig || len(u.archivo) < 100 {
		answer(rut, 2, "")
		return
	}
	up := f.receiveAEC(u.archivo, rut, company, u.values["emailNotif"])
	answer(rut, 0, up.TrackID)
}

// receiveAEC reviews an AEC and files it under a new track id.
func (f *Fake) receiveAEC(data []byte, sender, company, email string) *AECUpload {
	up := &AECUpload{Company: company, Sender: sender, Email: email, Received: f.now(), Raw: bytes.Clone(data)}
	up.Final, up.Detail = f.reviewAEC(data, company, up)
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(up.Chain) > 0 {
		c := up.Chain[0]
		if s, ok := f.rtc.scripts[docKey(c.RutEmisor, c.Tipo, c.Folio)]; ok {
			up.Final, up.Detail = s[0], s[1]
		}
	}
	up.Steps = slices.Clone(aecSteps[:aecStepsBefore[up.Final]])
	if f.opts.ReviewDelay > 0 {
		up.ReviewedAt = up.Received.Add(f.opts.ReviewDelay)
	}
	f.trackNext++
	up.TrackID = fmt.Sprintf("%010d", f.trackNext)
	for i := range up.Chain {
		up.Chain[i].TrackID = up.TrackID
	}
	f.rtc.uploads = append(f.rtc.uploads, up)
	if f.journal != nil {
		f.journal.append(journalRecord{AEC: up})
	}
	return up
}

// reviewAEC runs the review's checks up to the registry's state of the
// document (which the end of the review checks) and returns the final
// state it reached (EOK when nothing failed) and the first problem. It
// fills up.Chain with what the file states.
func (f *Fake) reviewAEC(data []byte, company string, up *AECUpload) (final, detail string) {
	if root, err := dte.RootName(data); err != nil || root != "AEC" {
		return "RSC", fmt.Sprintf("el archivo no es un AEC (<%s>)", root)
	}
	if f.opts.Schema != nil {
		if errs := f.opts.Schema("AEC", data); len(errs) > 0 {
			return "RSC", errs[0]
		}
	}
	rep, err := cesion.Verify(data, cesion.VerifyOptions{DTE: dte.VerifyOptions{Keys: f.opts.CAFKeys}, Policy: cesion.PolicyStrict, Now: f.now()})
	if rep == nil {
		return "RSC", err.Error()
	}
	final, stage := "EOK", len(aecStage)
	refuse := func(state, msg string) {
		if s := aecStage[state]; s < stage {
			final, detail, stage = state, msg, s
		}
	}
	var refused *cesion.RefusedError
	if errors.As(err, &refused) {
		for _, p := range refused.Problems {
			if f.opts.CAFKeys == nil && strings.HasPrefix(p.Field, "DocumentoDTECedido.DTE.TED") {
				continue // without keys, the stamp is vouched for by the accepted copy
			}
			refuse(problemState(p.Field), p.Field+": "+p.Message)
		}
	} else if err != nil {
		refuse("RSC", err.Error())
	}
	if !strings.EqualFold(rep.RutCedente, company) {
		refuse("RCR", fmt.Sprintf("Caratula.RutCedente %s no es la empresa que envia %s", rep.RutCedente, company))
	}
	d := rep.Documento
	if !cesion.Cedible(d.Tipo) {
		refuse("RDC", fmt.Sprintf("el tipo %d no es cedible", d.Tipo))
	}
	if !f.acceptedDoc(d) {
		refuse("RDC", fmt.Sprintf("el documento tipo %d folio %d de %s no fue recibido y aceptado por el SII", d.Tipo, d.Folio, d.Emisor.Rut))
	}
	if len(rep.Cesiones) > cesion.MaxCesiones {
		refuse("RCS", fmt.Sprintf("%d cesiones; a lo mas %d", len(rep.Cesiones), cesion.MaxCesiones))
	}
	for i, c := range rep.Cesiones {
		if len(c.Firmas) != len(c.Autorizados) {
			refuse("RCS", fmt.Sprintf("Cesion[%d]: %d firmas para %d autorizados", i+1, len(c.Firmas), len(c.Autorizados)))
		}
		for j := range min(len(c.Firmas), len(c.Autorizados)) {
			if s := c.Firmas[j].Signer; s == nil || !strings.EqualFold(chile.CanonRUT(s.RUT), chile.CanonRUT(c.Autorizados[j].RUT)) {
				refuse("RCS", fmt.Sprintf("Cesion[%d].Cedente.RUTAutorizado[%d]: %s no es quien firma", i+1, j+1, c.Autorizados[j].RUT))
			}
		}
		up.Chain = append(up.Chain, Cesion{RutEmisor: chile.CanonRUT(d.Emisor.Rut), Tipo: int(d.Tipo), Folio: d.Folio,
			RutReceptor: chile.CanonRUT(d.Receptor.Rut), Seq: c.Seq, Cedente: chile.CanonRUT(c.Cedente.RUT),
			Cesionario: chile.CanonRUT(c.Cesionario.RUT), Monto: c.Monto, UltimoVencimiento: c.UltimoVencimiento,
			DeclaracionJurada: c.DeclaracionJurada != ""})
	}
	return final, detail
}

// problemState is the review state a problem of cesion.Verify refuses
// with, by the field it names.
func problemState(field string) string {
	switch {
	case strings.HasPrefix(field, "AEC."), strings.HasPrefix(field, "Signature@"):
		return "RFS"
	case strings.HasPrefix(field, "Caratula."):
		return "RCR"
	case strings.HasPrefix(field, "DocumentoDTECedido"), strings.HasPrefix(field, "DTECedido."):
		return "RDC"
	case strings.HasPrefix(field, "Cesion["):
		return "RCS"
	}
	return "RSC"
}

// acceptedDoc reports whether the fake received d, as signed (the same
// SignatureValue), in an envelope whose review is over and accepted it.
func (f *Fake) acceptedDoc(d *dte.Document) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	for _, e := range f.envelopes {
		if e.Final != "EPR" || (!e.ReviewedAt.IsZero() && now.Before(e.ReviewedAt)) {
			continue
		}
		for _, x := range e.Docs {
			if x.Tipo == int(d.Tipo) && x.Folio == d.Folio && strings.EqualFold(x.RutEmisor, d.Emisor.Rut) &&
				x.Result != Rejected && x.SignatureValue != "" && x.SignatureValue == d.SignatureValue {
				return true
			}
		}
	}
	return false
}

// aecState returns an upload's current state, ending its review when it
// is due; poll counts the query. Call with f.mu held.
func (f *Fake) aecState(u *AECUpload, poll bool) string {
	i := u.Polls
	if f.opts.StepEvery > 0 {
		i = max(i, int(f.now().Sub(u.Received)/f.opts.StepEvery))
	}
	if poll {
		u.Polls++
	}
	switch {
	case u.Settled:
	case i < len(u.Steps):
		return u.Steps[i]
	case !u.ReviewedAt.IsZero() && f.now().Before(u.ReviewedAt):
		if len(u.Steps) > 0 {
			return u.Steps[len(u.Steps)-1]
		}
		return "RCP"
	default:
		// The registry ends its reviews in the order it received the
		// files: the earlier ones end first.
		for _, e := range f.rtc.uploads {
			if !e.Settled {
				f.settle(e)
			}
			if e == u {
				break
			}
		}
	}
	return u.Final
}

// settleDue ends every review that is due. Call with f.mu held.
func (f *Fake) settleDue() {
	for _, u := range f.rtc.uploads {
		if !u.Settled {
			f.aecState(u, false)
		}
	}
}

// settle ends a review: an EOK is checked against the registry (earlier
// cesiones as recorded, no other cesión recorded meanwhile) and recorded.
// Call with f.mu held.
func (f *Fake) settle(u *AECUpload) {
	u.Settled = true
	defer func() {
		if f.journal != nil {
			end := &journalAEC{TrackID: u.TrackID, Final: u.Final, Detail: u.Detail}
			if u.Final == "EOK" {
				end.Cesion = &u.Chain[len(u.Chain)-1]
			}
			f.journal.append(journalRecord{AECEnd: end})
		}
	}()
	if u.Final != "EOK" {
		return
	}
	n := len(u.Chain)
	last := &u.Chain[n-1]
	k := docKey(last.RutEmisor, last.Tipo, last.Folio)
	rec := f.rtc.cesiones[k]
	switch {
	case len(rec) >= n:
		u.Final, u.Detail = "RCS", fmt.Sprintf("el documento ya fue cedido (cesion %d registrada por el envio %s)", n, rec[n-1].TrackID)
		return
	case len(rec) < n-1:
		u.Final, u.Detail = "RCS", fmt.Sprintf("las cesiones anteriores no estan registradas (%d registradas, %d en el archivo)", len(rec), n-1)
		return
	}
	for i, c := range rec {
		a := u.Chain[i]
		if a.Seq != c.Seq || a.Cedente != c.Cedente || a.Cesionario != c.Cesionario || a.Monto != c.Monto || a.UltimoVencimiento != c.UltimoVencimiento {
			u.Final, u.Detail = "RCS", fmt.Sprintf("la cesion %d no es la registrada", i+1)
			return
		}
	}
	last.At = f.now()
	last.IdCesion = accessKey()
	if f.rtc.cesiones == nil {
		f.rtc.cesiones = map[string][]Cesion{}
	}
	f.rtc.cesiones[k] = append(rec, *last)
}

// accessKey returns a 20-character access key (IdCesion).
func accessKey() string {
	b := make([]byte, 10)
	_, _ = rand.Read(b)
	return strings.ToUpper(hex.EncodeToString(b))
}

// serveRPETC is wsRPETCConsulta: one address, three methods told apart by
// the SOAP body.
func (f *Fake) serveRPETC(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxSOAPRequest))
		if err != nil {
			http.Error(w, "request too large", http.StatusRequestEntityTooLarge)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(data))
		if ep := rpetcMethod(data); ep != "" {
			f.soap(ep, f.rpetcHandler(ep))(w, r)
			return
		}
	}
	f.soap(EstEnvio, f.rpetcHandler(EstEnvio))(w, r)
}

// rpetcMethod names the wsRPETCConsulta method a SOAP request calls: the
// local name of the Body's element, "" when it is none of the three.
func rpetcMethod(data []byte) Endpoint {
	root, err := xmlflat.ParseDocument(data)
	if err != nil {
		return ""
	}
	for _, b := range root.Kids {
		if b.Name != "Body" {
			continue
		}
		for _, k := range b.Kids {
			switch ep := Endpoint(k.Name); ep {
			case EstEnvio, EstCesion, EstCesionRelac:
				return ep
			}
		}
	}
	return ""
}

// rpetcHandler answers one wsRPETCConsulta method.
func (f *Fake) rpetcHandler(ep Endpoint) soapHandler {
	return func(call soapCall, _ int, fault Fault) ([][2]string, string) {
		hdr := func(estado int, glosa string) [][2]string {
			return [][2]string{{"ESTADO", strconv.Itoa(estado)}, {"GLOSA", glosa}}
		}
		if fault.Kind == FaultEstado {
			return [][2]string{{"ESTADO", fault.Code}, {"GLOSA", "Error"}}, ""
		}
		rut, code := f.checkToken(call["Token"], false)
		switch code {
		case "":
		case "003":
			return hdr(4, "Error de Autenticacion: Token no existe"), ""
		default:
			return hdr(3, "Error de Autenticacion: Token Inactivo"), ""
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		f.settleDue()
		if ep == EstEnvio {
			return f.estEnvio(rut, call["TrackId"], hdr)
		}
		emisor, err := dte.ParseRUT(call["RutEmisor"] + "-" + call["DVEmisor"])
		tipo, terr := strconv.Atoi(call["TipoDoc"])
		folio, ferr := strconv.ParseInt(call["FolioDoc"], 10, 64)
		if err != nil || terr != nil || ferr != nil || len(call["TipoDoc"]) > 3 || len(call["FolioDoc"]) > 10 {
			return hdr(1, "Error en los Datos de Entrada"), ""
		}
		chain := f.rtc.cesiones[docKey(emisor.String(), tipo, folio)]
		if ep == EstCesion {
			id := call["IdCesion"]
			switch {
			case len(chain) == 0:
				return hdr(2, "Documento No Cedido"), ""
			case id == "":
				return hdr(0, "Documento Cedido"), ""
			case id != chain[len(chain)-1].IdCesion:
				return hdr(2, "No se encontro informacion para la cesion"), ""
			}
			return hdr(0, "Documento Cedido"), cesionBody(chain)
		}
		emp, err := dte.ParseRUT(call["RutEmpresa"] + "-" + call["DVEmpresa"])
		switch {
		case err != nil:
			return hdr(1, "Error en los Datos de Entrada"), ""
		case !f.opts.AnySigner && !f.signers[rut][emp.String()]:
			return hdr(10, "Usuario sin permiso en la empresa"), ""
		case len(chain) == 0:
			return hdr(2, "Documento No Cedido"), ""
		case emp.String() != chain[len(chain)-1].Cesionario && emp.String() != chain[0].RutReceptor:
			return hdr(-15, "Empresa no relacionada con el documento"), ""
		}
		return hdr(0, "Documento Cedido"), cesionBody(chain)
	}
}

// estEnvio answers getEstEnvio for the token's holder: an upload it sent,
// or one for a company it may send for. Call with f.mu held.
func (f *Fake) estEnvio(rut, track string, hdr func(int, string) [][2]string) ([][2]string, string) {
	n, err := strconv.ParseInt(track, 10, 64)
	if err != nil || len(track) > 10 {
		return hdr(1, "Error en los Datos de Entrada"), ""
	}
	for _, u := range f.rtc.uploads {
		if u.TrackID != fmt.Sprintf("%010d", n) {
			continue
		}
		if !strings.EqualFold(u.Sender, rut) && !f.opts.AnySigner && !f.signers[rut][u.Company] {
			break
		}
		st := f.aecState(u, true)
		return hdr(0, "Informacion Entregada"), el("TRACKID", strconv.FormatInt(n, 10)) + el("ESTADO_ENVIO", st) + el("DESC_ESTADO", aecDesc[st])
	}
	return hdr(2, "No se encontro informacion"), ""
}

// cesionBody is the RESP_BODY of a ceded document: its holder, the last
// annotation and whether a sworn declaration is on record.
func cesionBody(chain []Cesion) string {
	last := chain[len(chain)-1]
	dec := "NO EXISTE"
	for _, c := range chain {
		if c.DeclaracionJurada {
			dec = "EXISTE"
		}
	}
	return el("RUT_TENEDOR", last.Cesionario) + el("FECHA_ULT_ANOT", last.At.In(chile.Location()).Format(sii.RTCAnotTimeLayout)) + el("DEC_JURADA", dec)
}

// journalAEC is the end of an AEC's review as the journal keeps it: the
// final state and, for EOK, the cesión recorded.
type journalAEC struct {
	TrackID string  `json:"track_id"`
	Final   string  `json:"final"`
	Detail  string  `json:"detail,omitempty"`
	Cesion  *Cesion `json:"cesion,omitempty"`
}

// restoreRTC applies a journal's fact about the registry of credit
// transfers. Call with f.mu held.
func (f *Fake) restoreRTC(rec journalRecord) error {
	if u := rec.AEC; u != nil {
		n, err := strconv.ParseInt(u.TrackID, 10, 64)
		if err != nil || n <= 0 {
			return fmt.Errorf("AEC track id %q", u.TrackID)
		}
		u.Polls, u.Settled = 0, false
		f.rtc.uploads = append(f.rtc.uploads, u)
		f.trackNext = max(f.trackNext, n)
	}
	end := rec.AECEnd
	if end == nil {
		return nil
	}
	i := slices.IndexFunc(f.rtc.uploads, func(u *AECUpload) bool { return u.TrackID == end.TrackID })
	if i < 0 {
		return fmt.Errorf("the end of AEC %s, never received", end.TrackID)
	}
	u := f.rtc.uploads[i]
	u.Settled, u.Final, u.Detail = true, end.Final, end.Detail
	if c := end.Cesion; c != nil && end.Final == "EOK" && len(u.Chain) > 0 {
		u.Chain[len(u.Chain)-1] = *c
		if f.rtc.cesiones == nil {
			f.rtc.cesiones = map[string][]Cesion{}
		}
		k := docKey(c.RutEmisor, c.Tipo, c.Folio)
		f.rtc.cesiones[k] = append(f.rtc.cesiones[k], *c)
	}
	return nil
}
