package siitest

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/dtekit/dtekit/internal/xmlflat"
	"github.com/dtekit/dtekit/signer"
)

// el writes one SII-prefixed element with escaped text.
func el(name, text string) string {
	var b strings.Builder
	b.WriteString(`<SII:` + name + `>`)
	xmlflat.EscapeText(&b, text)
	b.WriteString(`</SII:` + name + `>`)
	return b.String()
}

// newSeed issues a 12-digit zero-padded seed, or the ESTADO of a
// FaultEstado.
func (f *Fake) newSeed(fault Fault) (hdr [][2]string, body string) {
	if fault.Kind == FaultEstado {
		return [][2]string{{"ESTADO", fault.Code}, {"GLOSA", "ERROR RETORNO"}}, ""
	}
	f.mu.Lock()
	f.seedNext++
	seed := fmt.Sprintf("%012d", f.seedNext)
	f.seeds[seed] = f.now()
	f.mu.Unlock()
	return [][2]string{{"ESTADO", "00"}}, el("SEMILLA", seed)
}

func (f *Fake) getSeed(_ soapCall, _ int, fault Fault) ([][2]string, string) {
	return f.newSeed(fault)
}

func (f *Fake) getToken(call soapCall, _ int, fault Fault) ([][2]string, string) {
	return f.issueToken([]byte(call["pszXml"]), false, fault)
}

// issueToken validates a signed seed in the SII's order and issues a
// token: XML (02), Signature (04), Semilla (06), seed known, fresh and
// unused (08), certificate (11), signature (05), KeyValue against the
// certificate (21), RUT registered (-07).
func (f *Fake) issueToken(doc []byte, rest bool, fault Fault) ([][2]string, string) {
	fail := func(estado, glosa string) ([][2]string, string) {
		return [][2]string{{"ESTADO", estado}, {"GLOSA", glosa}}, ""
	}
	if fault.Kind == FaultEstado {
		return fail(fault.Code, "ERROR")
	}
	root, err := xmlflat.ParseDocument(doc)
	if err != nil {
		return fail("02", "Error: SAXException")
	}
	if root.Find("Signature") == nil {
		return fail("04", "Error: no Signature")
	}
	sem := root.Find("Semilla")
	if sem == nil {
		return fail("06", "Error: no Semilla")
	}
	seed := strings.TrimSpace(sem.Text)
	f.mu.Lock()
	issued, ok := f.seeds[seed]
	if ok {
		delete(f.seeds, seed) // single use
	}
	f.mu.Unlock()
	if !ok {
		return fail("08", "NO Existe SEED")
	}
	if f.now().Sub(issued) >= f.opts.SeedTTL {
		return fail("08", "TIME-OUT DEL SEED")
	}
	if root.Find("X509Certificate") == nil {
		return fail("11", "Error: no Certificate")
	}
	sigs, err := signer.Verify(doc)
	if errors.Is(err, signer.ErrKeyMismatch) {
		return fail("21", "Error: la llave publica no corresponde al certificado")
	}
	if err != nil || len(sigs) != 1 || sigs[0].ID != "" {
		return fail("05", "Error: firma invalida")
	}
	rut := sigs[0].RUT
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.signers[rut]; (!ok && !f.opts.AnySigner) || rut == "" {
		return fail("-07", "RUT no validado")
	}
	tok := randomToken()
	f.tokens[tok] = &tokenInfo{rut: rut, rest: rest, at: f.now()}
	return [][2]string{{"ESTADO", "00"}, {"GLOSA", "Token Creado"}}, el("TOKEN", tok)
}

// checkToken returns the RUT a token was issued to, or the getEstUp code
// that refuses it: 003 unknown, 002 expired, 001 revoked (or of the other
// kind: SOAP and REST tokens are separate).
func (f *Fake) checkToken(tok string, rest bool) (rut, code string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.tokens[tok]
	switch {
	case !ok || t.rest != rest:
		return "", "003"
	case t.revoked:
		return "", "001"
	case f.now().Sub(t.at) >= f.opts.TokenTTL:
		return "", "002"
	}
	return t.rut, ""
}

// cookieToken reads the TOKEN cookie.
func cookieToken(r *http.Request) string {
	c, err := r.Cookie("TOKEN")
	if err != nil {
		return ""
	}
	return c.Value
}

// serveBoletaSeed answers the REST seed: the same RESPUESTA, unescaped.
func (f *Fake) serveBoletaSeed(w http.ResponseWriter, r *http.Request) {
	idx, fault, done := f.begin(BoletaSeed, w, r, nil, "")
	if done {
		return
	}
	hdr, body := f.newSeed(fault)
	f.result(idx, "ESTADO %s", hdr[0][1])
	w.Header().Set("Content-Type", "application/xml")
	io.WriteString(w, respuesta(hdr, body))
}

// serveBoletaToken answers the REST token request, whose body is the
// signed seed itself.
func (f *Fake) serveBoletaToken(w http.ResponseWriter, r *http.Request) {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxSOAPRequest))
	idx, fault, done := f.begin(BoletaToken, w, r, nil, "")
	if done {
		return
	}
	if err != nil {
		http.Error(w, "request too large", http.StatusRequestEntityTooLarge)
		return
	}
	hdr, body := f.issueToken(data, true, fault)
	f.result(idx, "ESTADO %s", hdr[0][1])
	w.Header().Set("Content-Type", "application/xml")
	io.WriteString(w, respuesta(hdr, body))
}
