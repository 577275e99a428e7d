package intercambio_test

import (
	"bytes"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/intercambio"
)

// TestReceiveAcceptsAGoodEnvelope: an envelope from A to B with six
// answerable documents and a liquidación is received (0), each document
// too; the acuse's data come from the envelope as written.
func TestReceiveAcceptsAGoodEnvelope(t *testing.T) {
	f := fix(t)
	env := f.envio(t, rutB, f.all()...)
	r := f.receive(t, env)
	if r.Estado != intercambio.EnvioRecibidoConforme || r.Glosa != "Envio Recibido Conforme" || !r.Recibido() {
		t.Fatalf("envelope: %v %q", r.Estado, r.Glosa)
	}
	// The SetDTE's ID and the DigestValue of the envelope's signature, the
	// last Signature of the file, as written there.
	digests := regexp.MustCompile(`<DigestValue>([^<]+)</DigestValue>`).FindAllSubmatch(env, -1)
	if r.EnvioDTEID != "SetDoc" || r.Digest != string(digests[len(digests)-1][1]) || r.RutEmisor != rutA || r.Empresa != rutB {
		t.Errorf("EnvioDTEID %q, Digest %q (want %s), RutEmisor %q, Empresa %q", r.EnvioDTEID, r.Digest, digests[len(digests)-1][1], r.RutEmisor, r.Empresa)
	}
	if len(r.Documentos) != 7 {
		t.Fatalf("%d documents, want 7", len(r.Documentos))
	}
	for i, d := range r.Documentos {
		want := append(respondible, 43)[i]
		if d.Tipo != want || d.Estado != intercambio.DTERecibidoOK || d.Glosa != "DTE Recibido OK" || d.Respondible != (want != 43) {
			t.Errorf("document %d: tipo %d estado %v %q respondible %v", i+1, d.Tipo, d.Estado, d.Glosa, d.Respondible)
		}
		if d.RUTEmisor != rutA || d.RUTRecep != rutB || d.Documento == nil || d.FchEmis != field(t, d.Documento.Raw, "FchEmis") {
			t.Errorf("document %d: %+v", i+1, d.DocRef)
		}
		if got := strconv.FormatInt(d.MntTotal, 10); got != field(t, d.Documento.Raw, "MntTotal") {
			t.Errorf("document %d: MntTotal %s, the document says %s", i+1, got, field(t, d.Documento.Raw, "MntTotal"))
		}
	}
}

// TestReceiveCodes: each way an envelope goes wrong gets the codes
// sii-wave3-notes.md §1.4 gives it, for the envelope and for each document.
func TestReceiveCodes(t *testing.T) {
	f := fix(t)
	d33, d34 := f.docs[33], f.docs[34]
	good := f.envio(t, rutB, d33, d34)

	// The totals of the factura edited so that they no longer add up
	// while MntTotal (and so the stamp) stays: MntNeto one peso more, IVA
	// one peso less; then signed again, so only the totals are wrong.
	neto, _ := strconv.Atoi(field(t, d33, "MntNeto"))
	iva, _ := strconv.Atoi(field(t, d33, "IVA"))
	badTotals := replaceOnce(t, d33, "<MntNeto>"+strconv.Itoa(neto)+"</MntNeto>", "<MntNeto>"+strconv.Itoa(neto+1)+"</MntNeto>")
	badTotals = replaceOnce(t, badTotals, "<IVA>"+strconv.Itoa(iva)+"</IVA>", "<IVA>"+strconv.Itoa(iva-1)+"</IVA>")
	badTotals = f.resign(t, badTotals)

	// An item's name edited after the document was signed.
	name := field(t, d34, "NmbItem")
	tampered34 := replaceOnce(t, d34, "<NmbItem>"+name+"</NmbItem>", "<NmbItem>"+name+" X</NmbItem>")

	// The envelope's SignatureValue altered: its last base64 character
	// changed.
	sv := regexp.MustCompile(`<SignatureValue>([^<]+)</SignatureValue>`).FindAllSubmatchIndex(good, -1)
	last := sv[len(sv)-1]
	brokenSig := bytes.Clone(good)
	if brokenSig[last[3]-2] == 'A' {
		brokenSig[last[3]-2] = 'B'
	} else {
		brokenSig[last[3]-2] = 'A'
	}

	type want struct {
		env  intercambio.EstadoRecepEnv
		docs []intercambio.EstadoRecepDTE
		// in is a text the envelope's glosa (or the first refused
		// document's) must contain.
		in string
	}
	for _, tc := range []struct {
		name string
		data []byte
		opts func(*intercambio.Options)
		want want
	}{
		{"addressed to another company", f.envio(t, rutC, f.toC), nil,
			want{intercambio.EnvioRUTReceptorNoCorresponde, []intercambio.EstadoRecepDTE{3}, "addressed to " + rutC}},
		{"one document addressed to another company", f.envio(t, rutB, d33, f.toC), nil,
			want{intercambio.EnvioRecibidoConforme, []intercambio.EstadoRecepDTE{0, 3}, "RUTRecep " + rutC}},
		{"a document tampered after the envelope was signed", replaceOnce(t, good, "<NmbItem>"+name+"</NmbItem>", "<NmbItem>"+name+" X</NmbItem>"), nil,
			want{intercambio.EnvioErrorFirma, []intercambio.EstadoRecepDTE{99, 1}, "digest"}},
		{"a tampered document in an envelope signed over it", f.envio(t, rutB, d33, tampered34), nil,
			want{intercambio.EnvioRecibidoConforme, []intercambio.EstadoRecepDTE{0, 1}, "digest"}},
		{"a broken envelope signature", brokenSig, nil,
			want{intercambio.EnvioErrorFirma, []intercambio.EstadoRecepDTE{99, 99}, "Error de Firma"}},
		{"totals that do not add up", f.envio(t, rutB, badTotals, d34), nil,
			want{intercambio.EnvioRecibidoConforme, []intercambio.EstadoRecepDTE{99, 0}, "totals: Totales/MntNeto " + strconv.Itoa(neto+1)}},
		{"an emitter other than the one expected", good, func(o *intercambio.Options) { o.RutEmisor = rutC },
			want{intercambio.EnvioRecibidoConforme, []intercambio.EstadoRecepDTE{2, 2}, "not the emitter expected"}},
		{"an envelope received before", good, func(o *intercambio.Options) {
			o.Repetido = func(id, digest string) bool { return id == "SetDoc" && digest != "" }
		}, want{intercambio.EnvioArchivoRepetido, []intercambio.EstadoRecepDTE{99, 99}, "received before"}},
		{"a document received before", good, func(o *intercambio.Options) {
			// Asked with the document's verification at hand: its stamp
			// verified, with a CAF of certificación (IDK 100).
			o.DTERepetido = func(d *intercambio.DocumentoRecibido) bool {
				return d.Tipo == 34 && d.RUTEmisor == rutA && d.Verificacion.TED.OK && d.Verificacion.CAFAmbiente == "certificacion"
			}
		}, want{intercambio.EnvioRecibidoConforme, []intercambio.EstadoRecepDTE{0, 4}, "received before"}},
		{"a signer the policy does not authorize", good, func(o *intercambio.Options) {
			o.Verify.AuthorizedSigners = map[string][]string{rutA: {rutC}}
		}, want{intercambio.EnvioErrorFirma, []intercambio.EstadoRecepDTE{99, 99}, "not authorized"}},
		{"a standalone DTE", d33, nil, want{intercambio.EnvioErrorSchema, nil, "not an EnvioDTE"}},
		{"an EnvioBOLETA", bytes.ReplaceAll(good, []byte("EnvioDTE"), []byte("EnvioBOLETA")), nil,
			want{intercambio.EnvioErrorSchema, nil, "EnvioBOLETA"}},
		{"a root outside the SII's namespace", []byte(`<EnvioDTE xmlns="urn:x" version="1.0"/>`), nil,
			want{intercambio.EnvioErrorSchema, nil, "namespace"}},
		{"a second SetDTE hidden in a document", replaceOnce(t, good, "</Encabezado>", "</Encabezado><SetDTE ID=\"X\"/>"), nil,
			want{intercambio.EnvioErrorSchema, nil, "SetDTE"}},
		{"an ID twice", replaceOnce(t, good, `<Documento ID="`+field2(t, d34)+`"`, `<Documento ID="SetDoc"`), nil,
			want{intercambio.EnvioErrorSchema, nil, "SetDoc"}},
		{"a folio that is not a number", replaceOnce(t, good, "<Folio>", "<Folio>x"), nil,
			want{intercambio.EnvioErrorSchema, nil, "Folio"}},
		{"not XML", []byte("hola, te mando la factura"), nil, want{intercambio.EnvioArchivoIlegible, nil, "Ilegible"}},
		{"an empty file", nil, nil, want{intercambio.EnvioArchivoIlegible, nil, "Ilegible"}},
		{"a DOCTYPE with entities", []byte(`<?xml version="1.0"?><!DOCTYPE a [<!ENTITY x "xxxxxxxxxx"><!ENTITY y "&x;&x;&x;&x;">]><EnvioDTE xmlns="http://www.sii.cl/SiiDte">&y;</EnvioDTE>`), nil,
			want{intercambio.EnvioArchivoIlegible, nil, "DOCTYPE"}},
		{"nesting beyond the limits", []byte(`<EnvioDTE xmlns="http://www.sii.cl/SiiDte"><SetDTE ID="S"><Caratula>` +
			strings.Repeat("<a>", 200) + strings.Repeat("</a>", 200) + `</Caratula></SetDTE></EnvioDTE>`), nil,
			want{intercambio.EnvioArchivoIlegible, nil, "nested deeper"}},
		{"a flood of empty elements", []byte(`<EnvioDTE xmlns="http://www.sii.cl/SiiDte"><SetDTE ID="S"><Caratula>` +
			strings.Repeat("<a/>", 100000) + `</Caratula></SetDTE></EnvioDTE>`), nil,
			want{intercambio.EnvioArchivoIlegible, nil, "elements"}},
		{"an unknown encoding", []byte(`<?xml version="1.0" encoding="UTF-16"?><EnvioDTE/>`), nil,
			want{intercambio.EnvioArchivoIlegible, nil, "UTF-16"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := f.opts()
			if tc.opts != nil {
				tc.opts(&o)
			}
			r, err := intercambio.Receive(tc.data, o)
			if err != nil {
				t.Fatal(err)
			}
			if r.Estado != tc.want.env {
				t.Fatalf("EstadoRecepEnv %v (%s), want %v", r.Estado, r.Glosa, tc.want.env)
			}
			if !strings.HasPrefix(r.Glosa, tc.want.env.Glosa()) {
				t.Errorf("glosa %q does not start with the code's %q", r.Glosa, tc.want.env.Glosa())
			}
			if len(r.Documentos) != len(tc.want.docs) {
				t.Fatalf("%d documents, want %d", len(r.Documentos), len(tc.want.docs))
			}
			where := r.Glosa
			for i, d := range r.Documentos {
				if d.Estado != tc.want.docs[i] {
					t.Errorf("document %d (tipo %d): EstadoRecepDTE %v (%s), want %v", i+1, d.Tipo, d.Estado, d.Glosa, tc.want.docs[i])
				}
				if !strings.HasPrefix(d.Glosa, d.Estado.Glosa()) || len([]rune(d.Glosa)) > intercambio.MaxGlosa {
					t.Errorf("document %d: glosa %q", i+1, d.Glosa)
				}
				if d.Estado != 0 && where == r.Glosa && r.Estado == 0 {
					where = d.Glosa
				}
			}
			if !strings.Contains(where, tc.want.in) {
				t.Errorf("glosa %q does not say %q", where, tc.want.in)
			}
			if len([]rune(r.Glosa)) > intercambio.MaxGlosa {
				t.Errorf("envelope glosa of %d characters", len([]rune(r.Glosa)))
			}
			// The acuse says the same, as A reads it.
			if r.RutEmisor == "" {
				return
			}
			acuse, err := r.Acuse(f.certB, intercambio.AnswerOptions{IdRespuesta: 1, At: answerAt})
			if err != nil {
				t.Fatal(err)
			}
			back, err := intercambio.Read(acuse, intercambio.ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if back.Envios[0].Estado != tc.want.env || back.Envios[0].Glosa != r.Glosa || len(back.Documentos) != len(tc.want.docs) {
				t.Fatalf("the acuse reads back as %+v", back)
			}
			for i, d := range back.Documentos {
				if d.Codigo != int(tc.want.docs[i]) {
					t.Errorf("the acuse gives document %d EstadoRecepDTE %d, want %v", i+1, d.Codigo, tc.want.docs[i])
				}
			}
		})
	}
}

// field2 returns the Documento ID of a DTE.
func field2(t testing.TB, doc []byte) string {
	t.Helper()
	m := regexp.MustCompile(`<Documento ID="([^"]+)"`).FindSubmatch(doc)
	if m == nil {
		t.Fatal("no Documento ID")
	}
	return string(m[1])
}

// TestReceiveTooLarge: a file over dte.MaxEnvioBytes is refused unread,
// with 99 and the reason.
func TestReceiveTooLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates dte.MaxEnvioBytes")
	}
	f := fix(t)
	r := f.receive(t, make([]byte, dte.MaxEnvioBytes+1))
	if r.Estado != intercambio.EnvioOtros || !strings.Contains(r.Glosa, "larger than the") {
		t.Errorf("%v %q", r.Estado, r.Glosa)
	}
}

// TestReceiveOptions: the mistakes of the caller are errors, not answers.
func TestReceiveOptions(t *testing.T) {
	f := fix(t)
	env := f.envio(t, rutB, f.docs[33])
	for _, tc := range []struct {
		name string
		mod  func(*intercambio.Options)
		want string
	}{
		{"Empresa not a RUT", func(o *intercambio.Options) { o.Empresa = "76086428-4" }, "Empresa"},
		{"CodEnvio 0", func(o *intercambio.Options) { o.CodEnvio = 0 }, "CodEnvio 0"},
		{"CodEnvio of 11 digits", func(o *intercambio.Options) { o.CodEnvio = intercambio.MaxCodigo + 1 }, "CodEnvio"},
		{"RutEmisor not a RUT", func(o *intercambio.Options) { o.RutEmisor = "x" }, "RutEmisor"},
	} {
		o := f.opts()
		tc.mod(&o)
		if r, err := intercambio.Receive(env, o); err == nil || r != nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, %v", tc.name, r, err)
		}
	}
	// Without an emitter to answer to, an unreadable file has no acuse.
	r := f.receive(t, []byte("junk"))
	if _, err := r.Acuse(f.certB, intercambio.AnswerOptions{IdRespuesta: 1}); !errors.Is(err, intercambio.ErrUnknownEmitter) {
		t.Errorf("acuse to nobody: %v", err)
	}
}
