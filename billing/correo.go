package billing

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/billing/internal/mailer"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/email"
	"github.com/dtekit/dtekit/internal/ssrf"
	"github.com/dtekit/dtekit/store"
)

// MailConfig configures the service's mail: reading each company's
// mailbox and sending its documents and answers (Config.Mail).
type MailConfig struct {
	// Off turns mail off in this process: nothing is read or sent here
	// (mail queued stays pending for a process that has it on).
	Off bool
	// TLS is the base TLS configuration for the mail servers (nil: the
	// system's roots); tests pass their own roots.
	TLS *tls.Config
	// Every is how often each mailbox is read (default 1 minute).
	Every time.Duration
	// Limits bound each message read (zero: the email package's
	// defaults).
	Limits email.Limits
	// Backoff are the pauses between send attempts (default 30 s, 2, 10,
	// 30 min, then hourly).
	Backoff []time.Duration
	// AllowLoopback lets companies' mail servers be on loopback addresses
	// (127.0.0.0/8, ::1, localhost), and AllowPrivate on private ones
	// (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, IPv6 unique-local);
	// link-local, metadata and the other special ranges never. Tests and
	// operators whose mail servers live on their own network only; never
	// the default (dtekit serve --mail-allow-loopback, --mail-allow-private).
	AllowLoopback, AllowPrivate bool
	// Ports are the ports a company's mail servers may use (nil:
	// DefaultMailPorts); AnyPort lifts the rule (tests on random ports).
	Ports   []int
	AnyPort bool
	// Resolver resolves the mail servers' names (nil: the system's); the
	// addresses it returns are checked before any connection.
	Resolver ssrf.Resolver
}

// DefaultMailPorts are the ports a company's mail servers may use by
// default: SMTP (25), submission (587, 2525), submission over TLS (465),
// IMAP (143) and IMAP over TLS (993).
var DefaultMailPorts = []int{25, 143, 465, 587, 993, 2525}

// mailPorts are the ports mail may use under c; nil when any.
func (c *MailConfig) mailPorts() []int {
	if c.AnyPort {
		return nil
	}
	if len(c.Ports) > 0 {
		return c.Ports
	}
	return DefaultMailPorts
}

// portBlocked is a dial refused because the port is not a mail port.
type portBlocked struct{ port string }

func (e *portBlocked) Error() string {
	return "billing: port " + e.port + " is not one the companies' mail may use"
}
func (e *portBlocked) Blocked() bool { return true }

// mailDialer is the dial of every mail connection: the webhooks' address
// guard (public addresses only, unless the operator allows loopback or
// private ones) and the port rule, checked when the connection is made,
// whatever the settings said when they were recorded.
func (c *MailConfig) mailDialer() email.DialFunc {
	guarded := ssrf.NewDialer(ssrf.Options{AllowLoopback: c.AllowLoopback, AllowPrivate: c.AllowPrivate,
		Resolver: c.Resolver, ConnectTimeout: mailer.IMAPConnectTimeout})
	ports := c.mailPorts()
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		_, port, err := net.SplitHostPort(address)
		if err != nil {
			return nil, err
		}
		if p, err := strconv.Atoi(port); ports != nil && (err != nil || !slices.Contains(ports, p)) {
			return nil, &portBlocked{port: port}
		}
		return guarded(ctx, network, address)
	}
}

// checkHost says what is wrong with a mail server's host under c, ""
// when nothing: an address must be one mail may reach, and a name must be
// a public one (unless private servers are allowed: their names may be
// local). Names are resolved and checked again at every connection.
func (c *MailConfig) checkHost(host string) string {
	if host == "" || len(host) > 253 || strings.ContainsFunc(host, func(r rune) bool {
		return unicode.IsControl(r) || unicode.IsSpace(r) || strings.ContainsRune("/:@[]", r)
	}) {
		return "a host name or IP address"
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if err := (ssrf.Options{AllowLoopback: c.AllowLoopback, AllowPrivate: c.AllowPrivate}).Allowed(a); err != nil {
			return "an address mail may reach: not loopback, private, link-local or any other address that is not public"
		}
		return ""
	}
	if c.AllowPrivate {
		return ""
	}
	if _, err := ssrf.CheckURL("https://"+host+"/", c.AllowLoopback); err != nil {
		return "a public host name (not localhost, a single label, a local domain or a number)"
	}
	return ""
}

// buzonFromStore renders a mailbox's state (nil b: never read).
func buzonFromStore(b *store.Buzon) *api.EstadoBuzon {
	if b == nil {
		return &api.EstadoBuzon{Estado: api.BuzonSinLeer}
	}
	at := func(t time.Time) *time.Time {
		if t.IsZero() {
			return nil
		}
		t = t.UTC()
		return &t
	}
	out := &api.EstadoBuzon{Estado: api.BuzonAlDia, Fallos: b.Fallos, UltimoIntento: at(b.UltimoIntento), UltimaLectura: at(b.UltimaLectura),
		ProximoIntento: at(b.Proximo)}
	if b.Fallos > 0 {
		out.Estado = api.BuzonFallando
		e := b.UltimoError
		out.UltimoError = &e
	}
	return out
}

// correoAAD binds a company's sealed mail password to its use.
func correoAAD(kind, empresaID string) []byte { return secretAAD(kind, empresaID, "") }

// Settings returns the company's mail settings, passwords left out, with
// the state of its mailbox's reads; a company with none gets the defaults
// (no servers).
func (m *MailService) Settings(ctx context.Context, empresaID string) (*api.CorreoSettings, error) {
	s := m.s
	c, err := s.st.GetCorreoConfig(ctx, empresaID)
	if errors.Is(err, store.ErrNotFound) {
		if _, err := s.st.GetEmpresa(ctx, empresaID); err != nil {
			return nil, storeErr(err, "reading the company", "empresa", empresaID)
		}
		return defaultCorreo(), nil
	}
	if err != nil {
		return nil, storeErr(err, "reading the mail settings", "empresa", empresaID)
	}
	out, err := correoSettingsFromStore(c)
	if err != nil || out.IMAP == nil {
		return out, err
	}
	b, err := s.st.GetBuzon(ctx, empresaID)
	if errors.Is(err, store.ErrNotFound) {
		b, err = nil, nil
	}
	if err != nil {
		return nil, storeErr(err, "reading the mailbox's state", "empresa", empresaID)
	}
	out.Buzon = buzonFromStore(b)
	return out, nil
}

// defaultCorreo is the settings of a company that has none.
func defaultCorreo() *api.CorreoSettings {
	yes := true
	return &api.CorreoSettings{EnviarDTE: api.EnviarAlAceptar, AcuseAutomatico: &yes}
}

// correoSettingsFromStore renders stored settings, passwords left out.
func correoSettingsFromStore(c *store.CorreoConfig) (*api.CorreoSettings, error) {
	out := defaultCorreo()
	if err := json.Unmarshal(c.Config, out); err != nil {
		return nil, fault.Failed("reading the mail settings", err)
	}
	if out.SMTP != nil {
		out.SMTP.Password, out.SMTP.PasswordSet = "", len(c.SealedSMTP) > 0
	}
	if out.IMAP != nil {
		out.IMAP.Password, out.IMAP.PasswordSet = "", len(c.SealedIMAP) > 0
	}
	return out, nil
}

// UpdateSettings replaces the company's mail settings. A server given
// without a password keeps the one on record. The mailbox's backoff is
// lifted: the next periodic read tries the new settings.
func (m *MailService) UpdateSettings(ctx context.Context, empresaID string, in api.CorreoSettings) (*api.CorreoSettings, error) {
	s := m.s
	if err := s.cfg.Mail.checkCorreo(&in); err != nil {
		return nil, err
	}
	in.Buzon = nil
	var sealedSMTP, sealedIMAP []byte
	var err error
	if in.SMTP != nil && in.SMTP.Password != "" {
		if sealedSMTP, err = s.keys.Seal([]byte(in.SMTP.Password), correoAAD(store.SealedCorreoSMTP, empresaID)); err != nil {
			return nil, fault.Failed("sealing the SMTP password", err)
		}
	}
	if in.IMAP != nil && in.IMAP.Password != "" {
		if sealedIMAP, err = s.keys.Seal([]byte(in.IMAP.Password), correoAAD(store.SealedCorreoIMAP, empresaID)); err != nil {
			return nil, fault.Failed("sealing the IMAP password", err)
		}
	}
	stored := in
	if in.SMTP != nil {
		c := *in.SMTP
		c.Password, c.PasswordSet = "", false
		stored.SMTP = &c
	}
	if in.IMAP != nil {
		c := *in.IMAP
		c.Password, c.PasswordSet = "", false
		stored.IMAP = &c
	}
	cfg, err := json.Marshal(stored)
	if err != nil {
		return nil, fault.Failed("recording the mail settings", err)
	}
	var out *store.CorreoConfig
	err = s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		c := &store.CorreoConfig{EmpresaID: empresaID, Config: cfg, SealedSMTP: sealedSMTP, SealedIMAP: sealedIMAP}
		if prev, err := tx.GetCorreoConfig(ctx, empresaID); err == nil {
			if in.SMTP != nil && sealedSMTP == nil {
				c.SealedSMTP = prev.SealedSMTP
			}
			if in.IMAP != nil && sealedIMAP == nil {
				c.SealedIMAP = prev.SealedIMAP
			}
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if err := tx.PutCorreoConfig(ctx, c); err != nil {
			return err
		}
		out = c
		if b, err := tx.GetBuzon(ctx, empresaID); err == nil && !b.Proximo.IsZero() {
			b.Proximo, b.UpdatedAt = time.Time{}, time.Time{}
			return tx.PutBuzon(ctx, b)
		} else if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		return nil
	})
	if err != nil {
		return nil, storeErr(err, "recording the mail settings", "empresa", empresaID)
	}
	return correoSettingsFromStore(out)
}

// checkCorreo validates mail settings, naming each field.
func (mc *MailConfig) checkCorreo(in *api.CorreoSettings) error {
	var d []dte.FieldError
	bad := func(field string, code dte.DetailCode, msg string) {
		d = append(d, dte.FieldError{Field: field, Code: code, Message: msg})
	}
	d = checkEmailField(d, "direccion", in.Direccion)
	if in.EnviarDTE == "" {
		in.EnviarDTE = api.EnviarAlAceptar
	}
	switch in.EnviarDTE {
	case api.EnviarAlAceptar, api.EnviarAlFirmar, api.EnviarNunca:
	default:
		bad("enviar_dte", dte.CodeInvalidValue, `one of "aceptado", "firmado", "nunca"`)
	}
	if in.AcuseAutomatico == nil {
		yes := true
		in.AcuseAutomatico = &yes
	}
	for _, s := range []struct {
		name string
		srv  *api.CorreoServidor
	}{{"smtp", in.SMTP}, {"imap", in.IMAP}} {
		name, srv := s.name, s.srv
		if srv == nil {
			continue
		}
		if why := mc.checkHost(srv.Host); why != "" {
			bad(name+".host", dte.CodeInvalidValue, why)
		}
		if ports := mc.mailPorts(); srv.Port < 1 || srv.Port > 65535 {
			bad(name+".port", dte.CodeOutOfRange, "a port from 1 to 65535")
		} else if ports != nil && !slices.Contains(ports, srv.Port) {
			bad(name+".port", dte.CodeNotAllowed, "a mail port: "+strings.Trim(fmt.Sprint(ports), "[]"))
		}
		for _, f := range []struct{ field, v string }{{"usuario", srv.Usuario}, {"password", srv.Password},
			{"carpeta", srv.Carpeta}, {"carpeta_procesados", srv.CarpetaProcesados}} {
			if strings.ContainsFunc(f.v, unicode.IsControl) {
				bad(name+"."+f.field, dte.CodeInvalidValue, "no control characters (line breaks, tabs, NUL)")
			}
		}
		if srv.Seguridad == "" {
			srv.Seguridad = map[string]string{"smtp": "starttls", "imap": "tls"}[name]
		}
		switch srv.Seguridad {
		case "tls", "starttls":
		case "none":
			if ip := net.ParseIP(srv.Host); (ip == nil || !ip.IsLoopback()) && srv.Host != "localhost" {
				bad(name+".seguridad", dte.CodeNotAllowed, `"none" (no encryption) is allowed only to a loopback host`)
			}
		default:
			bad(name+".seguridad", dte.CodeInvalidValue, `one of "tls", "starttls", "none"`)
		}
		if len(srv.Usuario) > 254 || len(srv.Password) > 1024 || len(srv.Carpeta) > 200 || len(srv.CarpetaProcesados) > 200 {
			bad(name, dte.CodeTooLong, "usuario up to 254 characters, password up to 1024, folders up to 200")
		}
		if name == "smtp" && (srv.Carpeta != "" || srv.CarpetaProcesados != "") {
			bad(name+".carpeta", dte.CodeNotAllowed, "folders belong to the IMAP mailbox")
		}
	}
	if (in.SMTP != nil || in.IMAP != nil) && in.Direccion == "" {
		bad("direccion", dte.CodeRequired, "the company's intercambio address is required with a mail server")
	}
	if len(d) > 0 {
		return fault.FromValidation(&dte.ValidationError{Details: d})
	}
	return nil
}

// mailSettings opens a company's settings for the mail room (nil when
// the company has none).
func (s *Service) mailSettings(ctx context.Context, empresaID string) (*mailer.Settings, error) {
	c, err := s.st.GetCorreoConfig(ctx, empresaID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	in, err := correoSettingsFromStore(c)
	if err != nil {
		return nil, err
	}
	out := &mailer.Settings{Direccion: in.Direccion}
	tlsFor := func(host string) *tls.Config {
		var t *tls.Config
		if s.cfg.Mail.TLS != nil {
			t = s.cfg.Mail.TLS.Clone()
		} else {
			t = &tls.Config{MinVersion: tls.VersionTLS12}
		}
		t.ServerName = host
		return t
	}
	if in.SMTP != nil {
		pw, err := s.openCorreo(c.SealedSMTP, store.SealedCorreoSMTP, empresaID)
		if err != nil {
			return nil, err
		}
		out.SMTP = &email.SMTPConfig{Host: in.SMTP.Host, Port: in.SMTP.Port, Security: in.SMTP.Seguridad,
			Username: in.SMTP.Usuario, Password: pw, TLSConfig: tlsFor(in.SMTP.Host), Dial: s.mailDial}
	}
	if in.IMAP != nil {
		pw, err := s.openCorreo(c.SealedIMAP, store.SealedCorreoIMAP, empresaID)
		if err != nil {
			return nil, err
		}
		out.IMAP = &email.IMAPConfig{Host: in.IMAP.Host, Port: in.IMAP.Port, Security: in.IMAP.Seguridad,
			Username: in.IMAP.Usuario, Password: pw, Mailbox: in.IMAP.Carpeta, ProcessedMailbox: in.IMAP.CarpetaProcesados,
			TLSConfig: tlsFor(in.IMAP.Host), Dial: s.mailDial}
	}
	return out, nil
}

// openCorreo opens a sealed mail password ("" when none).
func (s *Service) openCorreo(sealed []byte, kind, empresaID string) (string, error) {
	if len(sealed) == 0 {
		return "", nil
	}
	pw, err := s.keys.Open(sealed, correoAAD(kind, empresaID))
	if err != nil {
		return "", fmt.Errorf("billing: opening the %s password of company %s: %w", kind, empresaID, err)
	}
	return string(pw), nil
}

// correoPrefs reads when the company mails its documents and whether it
// acknowledges files at intake.
func (s *Service) correoPrefs(ctx context.Context, r store.Reader, empresaID string) (*api.CorreoSettings, error) {
	c, err := r.GetCorreoConfig(ctx, empresaID)
	if errors.Is(err, store.ErrNotFound) {
		return defaultCorreo(), nil
	}
	if err != nil {
		return nil, err
	}
	return correoSettingsFromStore(c)
}

// correoFromStore renders a stored mail.
func correoFromStore(c *store.Correo) api.Correo {
	out := api.Correo{ID: c.ID, Tipo: c.Tipo, Para: c.Para, MessageID: c.MessageID, Estado: api.EstadoCorreo(c.Estado), Intentos: c.Attempts,
		CreatedAt: c.CreatedAt.UTC(), UpdatedAt: c.UpdatedAt.UTC()}
	if c.DTEID != "" {
		out.DTEID = &c.DTEID
	}
	if c.RecibidoID != "" {
		out.RecibidoID = &c.RecibidoID
	}
	if c.LastError != "" {
		out.UltimoError = &c.LastError
	}
	if !c.SentAt.IsZero() {
		t := c.SentAt.UTC()
		out.EnviadoAt = &t
	}
	return out
}

// mensajeFromStore renders a stored mail read from a mailbox.
func mensajeFromStore(m *store.Mensaje) api.Mensaje {
	return api.Mensaje{ID: m.ID, MessageID: m.MessageID, From: m.From, Subject: m.Subject, Estado: m.Estado,
		Detalle: m.Detalle, CreatedAt: m.CreatedAt.UTC()}
}

// List lists the company's mails, newest first: the delivery log of its
// documents and answers (those of one document or received document when
// f names it).
func (m *MailService) List(ctx context.Context, empresaID string, f api.CorreoListParams) (*api.Page[api.Correo], error) {
	s := m.s
	n, verr := pageLimit(f.Limit)
	if verr != nil {
		return nil, verr
	}
	if f.DTEID != "" {
		if _, err := s.st.GetDTE(ctx, empresaID, f.DTEID); err != nil {
			return nil, storeErr(err, "reading the DTE", "dte", f.DTEID)
		}
	}
	if f.RecibidoID != "" {
		if _, err := s.st.GetRecibido(ctx, empresaID, f.RecibidoID); err != nil {
			return nil, storeErr(err, "reading the received document", "recibido", f.RecibidoID)
		}
	}
	page, err := s.st.ListCorreos(ctx, empresaID, store.CorreoFilter{DTEID: f.DTEID, RecibidoID: f.RecibidoID, Cursor: f.Cursor, Limit: n})
	if err != nil {
		return nil, storeErr(err, "listing mails", "empresa", empresaID)
	}
	out := &api.Page[api.Correo]{Data: make([]api.Correo, 0, len(page.Items)), NextCursor: cursorPtr(page.NextCursor), TotalCount: page.TotalCount}
	for i := range page.Items {
		out.Data = append(out.Data, correoFromStore(&page.Items[i]))
	}
	return out, nil
}

// Get returns one mail of the company.
func (m *MailService) Get(ctx context.Context, empresaID, id string) (*api.Correo, error) {
	s := m.s
	c, err := s.st.GetCorreo(ctx, empresaID, id)
	if err != nil {
		return nil, storeErr(err, "reading the mail", "correo", id)
	}
	out := correoFromStore(c)
	return &out, nil
}

// ListMensajes lists the mails read from the company's mailbox, newest
// first.
func (m *MailService) ListMensajes(ctx context.Context, empresaID string, p api.MensajeListParams) (*api.Page[api.Mensaje], error) {
	s := m.s
	n, verr := pageLimit(p.Limit)
	if verr != nil {
		return nil, verr
	}
	page, err := s.st.ListMensajes(ctx, empresaID, store.ListFilter{Cursor: p.Cursor, Limit: n})
	if err != nil {
		return nil, storeErr(err, "listing mails read", "empresa", empresaID)
	}
	out := &api.Page[api.Mensaje]{Data: make([]api.Mensaje, 0, len(page.Items)), NextCursor: cursorPtr(page.NextCursor), TotalCount: page.TotalCount}
	for i := range page.Items {
		out.Data = append(out.Data, mensajeFromStore(&page.Items[i]))
	}
	return out, nil
}

// Poll reads the company's mailbox now (the periodic job does it every
// minute) and reports how many messages it took, skipped as read before,
// and refused.
func (m *MailService) Poll(ctx context.Context, empresaID string) (*api.LecturaCorreo, error) {
	s := m.s
	if _, err := s.st.GetEmpresa(ctx, empresaID); err != nil {
		return nil, storeErr(err, "reading the company", "empresa", empresaID)
	}
	res, err := s.mailer.Poll(ctx, empresaID)
	if err != nil {
		if fe := fault.As(err); fe.Kind != fault.KindInternal {
			return nil, fe
		}
		var mb *mailer.MailboxError
		if errors.As(err, &mb) {
			// The category only: the server's words and addresses go to
			// the log (the mailer logged them).
			return nil, &fault.Error{Kind: fault.KindUnavailable, Code: fault.Unavailable,
				Message: "the company's mailbox could not be read (" + email.Category(err) + "); see buzon in the mail settings", Err: err}
		}
		return nil, &fault.Error{Kind: fault.KindUnavailable, Code: fault.Unavailable, Message: "the company's mailbox could not be read; try again later", Err: err}
	}
	return res, nil
}
