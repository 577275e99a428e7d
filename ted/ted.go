// Package ted builds and verifies the TED (Timbre Electrónico del DTE), the
// electronic stamp every SII document carries and prints as a PDF417 code.
//
// A TED is <TED version="1.0"><DD>…</DD><FRMT algoritmo="SHA1withRSA">…</FRMT></TED>.
// DD holds the document's key data (issuer, type, folio, date, receptor,
// total, first item) and a verbatim copy of the CAF element; FRMT is the
// SHA1withRSA (PKCS#1 v1.5) signature over the DD made with the CAF's
// private key, computed over the DD serialized with no namespace
// declaration, no whitespace between tags, text escaping only &, < and >,
// encoded ISO-8859-1.
//
// Build and Sign write the TED in exactly that flat form, so the bytes they
// return are at once the element to place in the DTE, its canonical form,
// and the PDF417 payload. Verify accepts a TED as found in a DTE — inside
// the SII namespace, indented — and flattens it before checking.
//
// CAF keys are 512-bit, which crypto/rsa refuses since Go 1.24; signatures
// use internal/smallrsa, so importers need no GODEBUG setting.
package ted

import (
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/internal/chile"
	"github.com/dtekit/dtekit/internal/smallrsa"
	"github.com/dtekit/dtekit/internal/xmlflat"
)

// Sentinel errors of this package, wrapped with detail. Failures of the
// embedded CAF are reported with the caf package's sentinels (for example
// caf.ErrSignature for a bad FRMA, caf.ErrUntrustedIDK, caf.ErrKeyMismatch,
// caf.ErrNoPrivateKey, caf.ErrFolioOutOfRange), also wrapped.
var (
	// ErrInvalidDD: a DD field given to Build or Sign is missing or
	// malformed.
	ErrInvalidDD = errors.New("ted: invalid DD")
	// ErrNotLatin1: a text field holds a character outside ISO-8859-1,
	// which a TED cannot carry. Text is never transliterated silently.
	ErrNotLatin1 = errors.New("ted: text outside ISO-8859-1")
	// ErrMalformed: the input to Parse or Verify is not a readable TED.
	ErrMalformed = errors.New("ted: malformed TED")
	// ErrSignature: FRMT does not verify over the DD with the CAF's key.
	ErrSignature = errors.New("ted: FRMT signature does not verify")
	// ErrMismatch: DD/RE or DD/TD differ from the CAF's.
	ErrMismatch = errors.New("ted: DD does not match its CAF")
)

// RutSinReceptor is the RR the SII asks for on a boleta (39, 41) without an
// identified receptor; Build uses it when RR is empty on those types.
const RutSinReceptor = chile.RUTSinReceptor

// MaxTextLen is the length, in characters, to which Build cuts RSR and IT1.
const MaxTextLen = 40

// maxInput bounds the size of the input to Parse and Verify (a TED is about
// 1 KB; a whole DTE containing one may be larger).
const maxInput = 4 << 20

// tstedLayout is the format of TSTED: Chile local time, no offset.
const tstedLayout = "2006-01-02T15:04:05"

// DD is the stamp's signed data, field for field (SII names).
type DD struct {
	// RE is the issuer's RUT, "97975000-5"; it must equal the CAF's.
	RE string
	// TD is the document type; it must equal the CAF's.
	TD int
	// F is the folio; it must lie within the CAF's range.
	F int64
	// FE is the emission date, "YYYY-MM-DD" (the document's FchEmis).
	FE string
	// RR is the receptor's RUT. Empty on a boleta (39, 41) means no
	// identified receptor and becomes RutSinReceptor.
	RR string
	// RSR is the receptor's name; Build cuts it to 40 characters. It may be
	// empty only on boletas.
	RSR string
	// MNT is the total exactly as written in Totales/MntTotal: an integer
	// ("119000"), negative only on type 43, with up to 4 decimals only on
	// exports (110, 111, 112).
	MNT string
	// IT1 is the first detail line's name; Build cuts it to 40 characters.
	// It may be empty only on boletas.
	IT1 string
	// CAF is the authorization the folio belongs to; its element is copied
	// verbatim (see caf.CAF.ElementXML).
	CAF *caf.CAF
	// TSTED is the stamp time, written as Chile (America/Santiago) local
	// time without offset: it is converted to that zone first, so a time
	// already in America/Santiago is written as is.
	TSTED time.Time
}

// TED is a built or parsed stamp.
type TED struct {
	// DD holds the stamp's data: after Sign, the normalized values that
	// were signed (RSR and IT1 cut, RR defaulted); after Parse, the values
	// as written, with TSTED in America/Santiago.
	DD DD
	// FRMT is the signature over SignedDD.
	FRMT []byte
	// SignedDD is the flattened DD, ISO-8859-1: the bytes FRMT signs. It is
	// the canonical form (text escaping only &, < and >), except when Verify
	// found FRMT to sign the DD as written with other escaping.
	SignedDD []byte
	// XML is the flattened TED element in ISO-8859-1, in the form Build
	// returns (SignedDD then FRMT): the bytes to place in the DTE and to
	// encode in the PDF417.
	XML []byte

	rawDD []byte // the DD as written minus whitespace between tags, when it differs
}

// UTF8 returns t.XML as UTF-8 text, for XML builders that work in UTF-8.
func (t *TED) UTF8() string { return xmlflat.Latin1ToString(t.XML) }

// Build signs dd and returns the flattened TED element in ISO-8859-1 (see
// Sign).
func Build(dd DD, cafKey *rsa.PrivateKey) ([]byte, error) {
	t, err := Sign(dd, cafKey)
	if err != nil {
		return nil, err
	}
	return t.XML, nil
}

// Sign validates and normalizes dd, serializes it flat, signs it with
// cafKey (the CAF's RSASK; nil means dd.CAF.PrivateKey) and returns the TED.
// The key must be the CAF's (caf.ErrKeyMismatch otherwise). Sign does not
// check the CAF's FRMA or dates: see caf.CAF.Validate.
func Sign(dd DD, cafKey *rsa.PrivateKey) (*TED, error) {
	norm, err := normalize(dd)
	if err != nil {
		return nil, err
	}
	if cafKey == nil {
		cafKey = dd.CAF.PrivateKey
	}
	if cafKey == nil {
		return nil, fmt.Errorf("ted: signing folio %d: %w", dd.F, caf.ErrNoPrivateKey)
	}
	if !smallrsa.EqualPublicKeys(&cafKey.PublicKey, dd.CAF.PublicKey) {
		return nil, fmt.Errorf("ted: signing folio %d: %w: the key is not the private key of the CAF's RSAPK (%s)", dd.F, caf.ErrKeyMismatch, dd.CAF)
	}
	signed, err := norm.Marshal()
	if err != nil {
		return nil, err
	}
	sig, err := smallrsa.SignSHA1(cafKey, signed)
	if err != nil {
		return nil, fmt.Errorf("ted: signing DD of tipo %d folio %d: %w", dd.TD, dd.F, err)
	}
	return &TED{DD: norm, FRMT: sig, SignedDD: signed, XML: assemble(signed, sig)}, nil
}

// assemble wraps the signed DD and its signature in the TED element.
func assemble(signed, sig []byte) []byte {
	b64 := base64.StdEncoding.EncodeToString(sig)
	out := make([]byte, 0, len(signed)+len(b64)+64)
	out = append(out, `<TED version="1.0">`...)
	out = append(out, signed...)
	out = append(out, `<FRMT algoritmo="SHA1withRSA">`...)
	out = append(out, b64...)
	out = append(out, `</FRMT></TED>`...)
	return out
}

// Marshal returns the flattened DD in ISO-8859-1 — the exact bytes FRMT
// signs — after the same validation and normalization as Sign.
func (dd DD) Marshal() ([]byte, error) {
	n, err := normalize(dd)
	if err != nil {
		return nil, err
	}
	loc := chile.Location()
	var b strings.Builder
	b.WriteString("<DD>")
	field := func(name, value string) {
		b.WriteString("<" + name + ">")
		xmlflat.EscapeText(&b, value)
		b.WriteString("</" + name + ">")
	}
	field("RE", n.RE)
	field("TD", strconv.Itoa(n.TD))
	field("F", strconv.FormatInt(n.F, 10))
	field("FE", n.FE)
	field("RR", n.RR)
	field("RSR", n.RSR)
	field("MNT", n.MNT)
	field("IT1", n.IT1)
	b.WriteString(n.CAF.ElementXML())
	field("TSTED", n.TSTED.In(loc).Format(tstedLayout))
	b.WriteString("</DD>")
	out, err := xmlflat.ToLatin1(b.String())
	if err != nil {
		// normalize checked every field and caf.Parse the CAF element.
		return nil, fmt.Errorf("%w: DD: %v", ErrNotLatin1, err)
	}
	return out, nil
}

func isBoleta(td int) bool { return td == 39 || td == 41 }

// normalize checks dd and returns it with RR defaulted and RSR, IT1 cut.
func normalize(dd DD) (DD, error) {
	if dd.CAF == nil {
		return dd, fmt.Errorf("%w: CAF is required", ErrInvalidDD)
	}
	re, err := chile.CheckRUT(strings.TrimSpace(dd.RE))
	if err != nil {
		return dd, fmt.Errorf("%w: RE: %v", ErrInvalidDD, err)
	}
	dd.RE = re
	if dd.RE != dd.CAF.RutEmisor {
		return dd, fmt.Errorf("%w: RE %s but the CAF is for %s (%s)", ErrMismatch, dd.RE, dd.CAF.RutEmisor, dd.CAF)
	}
	if dd.TD <= 0 {
		return dd, fmt.Errorf("%w: TD %d is not a document type", ErrInvalidDD, dd.TD)
	}
	if dd.TD != dd.CAF.Tipo {
		return dd, fmt.Errorf("%w: TD %d but the CAF is for type %d (%s)", ErrMismatch, dd.TD, dd.CAF.Tipo, dd.CAF)
	}
	if dd.F <= 0 || dd.F > 9999999999 {
		return dd, fmt.Errorf("%w: F %d is not a folio (1 to 10 digits)", ErrInvalidDD, dd.F)
	}
	if err := dd.CAF.CheckFolio(dd.F); err != nil {
		return dd, fmt.Errorf("ted: DD/F: %w", err)
	}
	if _, err := time.Parse(time.DateOnly, dd.FE); err != nil {
		return dd, fmt.Errorf("%w: FE %q is not a date like 2006-01-02", ErrInvalidDD, dd.FE)
	}
	rr := strings.TrimSpace(dd.RR)
	if rr == "" && isBoleta(dd.TD) {
		rr = RutSinReceptor
	}
	if dd.RR = rr; rr == "" {
		return dd, fmt.Errorf("%w: RR is required on type %d", ErrInvalidDD, dd.TD)
	}
	if dd.RR, err = chile.CheckRUT(rr); err != nil {
		return dd, fmt.Errorf("%w: RR: %v", ErrInvalidDD, err)
	}
	if dd.RSR, err = checkText("RSR", dd.RSR, isBoleta(dd.TD)); err != nil {
		return dd, err
	}
	if err := checkMNT(dd.MNT, dd.TD); err != nil {
		return dd, err
	}
	if dd.IT1, err = checkText("IT1", dd.IT1, isBoleta(dd.TD)); err != nil {
		return dd, err
	}
	if dd.TSTED.IsZero() {
		return dd, fmt.Errorf("%w: TSTED is required", ErrInvalidDD)
	}
	if y := dd.TSTED.Year(); y < 2000 || y > 2050 {
		return dd, fmt.Errorf("%w: TSTED %s is outside the schema's 2000-2050 range", ErrInvalidDD, dd.TSTED.Format(time.RFC3339))
	}
	return dd, nil
}

// checkText cuts s to MaxTextLen characters and checks that the result can
// be written in a TED: ISO-8859-1, no control characters, and not made only
// of whitespace (which flattening would remove).
func checkText(field, s string, allowEmpty bool) (string, error) {
	if !utf8.ValidString(s) {
		return "", fmt.Errorf("%w: %s %q is not valid UTF-8", ErrInvalidDD, field, s)
	}
	if utf8.RuneCountInString(s) > MaxTextLen {
		s = string([]rune(s)[:MaxTextLen])
	}
	for _, r := range s {
		if r > 0xff {
			return "", fmt.Errorf("%w: %s %q: character %q (U+%04X) has no ISO-8859-1 code", ErrNotLatin1, field, s, r, r)
		}
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) {
			return "", fmt.Errorf("%w: %s %q holds the control character U+%04X", ErrInvalidDD, field, s, r)
		}
	}
	if s == "" {
		if allowEmpty {
			return s, nil
		}
		return "", fmt.Errorf("%w: %s is required", ErrInvalidDD, field)
	}
	if strings.TrimSpace(s) == "" {
		return "", fmt.Errorf("%w: %s %q is only whitespace", ErrInvalidDD, field, s)
	}
	return s, nil
}

// checkMNT checks the total's text against the schema for the type:
// unsigned integer, signed integer for 43, up to 4 decimals for exports.
func checkMNT(s string, td int) error {
	bad := func(why string) error { return fmt.Errorf("%w: MNT %q %s", ErrInvalidDD, s, why) }
	body := s
	if strings.HasPrefix(body, "-") {
		if td != 43 {
			return bad("is negative; only a liquidación-factura (43) may be")
		}
		body = body[1:]
	}
	intPart, frac, hasFrac := strings.Cut(body, ".")
	if intPart == "" || !digits(intPart) || (len(intPart) > 1 && intPart[0] == '0') {
		return bad("is not an amount like 119000")
	}
	if hasFrac {
		if td < 110 || td > 112 {
			return bad("has decimals; only exports (110-112) may")
		}
		if frac == "" || len(frac) > 4 || !digits(frac) {
			return bad("must have 1 to 4 decimals")
		}
	}
	if len(intPart)+len(frac) > 18 {
		return bad("has more than 18 digits")
	}
	return nil
}

func digits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// ddOrder is the sequence of DD's children fixed by the schema.
var ddOrder = [...]string{"RE", "TD", "F", "FE", "RR", "RSR", "MNT", "IT1", "CAF", "TSTED"}

// Parse reads a TED without checking its signatures: the TED element alone
// (flat or indented, with or without the SII namespace, ISO-8859-1 or
// UTF-8), or a document containing exactly one TED, such as a DTE.
func Parse(tedXML []byte) (*TED, error) {
	if len(tedXML) > maxInput {
		return nil, malformed("input is %d bytes, more than the %d accepted", len(tedXML), maxInput)
	}
	root, err := xmlflat.ParseDocument(tedXML)
	if err != nil {
		return nil, malformed("%v", err)
	}
	var found []*xmlflat.Node
	findAll(root, "TED", &found)
	if len(found) != 1 {
		return nil, malformed("found %d TED elements, expected exactly one", len(found))
	}
	tedNode := found[0]
	if v, ok := tedNode.Attr("version"); ok && v != "1.0" {
		return nil, malformed("TED version %q, expected 1.0", v)
	}
	if len(tedNode.Kids) != 2 || tedNode.Kids[0].Name != "DD" || tedNode.Kids[1].Name != "FRMT" {
		return nil, malformed("TED must hold exactly DD then FRMT")
	}
	ddNode, frmtNode := tedNode.Kids[0], tedNode.Kids[1]
	if alg, _ := frmtNode.Attr("algoritmo"); alg != "SHA1withRSA" {
		return nil, malformed("FRMT algoritmo %q is not supported (only SHA1withRSA)", alg)
	}
	t := &TED{}
	if t.FRMT, err = decodeBase64(frmtNode.Text); err != nil {
		return nil, malformed("FRMT: %v", err)
	}
	if len(ddNode.Kids) != len(ddOrder) {
		return nil, malformed("DD has %d children, expected %s", len(ddNode.Kids), strings.Join(ddOrder[:], ", "))
	}
	for i, k := range ddNode.Kids {
		if k.Name != ddOrder[i] {
			return nil, malformed("DD child %d is <%s>, expected <%s>", i+1, k.QName, ddOrder[i])
		}
		if k.Name != "CAF" && len(k.Kids) > 0 {
			return nil, malformed("DD/%s must hold text, not elements", k.Name)
		}
	}
	kid := func(i int) string { return ddNode.Kids[i].Text }
	dd := DD{RE: kid(0), FE: kid(3), RR: kid(4), RSR: kid(5), MNT: kid(6), IT1: kid(7)}
	td, err := strconv.Atoi(strings.TrimSpace(kid(1)))
	if err != nil || td <= 0 {
		return nil, malformed("DD/TD %q is not a document type", kid(1))
	}
	dd.TD = td
	if dd.F, err = strconv.ParseInt(strings.TrimSpace(kid(2)), 10, 64); err != nil || dd.F <= 0 {
		return nil, malformed("DD/F %q is not a folio", kid(2))
	}
	// The CAF is handed over as written (minus whitespace between tags) so
	// that caf can also try that form if the SII signed it that way.
	if dd.CAF, err = caf.Parse([]byte(ddNode.Kids[8].Raw)); err != nil {
		return nil, fmt.Errorf("%w: DD/CAF: %w", ErrMalformed, err)
	}
	if dd.TSTED, err = time.ParseInLocation(tstedLayout, strings.TrimSpace(kid(9)), chile.Location()); err != nil {
		return nil, malformed("DD/TSTED %q is not a time like 2006-01-02T15:04:05", kid(9))
	}
	t.DD = dd
	if t.SignedDD, err = xmlflat.ToLatin1(ddNode.Flat()); err != nil {
		return nil, fmt.Errorf("%w: DD: %v", ErrNotLatin1, err)
	}
	t.XML = assemble(t.SignedDD, t.FRMT)
	if raw, err := xmlflat.ToLatin1(ddNode.Raw); err == nil && string(raw) != string(t.SignedDD) {
		t.rawDD = raw
	}
	return t, nil
}

// findAll collects the elements named name in document order, not looking
// inside a match.
func findAll(n *xmlflat.Node, name string, out *[]*xmlflat.Node) {
	if n.Name == name {
		*out = append(*out, n)
		return
	}
	for _, k := range n.Kids {
		findAll(k, name, out)
	}
}

// Verify parses a TED (see Parse) and checks it: the CAF's FRMA with the
// trusted keys (caf.ErrSignature, caf.ErrUntrustedIDK), FRMT over the
// flattened DD with the CAF's RSAPK (ErrSignature), DD/RE and DD/TD against
// the CAF (ErrMismatch) and the folio against its range
// (caf.ErrFolioOutOfRange). The caller compares MNT with the document's
// MntTotal and the rest of DD with the document.
func Verify(tedXML []byte, keys caf.TrustedKeys) (*TED, error) {
	t, err := Parse(tedXML)
	if err != nil {
		return nil, err
	}
	c := t.DD.CAF
	if err := c.Verify(keys); err != nil {
		return nil, fmt.Errorf("ted: CAF inside the TED: %w", err)
	}
	if err := smallrsa.VerifySHA1(c.PublicKey, t.SignedDD, t.FRMT); err != nil {
		// A DD whose signer escaped text differently (for example &apos;)
		// is tried as written, minus whitespace between tags.
		if t.rawDD == nil || smallrsa.VerifySHA1(c.PublicKey, t.rawDD, t.FRMT) != nil {
			return nil, fmt.Errorf("%w: tipo %d folio %d with the key of %s: %v", ErrSignature, t.DD.TD, t.DD.F, c, err)
		}
		t.SignedDD = t.rawDD
		t.XML = assemble(t.SignedDD, t.FRMT)
	}
	re, err := chile.CheckRUT(strings.TrimSpace(t.DD.RE))
	if err != nil || re != c.RutEmisor {
		return nil, fmt.Errorf("%w: DD/RE %q, CAF RE %s", ErrMismatch, t.DD.RE, c.RutEmisor)
	}
	if t.DD.TD != c.Tipo {
		return nil, fmt.Errorf("%w: DD/TD %d, CAF TD %d", ErrMismatch, t.DD.TD, c.Tipo)
	}
	if err := c.CheckFolio(t.DD.F); err != nil {
		return nil, fmt.Errorf("ted: DD/F: %w", err)
	}
	return t, nil
}

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

// decodeBase64 decodes FRMT's text (see xmlflat.DecodeBase64), which must
// not be empty.
func decodeBase64(s string) ([]byte, error) {
	b, err := xmlflat.DecodeBase64(s)
	if err != nil {
		return nil, err
	}
	if len(b) == 0 {
		return nil, errors.New("empty")
	}
	return b, nil
}
