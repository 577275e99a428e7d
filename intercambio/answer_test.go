package intercambio_test

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/intercambio"
	"github.com/dtekit/dtekit/internal/oracle"
)

// answers builds B's three answers to an envelope: the acuse, a resultado
// that accepts the factura (33), rejects the nota de débito (56), accepts
// the nota de crédito (61) with discrepancies and accepts the rest, and
// the receipts.
func (f *fixture) answers(t testing.TB, r *intercambio.Recepcion) (acuse, resultado, recibos []byte) {
	t.Helper()
	var err error
	o := intercambio.AnswerOptions{IdRespuesta: 5, At: answerAt, Contacto: intercambio.Contacto{Nombre: "Bernardita Peña", Mail: "dte@b.cl"}}
	if acuse, err = r.Acuse(f.certB, o); err != nil {
		t.Fatal(err)
	}
	o.IdRespuesta = 6
	resultado, _, err = r.Resultado(f.certB, o, decide)
	if err != nil {
		t.Fatal(err)
	}
	if recibos, _, err = r.Recibos(f.certB, o, "Bodega central, Av. Matta 1200, Ñuñoa"); err != nil && !errors.Is(err, intercambio.ErrNoDocuments) {
		t.Fatal(err)
	}
	return acuse, resultado, recibos
}

// decide is B's commercial decision in the tests.
func decide(d intercambio.DocumentoRecibido) intercambio.Decision {
	switch d.Tipo {
	case 56:
		return intercambio.Decision{Estado: intercambio.DTERechazado, Motivo: "Ley 19.983: el cargo no corresponde a lo pactado", CodRchDsc: -12}
	case 61:
		return intercambio.Decision{Estado: intercambio.DTEAceptadoConDiscrepancias, Motivo: "faltan 2 unidades"}
	}
	return intercambio.Decision{Estado: intercambio.DTEAceptadoOK}
}

// TestAnswersPassTheOracles: every answer, to a good envelope and to each
// kind of refused one, validates against its official schema with xmllint,
// and each of its signatures verifies with xmlsec1, with the KeyValue and
// with B's certificate trusted.
func TestAnswersPassTheOracles(t *testing.T) {
	oracle.Tool(t, "xmllint")
	oracle.Tool(t, "xmlsec1")
	f := fix(t)
	good := f.envio(t, rutB, f.all()...)
	files := map[string][]byte{"certB.pem": f.certB.CertificatePEM()}
	r := f.receive(t, good)
	files["acuse.xml"], files["resultado.xml"], files["recibos.xml"] = f.answers(t, r)

	// The acuses of refused envelopes (and the resultados rejecting their
	// documents, where there are documents).
	refused := map[string][]byte{
		"otro-rut":  f.envio(t, rutC, f.toC),
		"firma":     replaceOnce(t, good, "</RutEnvia>", "</RutEnvia> "),
		"ilegible":  []byte("<EnvioDTE"),
		"esquema":   []byte(`<EnvioDTE xmlns="http://www.sii.cl/SiiDte" version="1.0"><Nada/></EnvioDTE>`),
		"mezclados": f.envio(t, rutB, f.docs[33], f.toC),
	}
	o := intercambio.AnswerOptions{IdRespuesta: 9, At: answerAt}
	for name, data := range refused {
		opts := f.opts()
		opts.RutEmisor = rutA
		opts.NmbEnvio = "envío «raro» ☃ " + strings.Repeat("x", 100)
		r, err := intercambio.Receive(data, opts)
		if err != nil {
			t.Fatal(err)
		}
		if files["acuse-"+name+".xml"], err = r.Acuse(f.certB, o); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res, _, err := r.Resultado(f.certB, o, nil); err == nil {
			files["resultado-"+name+".xml"] = res
		} else if !errors.Is(err, intercambio.ErrNoDocuments) {
			t.Fatalf("%s: %v", name, err)
		}
	}
	dir := oracleFiles(t, files)
	cert := filepath.Join(dir, "certB.pem")
	for name, b := range files {
		file := filepath.Join(dir, name)
		switch {
		case strings.HasPrefix(name, "acuse"), strings.HasPrefix(name, "resultado"):
			xmllint(t, "RespuestaEnvioDTE_v10.xsd", file)
			xmlsec(t, file, "/*/*[local-name()='Signature']", cert)
		case name == "recibos.xml":
			xmllint(t, "EnvioRecibos_v10.xsd", file)
			xmlsec(t, file, "/*/*[local-name()='Signature']", cert)
			n := bytes.Count(b, []byte("<Recibo "))
			if n != len(respondible) {
				t.Errorf("%d receipts, want %d", n, len(respondible))
			}
			for i := 1; i <= n; i++ {
				xmlsec(t, file, fmt.Sprintf("(//*[local-name()='Recibo']/*[local-name()='Signature'])[%d]", i), cert)
			}
		}
	}
	// The certificate, the 3 answers, 5 acuses and the resultados of the
	// 3 refused envelopes that had documents.
	if len(files) != 1+3+5+3 {
		t.Errorf("%d files, want 12", len(files))
	}
}

// TestAnswersContent: what the acuse, the resultado and the receipts say,
// checked against the envelope as written and the SII's rules (§1.6 of the
// notes): the RUTs the right way round, the counts, EnvioDTEID and Digest,
// codes and glosas, CodRchDsc negative, the fixed Declaracion.
func TestAnswersContent(t *testing.T) {
	f := fix(t)
	env := f.envio(t, rutB, f.all()...)
	r := f.receive(t, env)
	acuse, resultado, recibos := f.answers(t, r)
	digests := regexp.MustCompile(`<DigestValue>([^<]+)</DigestValue>`).FindAllSubmatch(env, -1)
	for _, want := range []string{
		`<Resultado ID="Resp5"><Caratula version="1.0"><RutResponde>` + rutB + `</RutResponde><RutRecibe>` + rutA + `</RutRecibe><IdRespuesta>5</IdRespuesta><NroDetalles>1</NroDetalles>`,
		"<NmbContacto>Bernardita Pe\xf1a</NmbContacto><MailContacto>dte@b.cl</MailContacto><TmstFirmaResp>2026-03-02T10:05:00</TmstFirmaResp>",
		"<NmbEnvio>EnvioDTE_76192083-9.xml</NmbEnvio><FchRecep>2026-03-02T10:00:00</FchRecep><CodEnvio>17</CodEnvio><EnvioDTEID>SetDoc</EnvioDTEID><Digest>" + string(digests[len(digests)-1][1]) + "</Digest>",
		"<RutEmisor>" + rutA + "</RutEmisor><RutReceptor>" + rutB + "</RutReceptor><EstadoRecepEnv>0</EstadoRecepEnv><RecepEnvGlosa>Envio Recibido Conforme</RecepEnvGlosa><NroDTE>6</NroDTE>",
		"<EstadoRecepDTE>0</EstadoRecepDTE><RecepDTEGlosa>DTE Recibido OK</RecepDTEGlosa></RecepcionDTE></RecepcionEnvio></Resultado><Signature",
	} {
		if !bytes.Contains(acuse, []byte(want)) {
			t.Errorf("the acuse lacks %q", want)
		}
	}
	if n := bytes.Count(acuse, []byte("<RecepcionDTE>")); n != 6 {
		t.Errorf("%d RecepcionDTE, want 6 (the 43 is left out)", n)
	}
	if !bytes.HasPrefix(acuse, []byte(`<?xml version="1.0" encoding="ISO-8859-1"?>`)) {
		t.Errorf("acuse starts %.50q", acuse)
	}
	// Each RecepcionDTE repeats the document as written in the envelope.
	for _, tipo := range respondible {
		doc := f.docs[tipo]
		want := fmt.Sprintf("<RecepcionDTE><TipoDTE>%d</TipoDTE><Folio>%s</Folio><FchEmis>%s</FchEmis><RUTEmisor>%s</RUTEmisor><RUTRecep>%s</RUTRecep><MntTotal>%s</MntTotal>",
			tipo, field(t, doc, "Folio"), field(t, doc, "FchEmis"), rutA, rutB, field(t, doc, "MntTotal"))
		if !bytes.Contains(acuse, []byte(want)) {
			t.Errorf("the acuse lacks %q", want)
		}
	}
	for _, want := range []string{
		"<IdRespuesta>6</IdRespuesta><NroDetalles>6</NroDetalles>",
		"<CodEnvio>17</CodEnvio><EstadoDTE>0</EstadoDTE><EstadoDTEGlosa>ACEPTADO OK</EstadoDTEGlosa></ResultadoDTE>",
		"<EstadoDTE>2</EstadoDTE><EstadoDTEGlosa>RECHAZADO: Ley 19.983: el cargo no corresponde a lo pactado</EstadoDTEGlosa><CodRchDsc>-12</CodRchDsc>",
		"<EstadoDTE>1</EstadoDTE><EstadoDTEGlosa>ACEPTADO CON DISCREPANCIAS: faltan 2 unidades</EstadoDTEGlosa><CodRchDsc>-1</CodRchDsc>",
	} {
		if !bytes.Contains(resultado, []byte(want)) {
			t.Errorf("the resultado lacks %q", want)
		}
	}
	if bytes.Contains(resultado, []byte("RecepcionEnvio")) {
		t.Error("the resultado mixes RecepcionEnvio in")
	}
	for _, want := range []string{
		`<SetRecibos ID="SetRecibos"><Caratula version="1.0"><RutResponde>` + rutB + `</RutResponde><RutRecibe>` + rutA + `</RutRecibe>`,
		"<Recinto>Bodega central, Av. Matta 1200, \xd1u\xf1oa</Recinto><RutFirma>" + signerBRUT + "</RutFirma>" +
			"<Declaracion>El acuse de recibo que se declara en este acto, de acuerdo a lo dispuesto en la letra b) del Art. 4, y la letra c) del Art. 5 de la Ley 19.983, acredita que la entrega de mercaderias o servicio(s) prestado(s) ha(n) sido recibido(s).</Declaracion>",
		`<DocumentoRecibo ID="ReciboT33F` + field(t, f.docs[33], "Folio") + `"><TipoDoc>33</TipoDoc>`,
	} {
		if !bytes.Contains(recibos, []byte(want)) {
			t.Errorf("the receipts lack %q", want)
		}
	}
}

// TestResultadoRejectsWhatWasNotReceived: a document refused at reception
// is rejected in the resultado whatever the decision, with its reception
// glosa as the reason; it gets no receipt.
func TestResultadoRejectsWhatWasNotReceived(t *testing.T) {
	f := fix(t)
	r := f.receive(t, f.envio(t, rutB, f.docs[33], f.toC))
	_, res, err := r.Resultado(f.certB, intercambio.AnswerOptions{IdRespuesta: 1, At: answerAt}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].Estado != intercambio.DTEAceptadoOK || res[1].Estado != intercambio.DTERechazado ||
		res[1].CodRchDsc != -1 || !strings.HasPrefix(res[1].Glosa, "RECHAZADO: DTE No Recibido - Error en RUT Receptor") {
		t.Errorf("%+v", res)
	}
	_, refs, err := r.Recibos(f.certB, intercambio.AnswerOptions{At: answerAt}, "Bodega")
	if err != nil || len(refs) != 1 || refs[0].Tipo != 33 || refs[0].RUTRecep != rutB {
		t.Errorf("receipts %+v, %v", refs, err)
	}
	// An envelope to another company: nothing to receipt.
	r = f.receive(t, f.envio(t, rutC, f.toC))
	if _, _, err := r.Recibos(f.certB, intercambio.AnswerOptions{At: answerAt}, "Bodega"); !errors.Is(err, intercambio.ErrNoDocuments) {
		t.Errorf("receipts of a refused envelope: %v", err)
	}
}

// TestAnswerOptionsAreChecked: what the schema would refuse is an error
// naming the field, not a file xmllint rejects.
func TestAnswerOptionsAreChecked(t *testing.T) {
	f := fix(t)
	r := f.receive(t, f.envio(t, rutB, f.docs[33]))
	ok := intercambio.AnswerOptions{IdRespuesta: 1, At: answerAt}
	for _, tc := range []struct {
		name string
		run  func() error
		want string
	}{
		{"IdRespuesta 0", func() error { _, err := r.Acuse(f.certB, intercambio.AnswerOptions{}); return err }, "IdRespuesta 0"},
		{"IdRespuesta of 11 digits", func() error {
			_, err := r.Acuse(f.certB, intercambio.AnswerOptions{IdRespuesta: 1e10})
			return err
		}, "IdRespuesta"},
		{"a contact name too long", func() error {
			_, err := r.Acuse(f.certB, intercambio.AnswerOptions{IdRespuesta: 1, Contacto: intercambio.Contacto{Nombre: strings.Repeat("a", 41)}})
			return err
		}, "NmbContacto has 41"},
		{"a phone outside Latin-1", func() error {
			_, err := r.Acuse(f.certB, intercambio.AnswerOptions{IdRespuesta: 1, Contacto: intercambio.Contacto{Fono: "☎ 2 2345 6789"}})
			return err
		}, "FonoContacto"},
		{"a rejection without a reason", func() error {
			_, _, err := r.Resultado(f.certB, ok, intercambio.Todos(intercambio.Decision{Estado: intercambio.DTERechazado}))
			return err
		}, "needs a Motivo"},
		{"a positive CodRchDsc", func() error {
			_, _, err := r.Resultado(f.certB, ok, intercambio.Todos(intercambio.Decision{Estado: intercambio.DTERechazado, Motivo: "x", CodRchDsc: 3}))
			return err
		}, "CodRchDsc 3"},
		{"an EstadoDTE the SII does not have", func() error {
			_, _, err := r.Resultado(f.certB, ok, intercambio.Todos(intercambio.Decision{Estado: 7}))
			return err
		}, "EstadoDTE 7"},
		{"a reason outside Latin-1", func() error {
			_, _, err := r.Resultado(f.certB, ok, intercambio.Todos(intercambio.Decision{Estado: intercambio.DTERechazado, Motivo: "precio ≠ pactado"}))
			return err
		}, "Motivo"},
		{"no recinto", func() error { _, _, err := r.Recibos(f.certB, ok, " "); return err }, "Recinto"},
		{"a recinto of 81 characters", func() error { _, _, err := r.Recibos(f.certB, ok, strings.Repeat("b", 81)); return err }, "Recinto has 81"},
		{"no certificate", func() error { _, err := r.Acuse(nil, ok); return err }, "certificate"},
	} {
		if err := tc.run(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
	// A long reason is cut to the glosa's 256 characters.
	_, res, err := r.Resultado(f.certB, ok, intercambio.Todos(intercambio.Decision{Estado: intercambio.DTERechazado, Motivo: strings.Repeat("ñ", 300)}))
	if err != nil || len([]rune(res[0].Glosa)) != intercambio.MaxGlosa {
		t.Errorf("long reason: %v, glosa of %d characters", err, len([]rune(res[0].Glosa)))
	}
}
