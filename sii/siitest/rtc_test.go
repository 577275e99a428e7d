package siitest_test

import (
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/cesion"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/internal/oracle"
	"github.com/dtekit/dtekit/signer"
	"github.com/dtekit/dtekit/signer/signertest"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/sii/siitest"
)

// The parties of the registry's tests: A (dtetest's company) issues a
// factura to B and cedes it to F, whose representative re-cedes it to G.
const (
	rtcB       = "76086428-5"
	rtcF       = "96790240-3"
	rtcG       = "77777777-7"
	rtcSignerF = "15111111-4"
)

var (
	rtcPartyF = cesion.Parte{RUT: rtcF, RazonSocial: "Factoring Ñandú S.A.", Direccion: "Av. Apoquindo 3000, Las Condes", Email: "cesiones@factoring.cl"}
	rtcPartyG = cesion.Parte{RUT: rtcG, RazonSocial: "Fondo Segundo", Direccion: "Huérfanos 1234, Santiago", Email: "ops@segundo.cl"}
)

// rtcFixture is what every registry test shares: one factura of A in its
// envelope, and the AECs built from it, signed once.
type rtcFixture struct {
	c        *dtetest.Creds
	signerF  *signer.Certificate
	doc      *dte.Document
	envelope []byte
	// good cedes to F; toG cedes the same document to G instead;
	// company lists A's RUT as RUTAutorizado while a person signs;
	// future is dated two hours ahead; recesion is F's re-cession of
	// good to G.
	good, toG, company, future, recesion []byte
}

var rtcFix = sync.OnceValues(func() (*rtcFixture, error) {
	c, err := creds()
	if err != nil {
		return nil, err
	}
	fx := &rtcFixture{c: c}
	if fx.signerF, err = signertest.NewCertificate(nil, signertest.CertOptions{CommonName: "Fernanda Factoring", RUT: rtcSignerF, Bits: 1024}); err != nil {
		return nil, err
	}
	em, err := c.Emitter(nil)
	if err != nil {
		return nil, err
	}
	res, err := em.Emit(context.Background(), &dte.EmitirDTERequest{TipoDTE: 33,
		Receptor: dte.Receptor{Rut: rtcB, RazonSocial: "Comercial B Ltda.", Giro: "Comercio", Direccion: "Av. Libertador 1449", Comuna: "Santiago", Ciudad: "Santiago"},
		Detalle:  []dte.LineaDetalle{{Nombre: "Aceite de oliva 1 L", Cantidad: "12", Unidad: "UN", Precio: "6490"}}})
	if err != nil {
		return nil, err
	}
	if fx.doc, err = dte.ParseDTE(res.XML); err != nil {
		return nil, err
	}
	if fx.envelope, err = dte.BuildEnvio(dte.EnvioOptions{Emisor: c.Emisor}, c.Cert, res.XML); err != nil {
		return nil, err
	}
	at := time.Now().Add(-time.Minute)
	ceder := func(to cesion.Parte, aut []cesion.Autorizado, at time.Time) ([]byte, error) {
		return cesion.Ceder(cesion.Cedido{DTE: res.XML, Firmante: c.Cert},
			cesion.Cesion{Cedente: cesion.Parte{Email: "finanzas@a.cl"}, Cesionario: to, Firmantes: []*signer.Certificate{c.Cert}, Autorizados: aut},
			cesion.Options{At: at})
	}
	if fx.good, err = ceder(rtcPartyF, nil, at); err != nil {
		return nil, err
	}
	if fx.toG, err = ceder(rtcPartyG, nil, at); err != nil {
		return nil, err
	}
	if fx.company, err = ceder(rtcPartyF, []cesion.Autorizado{{RUT: dtetest.EmisorRUT, Nombre: "La empresa"}}, at); err != nil {
		return nil, err
	}
	if fx.future, err = ceder(rtcPartyF, nil, time.Now().Add(2*time.Hour)); err != nil {
		return nil, err
	}
	fx.recesion, err = cesion.Receder(fx.good, cesion.Cesion{Cesionario: rtcPartyG, Firmantes: []*signer.Certificate{fx.signerF}}, cesion.Options{At: at})
	return fx, err
})

// rtcRig is a fake, its fixture and clients for A's and F's signers.
type rtcRig struct {
	t       *testing.T
	fx      *rtcFixture
	fake    *siitest.Fake
	a, f    *sii.Client
	emisorQ sii.CesionQuery
}

// newRTCRig starts a fake (envelopes reviewed at once) that knows A's and
// F's signers and trusts the test CAF authority unless opts names other
// keys; accepted uploads A's envelope first.
func newRTCRig(t *testing.T, opts siitest.Options, accepted bool) *rtcRig {
	t.Helper()
	fx, err := rtcFix()
	if err != nil {
		t.Fatal(err)
	}
	opts.Steps = []string{}
	if opts.CAFKeys == nil {
		opts.CAFKeys = fx.c.Keys
	}
	fake, _ := started(t, opts)
	fake.Register(rtcSignerF, rtcF)
	r := &rtcRig{t: t, fx: fx, fake: fake, emisorQ: sii.CesionQuery{RutEmisor: dtetest.EmisorRUT, TipoDoc: 33, Folio: fx.doc.Folio}}
	r.a = r.client(fx.c.Cert)
	r.f = r.client(fx.signerF)
	if accepted {
		res, err := r.a.Upload(context.Background(), dtetest.EmisorRUT, fx.envelope)
		if err != nil || !res.Accepted() {
			t.Fatalf("envelope: %+v %v", res, err)
		}
	}
	return r
}

func (r *rtcRig) client(cert *signer.Certificate) *sii.Client {
	c, err := sii.New(sii.Config{Endpoints: r.fake.Endpoints(), Certificate: cert, RetryPause: time.Millisecond})
	if err != nil {
		r.t.Fatal(err)
	}
	return c
}

// send uploads an AEC for cedente through client and polls getEstEnvio
// until a final state; it returns the state and the fake's reason.
func (r *rtcRig) send(client *sii.Client, cedente string, aec []byte) (string, string) {
	r.t.Helper()
	ctx := context.Background()
	res, err := client.UploadAEC(ctx, cedente, "cesiones@a.cl", aec)
	if err != nil || !res.Accepted() || res.Timestamp.IsZero() || len(res.TrackID) != 10 {
		r.t.Fatalf("upload: %+v %v", res, err)
	}
	var seen []string
	for range 10 {
		s, err := client.AECStatus(ctx, res.TrackID)
		if err != nil {
			r.t.Fatal(err)
		}
		seen = append(seen, s.Estado)
		if o := sii.AECStatusOutcome(s); o.Kind != sii.CesionPending {
			for _, u := range r.fake.AECUploads() {
				if u.TrackID == res.TrackID {
					return s.Estado, u.Detail
				}
			}
		}
	}
	r.t.Fatalf("no final state after %v", seen)
	return "", ""
}

// expect sends aec as A and checks the final state and its reason.
func (r *rtcRig) expect(aec []byte, state, reason string) {
	r.t.Helper()
	got, detail := r.send(r.a, dtetest.EmisorRUT, aec)
	if got != state || !strings.Contains(detail, reason) {
		r.t.Errorf("%s (%s), want %s (%s)", got, detail, state, reason)
	}
}

// TestRTCRoundTrip: an AEC valid for xmllint with AEC_v10.xsd walks
// through the review's states to EOK, and the registry then names F as
// the holder; F's re-cession to G is recorded after it.
func TestRTCRoundTrip(t *testing.T) {
	t.Parallel()
	r := newRTCRig(t, siitest.Options{Schema: oracle.SchemaCheck(t)}, true)
	ctx := context.Background()
	res, err := r.a.UploadAEC(ctx, dtetest.EmisorRUT, "cesiones@a.cl", r.fx.good)
	if err != nil || !res.Accepted() {
		t.Fatalf("%+v %v", res, err)
	}
	// Before the review ends, nothing is recorded.
	if s, err := r.a.CesionStatus(ctx, r.emisorQ); err != nil || s.Cedido || s.Header.Estado != 2 {
		t.Errorf("before the review: %+v %v", s, err)
	}
	var states []string
	for range 8 {
		s, err := r.a.AECStatus(ctx, res.TrackID)
		if err != nil {
			t.Fatal(err)
		}
		states = append(states, s.Estado)
		if s.Estado == "EOK" {
			break
		}
	}
	if got := strings.Join(states, " "); got != "RCP SOK FSO COK VDC VCS EOK" {
		t.Fatalf("states %s", got)
	}
	ces := r.fake.Cesiones()
	if len(ces) != 1 || ces[0].Cedente != dtetest.EmisorRUT || ces[0].Cesionario != rtcF || ces[0].Seq != 1 || !ces[0].DeclaracionJurada || len(ces[0].IdCesion) != 20 {
		t.Fatalf("recorded %+v", ces)
	}
	s, err := r.a.CesionStatus(ctx, r.emisorQ)
	if err != nil || !s.Cedido || s.RutTenedor != "" {
		t.Errorf("getEstCesion without IdCesion: %+v %v", s, err)
	}
	q := r.emisorQ
	q.IdCesion = ces[0].IdCesion
	s, err = r.f.CesionStatus(ctx, q)
	if err != nil || !s.Cedido || s.RutTenedor != rtcF || s.DecJurada != "EXISTE" || s.FechaUltAnot.IsZero() {
		t.Errorf("getEstCesion with IdCesion: %+v %v", s, err)
	}
	// The holder and the debtor may ask by relation; A's signer may not
	// ask as F (no permission, 10); F's signer registered for B is not B.
	if s, err := r.f.CesionStatusRelac(ctx, r.emisorQ, rtcF); err != nil || s.RutTenedor != rtcF {
		t.Errorf("relac F: %+v %v", s, err)
	}
	if s, err := r.a.CesionStatusRelac(ctx, r.emisorQ, rtcF); err != nil || s.Header.Estado != 10 {
		t.Errorf("relac as F by A's signer: %+v %v", s, err)
	}
	r.fake.Register(rtcSignerF, rtcG)
	if s, err := r.f.CesionStatusRelac(ctx, r.emisorQ, rtcG); err != nil || s.Header.Estado != -15 {
		t.Errorf("relac G before the re-cession: %+v %v", s, err)
	}
	// The re-cession: F cedes to G; the earlier cesión is the one recorded.
	if got, detail := r.send(r.f, rtcF, r.fx.recesion); got != "EOK" {
		t.Fatalf("re-cession: %s (%s)", got, detail)
	}
	if s, err := r.f.CesionStatusRelac(ctx, r.emisorQ, rtcG); err != nil || s.RutTenedor != rtcG {
		t.Errorf("relac G: %+v %v", s, err)
	}
	// A's first cesión again: the document is ceded already.
	r.expect(r.fx.good, "RCS", "ya fue cedido")
}

// TestRTCUploadRefusals: the upload's STATUS codes in the registry's
// order of checks.
func TestRTCUploadRefusals(t *testing.T) {
	t.Parallel()
	r := newRTCRig(t, siitest.Options{}, false)
	ctx := context.Background()
	token, err := r.a.Token(ctx)
	if err != nil {
		t.Fatal(err)
	}
	post := func(token string, fields [][2]string, file []byte) string {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		for _, f := range fields {
			mw.WriteField(f[0], f[1])
		}
		if file != nil {
			pw, _ := mw.CreateFormFile("archivo", "aec.xml")
			pw.Write(file)
		}
		mw.Close()
		req, _ := http.NewRequest(http.MethodPost, r.fake.Endpoints().Upload+sii.PathRTCUpload, &b)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		req.Header.Set("User-Agent", sii.DefaultUserAgent)
		if token != "" {
			req.Header.Set("Cookie", "TOKEN="+token)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return string(body)
	}
	rut := strings.Split(dtetest.EmisorRUT, "-")
	all := [][2]string{{"emailNotif", "c@a.cl"}, {"rutCompany", rut[0]}, {"dvCompany", rut[1]}}
	for _, c := range []struct {
		name   string
		token  string
		fields [][2]string
		want   string
	}{
		{"no token", "", all, "<STATUS>5</STATUS>"},
		{"unknown token", "ABCDEFGHIJKLM", all, "<RUTSENDER>-</RUTSENDER>"},
		{"no e-mail", token, all[1:], "<STATUS>4</STATUS>"},
		{"fields out of order", token, [][2]string{all[1], all[0], all[2]}, "<STATUS>4</STATUS>"},
		{"small file", token, all, "<STATUS>2</STATUS>"},
	} {
		if got := post(c.token, c.fields, []byte("<AEC/>")); !strings.Contains(got, c.want) || strings.Contains(got, "TRACKID") {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	got := post(token, all, r.fx.good)
	if !strings.Contains(got, "<STATUS>0</STATUS>") || !strings.Contains(got, "<TRACKID>") {
		t.Errorf("a good upload: %s", got)
	}
	// STATUS 1: the sender may not send for the cedente; 6: not a DTE
	// company. Both through the client, which reports them as rejections.
	for _, c := range []struct {
		setup func()
		want  int
	}{
		{func() { r.fake.Register(dtetest.SignerRUT, rtcG); r.fake.Deauthorize(rtcG) }, 6},
		{func() { r.fake.Withdraw(dtetest.SignerRUT, dtetest.EmisorRUT) }, 1},
	} {
		c.setup()
		company := dtetest.EmisorRUT
		if c.want == 6 {
			company = rtcG
		}
		res, err := r.a.UploadAEC(ctx, company, "c@a.cl", r.fx.good)
		if err != nil || res.Status != c.want || res.TrackID != "" {
			t.Errorf("STATUS %d: %+v %v", c.want, res, err)
		}
		if o := sii.AECUploadOutcome(res); o.Kind != sii.CesionRejected {
			t.Errorf("STATUS %d: %+v", c.want, o)
		}
	}
}

// TestRTCSchema: a file xmllint refuses with AEC_v10.xsd is RSC, before
// its broken signatures are looked at.
func TestRTCSchema(t *testing.T) {
	t.Parallel()
	r := newRTCRig(t, siitest.Options{Schema: oracle.SchemaCheck(t)}, true)
	bad := bytes.Replace(r.fx.good, []byte("<MontoCesion>"), []byte("<MontoCesion>x"), 1)
	r.expect(bad, "RSC", "MontoCesion")
}

// flipLast changes one character of the last SignatureValue of aec (the
// file's own signature).
func flipLast(t *testing.T, aec []byte) []byte {
	t.Helper()
	end := bytes.LastIndex(aec, []byte("SignatureValue>"))
	i := bytes.LastIndex(aec[:max(end, 0)], []byte("SignatureValue>"))
	if i < 0 {
		t.Fatal("no SignatureValue")
	}
	i += len("SignatureValue>") + 5
	out := bytes.Clone(aec)
	if out[i] == 'A' {
		out[i] = 'B'
	} else {
		out[i] = 'A'
	}
	return out
}

// resign applies edit to the inside of aec's DocumentoAEC and signs the
// file again, as its sender: the file's own signature holds, so the
// review reaches what the edit broke.
func resign(t *testing.T, cert *signer.Certificate, aec []byte, edit func([]byte) []byte) []byte {
	t.Helper()
	i := bytes.Index(aec, []byte("</DocumentoAEC>")) + len("</DocumentoAEC>")
	j := bytes.LastIndex(aec, []byte("</AEC>"))
	m := regexp.MustCompile(`<DocumentoAEC ID="([^"]+)"`).FindSubmatch(aec)
	if i < len("</DocumentoAEC>") || j < i || m == nil {
		t.Fatal("not an AEC")
	}
	doc := append(bytes.Clone(aec[:i]), aec[j:]...)
	edited := edit(bytes.Clone(doc))
	if bytes.Equal(edited, doc) {
		t.Fatal("the edit changed nothing")
	}
	out, err := cert.SignEnveloped(edited, string(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRTCRefusals: one broken AEC for each state the review refuses with.
func TestRTCRefusals(t *testing.T) {
	t.Parallel()
	fx, err := rtcFix()
	if err != nil {
		t.Fatal(err)
	}
	t.Run("RFS the file's signature", func(t *testing.T) {
		t.Parallel()
		newRTCRig(t, siitest.Options{}, true).expect(flipLast(t, fx.good), "RFS", "AEC.Signature")
	})
	t.Run("RCR the carátula's cesionario", func(t *testing.T) {
		t.Parallel()
		bad := resign(t, fx.c.Cert, fx.good, func(b []byte) []byte {
			return bytes.Replace(b, []byte("<RutCesionario>"+rtcF), []byte("<RutCesionario>"+rtcG), 1)
		})
		newRTCRig(t, siitest.Options{}, true).expect(bad, "RCR", "Caratula.RutCesionario")
	})
	t.Run("RDC DocumentoDTECedido's signature", func(t *testing.T) {
		t.Parallel()
		bad := resign(t, fx.c.Cert, fx.good, func(b []byte) []byte {
			// The last second of TmstFirma, just before </DocumentoDTECedido>.
			i := bytes.Index(b, []byte("</TmstFirma></DocumentoDTECedido>")) - 1
			b[i] = '0' + (b[i]-'0'+1)%10
			return b
		})
		newRTCRig(t, siitest.Options{}, true).expect(bad, "RDC", "DTECedido.Signature")
	})
	t.Run("RCS an amount over the total, signed before the edit", func(t *testing.T) {
		t.Parallel()
		bad := resign(t, fx.c.Cert, fx.good, func(b []byte) []byte {
			return regexp.MustCompile(`<MontoCesion>[0-9]+`).ReplaceAll(b, []byte("<MontoCesion>999999999"))
		})
		newRTCRig(t, siitest.Options{}, true).expect(bad, "RCS", "Cesion[1]")
	})
	t.Run("RCR the cedente is not who uploads", func(t *testing.T) {
		t.Parallel()
		r := newRTCRig(t, siitest.Options{}, true)
		r.fake.Register(dtetest.SignerRUT, rtcG)
		if got, detail := r.send(r.a, rtcG, fx.good); got != "RCR" || !strings.Contains(detail, "RutCedente") {
			t.Errorf("%s (%s)", got, detail)
		}
	})
	t.Run("RDC a document the SII does not have", func(t *testing.T) {
		t.Parallel()
		newRTCRig(t, siitest.Options{}, false).expect(fx.good, "RDC", "no fue recibido")
	})
	t.Run("RDC a stamp no trusted key signed", func(t *testing.T) {
		t.Parallel()
		newRTCRig(t, siitest.Options{CAFKeys: caf.SIIKeys()}, true).expect(fx.good, "RDC", "DocumentoDTECedido.DTE.TED")
	})
	t.Run("RDC a document the SII rejected", func(t *testing.T) {
		t.Parallel()
		r := newRTCRig(t, siitest.Options{}, false)
		r.fake.Script(dtetest.EmisorRUT, 33, fx.doc.Folio, siitest.Outcome{Result: siitest.Rejected, Detail: "DTE-3-101"})
		if _, err := r.a.Upload(context.Background(), dtetest.EmisorRUT, fx.envelope); err != nil {
			t.Fatal(err)
		}
		r.expect(fx.good, "RDC", "no fue recibido")
	})
	t.Run("RCS RUTAutorizado is not the signer", func(t *testing.T) {
		t.Parallel()
		newRTCRig(t, siitest.Options{}, true).expect(fx.company, "RCS", "no es quien firma")
	})
	t.Run("RCS TmstCesion in the future", func(t *testing.T) {
		t.Parallel()
		newRTCRig(t, siitest.Options{}, true).expect(fx.future, "RCS", "TmstCesion")
	})
	t.Run("RCS earlier cesiones not on record", func(t *testing.T) {
		t.Parallel()
		r := newRTCRig(t, siitest.Options{}, true)
		if got, detail := r.send(r.f, rtcF, fx.recesion); got != "RCS" || !strings.Contains(detail, "anteriores") {
			t.Errorf("%s (%s)", got, detail)
		}
	})
	t.Run("RCS ceded meanwhile by another AEC", func(t *testing.T) {
		t.Parallel()
		// Both uploaded before either review ends: the registry ends
		// them in the order they arrived, so the first one wins even
		// though only the second is polled.
		r := newRTCRig(t, siitest.Options{}, true)
		ctx := context.Background()
		first, err := r.a.UploadAEC(ctx, dtetest.EmisorRUT, "c@a.cl", fx.toG)
		if err != nil || !first.Accepted() {
			t.Fatal(first, err)
		}
		r.expect(fx.good, "RCS", "ya fue cedido")
		if ces := r.fake.Cesiones(); len(ces) != 1 || ces[0].Cesionario != rtcG || ces[0].TrackID != first.TrackID {
			t.Errorf("recorded %+v", ces)
		}
	})
	t.Run("scripted EAN", func(t *testing.T) {
		t.Parallel()
		r := newRTCRig(t, siitest.Options{}, true)
		r.fake.ScriptAEC(dtetest.EmisorRUT, 33, fx.doc.Folio, "EAN", "anulado por el test")
		r.expect(fx.good, "EAN", "anulado por el test")
		if n := len(r.fake.Cesiones()); n != 0 {
			t.Errorf("%d cesiones recorded", n)
		}
	})
}

// TestRTCTenancy: a track id is answered only to its sender or a signer
// of its company; a token the fake revoked is refused with ESTADO 3 and
// the client recovers.
func TestRTCTenancy(t *testing.T) {
	t.Parallel()
	r := newRTCRig(t, siitest.Options{}, true)
	ctx := context.Background()
	res, err := r.a.UploadAEC(ctx, dtetest.EmisorRUT, "c@a.cl", r.fx.good)
	if err != nil || !res.Accepted() {
		t.Fatal(res, err)
	}
	if s, err := r.f.AECStatus(ctx, res.TrackID); err != nil || s.Header.Estado != 2 || s.Estado != "" {
		t.Errorf("F asking A's track: %+v %v", s, err)
	}
	r.fake.RevokeTokens()
	if s, err := r.a.AECStatus(ctx, res.TrackID); err != nil || s.Estado != "RCP" {
		t.Errorf("after revocation: %+v %v", s, err)
	}
	qs := r.fake.Requests(siitest.EstEnvio)
	if n := len(qs); n < 3 || qs[n-2].Result != "ESTADO 3" || qs[n-1].Result != "ESTADO 0" {
		t.Errorf("getEstEnvio log %+v", qs)
	}
}

// TestRTCPersist: a fake on a journal, restarted, still knows the AEC
// uploads (an ended review keeps its state, one under way goes on) and
// the cesiones recorded, so the document stays ceded.
func TestRTCPersist(t *testing.T) {
	t.Parallel()
	fx, err := rtcFix()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "sii.journal")
	start := func() (*siitest.Fake, *sii.Client) {
		t.Helper()
		f := siitest.New(siitest.Options{Steps: []string{}, CAFKeys: fx.c.Keys})
		if err := f.Persist(path); err != nil {
			t.Fatal(err)
		}
		f.Start()
		t.Cleanup(f.Close)
		f.Register(dtetest.SignerRUT, dtetest.EmisorRUT)
		c, err := sii.New(sii.Config{Endpoints: f.Endpoints(), Certificate: fx.c.Cert, RetryPause: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		return f, c
	}
	ctx := context.Background()
	f1, c1 := start()
	if _, err := c1.Upload(ctx, dtetest.EmisorRUT, fx.envelope); err != nil {
		t.Fatal(err)
	}
	up, err := c1.UploadAEC(ctx, dtetest.EmisorRUT, "c@a.cl", fx.good)
	if err != nil {
		t.Fatal(err)
	}
	for range 7 {
		if _, err := c1.AECStatus(ctx, up.TrackID); err != nil {
			t.Fatal(err)
		}
	}
	pending, err := c1.UploadAEC(ctx, dtetest.EmisorRUT, "c@a.cl", fx.toG)
	if err != nil {
		t.Fatal(err)
	}
	want := f1.Cesiones()
	f1.Close()

	f2, c2 := start()
	if got := f2.Cesiones(); len(got) != 1 || got[0].IdCesion != want[0].IdCesion || got[0].Cesionario != rtcF {
		t.Fatalf("cesiones after a restart %+v, want %+v", got, want)
	}
	if s, err := c2.AECStatus(ctx, up.TrackID); err != nil || s.Estado != "EOK" {
		t.Errorf("the ended review after a restart: %+v %v", s, err)
	}
	var last string
	for range 7 {
		s, err := c2.AECStatus(ctx, pending.TrackID)
		if err != nil {
			t.Fatal(err)
		}
		last = s.Estado
	}
	if last != "RCS" {
		t.Errorf("the review under way ended %s, want RCS (the document was ceded before the restart)", last)
	}
	if s, err := c2.CesionStatus(ctx, sii.CesionQuery{RutEmisor: dtetest.EmisorRUT, TipoDoc: 33, Folio: fx.doc.Folio}); err != nil || !s.Cedido {
		t.Errorf("getEstCesion after a restart: %+v %v", s, err)
	}
}

// TestRTCFaults: the registry's endpoints take injected faults like the
// others: an internal-error STATUS is a failure to retry, not a
// rejection; an HTML page on getEstEnvio is retried by the client.
func TestRTCFaults(t *testing.T) {
	t.Parallel()
	r := newRTCRig(t, siitest.Options{}, true)
	ctx := context.Background()
	r.fake.Inject(siitest.RTCUpload, siitest.Fault{Kind: siitest.FaultStatus, Code: "9"})
	res, err := r.a.UploadAEC(ctx, dtetest.EmisorRUT, "c@a.cl", r.fx.good)
	if err != nil || res.Status != 9 || sii.AECUploadOutcome(res).Kind != sii.CesionFailure {
		t.Fatalf("STATUS 9: %+v %v", res, err)
	}
	res, err = r.a.UploadAEC(ctx, dtetest.EmisorRUT, "c@a.cl", r.fx.good)
	if err != nil || !res.Accepted() {
		t.Fatal(res, err)
	}
	r.fake.Inject(siitest.EstEnvio, siitest.Fault{Kind: siitest.FaultHTML503})
	if s, err := r.a.AECStatus(ctx, res.TrackID); err != nil || s.Estado != "RCP" {
		t.Errorf("after an HTML page: %+v %v", s, err)
	}
	if n := len(r.fake.Requests(siitest.EstEnvio)); n != 2 {
		t.Errorf("%d getEstEnvio requests, want 2", n)
	}
	if n := len(r.fake.AECUploads()); n != 1 {
		t.Errorf("%d AECs filed, want 1 (STATUS 9 files nothing)", n)
	}
}
