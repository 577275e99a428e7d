package dte

import (
	"encoding/base64"
	"time"
	"unicode/utf8"

	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/internal/smallrsa"
)

// pipeTED stamps the document: an interim TED writer used until package
// ted is available; it follows the same flattening rules (see ted).
func pipeTED(p *docPrepared, folio int64, c *caf.CAF, now time.Time) ([]byte, error) {
	w := &xw{}
	w.raw("<DD>")
	w.plain("RE", p.rutEmisor)
	w.int("TD", int64(p.tipo))
	w.int("F", folio)
	w.plain("FE", p.fecha)
	w.plain("RR", p.rr)
	w.text("RSR", "receptor.razon_social", p.rsr, 40)
	w.plain("MNT", xwNormDec(p.mnt))
	w.text("IT1", "detalle[0].nombre", p.it1, 40)
	for _, r := range c.ElementXML() {
		if r < utf8.RuneSelf {
			w.buf = append(w.buf, byte(r))
		} else {
			w.buf = append(w.buf, byte(r))
		}
	}
	w.plain("TSTED", xwTimestamp(now))
	w.raw("</DD>")
	if w.err != nil {
		return nil, w.err
	}
	sig, err := smallrsa.SignSHA1(c.PrivateKey, w.buf)
	if err != nil {
		return nil, err
	}
	out := append([]byte(`<TED version="1.0">`), w.buf...)
	out = append(out, `<FRMT algoritmo="SHA1withRSA">`...)
	out = append(out, base64.StdEncoding.EncodeToString(sig)...)
	return append(out, `</FRMT></TED>`...), nil
}
