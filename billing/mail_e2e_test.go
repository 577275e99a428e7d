package billing

import (
	"context"
	"crypto/tls"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/email/emailtest"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/sii/siitest"
	"github.com/dtekit/dtekit/webhook"
)

// mailRig is a service hosting two companies, A (the demo emisor) and B
// (its customer), each with a mailbox on real SMTP and IMAP servers, and
// submitting to a fake SII.
type mailRig struct {
	*submitRig
	b            *api.Empresa
	srv          *emailtest.Server
	userA, userB emailtest.User
}

// newMailRig builds the rig; tune, when given, changes its mail settings.
func newMailRig(t *testing.T, b backend, tune ...func(*MailConfig)) *mailRig {
	t.Helper()
	creds(t)
	userA := emailtest.User{Address: "dte@empresa-a.cl", Username: "a", Password: "pa55-a"}
	userB := emailtest.User{Address: "intercambio@perez.cl", Username: "b", Password: "pa55-b"}
	srv := emailtest.Start(t, userA, userB)
	fake := siitest.New(siitest.Options{}).Start()
	t.Cleanup(fake.Close)
	fake.Register(dtetest.SignerRUT, dtetest.EmisorRUT, rutB)
	fast := []time.Duration{0}
	endpoints := fake.Endpoints()
	cfg := Config{Submission: &SubmitConfig{Endpoints: func(sii.Environment) sii.Endpoints { return endpoints },
		UploadBackoff: fast, PollBackoff: fast, Timeout: 5 * time.Second},
		Mail: MailConfig{TLS: &tls.Config{RootCAs: srv.RootCAs}, AllowLoopback: true, AnyPort: true, Every: time.Hour, Backoff: []time.Duration{100 * time.Millisecond}}}
	for _, f := range tune {
		f(&cfg.Mail)
	}
	s := newService(t, b.name, b.dsn(t), cfg)
	emp := setupEmpresa(t, s, true)
	r := &mailRig{submitRig: &submitRig{s: s, emp: emp, fake: fake}, srv: srv, userA: userA, userB: userB}
	r.b = r.addCompanyB(t)
	ctx := context.Background()
	for _, c := range []struct {
		id string
		u  emailtest.User
	}{{emp.ID, userA}, {r.b.ID, userB}} {
		if _, err := s.Mail.UpdateSettings(ctx, c.id, r.settings(t, c.u)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Catalog.CreateCliente(ctx, emp.ID, api.ClienteInput{Rut: rutB, RazonSocial: "Pérez & Hijos Ltda.", Email: userB.Address}); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.Stop(ctx)
	})
	return r
}

// settings are a company's mail settings on the rig's servers.
func (r *mailRig) settings(t *testing.T, u emailtest.User) api.CorreoSettings {
	t.Helper()
	server := func(addr, sec string) *api.CorreoServidor {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := strconv.Atoi(port)
		return &api.CorreoServidor{Host: host, Port: p, Seguridad: sec, Usuario: u.Username, Password: u.Password}
	}
	return api.CorreoSettings{Direccion: u.Address, SMTP: server(r.srv.SMTPAddr, "starttls"), IMAP: server(r.srv.IMAPSAddr, "tls")}
}

// waitMail waits until u's mailbox holds n messages.
func (r *mailRig) waitMail(t *testing.T, u emailtest.User, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for r.srv.Count(u) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%s has %d messages after 20 s, want %d", u.Address, r.srv.Count(u), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// poll reads a company's mailbox and checks how many messages it took.
func (r *mailRig) poll(t *testing.T, empresaID string, read int) {
	t.Helper()
	res, err := r.s.Mail.Poll(context.Background(), empresaID)
	if err != nil {
		t.Fatal(err)
	}
	if res.Leidos != read || res.Rechazados != 0 {
		t.Fatalf("a read of the mailbox: %+v, want %d read and none refused", res, read)
	}
}

// TestMailEndToEnd: A's documents travel to B by mail once the SII
// accepts them; B's read imports them and acknowledges each file by mail;
// B accepts one, claims one and receives the goods of the third in the
// registry, each answer mailed back; A's reads record every answer on its
// documents with their events.
func TestMailEndToEnd(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			r := newMailRig(t, b)
			ctx := context.Background()
			var docs []*api.DTE
			for i := range 3 {
				d, _ := r.emitToB(t, true)
				if got := r.waitFinal(t, d.ID); got.Estado != dte.EstadoAceptado {
					t.Fatalf("the SII's review: %s", got.Estado)
				}
				docs = append(docs, d)
				r.waitMail(t, r.userB, i+1)
			}
			page, err := r.s.Mail.List(ctx, r.emp.ID, api.CorreoListParams{DTEID: docs[0].ID})
			if err != nil || len(page.Data) != 1 || page.Data[0].Estado != "enviado" || page.Data[0].Para != r.userB.Address {
				t.Fatalf("the delivery log of %s: %+v, %v", docs[0].ID, page, err)
			}
			r.poll(t, r.b.ID, 3)
			recs, err := r.s.Received.List(ctx, r.b.ID, api.RecibidoListParams{Estado: "pendiente"})
			if err != nil || recs.TotalCount != 3 {
				t.Fatalf("B's inbox: %+v, %v", recs, err)
			}
			// The three acknowledgments reach A.
			r.waitMail(t, r.userA, 3)
			r.poll(t, r.emp.ID, 3)
			for _, d := range docs {
				got, err := r.s.Documents.Get(ctx, r.emp.ID, d.ID, api.DTEGetParams{})
				if err != nil {
					t.Fatal(err)
				}
				if got.Intercambio == nil || got.Intercambio.Recepcion == nil || got.Intercambio.Recepcion.Resultado != "recibido" ||
					got.Intercambio.Recepcion.RutReceptor != rutB {
					t.Errorf("DTE %d after B's acknowledgment: %+v", d.Folio, got.Intercambio)
				}
			}
			if n := len(eventsOf(t, r.s, r.emp.ID, webhook.EventDTEReceptorRecibido)); n != 3 {
				t.Errorf("%d dte.receptor_recibido events, want 3", n)
			}
			if err := r.s.Received.Refresh(ctx, r.b.ID); err != nil {
				t.Fatal(err)
			}
			byFolio := map[int64]string{}
			for _, rec := range recs.Data {
				byFolio[rec.Folio] = rec.ID
			}
			decisions := []api.DecisionInput{{Accion: "ACD"}, {Accion: "RCD", Motivo: "Precio distinto al pactado"}, {Accion: "ERM"}}
			for i, in := range decisions {
				if _, err := r.s.Received.Decide(ctx, r.b.ID, byFolio[docs[i].Folio], in); err != nil {
					t.Fatalf("%s on folio %d: %v", in.Accion, docs[i].Folio, err)
				}
				if h := r.fake.RCVHistory(dtetest.EmisorRUT, 33, docs[i].Folio); len(h) != 1 || string(h[0].Action) != in.Accion {
					t.Errorf("the registry's history of folio %d: %+v, want %s", docs[i].Folio, h, in.Accion)
				}
			}
			r.waitMail(t, r.userA, 6)
			r.poll(t, r.emp.ID, 3)
			want := []struct {
				slot   func(*api.ReceptorRespuestas) *api.ReceptorRespuesta
				result string
				event  webhook.EventType
			}{
				{func(x *api.ReceptorRespuestas) *api.ReceptorRespuesta { return x.Resultado }, "aceptado", webhook.EventDTEReceptorAceptado},
				{func(x *api.ReceptorRespuestas) *api.ReceptorRespuesta { return x.Resultado }, "rechazado", webhook.EventDTEReceptorRechazado},
				{func(x *api.ReceptorRespuestas) *api.ReceptorRespuesta { return x.Recibo }, "mercaderias_recibidas", webhook.EventDTEMercaderiasRecibidas},
			}
			for i, w := range want {
				got, err := r.s.Documents.Get(ctx, r.emp.ID, docs[i].ID, api.DTEGetParams{})
				if err != nil {
					t.Fatal(err)
				}
				if got.Intercambio == nil || w.slot(got.Intercambio) == nil || w.slot(got.Intercambio).Resultado != w.result {
					t.Errorf("DTE %d after B's %s: %+v", docs[i].Folio, decisions[i].Accion, got.Intercambio)
				}
				if n := len(eventsOf(t, r.s, r.emp.ID, w.event)); n != 1 {
					t.Errorf("%d %s events, want 1", n, w.event)
				}
			}
			if got, _ := r.s.Documents.Get(ctx, r.emp.ID, docs[1].ID, api.DTEGetParams{}); got != nil && got.Intercambio != nil && got.Intercambio.Resultado != nil &&
				got.Intercambio.Resultado.Motivo == "" {
				t.Errorf("the claim's reason did not travel: %+v", got.Intercambio.Resultado)
			}
			// Read again: every message was flagged, nothing is taken twice.
			r.poll(t, r.emp.ID, 0)
			r.poll(t, r.b.ID, 0)
			if n := r.srv.Count(r.userB); n != 3 {
				t.Errorf("B's mailbox holds %d messages, want the 3 (never deleted)", n)
			}
		})
	}
}

// TestMailSettings: passwords are write-only and sealed; a server without
// encryption is refused but on loopback; the fields are named.
func TestMailSettings(t *testing.T) {
	t.Parallel()
	f := newFixture(t, backends[0], false)
	ctx := context.Background()
	in := api.CorreoSettings{Direccion: "dte@empresa.cl", SMTP: &api.CorreoServidor{Host: "smtp.empresa.cl", Port: 587, Usuario: "dte", Password: "s3creto"}}
	out, err := f.s.Mail.UpdateSettings(ctx, f.emp.ID, in)
	if err != nil {
		t.Fatal(err)
	}
	if out.SMTP.Password != "" || !out.SMTP.PasswordSet || out.SMTP.Seguridad != "starttls" || out.EnviarDTE != "aceptado" {
		t.Errorf("settings answered: %+v", out.SMTP)
	}
	c, err := f.s.st.GetCorreoConfig(ctx, f.emp.ID)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(c.Config), "s3creto") || strings.Contains(string(c.SealedSMTP), "s3creto") {
		t.Error("the password is stored in clear")
	}
	// Without a password, the one on record stays.
	in.SMTP.Password = ""
	if out, err = f.s.Mail.UpdateSettings(ctx, f.emp.ID, in); err != nil || !out.SMTP.PasswordSet {
		t.Errorf("an update without the password: %+v, %v", out, err)
	}
	ms, err := f.s.mailSettings(ctx, f.emp.ID)
	if err != nil || ms.SMTP.Password != "s3creto" {
		t.Errorf("the opened settings: %+v, %v", ms, err)
	}
	bad := api.CorreoSettings{Direccion: "no es correo", SMTP: &api.CorreoServidor{Host: "smtp.empresa.cl", Port: 0, Seguridad: "none"}, EnviarDTE: "a veces"}
	_, err = f.s.Mail.UpdateSettings(ctx, f.emp.ID, bad)
	fields := map[string]bool{}
	if fe := fault.As(err); fe != nil {
		for _, d := range fe.Details {
			fields[d.Field] = true
		}
	}
	for _, want := range []string{"direccion", "smtp.port", "smtp.seguridad", "enviar_dte"} {
		if !fields[want] {
			t.Errorf("invalid settings: %v, want %s named", err, want)
		}
	}
}
