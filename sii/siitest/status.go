package siitest

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/sii"
)

// lookupTrack finds an envelope by track id, with or without its leading
// zeros (the boleta API writes track ids as JSON numbers). Call with f.mu
// held.
func (f *Fake) lookupTrack(id string) *Envelope {
	if e, ok := f.byTrack[id]; ok {
		return e
	}
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return nil
	}
	return f.byTrack[fmt.Sprintf("%010d", n)]
}

// state returns an envelope's current state; poll counts the query as a
// poll (which advances the timeline). Call with f.mu held.
func (f *Fake) state(e *Envelope, poll bool) string {
	i := e.Polls
	if f.opts.StepEvery > 0 {
		if k := int(f.now().Sub(e.Received) / f.opts.StepEvery); k > i {
			i = k
		}
	}
	if poll {
		e.Polls++
	}
	if i < len(e.Steps) {
		return e.Steps[i]
	}
	if !e.ReviewedAt.IsZero() && f.now().Before(e.ReviewedAt) {
		// The review is still under way.
		if len(e.Steps) > 0 {
			return e.Steps[len(e.Steps)-1]
		}
		return "PDR"
	}
	return e.Final
}

// stateGlosa is the SII's text for each envelope state.
func stateGlosa(s string) string {
	switch s {
	case "SOK":
		return "Schema Validado"
	case "CRT":
		return "Caratula OK"
	case "FOK":
		return "Firma de Envio Validada"
	case "PDR":
		return "Envio en Proceso"
	case "EPR":
		return "Envio Procesado"
	case "RSC":
		return "Rechazado por Error en Schema"
	case "RFR":
		return "Rechazado por Error en Firma"
	case "RCT":
		return "Rechazado por Error en Carátula"
	case "-11":
		return "Error: ver ERR_CODE"
	case "RPR":
		return "Aceptado con Reparos"
	case "RCH":
		return "Rechazado por Error en Informacion"
	case "LSO":
		return "Schema de Envio de Libro Correcto"
	case "LOK":
		return "Envio de Libro Aceptado - Cuadrado"
	case "LRH":
		return "Envio de Libro Rechazado - Descuadrado"
	case "LRC":
		return "Caratula de Envio de Libro Invalida"
	case "LRF":
		return "Envio de Libro Rechazado por Firma"
	case "LNC":
		return "Tipo de Envio de Libro No Corresponde"
	}
	return s
}

// counts returns an envelope's review lines, one per type in ascending
// order.
func counts(e *Envelope) [][5]int {
	byTipo := map[int]*[5]int{}
	var tipos []int
	for _, d := range e.Docs {
		c := byTipo[d.Tipo]
		if c == nil {
			c = &[5]int{d.Tipo}
			byTipo[d.Tipo] = c
			tipos = append(tipos, d.Tipo)
		}
		c[1]++
		switch d.Result {
		case Accepted:
			c[2]++
		case Rejected:
			c[3]++
		case Reparo:
			c[4]++
		}
	}
	slices.Sort(tipos)
	out := make([][5]int, len(tipos))
	for i, t := range tipos {
		out[i] = *byTipo[t]
	}
	return out
}

func (f *Fake) getEstUp(call soapCall, idx int, _ Fault) ([][2]string, string) {
	if _, code := f.checkToken(call["Token"], false); code != "" {
		return [][2]string{{"ESTADO", code}, {"GLOSA", "Token Invalido"}, {"NUM_ATENCION", f.numAtencion(idx)}}, ""
	}
	company := strings.ToUpper(call["RutCompania"] + "-" + call["DvCompania"])
	track := call["TrackId"]
	f.mu.Lock()
	defer f.mu.Unlock()
	e := f.lookupTrack(track)
	if e == nil || !strings.EqualFold(e.Company, company) {
		return [][2]string{{"TRACKID", track}, {"ESTADO", "-11"}, {"GLOSA", "Error: ver ERR_CODE"}, {"ERR_CODE", "1"},
			{"SQL_CODE", "0"}, {"SRV_CODE", "0"}, {"NUM_ATENCION", f.numAtencion(idx)}}, ""
	}
	st := f.state(e, true)
	hdr := [][2]string{{"TRACKID", e.TrackID}, {"ESTADO", st}, {"GLOSA", stateGlosa(st)}}
	if st == "-11" {
		hdr = append(hdr, [2]string{"ERR_CODE", "2"}, [2]string{"SQL_CODE", "0"}, [2]string{"SRV_CODE", "0"})
	}
	hdr = append(hdr, [2]string{"NUM_ATENCION", f.numAtencion(idx)})
	var body strings.Builder
	if st == "EPR" {
		for _, c := range counts(e) {
			body.WriteString(el("TIPO_DOCTO", strconv.Itoa(c[0])) + el("INFORMADOS", strconv.Itoa(c[1])) +
				el("ACEPTADOS", strconv.Itoa(c[2])) + el("RECHAZADOS", strconv.Itoa(c[3])) + el("REPAROS", strconv.Itoa(c[4])))
		}
	}
	return hdr, body.String()
}

// docQuery identifies one document in a status query.
type docQuery struct {
	company, receptor string
	tipo              int
	folio             int64
	fecha             time.Time
	monto             int64
}

// docState answers a per-document query: DOK, DNK, FAU or EMP, with
// ERR_CODE and glosa. Call with f.mu held.
func (f *Fake) docState(q docQuery) (estado, errCode, glosa string) {
	if !f.opts.AnySigner && !f.issuers[q.company] {
		return "EMP", "6", "Empresa no autorizada a Emitir Documentos Electronicos"
	}
	for _, e := range f.envelopes {
		if e.Final != "EPR" || !strings.EqualFold(e.Company, q.company) || f.state(e, false) != "EPR" {
			continue
		}
		for _, d := range e.Docs {
			if d.Tipo != q.tipo || d.Folio != q.folio || d.Result == Rejected {
				continue
			}
			if d.Fecha == q.fecha.Format("2006-01-02") && d.Monto == q.monto && strings.EqualFold(d.Receptor, q.receptor) {
				return "DOK", "0", "Documento Recibido por el SII. Datos Coinciden con los Registrados"
			}
			return "DNK", "1", "Documento Recibido por el SII pero Datos NO Coinciden con los registrados"
		}
	}
	return "FAU", "3", "Documento No Recibido por el SII"
}

func (f *Fake) getEstDte(call soapCall, idx int, _ Fault) ([][2]string, string) {
	if _, code := f.checkToken(call["Token"], false); code != "" {
		return [][2]string{{"ESTADO", code}, {"GLOSA_ESTADO", "Token Invalido"}, {"NUM_ATENCION", f.numAtencion(idx)}}, ""
	}
	tipo, err1 := strconv.Atoi(call["TipoDte"])
	folio, err2 := strconv.ParseInt(call["FolioDte"], 10, 64)
	fecha, err3 := time.Parse("02012006", call["FechaEmisionDte"])
	monto, err4 := strconv.ParseInt(call["MontoDte"], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		return [][2]string{{"ESTADO", "-3"}, {"GLOSA_ESTADO", "Error en parametros"}, {"ERR_CODE", "-3"},
			{"NUM_ATENCION", f.numAtencion(idx)}}, ""
	}
	q := docQuery{company: strings.ToUpper(call["RutCompania"] + "-" + call["DvCompania"]),
		receptor: strings.ToUpper(call["RutReceptor"] + "-" + call["DvReceptor"]), tipo: tipo, folio: folio, fecha: fecha, monto: monto}
	f.mu.Lock()
	estado, errCode, glosa := f.docState(q)
	f.mu.Unlock()
	return [][2]string{{"ESTADO", estado}, {"GLOSA_ESTADO", glosa}, {"ERR_CODE", errCode}, {"GLOSA_ERR", glosa},
		{"NUM_ATENCION", f.numAtencion(idx)}}, ""
}

// restAuth checks the REST token cookie, answering 401 when it fails.
func (f *Fake) restAuth(w http.ResponseWriter, r *http.Request, idx int) bool {
	if _, code := f.checkToken(cookieToken(r), true); code != "" || !f.browserLike(r.UserAgent()) {
		f.result(idx, "HTTP 401")
		http.Error(w, "NO ESTA AUTENTICADO", http.StatusUnauthorized)
		return false
	}
	return true
}

// serveBoletaStatus is GET …/boleta.electronica.envio/{rut}-{dv}-{trackid}.
func (f *Fake) serveBoletaStatus(w http.ResponseWriter, r *http.Request) {
	idx, _, done := f.begin(BoletaStatus, w, r, nil, cookieToken(r))
	if done || !f.restAuth(w, r, idx) {
		return
	}
	parts := strings.Split(r.PathValue("id"), "-")
	f.mu.Lock()
	var e *Envelope
	if len(parts) == 3 {
		e = f.lookupTrack(parts[2])
	}
	if e == nil || !strings.EqualFold(e.Company, parts[0]+"-"+parts[1]) {
		f.mu.Unlock()
		f.result(idx, "HTTP 404")
		http.Error(w, `{"error":"trackid no encontrado"}`, http.StatusNotFound)
		return
	}
	type errLine struct {
		Seccion     string `json:"seccion"`
		Linea       int    `json:"linea"`
		Nivel       int    `json:"nivel"`
		Codigo      int    `json:"codigo"`
		Descripcion string `json:"descripcion"`
		Detalle     string `json:"detalle"`
	}
	type detalle struct {
		Tipo        int       `json:"tipo"`
		Folio       int64     `json:"folio"`
		Estado      string    `json:"estado"`
		Descripcion string    `json:"descripcion"`
		Error       []errLine `json:"error"`
	}
	type stat struct {
		Tipo       int `json:"tipo"`
		Informados int `json:"informados"`
		Aceptados  int `json:"aceptados"`
		Rechazados int `json:"rechazados"`
		Reparos    int `json:"reparos"`
	}
	n, _ := strconv.ParseInt(e.TrackID, 10, 64)
	st := f.state(e, true)
	out := struct {
		RutEmisor      string     `json:"rut_emisor"`
		RutEnvia       string     `json:"rut_envia"`
		TrackID        int64      `json:"trackid"`
		FechaRecepcion string     `json:"fecha_recepcion"`
		Estado         string     `json:"estado"`
		Estadistica    []stat     `json:"estadistica"`
		Detalle        *[]detalle `json:"detalle_rep_rech"`
	}{RutEmisor: e.Company, RutEnvia: e.Sender, TrackID: n, FechaRecepcion: e.Received.Format("2006-01-02 15:04:05"), Estado: st}
	if st == e.Final {
		ds := []detalle{}
		if st == "EPR" {
			for _, c := range counts(e) {
				out.Estadistica = append(out.Estadistica, stat{c[0], c[1], c[2], c[3], c[4]})
			}
			for _, d := range e.Docs {
				if d.Result == Accepted {
					continue
				}
				est := map[DocResult]string{Rejected: "RCH", Reparo: "RPR"}[d.Result]
				dt := detalle{Tipo: d.Tipo, Folio: d.Folio, Estado: est, Descripcion: stateGlosa(est)}
				if sec, niv, cod, ok := splitDetail(d.Detail); ok {
					dt.Error = []errLine{{Seccion: sec, Linea: 1, Nivel: niv, Codigo: cod, Descripcion: detailText(d.Detail)}}
				}
				ds = append(ds, dt)
			}
		}
		out.Detalle = &ds
	}
	f.mu.Unlock()
	f.result(idx, "estado %s", st)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

// splitDetail splits "DTE-3-101" into its section, level and code.
func splitDetail(s string) (string, int, int, bool) {
	p := strings.Split(s, "-")
	if len(p) != 3 {
		return "", 0, 0, false
	}
	niv, err1 := strconv.Atoi(p[1])
	cod, err2 := strconv.Atoi(p[2])
	return p[0], niv, cod, err1 == nil && err2 == nil
}

// serveBoletaDTE is GET …/boleta.electronica/{rut}-{dv}-{tipo}-{folio}/estado,
// the per-boleta status. It answers, as the SII's API does, the JSON of
// exactly codigo and descripcion (DOK, DNK, FAU or EMP, from docState;
// FaultCodigo answers another code), with no track id and no date. A
// missing query parameter (rut_receptor, dv_receptor, monto,
// fechaEmision) is answered HTTP 200 with plain text ("falta monto"), as
// the certification API does; an unreadable path or parameter HTTP 400
// with plain text.
func (f *Fake) serveBoletaDTE(w http.ResponseWriter, r *http.Request) {
	idx, fault, done := f.begin(BoletaDTE, w, r, nil, cookieToken(r))
	if done || !f.restAuth(w, r, idx) {
		return
	}
	text := func(status int, msg string) {
		f.result(idx, "HTTP %d %s", status, msg)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(status)
		io.WriteString(w, msg)
	}
	qv := r.URL.Query()
	for _, name := range []string{"rut_receptor", "dv_receptor", "monto", "fechaEmision"} {
		if qv.Get(name) == "" {
			text(http.StatusOK, "falta "+name)
			return
		}
	}
	parts := strings.Split(r.PathValue("id"), "-")
	var q docQuery
	var errs [4]error
	if len(parts) == 4 {
		q.company = strings.ToUpper(parts[0] + "-" + parts[1])
		q.tipo, errs[0] = strconv.Atoi(parts[2])
		q.folio, errs[1] = strconv.ParseInt(parts[3], 10, 64)
	} else {
		errs[0] = fmt.Errorf("bad id")
	}
	q.receptor = strings.ToUpper(qv.Get("rut_receptor") + "-" + qv.Get("dv_receptor"))
	q.monto, errs[2] = strconv.ParseInt(qv.Get("monto"), 10, 64)
	q.fecha, errs[3] = time.Parse("02-01-2006", qv.Get("fechaEmision"))
	for _, err := range errs {
		if err != nil {
			text(http.StatusBadRequest, "parametros invalidos")
			return
		}
	}
	var estado, glosa string
	if fault.Kind == FaultCodigo {
		estado, glosa = fault.Code, sii.BoletaCodeMeaning(fault.Code)
	} else {
		f.mu.Lock()
		estado, _, glosa = f.docState(q)
		f.mu.Unlock()
	}
	f.result(idx, "codigo %s", estado)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(struct {
		Codigo      string `json:"codigo"`
		Descripcion string `json:"descripcion"`
	}{estado, glosa})
}

// getEstDteAv is QueryEstDteAv.getEstDteAv, the per-document query keyed
// by the DTE's signature. The fake knows a document once an EnvioDTE
// carrying it got a track id (whatever its review says: the SII received
// it):
//   - RECIBIDO SI with the TRACKID of the latest such envelope whose copy
//     has FirmaDte as its SignatureValue; ESTADO is what getEstDte answers
//     for the same data (FAU while the envelope is in review or when the
//     review rejected the document, DOK once accepted, with or without
//     reparos; DNK when the date, amount or receiver differ);
//   - RECIBIDO NO with ESTADO DNK when the company sent the same type and
//     folio but no copy has this signature: the SII has another document
//     under that folio, not this one;
//   - RECIBIDO NO with ESTADO FAU when no copy arrived; EMP for a company
//     not authorised to issue.
//
// Boleta envelopes are not searched: the classic service does not cover
// the boleta API. A bad token gives RESP_HDR ESTADO 001–003, bad parameters
// (RUTs, a date not DD-MM-YYYY, numbers, a FirmaDte that is not base64)
// ESTADO -3; an answered query has RESP_HDR ESTADO 0.
func (f *Fake) getEstDteAv(call soapCall, idx int, _ Fault) ([][2]string, string) {
	if _, code := f.checkToken(call["Token"], false); code != "" {
		return [][2]string{{"ESTADO", code}, {"GLOSA", "Token Invalido"}, {"NUM_ATENCION", f.numAtencion(idx)}}, ""
	}
	company, err1 := dte.ParseRUT(call["RutEmpresa"] + "-" + call["DvEmpresa"])
	receptor, err2 := dte.ParseRUT(call["RutReceptor"] + "-" + call["DvReceptor"])
	tipo, err3 := strconv.Atoi(call["TipoDte"])
	folio, err4 := strconv.ParseInt(call["FolioDte"], 10, 64)
	fecha, err5 := time.Parse("02-01-2006", call["FechaEmisionDte"])
	monto, err6 := strconv.ParseInt(call["MontoDte"], 10, 64)
	firma := call["FirmaDte"]
	_, err7 := base64.StdEncoding.Strict().DecodeString(firma)
	if err := errors.Join(err1, err2, err3, err4, err5, err6, err7); err != nil || firma == "" {
		return [][2]string{{"ESTADO", "-3"}, {"GLOSA", "Error en parametros"}, {"NUM_ATENCION", f.numAtencion(idx)}}, ""
	}
	q := docQuery{company: company.String(), receptor: receptor.String(), tipo: tipo, folio: folio, fecha: fecha, monto: monto}
	f.mu.Lock()
	recibido, track := "NO", ""
	estado, _, glosa := f.docState(q)
	if estado != "EMP" {
		sameFolio := false
		for _, e := range f.envelopes {
			if e.Boleta || !strings.EqualFold(e.Company, q.company) {
				continue
			}
			for _, d := range e.Docs {
				if d.Tipo != q.tipo || d.Folio != q.folio || !strings.EqualFold(d.RutEmisor, q.company) {
					continue
				}
				sameFolio = true
				if d.SignatureValue == firma {
					recibido, track = "SI", e.TrackID
				}
			}
		}
		if sameFolio && track == "" {
			estado, glosa = "DNK", "Documento Recibido por el SII pero Datos NO Coinciden con los registrados"
		}
	}
	f.mu.Unlock()
	f.result(idx, "RECIBIDO %s TRACKID %s ESTADO %s", recibido, track, estado)
	body := el("RECIBIDO", recibido) + el("ESTADO", estado) + el("GLOSA", glosa)
	if track != "" {
		body += el("TRACKID", track)
	}
	body += el("NUMATENCION", f.numAtencion(idx))
	return [][2]string{{"ESTADO", "0"}, {"GLOSA", "Consulta OK"}}, body
}
