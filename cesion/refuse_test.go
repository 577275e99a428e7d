package cesion_test

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/dtekit/dtekit/cesion"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/signer"
)

var (
	baseOnce       sync.Once
	baseAEC, reAEC []byte
)

// base returns A's first cesión of its factura to F and F's re-cession
// to G, built once.
func base(t testing.TB) (first, second []byte) {
	f := fix(t)
	baseOnce.Do(func() {
		baseAEC = f.ceder(t, 33, cesion.Cesion{})
		reAEC = f.receder(t, baseAEC)
	})
	if baseAEC == nil || reAEC == nil {
		t.Fatal("the base AECs were not built")
	}
	return baseAEC, reAEC
}

var reSig = regexp.MustCompile(`(?s)^\s*<Signature xmlns="http://www.w3.org/2000/09/xmldsig#">.*?</Signature>`)

// forge edits an AEC and signs again what the edit broke, as someone
// holding the keys would: the DocumentoCesion of cesión seq (0 for none)
// with cert, and the file with sender. Every signature of the result is
// valid, so only the content rules can refuse it.
func forge(t testing.TB, aec []byte, seq int, cert, sender *signer.Certificate, edit func([]byte) []byte) []byte {
	t.Helper()
	doc := edit(bytes.Clone(aec))
	if seq > 0 {
		id := fmt.Sprintf("Cesion_T33F%s_S%d", folio(t, doc), seq)
		doc = stripAfter(t, doc, `ID="`+id+`"`, "</DocumentoCesion>")
		var err error
		if doc, err = cert.SignEnveloped(doc, id); err != nil {
			t.Fatal(err)
		}
	}
	id := regexp.MustCompile(`<DocumentoAEC ID="([^"]+)"`).FindSubmatch(doc)
	doc = stripAfter(t, doc, `<DocumentoAEC ID=`, "</DocumentoAEC>")
	out, err := sender.SignEnveloped(doc, string(id[1]))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// stripAfter removes the signatures that follow the first end tag after
// marker.
func stripAfter(t testing.TB, doc []byte, marker, end string) []byte {
	t.Helper()
	i := bytes.Index(doc, []byte(marker))
	if i < 0 {
		t.Fatalf("%s not found", marker)
	}
	j := i + bytes.Index(doc[i:], []byte(end)) + len(end)
	rest := doc[j:]
	for {
		m := reSig.FindIndex(rest)
		if m == nil {
			break
		}
		rest = rest[m[1]:]
	}
	return append(doc[:j:j], rest...)
}

func folio(t testing.TB, doc []byte) string {
	m := regexp.MustCompile(`<DocumentoDTECedido ID="DTECedido_T33F(\d+)"`).FindSubmatch(doc)
	if m == nil {
		t.Fatal("no DocumentoDTECedido")
	}
	return string(m[1])
}

// replaceIn replaces the first old after marker.
func replaceIn(t testing.TB, doc []byte, marker, old, new string) []byte {
	t.Helper()
	i := bytes.Index(doc, []byte(marker))
	j := bytes.Index(doc[max(i, 0):], []byte(old))
	if i < 0 || j < 0 {
		t.Fatalf("%q after %q not found", old, marker)
	}
	j += i
	return append(append(doc[:j:j], new...), doc[j+len(old):]...)
}

// refusedOn checks that Verify refuses data naming field.
func refusedOn(t *testing.T, data []byte, p cesion.Policy, field string) {
	t.Helper()
	rep, err := cesion.Verify(data, fix(t).opts(p))
	if err == nil {
		t.Fatalf("accepted; want a refusal on %s", field)
	}
	var probs []dte.FieldError
	var re *cesion.RefusedError
	var ve *dte.ValidationError
	switch {
	case errors.As(err, &re):
		probs = re.Problems
		if rep == nil || rep.OK() {
			t.Errorf("refused without a report of it")
		}
	case errors.As(err, &ve):
		probs = ve.Details
	default:
		t.Fatalf("error %v is neither a refusal nor a validation error", err)
	}
	for _, p := range probs {
		if (p.Field == field || strings.HasSuffix(field, "@") && strings.HasPrefix(p.Field, field)) && p.Message != "" && p.Code != "" {
			return
		}
	}
	t.Errorf("refused, but not on %s: %v", field, err)
}

// TestVerifyRefusesHostileFiles: files whose signatures all verify (signed
// again by a holder of the keys after an edit) are still refused for what
// they say, each naming the field at fault; and edits that break a
// signature are refused under both policies.
func TestVerifyRefusesHostileFiles(t *testing.T) {
	t.Parallel()
	f := fix(t)
	first, second := base(t)
	mnt := regexp.MustCompile(`<MntTotal>(\d+)</MntTotal>`).FindSubmatch(first)[1]
	var over int64
	fmt.Sscan(string(mnt), &over)
	over++
	ces2 := "<SeqCesion>2</SeqCesion>"
	cases := []struct {
		name, field string
		data        []byte
	}{
		{"wrong chain", "Cesion[2].Cedente.RUT", forge(t, second, 2, f.f1, f.f1, func(d []byte) []byte {
			return replaceIn(t, d, ces2, "<RUT>"+rutF+"</RUT>", "<RUT>"+rutB+"</RUT>")
		})},
		{"wrong sequence", "Cesion[2].SeqCesion", forge(t, second, 2, f.f1, f.f1, func(d []byte) []byte {
			return replaceIn(t, d, "", ces2, "<SeqCesion>3</SeqCesion>")
		})},
		{"amount over the total", "Cesion[1].MontoCesion", forge(t, first, 1, f.a.Cert, f.a.Cert, func(d []byte) []byte {
			return regexp.MustCompile(`<MontoCesion>\d+</MontoCesion>`).ReplaceAll(d, fmt.Appendf(nil, "<MontoCesion>%d</MontoCesion>", over))
		})},
		{"due before issue", "Cesion[1].UltimoVencimiento", forge(t, first, 1, f.a.Cert, f.a.Cert, func(d []byte) []byte {
			return regexp.MustCompile(`<UltimoVencimiento>[^<]+</UltimoVencimiento>`).ReplaceAll(d, []byte("<UltimoVencimiento>2003-04-01</UltimoVencimiento>"))
		})},
		{"first cedente not the emisor", "Cesion[1].Cedente.RUT", forge(t, first, 1, f.a.Cert, f.a.Cert, func(d []byte) []byte {
			return replaceIn(t, d, "<Cedente>", "<RUT>"+dtetestEmisor+"</RUT>", "<RUT>"+rutB+"</RUT>")
		})},
		{"IdDTE of another document", "Cesion[1].IdDTE", forge(t, first, 1, f.a.Cert, f.a.Cert, func(d []byte) []byte {
			return replaceIn(t, d, "<IdDTE>", "<Folio>", "<Folio>9")
		})},
		{"no sworn declaration", "Cesion[1].Cedente.DeclaracionJurada", forge(t, first, 1, f.a.Cert, f.a.Cert, func(d []byte) []byte {
			return regexp.MustCompile(`<DeclaracionJurada>[^<]+</DeclaracionJurada>`).ReplaceAll(d, nil)
		})},
		{"caratula names another cesionario", "Caratula.RutCesionario", forge(t, first, 0, nil, f.a.Cert, func(d []byte) []byte {
			return replaceIn(t, d, "<RutCesionario>", rutF, rutG)
		})},
		{"tampered cesion", "AEC.Signature", replaceIn(t, bytes.Clone(first), "<Cesionario>", "Factoring", "Fuctoring")},
		{"tampered AEC signature", "AEC.Signature", replaceIn(t, bytes.Clone(first), "</DocumentoAEC>", "<SignatureValue>", "<SignatureValue>AAAA")},
		{"cesion signature swapped for another key", "Cesion[2].Signature[2]", forge(t, second, 0, nil, f.f1, func(d []byte) []byte {
			s := regexp.MustCompile(`(?s)<Signature xmlns="http://www.w3.org/2000/09/xmldsig#">.*?</Signature>`).FindAll(d, -1)
			// the second signature of cesión 2 is the fifth of the file
			return bytes.Replace(d, s[4], s[0], 1)
		})},
		{"41 cesiones", "Cesiones.Cesion", func() []byte {
			i := bytes.Index(first, []byte("<Cesion "))
			j := bytes.LastIndex(first, []byte("</Cesion>")) + len("</Cesion>")
			return append(append(bytes.Clone(first[:i]), bytes.Repeat(append(bytes.Clone(first[i:j]), '\n'), 41)...), first[j:]...)
		}()},
		{"boleta", "DocumentoDTECedido.DTE.TipoDTE", pasteDTE(t, first, f.docs[39])},
		{"nota de crédito", "DocumentoDTECedido.DTE.TipoDTE", pasteDTE(t, first, f.docs[61])},
		{"not an AEC", "AEC", []byte(`<EnvioDTE xmlns="http://www.sii.cl/SiiDte"/>`)},
		{"duplicate ID", "aec", bytes.Replace(second, []byte(`ID="Cesion_T33F`+folio(t, second)+`_S2"`), []byte(`ID="Cesion_T33F`+folio(t, second)+`_S1"`), 1)},
		{"oversized", "aec", make([]byte, cesion.MaxBytes+1)},
		{"a part of the file's signature duplicated", "Signature@", func() []byte {
			i := bytes.LastIndex(first, []byte("<X509Data>"))
			j := bytes.LastIndex(first, []byte("</X509Data>")) + len("</X509Data>")
			return append(append(bytes.Clone(first[:j]), first[i:j]...), first[j:]...)
		}()},
		{"cesion in the future", "Cesion[1].TmstCesion", forge(t, first, 1, f.a.Cert, f.a.Cert, func(d []byte) []byte {
			return regexp.MustCompile(`<TmstCesion>[^<]+</TmstCesion>`).ReplaceAll(d, []byte("<TmstCesion>2049-01-01T00:00:00</TmstCesion>"))
		})},
		{"deep nesting", "aec", []byte(`<AEC xmlns="http://www.sii.cl/SiiDte" version="1.0">` + strings.Repeat("<a>", 100) + strings.Repeat("</a>", 100) + `</AEC>`)},
		{"extra root attribute", "AEC.id", bytes.Replace(first, []byte(` version="1.0">`), []byte(` version="1.0" id="x">`), 1)},
		// Text where no signature reaches: the schema allows none.
		{"text in the root", "AEC", bytes.Replace(first, []byte("</DocumentoAEC>"), []byte("</DocumentoAEC>!"), 1)},
		{"text in DTECedido", "DTECedido", bytes.Replace(first, []byte("</DocumentoDTECedido>"), []byte("</DocumentoDTECedido>!"), 1)},
		{"text in a Cesion", "Cesion[1]", bytes.Replace(first, []byte("</DocumentoCesion>"), []byte("</DocumentoCesion>!"), 1)},
		{"base64 with unused bits set", "Signature@", func() []byte {
			// The file's SignatureValue (256 bytes) ends in "==": the
			// character before it carries four bits no byte uses.
			i := bytes.LastIndex(first, []byte("==</SignatureValue>")) - 1
			if i < 0 {
				t.Fatal("no SignatureValue ending in ==")
			}
			d := bytes.Clone(first)
			const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
			d[i] = alphabet[strings.IndexByte(alphabet, d[i])^1]
			return d
		}()},
		{"text in the file's KeyInfo", "Signature@", func() []byte {
			i := bytes.LastIndex(first, []byte("<X509Data>"))
			return append(append(bytes.Clone(first[:i]), '!'), first[i:]...)
		}()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			refusedOn(t, c.data, cesion.PolicyRegistry, c.field)
			refusedOn(t, c.data, cesion.PolicyStrict, c.field)
		})
	}
}

const dtetestEmisor = "76192083-9"

// pasteDTE replaces the ceded DTE of aec with doc's <DTE> element.
func pasteDTE(t testing.TB, aec, doc []byte) []byte {
	t.Helper()
	i, j := bytes.Index(aec, []byte("<DTE ")), bytes.Index(aec, []byte("</DTE>"))+len("</DTE>")
	k := bytes.Index(doc, []byte("<DTE "))
	if i < 0 || j < i || k < 0 {
		t.Fatal("no DTE")
	}
	return append(append(bytes.Clone(aec[:i]), bytes.TrimSpace(doc[k:])...), aec[j:]...)
}

// TestPolicyOnInnerSignatures: an AEC whose DocumentoDTECedido was
// re-indented after signing (as the registry's real files are) and whose
// file signature was made afterwards passes PolicyRegistry with a warning
// naming the signature, and is refused by PolicyStrict.
func TestPolicyOnInnerSignatures(t *testing.T) {
	t.Parallel()
	f := fix(t)
	first, _ := base(t)
	reindented := forge(t, first, 0, nil, f.a.Cert, func(d []byte) []byte {
		return replaceIn(t, d, "<DocumentoDTECedido ", "><DTE ", ">\n    <DTE ")
	})
	rep, err := cesion.Verify(reindented, f.opts(cesion.PolicyRegistry))
	if err != nil {
		t.Fatalf("registry policy: %v", err)
	}
	if len(rep.Warnings) != 1 || !strings.HasPrefix(rep.Warnings[0], "DTECedido.Signature") {
		t.Errorf("warnings %q, want one on DTECedido.Signature", rep.Warnings)
	}
	for _, s := range rep.Firmas {
		if s.OK != (s.Nivel != "DTECedido") {
			t.Errorf("signature %s reported ok=%v (%s)", s.Nivel, s.OK, s.Error)
		}
	}
	refusedOn(t, reindented, cesion.PolicyStrict, "DTECedido.Signature")

	// The signer policy binds the file's signature to the last cedente.
	o := f.opts(cesion.PolicyRegistry)
	o.DTE.AuthorizedSigners = map[string][]string{dtetestEmisor: {"13567890-2"}}
	if _, err := cesion.Verify(first, o); err != nil {
		t.Errorf("authorized signer refused: %v", err)
	}
	o.DTE.AuthorizedSigners = map[string][]string{dtetestEmisor: {signerF1}}
	rep, err = cesion.Verify(first, o)
	if err == nil {
		t.Fatal("a file signed by someone not authorized for the cedente was accepted")
	}
	if !strings.Contains(err.Error(), "AEC.Signature") {
		t.Errorf("refusal does not name AEC.Signature: %v", err)
	}
	_ = rep
}

// TestEveryByteEdited: changing any one byte of the signed file (one in
// every 61, across the whole file) makes Verify refuse it.
func TestEveryByteEdited(t *testing.T) {
	t.Parallel()
	f := fix(t)
	_, second := base(t)
	decl := bytes.IndexByte(second, '\n') + 1
	end := bytes.LastIndex(second, []byte("</AEC>"))
	var accepted []int
	stride := 61
	if testing.Short() {
		stride = 241
	}
	for i := decl; i < end; i += stride {
		d := bytes.Clone(second)
		if d[i] == 'A' {
			d[i] = 'B'
		} else {
			d[i] = 'A'
		}
		if _, err := cesion.Verify(d, f.opts(cesion.PolicyRegistry)); err == nil {
			accepted = append(accepted, i)
		}
	}
	if len(accepted) > 0 {
		t.Errorf("%d edited files accepted, at offsets %v", len(accepted), accepted)
	}
}
