package intercambio_test

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/caf/caftest"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/intercambio"
	"github.com/dtekit/dtekit/internal/oracle"
	"github.com/dtekit/dtekit/signer"
	"github.com/dtekit/dtekit/signer/signertest"
)

// fuzzFixture is a cheap stand-in for fix, built in every fuzzing worker:
// a 1024-bit certificate (signing for A and B alike), a test CAF authority
// and two documents from A (one to B, one to C) packed in one envelope to
// B.
type fuzzFixture struct {
	cert  *signer.Certificate
	keys  caf.TrustedKeys
	envio []byte
	docs  [][]byte // the envelope's two signed documents
}

var (
	fuzzOnce sync.Once
	fuzzVal  *fuzzFixture
	fuzzErr  error
)

func fuzzFix(tb testing.TB) *fuzzFixture {
	tb.Helper()
	root := oracle.RepoRoot(tb)
	fuzzOnce.Do(func() {
		fx := &fuzzFixture{}
		if fx.cert, fuzzErr = signertest.NewCertificate(nil, signertest.CertOptions{RUT: signerBRUT, Bits: 1024}); fuzzErr != nil {
			return
		}
		auth, err := caftest.NewAuthority(nil, caf.IDKCertificacion)
		if err != nil {
			fuzzErr = err
			return
		}
		fx.keys = auth.Keys()
		file, err := auth.Issue(caftest.IssueRequest{RutEmisor: rutA, RazonSocial: "A", Tipo: 33, Desde: 1, Hasta: 10,
			FechaAutorizacion: time.Now().AddDate(0, 0, -1)})
		if err != nil {
			fuzzErr = err
			return
		}
		c, err := caf.Parse(file)
		if err != nil {
			fuzzErr = err
			return
		}
		folios, err := dte.NewMemoryFolios(c)
		if err != nil {
			fuzzErr = err
			return
		}
		em := &dte.Emitter{Emisor: dtetest.DemoEmisor(), Cert: fx.cert, Folios: folios, TrustedKeys: fx.keys}
		var docs [][]byte
		for _, to := range []string{rutB, rutC} {
			req, err := requestFile(root, "factura.json", to)
			if err != nil {
				fuzzErr = err
				return
			}
			out, err := em.Emit(context.Background(), req)
			if err != nil {
				fuzzErr = err
				return
			}
			docs = append(docs, out.XML)
		}
		fx.docs = docs
		fx.envio, fuzzErr = dte.BuildEnvio(dte.EnvioOptions{Emisor: dtetest.DemoEmisor(), RutReceptor: rutB}, fx.cert, docs...)
		fuzzVal = fx
	})
	if fuzzErr != nil {
		tb.Fatal(fuzzErr)
	}
	return fuzzVal
}

// opts are B's reception options in the fuzz tests.
func (fx *fuzzFixture) opts() intercambio.Options {
	return intercambio.Options{Empresa: rutB, RutEmisor: rutA, Verify: dte.VerifyOptions{Keys: fx.keys}, CodEnvio: 1, At: answerAt}
}

// FuzzRead: whatever the bytes, Read returns an answer or an error, never
// panics, and an answer it accepts is coherent: one of the three kinds,
// each document with an outcome its kind allows. Seeds: the three answers
// signed, broken ones and every XML sample of ../shared; with edit > 0 the
// data gets one structural edit (oracle.EditXML) so the checks behind the
// parser run.
func FuzzRead(f *testing.F) {
	fx := fuzzFix(f)
	r, err := intercambio.Receive(fx.envio, fx.opts())
	if err != nil {
		f.Fatal(err)
	}
	o := intercambio.AnswerOptions{IdRespuesta: 1, At: answerAt, Contacto: intercambio.Contacto{Nombre: "Ñ"}}
	acuse, err := r.Acuse(fx.cert, o)
	if err != nil {
		f.Fatal(err)
	}
	resultado, _, err := r.Resultado(fx.cert, o, nil)
	if err != nil {
		f.Fatal(err)
	}
	recibos, _, err := r.Recibos(fx.cert, o, "Bodega")
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range [][]byte{acuse, resultado, recibos, nil, []byte("<RespuestaDTE/>"),
		[]byte(`<RespuestaDTE xmlns="http://www.sii.cl/SiiDte" version="1.0"><Resultado ID="a"/></RespuestaDTE>`),
		[]byte(`<EnvioRecibos xmlns="http://www.sii.cl/SiiDte" version="1.0"><SetRecibos ID="s"><Caratula/></SetRecibos></EnvioRecibos>`)} {
		f.Add(seed, uint8(0), uint(0), "")
	}
	for _, sample := range oracle.SharedXML(f) {
		f.Add(sample, uint8(0), uint(0), "")
	}
	for i, answer := range [][]byte{acuse, resultado, recibos} { // structural edits of each answer
		f.Add(answer, uint8(1+i), uint(9+4*i), "RCD")
	}
	allowed := map[intercambio.Kind][]intercambio.Outcome{
		intercambio.KindAcuse:     {intercambio.Recibido, intercambio.RecibidoConReparos},
		intercambio.KindResultado: {intercambio.Aceptado, intercambio.AceptadoConDiscrepancias, intercambio.Rechazado},
		intercambio.KindRecibos:   {intercambio.MercaderiasRecibidas},
	}
	f.Fuzz(func(t *testing.T, data []byte, edit uint8, n uint, text string) {
		if edit > 0 {
			data = oracle.EditXML(data, n, edit-1, text)
		}
		res, err := intercambio.Read(data, intercambio.ReadOptions{})
		if err != nil {
			if res != nil {
				t.Fatal("an answer with an error")
			}
			return
		}
		outcomes, ok := allowed[res.Kind]
		if !ok {
			t.Fatalf("kind %q", res.Kind)
		}
		for _, d := range res.Documentos {
			found := false
			for _, o := range outcomes {
				found = found || d.Outcome == o
			}
			if !found || !d.Tipo.Valid() {
				t.Fatalf("%s holds %+v", res.Kind, d)
			}
		}
	})
}

// FuzzReceive: whatever the envelope, Receive answers with the SII's codes
// and glosas the schema accepts, and the acuse built from it reads back
// (Read) with the same codes: a hostile file is refused, never a panic or
// an answer that cannot be sent.
//
// Three kinds of input reach past the parser: mode 0 takes data as it is
// (seeded with our envelope, its broken variants and every XML sample of
// ../shared, the SII's own EnvioDTE among them, also readdressed to B);
// mode 1 makes one structural edit of data (oracle.EditXML: an element's
// text, removed, repeated or renamed), so the XML stays well-formed and
// the checks behind the parser run; mode 2 packs and signs a new envelope
// to B from the fixture's two documents (which ones, and how often, by
// n), one of them edited first when op says so, so the envelope's
// signature holds and the document checks behind it run.
func FuzzReceive(f *testing.F) {
	fx := fuzzFix(f)
	good := fx.envio
	for _, seed := range [][]byte{good, nil, []byte("<EnvioDTE/>"),
		bytes.Replace(good, []byte("<Folio>"), []byte("<Folio>9"), 1),
		bytes.Replace(good, []byte("<RutReceptor>"), []byte("<RutReceptor>1"), 1),
		bytes.Replace(good, []byte("<FchEmis>"), []byte("<FchEmis>x"), 1)} {
		f.Add(seed, uint8(0), uint(0), uint8(0), "")
	}
	for _, sample := range oracle.SharedXML(f) {
		f.Add(sample, uint8(0), uint(0), uint8(0), "")
		readdressed := bytes.ReplaceAll(sample, []byte("<RutReceptor>60803000-K</RutReceptor>"), []byte("<RutReceptor>"+rutB+"</RutReceptor>"))
		f.Add(readdressed, uint8(0), uint(0), uint8(0), "")
		f.Add(readdressed, uint8(1), uint(7), uint8(oracle.EditText), "99999999-9")
	}
	for i, op := range []uint8{oracle.EditText, oracle.EditDelete, oracle.EditDuplicate, oracle.EditRename} { // one seed per edit
		f.Add(good, uint8(1), uint(5+7*i), op, "2026-13-40")
		f.Add([]byte(nil), uint8(2), uint(i), op|8, "0")
	}
	f.Add([]byte(nil), uint8(2), uint(3), uint8(0), "")
	opts := fx.opts()
	f.Fuzz(func(t *testing.T, data []byte, mode uint8, n uint, op uint8, text string) {
		switch mode % 3 {
		case 1:
			data = oracle.EditXML(data, n, op, text)
		case 2:
			var docs [][]byte
			for i := range 1 + n%3 { // one to three documents, repeats allowed
				docs = append(docs, fx.docs[(n>>(2+i))%2])
			}
			if op&8 != 0 {
				docs[0] = oracle.EditXML(docs[0], n>>5, op, text)
			}
			env, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: dtetest.DemoEmisor(), RutReceptor: rutB, At: answerAt}, fx.cert, docs...)
			if err != nil {
				return // an edit BuildEnvio refuses: nothing to receive
			}
			data = env
		}
		r, err := intercambio.Receive(data, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Estado.Valid() || !utf8.ValidString(r.Glosa) || len([]rune(r.Glosa)) > intercambio.MaxGlosa {
			t.Fatalf("envelope %v %q", r.Estado, r.Glosa)
		}
		named := 0
		for _, d := range r.Documentos {
			if !d.Estado.Valid() || len([]rune(d.Glosa)) > intercambio.MaxGlosa || (!r.Recibido() && d.Estado == intercambio.DTERecibidoOK) {
				t.Fatalf("document %v %q in envelope %v", d.Estado, d.Glosa, r.Estado)
			}
			if d.Respondible {
				named++
			}
		}
		acuse, err := r.Acuse(fx.cert, intercambio.AnswerOptions{IdRespuesta: 1, At: answerAt})
		if err != nil {
			t.Fatalf("acuse: %v", err)
		}
		back, err := intercambio.Read(acuse, intercambio.ReadOptions{})
		if err != nil {
			t.Fatalf("the acuse does not read back: %v\n%s", err, acuse)
		}
		if len(back.Envios) != 1 || back.Envios[0].Estado != r.Estado || len(back.Documentos) != named {
			t.Fatalf("the acuse reads back as %+v", back)
		}
	})
}
