package siitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/xmlflat"
	"github.com/dtekit/dtekit/signer"
)

// uploadFields are the multipart fields the SII requires, in order.
var uploadFields = []string{"rutSender", "dvSender", "rutCompany", "dvCompany", "archivo"}

// upload is a parsed multipart upload.
type upload struct {
	fields   []string
	values   map[string]string
	archivo  []byte
	filename string
	tooBig   bool
	err      error
}

// ruts returns the sender's and the company's RUT as sent.
func (u *upload) ruts() (sender, company string) {
	return u.values["rutSender"] + "-" + u.values["dvSender"], u.values["rutCompany"] + "-" + u.values["dvCompany"]
}

// readUpload reads the multipart body of an upload in order. The file is
// bounded by MaxUpload, and the whole body by MaxUpload plus 1 MiB for the
// form's other fields and the part headers.
func (f *Fake) readUpload(w http.ResponseWriter, r *http.Request) *upload {
	r.Body = http.MaxBytesReader(w, r.Body, f.opts.MaxUpload+1<<20)
	u := &upload{values: map[string]string{}}
	mr, err := r.MultipartReader()
	if err != nil {
		u.err = err
		return u
	}
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			u.err = err
			return u
		}
		name := p.FormName()
		u.fields = append(u.fields, name)
		if name == "archivo" {
			u.filename = p.FileName()
			u.archivo, err = io.ReadAll(io.LimitReader(p, f.opts.MaxUpload+1))
			if int64(len(u.archivo)) > f.opts.MaxUpload {
				u.tooBig = true
				io.Copy(io.Discard, io.LimitReader(p, 1<<30))
			}
		} else {
			var v []byte
			v, err = io.ReadAll(io.LimitReader(p, 64))
			u.values[name] = strings.TrimSpace(string(v))
		}
		if err != nil {
			u.err = err
			return u
		}
	}
	return u
}

// browserLike reports whether a User-Agent passes the fake's check.
func (f *Fake) browserLike(ua string) bool {
	return f.opts.AnyUserAgent || strings.HasPrefix(ua, "Mozilla/")
}

// recepcion writes a RECEPCIONDTE answer.
func recepcion(w http.ResponseWriter, sender, company, file, ts string, status int, track string, errs []string) {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n<RECEPCIONDTE>\n")
	add := func(name, v string) {
		b.WriteString("<" + name + ">")
		xmlflat.EscapeText(&b, v)
		b.WriteString("</" + name + ">\n")
	}
	add("RUTSENDER", sender)
	add("RUTCOMPANY", company)
	add("FILE", file)
	add("TIMESTAMP", ts)
	add("STATUS", strconv.Itoa(status))
	if track != "" {
		add("TRACKID", track)
	}
	if len(errs) > 0 {
		b.WriteString("<DETAIL>\n")
		for _, e := range errs {
			add("ERROR", e)
		}
		b.WriteString("</DETAIL>\n")
	}
	b.WriteString("</RECEPCIONDTE>\n")
	w.Header().Set("Content-Type", "text/html") // as the SII labels it
	io.WriteString(w, b.String())
}

// serveUpload is DTEUpload.
func (f *Fake) serveUpload(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	u := f.readUpload(w, r)
	token := cookieToken(r)
	idx, fault, done := f.begin(Upload, w, r, u.fields, token)
	if done {
		return
	}
	ts := f.now().Format("2006-01-02 15:04:05")
	answer := func(sender, company string, status int, track string, errs []string) {
		f.result(idx, "STATUS %d%s", status, map[bool]string{true: " TRACKID " + track, false: ""}[track != ""])
		if fault.Kind == FaultAcceptThenHang {
			hang(r.Context())
			reset(w)
			return
		}
		recepcion(w, sender, company, u.filename, ts, status, track, errs)
	}
	rut, code := f.checkToken(token, false)
	if code != "" || !f.browserLike(r.UserAgent()) {
		ts = "0 0"
		answer("0-0", "0-0", 5, "", nil)
		return
	}
	sender, company := u.ruts()
	if fault.Kind == FaultStatus {
		n, _ := strconv.Atoi(fault.Code)
		answer(sender, company, n, "", nil)
		return
	}
	if r.ContentLength < 0 || len(r.TransferEncoding) > 0 {
		if !f.opts.AllowChunked {
			answer(sender, company, 3, "", []string{"Content-Length ausente"})
			return
		}
	}
	if u.err != nil || !slices.Equal(u.fields, uploadFields) {
		answer(sender, company, 3, "", []string{fmt.Sprintf("campos %v, se esperaba %v", u.fields, uploadFields)})
		return
	}
	status, errs := f.permission(rut, sender, company)
	if status != 0 {
		answer(sender, company, status, "", errs)
		return
	}
	if u.tooBig || len(u.archivo) < 100 {
		answer(sender, company, 2, "", nil)
		return
	}
	env, status, errs := f.receive(u.archivo, rut, company, false)
	if status != 0 {
		answer(sender, company, status, "", errs)
		return
	}
	answer(sender, company, 0, env.TrackID, nil)
}

// permission checks that the token's holder is the sender and may send for
// company (else STATUS 1), and that company is an authorised issuer (else
// 6).
func (f *Fake) permission(tokenRUT, sender, company string) (int, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !strings.EqualFold(tokenRUT, sender) || (!f.opts.AnySigner && !f.signers[tokenRUT][strings.ToUpper(company)]) {
		return 1, []string{fmt.Sprintf("el usuario %s no tiene permiso para enviar por %s", sender, company)}
	}
	if !f.opts.AnySigner && !f.issuers[strings.ToUpper(company)] {
		return 6, []string{fmt.Sprintf("la empresa %s no esta autorizada a emitir DTE", company)}
	}
	return 0, nil
}

// receive checks an envelope and files it under a new track id. rest is
// true for the boleta REST API, which takes only an EnvioBOLETA; DTEUpload
// takes an EnvioDTE, an EnvioBOLETA (the channel of the boleta
// certification, sii-wave3-notes §6.4), a libro or an RCOF. It returns the
// upload STATUS (7 schema, 8 signature) unless rejections are deferred
// (always on REST); carátula problems are always found later (RCT).
func (f *Fake) receive(data []byte, tokenRUT, company string, rest bool) (*Envelope, int, []string) {
	if !rest {
		if e, status, errs, ok := f.receiveLibro(data, tokenRUT, company); ok {
			return e, status, errs
		}
	}
	defer_ := f.opts.DeferRejections || rest
	final, steps := "", []string(nil)
	reject := func(status int, state string, errs []string) (int, []string) {
		if !defer_ {
			return status, errs
		}
		if final == "" {
			final = state
		}
		return 0, nil
	}
	root, _ := dte.RootName(data)
	boleta := rest || root == "EnvioBOLETA"
	want := "EnvioDTE"
	if boleta {
		want = "EnvioBOLETA"
	}
	if root != want {
		if s, errs := reject(7, "RSC", []string{fmt.Sprintf("se esperaba %s, no <%s>", want, root)}); s != 0 {
			return nil, s, errs
		}
	}
	if f.opts.Schema != nil && final == "" {
		if errs := f.opts.Schema(root, data); len(errs) > 0 {
			if s, errs := reject(7, "RSC", errs); s != 0 {
				return nil, s, errs
			}
		}
	}
	env, perr := dte.ParseEnvio(data)
	if perr != nil && final == "" {
		if s, errs := reject(7, "RSC", []string{perr.Error()}); s != 0 {
			return nil, s, errs
		}
	}
	if final == "" {
		if _, err := signer.Verify(data); err != nil {
			if s, errs := reject(8, "RFR", []string{err.Error()}); s != 0 {
				return nil, s, errs
			}
		}
	}
	e := &Envelope{Company: company, Sender: tokenRUT, Boleta: boleta, REST: rest, Received: f.now(), Raw: bytes.Clone(data)}
	if env != nil {
		if final == "" && !caratulaOK(env, tokenRUT, company, boleta) {
			final = "RCT"
		}
		e.Docs = docsOf(env)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if r, ok := f.resol[strings.ToUpper(company)]; ok && final == "" && env != nil && (env.Caratula.FchResol != r.fch || env.Caratula.NroResol != r.nro) {
		// The carátula names another resolution than the company's in
		// this environment (CRT-3-19 at the SII).
		final = "RCT"
	}
	steps = f.opts.Steps
	if f.opts.ReviewDelay > 0 {
		e.ReviewedAt = e.Received.Add(f.opts.ReviewDelay)
	}
	for i := range e.Docs {
		d := &e.Docs[i]
		o, ok := f.scripts[docKey(d.RutEmisor, d.Tipo, d.Folio)]
		if !ok {
			o = f.deflt
		}
		d.Result, d.Detail = o.Result, o.Detail
		if o.Envelope != "" && final == "" {
			final = o.Envelope
		}
		if o.Steps != nil {
			steps = o.Steps
		}
		// A folio the SII already has is refused in a new envelope: on
		// DTEUpload as DTE-3-100 (the same document again) or DTE-3-101
		// (the folio with other data); the boleta API answers either in
		// detalle_rep_rech as RCH with error code 100, "DTE Repetido".
		if prev := f.firstCopy(d); prev != nil {
			d.Result, d.Detail = Rejected, "DTE-3-101"
			if rest || bytes.Equal(prev.raw, d.raw) {
				d.Detail = detailRepeated
			}
		}
	}
	if final == "" {
		final = "EPR"
	}
	e.Final, e.Steps = final, truncateSteps(steps, final)
	f.trackNext++
	e.TrackID = fmt.Sprintf("%010d", f.trackNext)
	f.envelopes = append(f.envelopes, e)
	f.byTrack[e.TrackID] = e
	f.journalEnvelope(e)
	return e, 0, nil
}

// docsOf reads the documents of an envelope as the fake keeps them.
func docsOf(env *dte.Envio) []Doc {
	var docs []Doc
	for _, d := range env.Documentos {
		monto, _ := d.Totales.MntTotal.Int64()
		docs = append(docs, Doc{RutEmisor: strings.ToUpper(d.Emisor.Rut), Tipo: int(d.Tipo), Folio: d.Folio,
			Fecha: d.FechaEmision, Monto: monto, Receptor: strings.ToUpper(d.Receptor.Rut), SignatureValue: d.SignatureValue, raw: d.Raw,
			refs: d.Referencias, fmaPago: fmaPago(d)})
	}
	return docs
}

// fmaPago reads an invoice's payment form (IdDoc/FmaPago), which the
// registry of acceptances and claims consults; 0 when absent or for the
// types the registry does not cover.
func fmaPago(d *dte.Document) int {
	if d.Tipo != 33 && d.Tipo != 34 && d.Tipo != 43 {
		return 0
	}
	root, err := xmlflat.ParseDocument(d.Raw)
	if err != nil {
		return 0
	}
	n := root.Find("FmaPago")
	if n == nil {
		return 0
	}
	v, _ := strconv.Atoi(strings.TrimSpace(n.Text))
	return v
}

// detailRepeated is the detail code of a document the SII already has.
const detailRepeated = "DTE-3-100"

// detailText is the SII's text for a detail code, as the boleta API
// writes it in an error line's descripcion; the code itself for codes
// the fake has no text for.
func detailText(code string) string {
	if code == detailRepeated {
		return "DTE Repetido"
	}
	return code
}

// truncateSteps cuts the timeline where an envelope rejection happens:
// RSC right after reception, RCT after SOK, RFR after CRT.
func truncateSteps(steps []string, final string) []string {
	stop := map[string]string{"RSC": "SOK", "RCT": "CRT", "RFR": "FOK"}[final]
	if stop == "" {
		return slices.Clone(steps)
	}
	if i := slices.Index(steps, stop); i >= 0 {
		return slices.Clone(steps[:i])
	}
	return slices.Clone(steps)
}

// firstCopy returns an earlier accepted copy of document d (same issuer,
// type and folio) in an envelope not rejected as a whole.
func (f *Fake) firstCopy(d *Doc) *Doc {
	for _, e := range f.envelopes {
		if e.Final != "EPR" {
			continue
		}
		for i := range e.Docs {
			p := &e.Docs[i]
			if p.RutEmisor == d.RutEmisor && p.Tipo == d.Tipo && p.Folio == d.Folio && p.Result != Rejected {
				return p
			}
		}
	}
	return nil
}

// caratulaOK checks the cover: issuer = company, sender = certificate
// holder, receiver = the SII, and SubTotDTE counts that match the
// documents.
func caratulaOK(env *dte.Envio, tokenRUT, company string, boleta bool) bool {
	c := env.Caratula
	if !strings.EqualFold(c.RutEmisor, company) || !strings.EqualFold(c.RutEnvia, tokenRUT) || !strings.EqualFold(c.RutReceptor, "60803000-K") {
		return false
	}
	if env.Boleta != boleta {
		return false
	}
	counts := map[dte.TipoDTE]int{}
	for _, d := range env.Documentos {
		counts[d.Tipo]++
		if boleta && !d.Tipo.IsBoleta() {
			return false
		}
	}
	max := dte.MaxEnvioDTE
	if boleta {
		max = dte.MaxEnvioBoleta
	}
	if len(env.Documentos) == 0 || len(env.Documentos) > max || len(c.SubTotDTE) != len(counts) {
		return false
	}
	for _, s := range c.SubTotDTE {
		if counts[s.Tipo] != s.Cantidad {
			return false
		}
	}
	return true
}

// serveBoletaUpload is the boleta REST upload.
func (f *Fake) serveBoletaUpload(w http.ResponseWriter, r *http.Request) {
	u := f.readUpload(w, r)
	token := cookieToken(r)
	idx, fault, done := f.begin(BoletaUpload, w, r, u.fields, token)
	if done {
		return
	}
	rut, code := f.checkToken(token, true)
	if code != "" || !f.browserLike(r.UserAgent()) {
		f.result(idx, "HTTP 401")
		http.Error(w, "NO ESTA AUTENTICADO", http.StatusUnauthorized)
		return
	}
	sender, company := u.ruts()
	type answer struct {
		RutEmisor      string `json:"rut_emisor"`
		RutEnvia       string `json:"rut_envia"`
		TrackID        *int64 `json:"trackid"`
		FechaRecepcion string `json:"fecha_recepcion"`
		Estado         string `json:"estado"`
		File           string `json:"file"`
	}
	a := answer{RutEmisor: company, RutEnvia: sender, FechaRecepcion: f.now().Format("2006-01-02 15:04:05"), File: u.filename}
	reply := func() {
		f.result(idx, "estado %s", a.Estado)
		if fault.Kind == FaultAcceptThenHang {
			hang(r.Context())
			reset(w)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(a)
	}
	switch {
	case (r.ContentLength < 0 || len(r.TransferEncoding) > 0) && !f.opts.AllowChunked,
		u.err != nil || !slices.Equal(u.fields, uploadFields), u.tooBig:
		a.Estado = "RSC"
		reply()
		return
	}
	if s, _ := f.permission(rut, sender, company); s != 0 {
		a.Estado = "RCT"
		reply()
		return
	}
	if root, _ := dte.RootName(u.archivo); libroSchemas[root] != "" {
		// The REST API has no route for libros or the RCOF: it names no
		// schema for them (sii-wave3-notes §4.3, §4.4).
		f.result(idx, "HTTP 400 SCH-00001")
		http.Error(w, "SCH-00001 Invalid Schema Name", http.StatusBadRequest)
		return
	}
	env, _, _ := f.receive(u.archivo, rut, company, true)
	n, _ := strconv.ParseInt(env.TrackID, 10, 64)
	a.TrackID, a.Estado = &n, "REC"
	reply()
}
