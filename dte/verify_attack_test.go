package dte_test

import (
	"bytes"
	"crypto"
	"crypto/rsa"
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/signer"
	"github.com/dtekit/dtekit/signer/signertest"
	"github.com/dtekit/dtekit/ted"
)

// The tests of this file each build one attack of issue 9 on a genuine
// document and check that Verify refuses it.

// genuine33 returns a freshly emitted, signed factura.
func genuine33(t *testing.T) []byte {
	t.Helper()
	docs, _ := emitAll(t)
	return docs[dte.FacturaElectronica].XML
}

// unsign removes a DTE's Signature (the last one in the file).
func unsign(t *testing.T, doc []byte) []byte {
	t.Helper()
	i := bytes.LastIndex(doc, []byte("<Signature "))
	j := bytes.LastIndex(doc, []byte("</Signature>"))
	if i < 0 || j < i {
		t.Fatal("no Signature to remove")
	}
	return append(append([]byte{}, doc[:i]...), doc[j+len("</Signature>"):]...)
}

// resign edits an unsigned copy of doc and signs its Documento with cert.
func resign(t *testing.T, doc []byte, cert *signer.Certificate, edit func([]byte) []byte) []byte {
	t.Helper()
	out, err := cert.SignEnveloped(edit(unsign(t, doc)), "T33F"+folioOf(t, doc))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func folioOf(t *testing.T, doc []byte) string {
	t.Helper()
	d, err := dte.ParseDTE(doc)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(d.Folio)
}

// mustFail checks that Verify refuses doc, with an error or a failed
// report, and that the reason mentions want.
func mustFail(t *testing.T, doc []byte, want string) *dte.VerifyReport {
	t.Helper()
	rep, err := dte.Verify(doc, creds(t).Keys)
	if err == nil && rep.OK() {
		t.Fatalf("Verify accepted the document:\n%s", doc)
	}
	if err == nil {
		t.Fatalf("Verify returned a failed report without an error")
	}
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("Verify error %q, want it to mention %q", err, want)
	}
	return rep
}

func body(doc []byte) []byte { return doc[bytes.Index(doc, []byte("<DTE ")):] }

func TestAttackNestedDTE(t *testing.T) {
	g := genuine33(t)
	// An edited Documento with the genuine DTE, signature and all, hidden
	// inside it: the genuine signature is valid, the outer content is not
	// the signed one.
	edited := bytes.Replace(unsign(t, g), []byte("<MntTotal>"), []byte("<MntTotal>9"), 1)
	edited = bytes.Replace(edited, []byte(`ID="T33F`), []byte(`ID="X33F`), 1)
	i := bytes.Index(edited, []byte("</Documento>"))
	nested := append(append(append([]byte{}, edited[:i]...), body(g)...), edited[i:]...)
	mustFail(t, nested, "inside <Documento>")
	// The genuine DTE as the Signature-less outer DTE's second child.
	j := bytes.LastIndex(edited, []byte("</DTE>"))
	beside := append(append(append([]byte{}, edited[:j]...), body(g)...), edited[j:]...)
	mustFail(t, beside, "only its Signature may follow")
}

func TestAttackWrappedSetDTE(t *testing.T) {
	c := creds(t)
	g := genuine33(t)
	env, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: c.Emisor}, c.Cert, g)
	if err != nil {
		t.Fatal(err)
	}
	s := string(env)
	i, j := strings.Index(s, "<SetDTE"), strings.Index(s, "</SetDTE>")+len("</SetDTE>")
	real := s[i:j]
	fake := strings.Replace(strings.Replace(real, `ID="SetDoc"`, `ID="Fake"`, 1), "<MntTotal>", "<MntTotal>9", 1)
	// A fake SetDTE first, the real one wrapped in an unknown element.
	wrapped := s[:i] + fake + "<Wrapper>" + real + "</Wrapper>" + s[j:]
	mustFail(t, []byte(wrapped), "only its Signature may follow")
	// The real one wrapped inside the fake one.
	inner := s[:i] + strings.Replace(fake, "</SetDTE>", "<Extra>"+real+"</Extra></SetDTE>", 1) + s[j:]
	mustFail(t, []byte(inner), "after Caratula only DTE elements may follow")
	// Genuine envelope: still verifies.
	if rep, err := dte.Verify(env, c.Keys); err != nil || !rep.OK() {
		t.Fatalf("genuine envelope: %v", err)
	}
}

func TestAttackDuplicateID(t *testing.T) {
	g := genuine33(t)
	id := `ID="T33F` + folioOf(t, g) + `"`
	// A second element with the signed ID, where a reader looking the ID
	// up again could find it first.
	dup := bytes.Replace(g, []byte("<TmstFirma>"), []byte("<Extra "+id+"></Extra><TmstFirma>"), 1)
	mustFail(t, dup, "more than one element")
}

func TestAttackSeedSignatureOverDocumento(t *testing.T) {
	// Sign the whole document with Reference URI="" and the
	// enveloped-signature transform, as getToken's seed is signed. The
	// signature is cryptographically valid; it must still not validate
	// the Documento.
	seed := signRoot(t, unsign(t, genuine33(t)), "")
	res, err := signer.Verify(seed)
	if err != nil || len(res) != 1 || res[0].URI != "" {
		t.Fatalf("the crafted seed-profile signature does not verify on its own: %v", err)
	}
	mustFail(t, seed, `URI "" covers the whole document`)
}

// A signature over the root DTE (given an ID) covers the Documento too,
// but it is not the Documento's signature: refused like any reference to
// another element.
func TestAttackSignatureOverRoot(t *testing.T) {
	un := bytes.Replace(unsign(t, genuine33(t)), []byte("<DTE "), []byte(`<DTE ID="R" `), 1)
	signed := signRoot(t, un, "#R")
	res, err := signer.Verify(signed)
	if err != nil || len(res) != 1 || res[0].URI != "#R" {
		t.Fatalf("the crafted signature over the root does not verify on its own: %v", err)
	}
	mustFail(t, signed, `references "#R", not the Documento`)
}

// signRoot signs un, an unsigned DTE, with a Signature appended to its
// root that references uri ("" or the root's "#ID") with the
// enveloped-signature transform, built here by hand.
func signRoot(t *testing.T, un []byte, uri string) []byte {
	t.Helper()
	c := creds(t)
	canon, err := signer.Canonicalize(un, strings.TrimPrefix(uri, "#"))
	if err != nil {
		t.Fatal(err)
	}
	digest := sha1.Sum(canon)
	si := `<SignedInfo><CanonicalizationMethod Algorithm="http://www.w3.org/TR/2001/REC-xml-c14n-20010315"></CanonicalizationMethod>` +
		`<SignatureMethod Algorithm="http://www.w3.org/2000/09/xmldsig#rsa-sha1"></SignatureMethod><Reference URI="` + uri + `">` +
		`<Transforms><Transform Algorithm="http://www.w3.org/2000/09/xmldsig#enveloped-signature"></Transform></Transforms>` +
		`<DigestMethod Algorithm="http://www.w3.org/2000/09/xmldsig#sha1"></DigestMethod><DigestValue>` +
		base64.StdEncoding.EncodeToString(digest[:]) + `</DigestValue></Reference></SignedInfo>`
	// SignedInfo's canonical form in its context: the xmldsig default
	// namespace of Signature and the xsi namespace declared on DTE.
	canonSI := `<SignedInfo xmlns="http://www.w3.org/2000/09/xmldsig#" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">` + si[len("<SignedInfo>"):]
	h := sha1.Sum([]byte(canonSI))
	value, err := rsa.SignPKCS1v15(nil, c.Cert.Key.(*rsa.PrivateKey), crypto.SHA1, h[:])
	if err != nil {
		t.Fatal(err)
	}
	g := genuine33(t)
	ki := g[bytes.Index(g, []byte("<KeyInfo>")) : bytes.Index(g, []byte("</KeyInfo>"))+len("</KeyInfo>")]
	sig := `<Signature xmlns="http://www.w3.org/2000/09/xmldsig#">` + si + `<SignatureValue>` +
		base64.StdEncoding.EncodeToString(value) + `</SignatureValue>` + string(ki) + `</Signature>`
	k := bytes.LastIndex(un, []byte("</DTE>"))
	return append(append(append([]byte{}, un[:k]...), sig...), un[k:]...)
}

func TestAttackResignedWithAnotherCertificate(t *testing.T) {
	c := creds(t)
	g := genuine33(t)
	other, err := signertest.NewCertificate(nil, signertest.CertOptions{CommonName: "Someone Else", RUT: "11111111-1"})
	if err != nil {
		t.Fatal(err)
	}
	// The receptor's address changed (the stamp does not cover it) and
	// the document signed again by someone else.
	forged := resign(t, g, other, func(b []byte) []byte {
		return bytes.Replace(b, []byte("<DirRecep>"), []byte("<DirRecep>Otra calle 1, "), 1)
	})
	// Without a policy the document verifies, and the report shows who
	// signed it.
	rep, err := dte.Verify(forged, c.Keys)
	if err != nil {
		t.Fatalf("without a policy: %v", err)
	}
	genuine, err := dte.Verify(g, c.Keys)
	if err != nil {
		t.Fatal(err)
	}
	fs, gs := rep.Documents[0].Signer, genuine.Documents[0].Signer
	if fs == nil || gs == nil || fs.RUT != "11111111-1" || gs.RUT != dtetest.SignerRUT || fs.Serial == gs.Serial {
		t.Fatalf("signers not visible: forged %v, genuine %v", fs, gs)
	}
	policy := dte.VerifyOptions{Keys: c.Keys, AuthorizedSigners: map[string][]string{dtetest.EmisorRUT: {dtetest.SignerRUT}}}
	if rep, err := dte.VerifyWith(forged, policy); err == nil || rep.Documents[0].Policy.OK {
		t.Fatalf("authorized-signer policy accepted the forged document: %v", err)
	}
	if _, err := dte.VerifyWith(g, policy); err != nil {
		t.Fatalf("authorized-signer policy refused the genuine document: %v", err)
	}
	// In an envelope, with the policy that every signer is RutEnvia.
	envOpts := dte.EnvioOptions{Emisor: c.Emisor, RutEnvia: dtetest.SignerRUT}
	env, err := dte.BuildEnvio(envOpts, c.Cert, forged)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dte.VerifyWith(env, dte.VerifyOptions{Keys: c.Keys, SignerIsRutEnvia: true}); err == nil || !strings.Contains(err.Error(), "RutEnvia") {
		t.Fatalf("RutEnvia policy: %v", err)
	}
	// A certificate that was not valid when the document says it was
	// signed.
	expired, err := signertest.NewCertificate(nil, signertest.CertOptions{RUT: dtetest.SignerRUT,
		NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	late := resign(t, g, expired, func(b []byte) []byte { return b })
	if _, err := dte.VerifyWith(late, dte.VerifyOptions{Keys: c.Keys, ValidAtSigning: true}); err == nil || !strings.Contains(err.Error(), "not valid at the signing time") {
		t.Fatalf("validity policy: %v", err)
	}
}

func TestAttackStampTexts(t *testing.T) {
	c := creds(t)
	g := genuine33(t)
	for name, edit := range map[string]func([]byte) []byte{
		"IT1": func(b []byte) []byte { return bytes.Replace(b, []byte("<NmbItem>"), []byte("<NmbItem>Otro "), 1) },
		"RSR": func(b []byte) []byte {
			return bytes.Replace(b, []byte("<RznSocRecep>"), []byte("<RznSocRecep>Otro "), 1)
		},
	} {
		t.Run(name, func(t *testing.T) {
			// Signed again with the genuine certificate: only the stamp
			// can tell.
			rep := mustFail(t, resign(t, g, c.Cert, edit), name+" ")
			if d := rep.Documents[0]; !d.Signature.OK || d.TED.OK {
				t.Fatalf("report %+v", d)
			}
		})
	}
	rep, _ := dte.Verify(g, c.Keys)
	if d := rep.Documents[0]; d.CAFAmbiente != "certificacion" || d.CAFFecha == "" {
		t.Fatalf("CAF environment and date not reported: %+v", d)
	}
}

func TestAttackEnvelopeSignature(t *testing.T) {
	c := creds(t)
	env, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: c.Emisor}, c.Cert, genuine33(t))
	if err != nil {
		t.Fatal(err)
	}
	noID := bytes.Replace(env, []byte(`<SetDTE ID="SetDoc">`), []byte(`<SetDTE>`), 1)
	mustFail(t, noID, "envelope signature")
	i := bytes.LastIndex(env, []byte("<Signature "))
	j := bytes.LastIndex(env, []byte("</Signature>")) + len("</Signature>")
	unsigned := append(append([]byte{}, env[:i]...), env[j:]...)
	mustFail(t, unsigned, "SetDTE is not signed")
	broken := bytes.Replace(env, []byte("<TmstFirmaEnv>2"), []byte("<TmstFirmaEnv>1"), 1)
	mustFail(t, broken, "envelope signature")
}

func TestAttackJunkSignatures(t *testing.T) {
	g := genuine33(t)
	sig := g[bytes.LastIndex(g, []byte("<Signature ")):]
	sig = sig[:bytes.Index(sig, []byte("</Signature>"))+len("</Signature>")]
	k := bytes.LastIndex(g, []byte("</Documento>"))
	junk := append([]byte{}, g[:k]...)
	for range 1500 {
		junk = append(junk, sig...)
	}
	junk = append(junk, g[k:]...)
	r := costRatio(t, g, func() { mustFail(t, junk, "Signature") })
	if r > maxAttackCost {
		t.Fatalf("refusing 1,500 junk signatures cost %.0f genuine verifications (bound %d)", r, maxAttackCost)
	}
}

func TestAttackEmptyElements(t *testing.T) {
	g := genuine33(t)
	k := bytes.Index(g, []byte("<TmstFirma>"))
	flood := append(append(append([]byte{}, g[:k]...), bytes.Repeat([]byte("<a/>"), 1<<20)...), g[k:]...)
	for name, f := range map[string]func([]byte) error{
		"ParseDTE": func(b []byte) error { _, err := dte.ParseDTE(b); return err },
		"Verify":   func(b []byte) error { _, err := dte.Verify(b, creds(t).Keys); return err },
	} {
		if err := f(flood); err == nil || !strings.Contains(err.Error(), "limit") {
			t.Errorf("%s of 4 MB of empty elements: %v", name, err)
		}
	}
}

func TestAttackHugeAmount(t *testing.T) {
	g := genuine33(t)
	huge := bytes.Replace(g, []byte("<MntTotal>"), []byte("<MntTotal>"+strings.Repeat("9", 1_000_000)), 1)
	r := costRatio(t, g, func() {
		if _, err := dte.ParseDTE(huge); err == nil || !strings.Contains(err.Error(), "integer digits") {
			t.Fatalf("ParseDTE of a 1-million-digit amount: %v", err)
		}
		mustFail(t, huge, "integer digits")
	})
	if r > maxAttackCost {
		t.Fatalf("refusing a 1-million-digit amount cost %.0f genuine verifications (bound %d)", r, maxAttackCost)
	}
}

// maxAttackCost bounds what refusing a crafted input may cost, counted in
// verifications of the genuine document it was made from, timed in the same
// run (so a loaded machine or the race detector slows both alike). The
// inputs here are about 1 MB against a 10 KB genuine document, so linear
// work stays within a few hundred (about 30 plain, 200 under -race); the quadratic behaviour these tests guard
// against cost minutes, tens of thousands of verifications.
const maxAttackCost = 2000

// costRatio times f once against the median of three verifications of
// genuine, and reports the ratio.
func costRatio(t *testing.T, genuine []byte, f func()) float64 {
	t.Helper()
	keys := creds(t).Keys
	var base []time.Duration
	for range 3 {
		start := time.Now()
		if _, err := dte.Verify(genuine, keys); err != nil {
			t.Fatal(err)
		}
		base = append(base, time.Since(start))
	}
	slices.Sort(base)
	start := time.Now()
	f()
	r := float64(time.Since(start)) / float64(base[1])
	t.Logf("cost: %.1f genuine verifications", r)
	return r
}

// Unknown elements are read, checked and counted but not kept: a genuine
// envelope padded with 100,000 of them (1.8 MB, under the element limit)
// costs ParseEnvio and Verify a bounded amount of live memory, not a tree
// node per element (about 250 bytes each, 14 times the padding, before).
func TestAttackUnknownElementsNotKept(t *testing.T) {
	c := creds(t)
	env, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: c.Emisor}, c.Cert, genuine33(t))
	if err != nil {
		t.Fatal(err)
	}
	pad := bytes.Repeat([]byte("<UnknownElement1/>"), 100_000)
	k := bytes.Index(env, []byte("<TmstFirma>"))
	padded := append(append(append([]byte{}, env[:k]...), pad...), env[k:]...)
	for name, tc := range map[string]struct {
		f    func() error
		want string // in the error; "" for none
	}{
		"ParseEnvio": {func() error { _, err := dte.ParseEnvio(padded); return err }, ""},
		// The padding is inside the signed Documento: the signature fails,
		// after the whole input has been read.
		"Verify": {func() error { _, err := dte.Verify(padded, c.Keys); return err }, "digest"},
	} {
		peak, err := peakHeap(t, tc.f)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Fatalf("%s of the padded envelope: %v, want an error mentioning %q", name, err, tc.want)
		}
		t.Logf("%s: peak heap %d bytes for %d bytes of padding", name, peak, len(pad))
		if peak > uint64(len(pad)) {
			t.Errorf("%s of a genuine envelope with %d bytes of unknown elements: the heap grew by %d bytes", name, len(pad), peak)
		}
	}
}

// TestAttackCAFDates: a document whose stamp and body agree on a date the
// CAF does not cover (before its authorization, or after the six months
// a factura's CAF lasts) is refused, although both the stamp (made with
// the CAF's own key) and the document signature are genuine.
func TestAttackCAFDates(t *testing.T) {
	c := creds(t)
	g := genuine33(t)
	doc, err := dte.ParseDTE(g)
	if err != nil {
		t.Fatal(err)
	}
	orig, err := ted.Parse(doc.TED)
	if err != nil {
		t.Fatal(err)
	}
	cf := c.CAFs[dte.FacturaElectronica]
	fa, err := time.Parse(time.DateOnly, cf.FA)
	if err != nil {
		t.Fatal(err)
	}
	// redate stamps the DD again with the CAF's key for date fe and puts
	// the same date in the body, then signs the document again.
	redate := func(fe time.Time) []byte {
		dd := orig.DD
		dd.FE = fe.Format(time.DateOnly)
		stamp, err := ted.Build(dd, cf.PrivateKey)
		if err != nil {
			t.Fatal(err)
		}
		return resign(t, g, c.Cert, func(b []byte) []byte {
			b = bytes.Replace(b, doc.TED, stamp, 1)
			return bytes.Replace(b, []byte("<FchEmis>"+doc.FechaEmision+"</FchEmis>"), []byte("<FchEmis>"+dd.FE+"</FchEmis>"), 1)
		})
	}
	// The machinery itself keeps a document genuine: the CAF's own date.
	if rep, err := dte.Verify(redate(fa), c.Keys); err != nil || !rep.OK() {
		t.Fatalf("redated on FA %s: %v", cf.FA, err)
	}
	for _, tc := range []struct {
		name string
		fe   time.Time
		want string
	}{
		{"before FA", fa.AddDate(0, 0, -1), "before the CAF's authorization"},
		// FA + 6 months is the first day the CAF no longer covers.
		{"six months after FA", fa.AddDate(0, 6, 0), "CAF expired"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := mustFail(t, redate(tc.fe), tc.want)
			if d := rep.Documents[0]; !d.Signature.OK || d.TED.OK {
				t.Fatalf("report %+v", d)
			}
		})
	}
	// The last day of the six months is still covered (by hand: the day
	// before the same day six months later, when that day exists).
	if fa.Day() > 28 {
		return
	}
	if _, err := dte.Verify(redate(fa.AddDate(0, 6, -1)), c.Keys); err != nil {
		t.Fatalf("the last covered day: %v", err)
	}
}

func TestAttackSignedElementInsideSignature(t *testing.T) {
	g := genuine33(t)
	sig := g[bytes.LastIndex(g, []byte("<Signature ")):]
	sig = sig[:bytes.Index(sig, []byte("</Signature>"))+len("</Signature>")]
	// A copy of the signature, and the document itself, inside the
	// signature's KeyInfo (which no digest covers): the SII's schema has
	// neither there, and Verify refuses them as it does anywhere else.
	for name, extra := range map[string][]byte{"Signature": sig, "DTE": body(g)} {
		k := bytes.LastIndex(g, []byte("</KeyInfo>"))
		doc := append(append(append([]byte{}, g[:k]...), extra...), g[k:]...)
		if _, err := dte.Verify(doc, creds(t).Keys); err == nil {
			t.Errorf("a <%s> inside KeyInfo: Verify accepted the document", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
		if _, err := dte.ParseDTE(doc); err == nil {
			t.Errorf("a <%s> inside KeyInfo: ParseDTE accepted the document", name)
		}
	}
}
