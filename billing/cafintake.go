package billing

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/dte"
)

// checkCAF parses an uploaded CAF and checks that the company may use it:
// the declared type, the SII's signature under the keys of the company's
// environment (IDK 100 for certificación, 300 for producción), the
// issuer's RUT, the key pair, and that it is not expired at now.
func checkCAF(in api.CAFInput, emp *api.Empresa, trust caf.TrustedKeys, now time.Time) (*caf.CAF, *fault.Error) {
	if strings.TrimSpace(in.CAFXML) == "" {
		return nil, fault.Invalid("caf_xml", dte.CodeRequired, "caf_xml is missing")
	}
	if !in.TipoDTE.Valid() {
		return nil, fault.Invalid("tipo_dte", dte.CodeInvalidValue, fmt.Sprintf("tipo_dte %d is not one of the twelve DTE types", in.TipoDTE))
	}
	c, e := parseCAF(in.CAFXML)
	if e != nil {
		return nil, e
	}
	if c.Tipo != int(in.TipoDTE) {
		return nil, fault.Invalid("tipo_dte", fault.DetailTipoMismatch, fmt.Sprintf("the CAF is for tipo %d, not %d", c.Tipo, in.TipoDTE))
	}
	if c.Ambiente() != emp.Ambiente {
		return nil, fault.Invalid("caf_xml", fault.DetailAmbienteMismatch,
			fmt.Sprintf("the CAF was authorized for %q (IDK %d) and the company works in %q", c.Ambiente(), c.IDK, emp.Ambiente))
	}
	if err := c.Verify(trust); err != nil {
		return nil, cafInvalid(fault.DetailCAFSignature, fmt.Sprintf(
			"the SII's signature over the CAF (FRMA) does not verify with the SII's key for IDK %d: the file was altered, or the SII did not issue it", c.IDK), err)
	}
	want, err1 := dte.ParseRUT(emp.Rut)
	got, err2 := dte.ParseRUT(c.RutEmisor)
	if err1 != nil || err2 != nil || want != got {
		return nil, fault.Invalid("caf_xml", fault.DetailRutMismatch, fmt.Sprintf("the CAF was issued to %s, not to the company %s", c.RutEmisor, emp.Rut))
	}
	if err := c.CheckKeyPair(); err != nil {
		return nil, cafInvalid(fault.DetailInvalidCAF,
			"the CAF's private key (RSASK) is not the key pair of its public key (RSAPK): the file was altered", err)
	}
	if err := c.CheckUsable(now); err != nil {
		if exp, ok := c.ExpiresAt(); ok && errors.Is(err, caf.ErrExpired) {
			return nil, cafInvalid(fault.DetailCAFExpired, fmt.Sprintf("the CAF was usable until %s, six months from its authorization on %s (tipo %d); ask the SII for a new one",
				exp.AddDate(0, 0, -1).Format(time.DateOnly), c.FA, c.Tipo), err)
		}
		return nil, cafInvalid(fault.DetailInvalidCAF, fmt.Sprintf("the CAF's authorization date %s is later than today", c.FA), err)
	}
	return c, nil
}

// parseCAF reads an uploaded CAF (caf_xml) without checking it.
func parseCAF(cafXML string) (*caf.CAF, *fault.Error) {
	if strings.TrimSpace(cafXML) == "" {
		return nil, fault.Invalid("caf_xml", dte.CodeRequired, "caf_xml is missing")
	}
	raw, e := cafBytes(cafXML)
	if e != nil {
		return nil, e
	}
	c, err := caf.Parse(raw)
	if err != nil {
		return nil, cafInvalid(fault.DetailInvalidCAF, "the CAF file cannot be read: "+cafReason(err, caf.ErrMalformed), err)
	}
	return c, nil
}

// cafInvalid is the validation Error of a CAF problem on caf_xml: msg for
// the client, err (the caf package's words) kept for logs.
func cafInvalid(code dte.DetailCode, msg string, err error) *fault.Error {
	e := fault.Invalid("caf_xml", code, msg)
	e.Err = err
	return e
}

// cafReason is what a caf error says after its package prefix and its
// sentinel's text ("caf: malformed CAF: root element is <nope>" gives
// "root element is <nope>"): the detail a client can act on.
func cafReason(err, sentinel error) string {
	s := err.Error()
	if r, ok := strings.CutPrefix(s, sentinel.Error()+": "); ok {
		return r
	}
	return strings.TrimPrefix(s, "caf: ")
}

// cafBytes turns caf_xml into the bytes caf.Parse reads. base64, and a
// Go string holding the file's own bytes (not valid UTF-8), pass as they
// are. Valid UTF-8 XML is text: a CAF pasted into a JSON string holds the
// file's characters, and a file that declares ISO-8859-1 (as every CAF the
// SII issues does) is those characters encoded back to ISO-8859-1, so that
// a razón social with Ñ signs as the SII signed it.
func cafBytes(s string) ([]byte, *fault.Error) {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "<") || !utf8.ValidString(s) || !declaresLatin1(t) {
		return []byte(s), nil
	}
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xFF {
			return nil, fault.Invalid("caf_xml", dte.CodeNotLatin1,
				fmt.Sprintf("the CAF declares ISO-8859-1 but holds %q (U+%04X), which that encoding cannot represent", r, r))
		}
		out = append(out, byte(r))
	}
	return out, nil
}

// declaresLatin1 reports whether an XML text's declaration names
// ISO-8859-1 (or its alias Latin-1).
func declaresLatin1(xml string) bool {
	if !strings.HasPrefix(xml, "<?xml") {
		return false
	}
	end := strings.Index(xml, "?>")
	if end < 0 {
		return false
	}
	decl := strings.ToLower(xml[:end])
	return strings.Contains(decl, "iso-8859-1") || strings.Contains(decl, "latin1") || strings.Contains(decl, "latin-1")
}
