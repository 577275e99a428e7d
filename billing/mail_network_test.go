package billing

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/billing/internal/mailer"
	"github.com/dtekit/dtekit/email"
)

// mailResolver answers the test's names and fails the others: no lookup
// leaves the machine.
type mailResolver map[string]string

func (r mailResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := r[host]; ok {
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// TestMailSettingsNetwork is issue 30's point 2: a company's mail
// settings are no way into the server's network. Hosts that are not
// public (loopback, private, link-local, metadata, local names), ports
// that are not mail ports (the API's own) and control characters are
// refused at PUT, each naming its field; a public name that resolves to
// a private address is refused when it is dialled, and the company sees
// the failure's category, never the address or the server's words; the
// operator's options open loopback, private ranges and other ports, and
// never metadata.
func TestMailSettingsNetwork(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { mailSettingsNetwork(t, b) })
	}
}

func mailSettingsNetwork(t *testing.T, b backend) {
	creds(t)
	res := mailResolver{"mail.empresa.cl": "10.20.30.40"}
	s := newService(t, b.name, b.dsn(t), Config{Mail: MailConfig{Resolver: res}})
	ctx := context.Background()
	emp, err := s.Company.Create(ctx, demoEmpresa())
	if err != nil {
		t.Fatal(err)
	}
	good := func() api.CorreoSettings {
		return api.CorreoSettings{Direccion: "dte@empresa.cl",
			SMTP: &api.CorreoServidor{Host: "smtp.empresa.cl", Port: 587, Usuario: "dte", Password: "s3creto"},
			IMAP: &api.CorreoServidor{Host: "mail.empresa.cl", Port: 993, Usuario: "dte", Password: "s3creto"}}
	}
	refused := func(s *Service, in api.CorreoSettings, field string) {
		t.Helper()
		_, err := s.Mail.UpdateSettings(ctx, emp.ID, in)
		fe := fault.As(err)
		if fe == nil || fe.Kind != fault.KindValidation || len(fe.Details) != 1 || fe.Details[0].Field != field {
			t.Errorf("settings with a bad %s: %v, want a validation error naming %s alone", field, err, field)
		}
	}
	for _, host := range []string{"127.0.0.1", "localhost", "10.0.0.1", "192.168.1.10", "172.16.0.1", "169.254.169.254",
		"metadata.google.internal", "metadata", "fd00:ec2::254", "::1", "[::1]", "0.0.0.0", "100.64.0.1", "2130706433", "intranet.local"} {
		in := good()
		in.IMAP.Host = host
		refused(s, in, "imap.host")
	}
	for _, port := range []int{8080, 22, 6379, 1} {
		in := good()
		in.SMTP.Port = port
		refused(s, in, "smtp.port")
	}
	for _, c := range []struct{ field, v string }{
		{"imap.usuario", "dte\r\nA1 LOGOUT"}, {"imap.password", "s3creto\n"}, {"imap.carpeta", "INBOX\r\nA2 DELETE INBOX"},
		{"imap.carpeta_procesados", "Hecho\x00"}, {"smtp.usuario", "dte\tx"}, {"smtp.host", "smtp.empresa.cl\r\nRCPT"},
	} {
		in := good()
		srv, field, _ := strings.Cut(c.field, ".")
		target := map[string]*api.CorreoServidor{"imap": in.IMAP, "smtp": in.SMTP}[srv]
		switch field {
		case "usuario":
			target.Usuario = c.v
		case "password":
			target.Password = c.v
		case "carpeta":
			target.Carpeta = c.v
		case "carpeta_procesados":
			target.CarpetaProcesados = c.v
		case "host":
			target.Host = c.v
		}
		refused(s, in, c.field)
	}

	// A public name is taken; it resolves to a private address, refused
	// when the mailbox is dialled: the company sees "refused", no address.
	if _, err := s.Mail.UpdateSettings(ctx, emp.ID, good()); err != nil {
		t.Fatal(err)
	}
	_, err = s.Mail.Poll(ctx, emp.ID)
	var mbErr *mailer.MailboxError
	if !errors.As(err, &mbErr) || email.Category(err) != email.CategoryRefused {
		t.Fatalf("reading a mailbox whose name resolves to a private address: %v, want refused", err)
	}
	if fe := fault.As(err); strings.Contains(fe.Message, "10.20.30.40") || !strings.Contains(fe.Message, "refused") {
		t.Errorf("the answer to the company: %q", fe.Message)
	}
	got, err := s.Mail.Settings(ctx, emp.ID)
	if err != nil {
		t.Fatal(err)
	}
	shown, _ := json.Marshal(got)
	if got.Buzon == nil || got.Buzon.Estado != api.BuzonFallando || got.Buzon.Fallos != 1 || got.Buzon.UltimoError == nil ||
		*got.Buzon.UltimoError != "refused" || got.Buzon.ProximoIntento == nil || strings.Contains(string(shown), "10.20.30.40") {
		t.Errorf("the mailbox's state shown: %s", shown)
	}
	// New settings lift the backoff.
	if out, err := s.Mail.UpdateSettings(ctx, emp.ID, good()); err != nil || out.Buzon != nil {
		t.Fatalf("PUT again: %+v, %v", out, err)
	}
	if got, _ := s.Mail.Settings(ctx, emp.ID); got.Buzon.ProximoIntento != nil || got.Buzon.Fallos != 1 {
		t.Errorf("after new settings the next read waits: %+v", got.Buzon)
	}

	// The operator's options.
	open := newService(t, b.name, b.dsn(t), Config{Mail: MailConfig{Resolver: res, AllowLoopback: true, AllowPrivate: true, Ports: []int{587, 993, 8587}}})
	if emp, err = open.Company.Create(ctx, demoEmpresa()); err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"127.0.0.1", "localhost", "10.0.0.1", "192.168.1.10", "mailserver", "correo.intranet.local"} {
		in := good()
		in.IMAP.Host, in.SMTP.Port = host, 8587
		if _, err := open.Mail.UpdateSettings(ctx, emp.ID, in); err != nil {
			t.Errorf("with loopback, private and port 8587 allowed, %s:8587: %v", host, err)
		}
	}
	for _, host := range []string{"169.254.169.254", "fd00:ec2::254", "0.0.0.0"} {
		in := good()
		in.IMAP.Host = host
		refused(open, in, "imap.host")
	}
	in := good()
	in.SMTP.Port = 25
	refused(open, in, "smtp.port")
}
