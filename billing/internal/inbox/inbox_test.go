package inbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/billing/internal/outbox"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/intercambio"
	"github.com/dtekit/dtekit/internal/oracle"
	"github.com/dtekit/dtekit/internal/pgtest"
	"github.com/dtekit/dtekit/signer"
	"github.com/dtekit/dtekit/signer/signertest"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/postgres"
	"github.com/dtekit/dtekit/store/sqlite"
	"github.com/dtekit/dtekit/webhook"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// The parties: A (dtetest's demo company) emits and receives the
// answers; B is its customer, whose answers are signed by signerB; C is
// an outsider with a self-signed certificate of its own.
const (
	rutB    = "76086428-5"
	rutC    = "96790240-3"
	signerB = "15111111-4"
	signerC = "12222222-5"
)

// answers are the files the tests upload, built once: A's factura to B
// and the answers about it, B's own and the outsider's forgeries.
type answers struct {
	creds *dtetest.Creds
	// factura is A's signed factura to B, and its fields as the document
	// writes them (the record the company keeps of it).
	factura                  []byte
	tipo                     int
	folio                    int64
	fecha                    string
	total                    int64
	other                    []byte // a second factura to B, never recorded by A
	acuseB, aceptaB, reciboB []byte // B's answers, signed by B's signer
	rechazoB                 []byte // B rejecting, signed by B's signer
	rechazoComoB             []byte // C's rejection claiming to be B (RutResponde B), signed by C
	rechazoComoC             []byte // C's rejection as itself (RutResponde C)
	rechazoOtroTotal         []byte // B's rejection with another total, signed again by C
	rechazoDesconocido       []byte // B rejecting a factura A never recorded
	certB, certC             *signer.Certificate
	signedAt                 time.Time
}

var (
	ansOnce sync.Once
	ansVal  *answers
	ansErr  error
)

func fixtureAnswers(t *testing.T) *answers {
	t.Helper()
	root := oracle.RepoRoot(t)
	ansOnce.Do(func() { ansVal, ansErr = buildAnswers(root) })
	if ansErr != nil {
		t.Fatal(ansErr)
	}
	return ansVal
}

// field returns the text of the first <name> in doc.
func field(doc []byte, name string) string {
	m := regexp.MustCompile(`<` + name + `>([^<]*)</` + name + `>`).FindSubmatch(doc)
	if m == nil {
		return ""
	}
	return string(m[1])
}

func buildAnswers(root string) (*answers, error) {
	creds, err := dtetest.New(nil)
	if err != nil {
		return nil, err
	}
	a := &answers{creds: creds, signedAt: time.Date(2026, 3, 2, 10, 5, 0, 0, dte.SantiagoLocation())}
	if a.certB, err = signertest.NewCertificate(nil, signertest.CertOptions{CommonName: "Bernardita Receptora", RUT: signerB}); err != nil {
		return nil, err
	}
	if a.certC, err = signertest.NewCertificate(nil, signertest.CertOptions{CommonName: "Falsificador Externo", RUT: signerC}); err != nil {
		return nil, err
	}
	em, err := creds.Emitter(nil)
	if err != nil {
		return nil, err
	}
	emit := func() ([]byte, error) {
		f, err := openRequest(root)
		if err != nil {
			return nil, err
		}
		out, err := em.Emit(context.Background(), f)
		if err != nil {
			return nil, err
		}
		return out.XML, nil
	}
	if a.factura, err = emit(); err != nil {
		return nil, err
	}
	if a.other, err = emit(); err != nil {
		return nil, err
	}
	// The record's fields, read from the document itself.
	a.tipo, _ = strconv.Atoi(field(a.factura, "TipoDTE"))
	a.folio, _ = strconv.ParseInt(field(a.factura, "Folio"), 10, 64)
	a.fecha = field(a.factura, "FchEmis")
	a.total, _ = strconv.ParseInt(field(a.factura, "MntTotal"), 10, 64)
	envio := func(docs ...[]byte) ([]byte, error) {
		return dte.BuildEnvio(dte.EnvioOptions{Emisor: creds.Emisor, RutReceptor: rutB}, creds.Cert, docs...)
	}
	receive := func(as string, file []byte) (*intercambio.Recepcion, error) {
		return intercambio.Receive(file, intercambio.Options{Empresa: as, Verify: dte.VerifyOptions{Keys: creds.Keys},
			CodEnvio: 7, At: a.signedAt})
	}
	file, err := envio(a.factura)
	if err != nil {
		return nil, err
	}
	recB, err := receive(rutB, file)
	if err != nil {
		return nil, err
	}
	opts := intercambio.AnswerOptions{IdRespuesta: 3, At: a.signedAt}
	if a.acuseB, err = recB.Acuse(a.certB, opts); err != nil {
		return nil, err
	}
	accept := intercambio.Todos(intercambio.Decision{Estado: intercambio.DTEAceptadoOK})
	reject := intercambio.Todos(intercambio.Decision{Estado: intercambio.DTERechazado, Motivo: "Mercadería no solicitada"})
	if a.aceptaB, _, err = recB.Resultado(a.certB, opts, accept); err != nil {
		return nil, err
	}
	if a.rechazoB, _, err = recB.Resultado(a.certB, opts, reject); err != nil {
		return nil, err
	}
	if a.reciboB, _, err = recB.Recibos(a.certB, opts, "Bodega central"); err != nil {
		return nil, err
	}
	// The outsider holds the file (forwarded, or guessed) and answers as
	// B with its own certificate, and as itself.
	if a.rechazoComoB, _, err = recB.Resultado(a.certC, opts, reject); err != nil {
		return nil, err
	}
	recC, err := receive(rutC, file)
	if err != nil {
		return nil, err
	}
	if a.rechazoComoC, _, err = recC.Resultado(a.certC, opts, reject); err != nil {
		return nil, err
	}
	// B's rejection with the total changed, signed again.
	edited := bytes.Replace(a.rechazoB, []byte("<MntTotal>"+strconv.FormatInt(a.total, 10)+"</MntTotal>"),
		[]byte("<MntTotal>"+strconv.FormatInt(a.total+1, 10)+"</MntTotal>"), 1)
	if a.rechazoOtroTotal, err = signAgain(edited, a.certC); err != nil {
		return nil, err
	}
	file2, err := envio(a.other)
	if err != nil {
		return nil, err
	}
	rec2, err := receive(rutB, file2)
	if err != nil {
		return nil, err
	}
	if a.rechazoDesconocido, _, err = rec2.Resultado(a.certB, opts, reject); err != nil {
		return nil, err
	}
	return a, nil
}

// openRequest reads the repository's sample factura, addressed to B.
func openRequest(root string) (*dte.EmitirDTERequest, error) {
	data, err := os.ReadFile(filepath.Join(root, "testdata", "requests", "factura.json"))
	if err != nil {
		return nil, err
	}
	req, err := dte.DecodeRequest(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	req.Receptor.Rut = rutB
	return req, nil
}

// backends opens a fresh store of each backend.
var backends = []struct {
	name string
	open func(t *testing.T) store.Store
}{
	{"sqlite", func(t *testing.T) store.Store {
		st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), sqlite.FileName), nil)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}},
	{"postgres", func(t *testing.T) store.Store {
		st, err := postgres.Open(context.Background(), pgtest.URL(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}},
}

// room is an Inbox over a store alone, with company A.
type room struct {
	ib      *Inbox
	st      store.Store
	empresa string
	policy  dte.VerifyOptions
}

func newRoom(t *testing.T, st store.Store, creds *dtetest.Creds, cfg Config) *room {
	t.Helper()
	t.Cleanup(func() { st.Close() })
	ctx := context.Background()
	if err := st.Jobs().DeclareQueue(outbox.DeliverQueue, 0); err != nil {
		t.Fatal(err)
	}
	e := &store.Empresa{Rut: dtetest.EmisorRUT, RazonSocial: dtetest.EmisorRazonSocial, Ambiente: "certificacion"}
	if err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertEmpresa(ctx, e) }); err != nil {
		t.Fatal(err)
	}
	rm := &room{st: st, empresa: e.ID}
	cfg.Store, cfg.Outbox, cfg.Logger = st, outbox.New(time.Now), slog.New(slog.DiscardHandler)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Tenants == nil {
		cfg.Tenants = fakeTenants{rm: rm, creds: creds}
	}
	rm.ib = New(cfg)
	// Every event the answers may publish reaches a webhook.
	w := &store.Webhook{EmpresaID: e.ID, URL: "https://hooks.example.com/dtekit", Secret: []byte("sealed"), IsActive: true,
		Events: []string{string(webhook.EventDTEReceptorRecibido), string(webhook.EventDTEReceptorAceptado),
			string(webhook.EventDTEReceptorRechazado), string(webhook.EventDTEMercaderiasRecibidas)}}
	if err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertWebhook(ctx, w) }); err != nil {
		t.Fatal(err)
	}
	return rm
}

// events counts the company's events by type.
func (rm *room) events(t *testing.T) map[string]int {
	t.Helper()
	p, err := rm.st.ListEvents(context.Background(), rm.empresa, store.ListFilter{Limit: store.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, e := range p.Items {
		out[e.Type]++
	}
	return out
}

// dte reads a document's answers.
func (rm *room) intercambio(t *testing.T, id string) Intercambio {
	t.Helper()
	d, err := rm.st.GetDTE(context.Background(), rm.empresa, id)
	if err != nil {
		t.Fatal(err)
	}
	return IntercambioOf(d)
}

// TestAnswersOnlyFromTheReceptor, on both backends: answers about A's
// factura to B, uploaded in turn. An outsider's rejection as itself and
// a rejection whose total was changed are refused (each with its reason
// on the record of its file) and change nothing; B's acceptance is
// applied and published; the outsider's rejection claiming to be B,
// signed by its own certificate, comes after it: without a signer
// policy it is kept as history, never applied, and publishes nothing;
// with B's known signer required, it is refused even when it comes
// first, and B's own acceptance still applies. Through it all, no
// dte.receptor_rechazado is ever published.
func TestAnswersOnlyFromTheReceptor(t *testing.T) {
	t.Parallel()
	ans := fixtureAnswers(t)
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			rm := newRoom(t, be.open(t), ans.creds, Config{})
			d := &store.DTE{EmpresaID: rm.empresa, TipoDTE: ans.tipo, Folio: ans.folio, Estado: "aceptado", RutReceptor: rutB,
				FechaEmision: ans.fecha, MontoTotal: ans.total, XML: ans.factura}
			if err := rm.st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertDTE(ctx, d) }); err != nil {
				t.Fatal(err)
			}
			upload := func(name string, xml []byte, src Source) *ReplyResult {
				t.Helper()
				res, err := rm.ib.Reply(ctx, rm.empresa, xml, src)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				return res
			}
			refused := func(name string, res *ReplyResult, motivo string) {
				t.Helper()
				var rep ReplyReport
				if err := json.Unmarshal(res.Recepcion.Report, &rep); err != nil {
					t.Fatal(err)
				}
				if res.Recepcion.Tipo != TipoRespuesta || res.Recepcion.Estado != RecepcionRechazada || len(res.Updated) != 0 ||
					len(rep.Documentos) != 1 || rep.Documentos[0].Efecto != EfectoRechazada ||
					!strings.Contains(rep.Documentos[0].Motivo, motivo) {
					t.Errorf("%s: %s %s %s, want refused for %q", name, res.Recepcion.Tipo, res.Recepcion.Estado, res.Recepcion.Report, motivo)
				}
				got, err := rm.st.GetRecepcion(ctx, rm.empresa, res.Recepcion.ID)
				if err != nil || got.Estado != RecepcionRechazada || !bytes.Contains(got.Report, []byte(motivo)) {
					t.Errorf("%s: the record read back: %v", name, err)
				}
			}

			// The outsider as itself; a total that is not the document's.
			refused("C's rejection as C", upload("C as C", ans.rechazoComoC, Source{Origen: OrigenUpload}),
				"RutResponde "+rutC+" is not the document's receptor "+rutB)
			refused("a rejection of another total", upload("total", ans.rechazoOtroTotal, Source{Origen: OrigenUpload}),
				"MntTotal "+strconv.FormatInt(ans.total+1, 10)+" is not the document's total "+strconv.FormatInt(ans.total, 10))
			if ic := rm.intercambio(t, d.ID); ic.Resultado != nil || len(ic.Historial) != 0 {
				t.Fatalf("refused answers changed the document: %+v", ic)
			}
			// A factura A never recorded: unknown, and the file rechazada.
			res := upload("unknown", ans.rechazoDesconocido, Source{Origen: OrigenUpload})
			if res.Recepcion.Estado != RecepcionRechazada || len(res.Unknown) != 1 || res.Report.Documentos[0].Efecto != EfectoDesconocida {
				t.Errorf("an answer about a document A never emitted: %+v %s", res.Recepcion, res.Recepcion.Report)
			}

			// B accepts: applied, with its signer, and published.
			res = upload("B accepts", ans.aceptaB, Source{Origen: OrigenCorreo, MensajeID: "m-1", Remitente: "dte@b.cl"})
			if len(res.Updated) != 1 || res.Updated[0] != d.ID || res.Recepcion.Estado != RecepcionConforme ||
				res.Report.Documentos[0].Efecto != EfectoAplicada || res.Recepcion.Remitente != "dte@b.cl" {
				t.Fatalf("B's acceptance: %+v %s", res, res.Recepcion.Report)
			}
			ic := rm.intercambio(t, d.ID)
			if ic.Resultado == nil || ic.Resultado.Resultado != "aceptado" || ic.Resultado.RutReceptor != rutB ||
				ic.Resultado.RutFirmante != signerB || ic.Resultado.RecepcionID != res.Recepcion.ID || ic.Resultado.MensajeID != "m-1" {
				t.Fatalf("after B's acceptance: %+v", ic.Resultado)
			}
			// The same file again: the same record, nothing more.
			again := upload("B accepts again", ans.aceptaB, Source{Origen: OrigenUpload})
			if !again.Duplicate || again.Recepcion.ID != res.Recepcion.ID || len(again.Updated) != 0 {
				t.Errorf("the same acceptance again: %+v", again)
			}

			// The outsider rejects as B, after B: history, never applied.
			res = upload("C as B", ans.rechazoComoB, Source{Origen: OrigenCorreo, MensajeID: "m-2", Remitente: "fraude@c.cl"})
			if len(res.Updated) != 0 || res.Report.Documentos[0].Efecto != EfectoHistorial || res.Report.RutFirmante != signerC {
				t.Errorf("C's rejection as B after B's acceptance: %+v %s", res, res.Recepcion.Report)
			}
			ic = rm.intercambio(t, d.ID)
			if ic.Resultado.Resultado != "aceptado" || len(ic.Historial) != 1 || ic.Historial[0].Resultado != "rechazado" ||
				ic.Historial[0].RutFirmante != signerC || ic.Historial[0].Tipo != "resultado" {
				t.Errorf("after C's rejection as B: standing %+v, history %+v", ic.Resultado, ic.Historial)
			}
			// B's own rejection later: history too (the first stands).
			if res = upload("B rejects later", ans.rechazoB, Source{Origen: OrigenUpload}); res.Report.Documentos[0].Efecto != EfectoHistorial {
				t.Errorf("B's later rejection: %s", res.Recepcion.Report)
			}
			// The acknowledgment and the receipt are kinds of their own.
			for _, x := range [][]byte{ans.acuseB, ans.reciboB} {
				if res = upload("B's other answers", x, Source{Origen: OrigenUpload}); len(res.Updated) != 1 {
					t.Errorf("B's %s: %s", res.Kind, res.Recepcion.Report)
				}
			}
			ic = rm.intercambio(t, d.ID)
			if ic.Recepcion == nil || ic.Recibo == nil || ic.Recibo.RutFirmante != signerB {
				t.Errorf("the acknowledgment and the receipt: %+v %+v", ic.Recepcion, ic.Recibo)
			}
			ev := rm.events(t)
			if ev[string(webhook.EventDTEReceptorRechazado)] != 0 || ev[string(webhook.EventDTEReceptorAceptado)] != 1 ||
				ev[string(webhook.EventDTEReceptorRecibido)] != 1 || ev[string(webhook.EventDTEMercaderiasRecibidas)] != 1 {
				t.Errorf("events: %v, want one acceptance, one reception, one receipt and no rejection", ev)
			}

			// A second document of A, with B's known signer required: the
			// outsider's rejection as B comes first and is refused; B's
			// acceptance then applies.
			rm.policy = dte.VerifyOptions{AuthorizedSigners: map[string][]string{rutB: {signerB}}}
			if err := rm.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
				return tx.SetDTEIntercambio(ctx, rm.empresa, d.ID, nil)
			}); err != nil {
				t.Fatal(err)
			}
			forged := resign(t, bytes.Replace(ans.rechazoComoB, []byte("<IdRespuesta>3<"), []byte("<IdRespuesta>5<"), 1), ans.certC)
			refused("C as B under the policy", upload("C as B, policy", forged, Source{Origen: OrigenUpload}),
				"signer "+signerC+" is not authorized for "+rutB)
			if ic := rm.intercambio(t, d.ID); ic.Resultado != nil || len(ic.Historial) != 0 {
				t.Fatalf("a refused answer changed the document: %+v", ic)
			}
			accepted := resign(t, bytes.Replace(ans.aceptaB, []byte("<IdRespuesta>3<"), []byte("<IdRespuesta>4<"), 1), ans.certB)
			if res = upload("B accepts, policy", accepted, Source{Origen: OrigenUpload}); len(res.Updated) != 1 {
				t.Errorf("B's acceptance under the policy: %s", res.Recepcion.Report)
			}
			if ev := rm.events(t); ev[string(webhook.EventDTEReceptorRechazado)] != 0 || ev[string(webhook.EventDTEReceptorAceptado)] != 2 {
				t.Errorf("events: %v", ev)
			}
		})
	}
}

// signAgain signs an edited RespuestaDTE again with cert.
func signAgain(doc []byte, cert *signer.Certificate) ([]byte, error) {
	doc = regexp.MustCompile(`(?s)<Signature xmlns="http://www.w3.org/2000/09/xmldsig#">.*?</Signature>`).ReplaceAll(doc, nil)
	id := regexp.MustCompile(`<Resultado ID="([^"]+)"`).FindSubmatch(doc)
	if id == nil {
		return nil, errors.New("no Resultado ID")
	}
	return cert.SignEnveloped(doc, string(id[1]))
}

// resign is signAgain in a test.
func resign(t *testing.T, doc []byte, cert *signer.Certificate) []byte {
	t.Helper()
	out, err := signAgain(doc, cert)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
