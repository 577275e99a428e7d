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

// TestRoundTrip: A emits an EnvioDTE to B; B receives it and answers with
// the acuse, the resultado (the 56 rejected, the 61 accepted with
// discrepancies, the rest accepted) and the receipts; A reads each answer
// back and finds, for each of its documents, what B decided.
func TestRoundTrip(t *testing.T) {
	f := fix(t)
	r := f.receive(t, f.envio(t, rutB, f.all()...))
	acuse, resultado, recibos := f.answers(t, r)
	folio := func(tipo dte.TipoDTE) int64 {
		n, _ := strconv.ParseInt(field(t, f.docs[tipo], "Folio"), 10, 64)
		return n
	}

	got, err := intercambio.Read(acuse, intercambio.ReadOptions{Empresa: rutA})
	if err != nil {
		t.Fatal(err)
	}
	if got.Kind != intercambio.KindAcuse || got.RutResponde != rutB || got.RutRecibe != rutA || got.IdRespuesta != 5 ||
		got.Firmante == nil || got.Firmante.RUT != signerBRUT || len(got.Envios) != 1 || len(got.Avisos) != 0 {
		t.Fatalf("acuse: %+v", got)
	}
	if e := got.Envios[0]; e.EnvioDTEID != "SetDoc" || e.CodEnvio != 17 || e.Estado != 0 || e.Digest != r.Digest {
		t.Errorf("envelope: %+v", e)
	}
	if len(got.Documentos) != len(respondible) {
		t.Fatalf("%d documents in the acuse", len(got.Documentos))
	}
	for i, d := range got.Documentos {
		if d.Tipo != respondible[i] || d.Folio != folio(d.Tipo) || d.Outcome != intercambio.Recibido || d.RUTRecep != rutB || d.CodEnvio != 17 {
			t.Errorf("acuse document %d: %+v", i+1, d)
		}
	}

	got, err = intercambio.Read(resultado, intercambio.ReadOptions{Empresa: rutA})
	if err != nil {
		t.Fatal(err)
	}
	if got.Kind != intercambio.KindResultado || got.IdRespuesta != 6 || len(got.Documentos) != len(respondible) {
		t.Fatalf("resultado: %+v", got)
	}
	for _, d := range got.Documentos {
		want, motivo, cod := intercambio.Aceptado, "", 0
		switch d.Tipo {
		case 56:
			want, motivo, cod = intercambio.Rechazado, "RECHAZADO: Ley 19.983: el cargo no corresponde a lo pactado", -12
		case 61:
			want, motivo, cod = intercambio.AceptadoConDiscrepancias, "ACEPTADO CON DISCREPANCIAS: faltan 2 unidades", -1
		}
		if d.Outcome != want || d.Motivo != motivo || d.CodRchDsc != cod || d.Folio != folio(d.Tipo) || d.CodEnvio != 17 {
			t.Errorf("resultado tipo %d: %+v", d.Tipo, d)
		}
	}

	got, err = intercambio.Read(recibos, intercambio.ReadOptions{Empresa: rutA})
	if err != nil {
		t.Fatal(err)
	}
	if got.Kind != intercambio.KindRecibos || got.RutResponde != rutB || got.Firmante.RUT != signerBRUT || len(got.Documentos) != len(respondible) {
		t.Fatalf("recibos: %+v", got)
	}
	for i, d := range got.Documentos {
		if d.Tipo != respondible[i] || d.Outcome != intercambio.MercaderiasRecibidas || d.Recinto != "Bodega central, Av. Matta 1200, Ñuñoa" ||
			d.RutFirma != signerBRUT || d.TmstFirmaRecibo != "2026-03-02T10:05:00" || d.Firmante == nil {
			t.Errorf("recibo %d: %+v", i+1, d)
		}
	}

	// A refusal: the document addressed to C comes back received with
	// problems, with B's reason; the other one received.
	r = f.receive(t, f.envio(t, rutB, f.docs[33], f.toC))
	acuse, err = r.Acuse(f.certB, intercambio.AnswerOptions{IdRespuesta: 8, At: answerAt})
	if err != nil {
		t.Fatal(err)
	}
	got, err = intercambio.Read(acuse, intercambio.ReadOptions{Empresa: rutA})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Documentos) != 2 || got.Documentos[0].Outcome != intercambio.Recibido ||
		got.Documentos[1].Outcome != intercambio.RecibidoConReparos || got.Documentos[1].Codigo != 3 ||
		!strings.HasPrefix(got.Documentos[1].Motivo, "DTE No Recibido - Error en RUT Receptor: RUTRecep "+rutC) {
		t.Errorf("acuse with a misaddressed document: %+v", got.Documentos)
	}
	// A refused envelope: every document received with problems, the
	// envelope's glosa as the reason.
	r = f.receive(t, replaceOnce(t, f.envio(t, rutB, f.docs[33]), "</RutEnvia>", "</RutEnvia> "))
	acuse, err = r.Acuse(f.certB, intercambio.AnswerOptions{IdRespuesta: 9, At: answerAt})
	if err != nil {
		t.Fatal(err)
	}
	if got, err = intercambio.Read(acuse, intercambio.ReadOptions{Empresa: rutA}); err != nil {
		t.Fatal(err)
	}
	if got.Envios[0].Estado != intercambio.EnvioErrorFirma || len(got.Documentos) != 1 || got.Documentos[0].Outcome != intercambio.RecibidoConReparos {
		t.Errorf("acuse of a refused envelope: %+v", got)
	}
}

// TestReadAnEnvelopeWithoutDetail: an acuse that reports only the envelope
// (the per-document table is optional) names no document, and is not read
// as a rejection (pitfall 3 of §1.7).
func TestReadAnEnvelopeWithoutDetail(t *testing.T) {
	f := fix(t)
	r := f.receive(t, f.envio(t, rutB, f.docs[43]))
	acuse, err := r.Acuse(f.certB, intercambio.AnswerOptions{IdRespuesta: 3, At: answerAt})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(acuse, []byte("RecepcionDTE")) {
		t.Fatal("a 43 was named in the acuse")
	}
	got, err := intercambio.Read(acuse, intercambio.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Documentos) != 0 || len(got.Envios) != 1 || got.Envios[0].Estado != 0 {
		t.Errorf("%+v", got)
	}
}

// resignAnswer signs an edited answer again with B's certificate: every
// Signature is dropped and the elements signed anew, innermost first.
func (f *fixture) resignAnswer(t testing.TB, doc []byte, ids ...string) []byte {
	t.Helper()
	sig := regexp.MustCompile(`(?s)<Signature xmlns="http://www.w3.org/2000/09/xmldsig#">.*?</Signature>`)
	doc = sig.ReplaceAll(doc, nil)
	for _, id := range ids {
		var err error
		if doc, err = f.certB.SignEnveloped(doc, id); err != nil {
			t.Fatal(err)
		}
	}
	return doc
}

// TestReadRefuses: a tampered answer, a signature moved or duplicated, an
// answer mixing both branches, a wrong Declaracion, codes the SII does not
// have, an answer to another company: each is an error saying what.
func TestReadRefuses(t *testing.T) {
	f := fix(t)
	r := f.receive(t, f.envio(t, rutB, f.docs[33], f.docs[34]))
	acuse, resultado, recibos := f.answers(t, r)
	recepcion := regexp.MustCompile(`(?s)<RecepcionEnvio>.*</RecepcionEnvio>`).Find(acuse)
	folio33 := field(t, f.docs[33], "Folio")
	// RecepcionEnvio given an ID and signed alone, its Signature then
	// moved to where Resultado's goes: it verifies, but leaves the
	// Caratula unsigned.
	partSigned := f.resignAnswer(t, replaceOnce(t, acuse, "<RecepcionEnvio>", `<RecepcionEnvio ID="X">`), "X")
	sigEl := regexp.MustCompile(`(?s)<Signature .*</Signature>`).Find(partSigned)
	partSigned = replaceOnce(t, bytes.Replace(partSigned, sigEl, nil, 1), "</Resultado>", "</Resultado>"+string(sigEl))
	for _, tc := range []struct {
		name string
		data []byte
		opts intercambio.ReadOptions
		want string
	}{
		{"an edited decision", replaceOnce(t, resultado, "<EstadoDTE>0</EstadoDTE>", "<EstadoDTE>2</EstadoDTE>"), intercambio.ReadOptions{}, "does not verify"},
		{"an edited receipt", replaceOnce(t, recibos, "<Recinto>Bodega", "<Recinto>Casa"), intercambio.ReadOptions{}, "does not verify"},
		{"an unsigned answer", regexp.MustCompile(`(?s)<Signature .*</Signature>`).ReplaceAll(acuse, nil), intercambio.ReadOptions{}, "Signature"},
		{"a second Signature inside Resultado", replaceOnce(t, acuse, "</Caratula>", "</Caratula>"+string(regexp.MustCompile(`(?s)<Signature .*</Signature>`).Find(acuse))),
			intercambio.ReadOptions{}, "a <Signature> inside <Resultado>"},
		{"a Signature hidden in a RecepcionDTE", replaceOnce(t, acuse, "</RecepDTEGlosa>", "</RecepDTEGlosa>"+string(regexp.MustCompile(`(?s)<Signature .*</Signature>`).Find(acuse))),
			intercambio.ReadOptions{}, "a <Signature> inside <RecepcionDTE>"},
		{"a signature over part of Resultado, where Resultado's goes", partSigned, intercambio.ReadOptions{}, `references "#X", not it`},
		{"both branches", f.resignAnswer(t, replaceOnce(t, resultado, "</Resultado>", string(recepcion)+"</Resultado>"), "Resp6"), intercambio.ReadOptions{}, "mixes"},
		{"a wrong Declaracion", f.resignAnswer(t, bytes.ReplaceAll(recibos, []byte("del Art. 4,"), []byte("del Art. 4\xb0,")), "ReciboT33F"+folio33, "ReciboT34F"+field(t, f.docs[34], "Folio"), "SetRecibos"),
			intercambio.ReadOptions{}, "Declaracion"},
		{"an EstadoDTE the SII does not have", f.resignAnswer(t, replaceOnce(t, resultado, "<EstadoDTE>0</EstadoDTE>", "<EstadoDTE>5</EstadoDTE>"), "Resp6"),
			intercambio.ReadOptions{}, "EstadoDTE 5"},
		{"a positive CodRchDsc", f.resignAnswer(t, replaceOnce(t, resultado, "ACEPTADO OK</EstadoDTEGlosa>", "ACEPTADO OK</EstadoDTEGlosa><CodRchDsc>12</CodRchDsc>"), "Resp6"),
			intercambio.ReadOptions{}, "CodRchDsc"},
		{"a missing Folio", f.resignAnswer(t, replaceOnce(t, acuse, "<Folio>"+folio33+"</Folio>", ""), "Resp5"), intercambio.ReadOptions{}, "Folio is missing"},
		{"an answer to another company", acuse, intercambio.ReadOptions{Empresa: rutC}, "addressed to " + rutA},
		{"another root", []byte(`<RespuestaDTE version="1.0"/>`), intercambio.ReadOptions{}, "not RespuestaDTE or EnvioRecibos"},
		{"an EnvioDTE", f.envio(t, rutB, f.docs[33]), intercambio.ReadOptions{}, "not RespuestaDTE"},
		{"not XML", []byte("{}"), intercambio.ReadOptions{}, "invalid XML"},
		{"too deep", []byte(`<RespuestaDTE xmlns="http://www.sii.cl/SiiDte"><Signature xmlns="http://www.w3.org/2000/09/xmldsig#">` +
			strings.Repeat("<Object>", 40) + strings.Repeat("</Object>", 40) + `</Signature></RespuestaDTE>`),
			intercambio.ReadOptions{}, "nested deeper"},
		{"an element the schema does not have", []byte(`<RespuestaDTE xmlns="http://www.sii.cl/SiiDte"><Resultado ID="R"><Extra/></Resultado></RespuestaDTE>`),
			intercambio.ReadOptions{}, "<Resultado> holds <Extra>, which the schema does not put there"},
		{"an element inside a text field", replaceOnce(t, acuse, "<NmbEnvio>", "<NmbEnvio><b>x</b>"),
			intercambio.ReadOptions{}, "<NmbEnvio> holds an element, <b>"},
		{"more documents than an answer names", []byte(`<RespuestaDTE xmlns="http://www.sii.cl/SiiDte"><Resultado ID="R"><Caratula/>` +
			strings.Repeat("<ResultadoDTE><TipoDTE>33</TipoDTE></ResultadoDTE>", intercambio.MaxDocumentos+1) + `</Resultado></RespuestaDTE>`),
			intercambio.ReadOptions{}, "more than 9999 documents"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := intercambio.Read(tc.data, tc.opts)
			if err == nil || got != nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v, %v; want an error with %q", got, err, tc.want)
			}
		})
	}
	if _, err := intercambio.Read(acuse, intercambio.ReadOptions{Empresa: rutC}); !errors.Is(err, intercambio.ErrNotForUs) {
		t.Errorf("another company: %v", err)
	}
	// Departures that leave the meaning clear are warnings.
	odd := f.resignAnswer(t, replaceOnce(t, acuse, "<NroDetalles>1</NroDetalles>", "<NroDetalles>3</NroDetalles>"), "Resp5")
	got, err := intercambio.Read(odd, intercambio.ReadOptions{})
	if err != nil || len(got.Avisos) != 1 || !strings.Contains(got.Avisos[0], "NroDetalles says 3") {
		t.Errorf("NroDetalles 3: %+v, %v", got, err)
	}
}
