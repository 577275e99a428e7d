// Package console is dtekit's web console: server-rendered pages in
// Spanish over the billing face, for the accountants and operators who
// watch and decide what the REST API otherwise does by program.
//
// It has the API's tenancy and roles: a browser signs in with an API key
// (write or read-only) or a bearer token, resolved by the same function
// as the API's (Config.Authenticate), and every page reads and acts for
// that credential's company only. The session lives in the store,
// shared by every process on the database (see sessions); its random id
// is the only thing the browser keeps, in an HttpOnly, SameSite=Strict cookie. Every form carries the
// session's CSRF token. Pages are html/template, the stylesheet is
// embedded, and no page runs a script.
package console

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/ratelimit"
)

// Prefix is where the console is mounted: cmd/dtekit serve routes every
// path under it to the Console.
const Prefix = "/console/"

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Config configures a Console.
type Config struct {
	// Billing serves every page (required).
	Billing *billing.Service
	// Authenticate resolves a credential (an API key or a bearer
	// token) to its principal, as the API does (required; the server's
	// (*server.Server).Authenticate). It is called at sign-in and again
	// on every request of the session.
	Authenticate func(ctx context.Context, credential string) (*api.Principal, error)
	// Idle and Lifetime end a session: after Idle without a request
	// (default DefaultIdle) or Lifetime after sign-in (DefaultLifetime).
	Idle, Lifetime time.Duration
	// SignInPerMinute bounds the sign-in attempts of one client address
	// (default 10 a minute, a burst of 5).
	SignInPerMinute float64
	// PerSecond and Burst bound the requests of one credential, as the
	// API's rate limit does (default 20 a second, a burst of twice the
	// rate); a negative PerSecond turns the limit off. The console's
	// buckets are its own: a credential's pages do not spend its API
	// budget.
	PerSecond float64
	Burst     int
	// Logger receives internal errors; nil discards.
	Logger *slog.Logger
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Console is the console's http.Handler, for the paths under Prefix.
type Console struct {
	b        *billing.Service
	auth     func(ctx context.Context, credential string) (*api.Principal, error)
	sessions *sessions
	signIn   *ratelimit.Buckets
	limit    *ratelimit.Buckets
	logger   *slog.Logger
	now      func() time.Time
	pages    map[string]*template.Template
	mux      *http.ServeMux
}

// New returns a Console for cfg.
func New(cfg Config) (*Console, error) {
	if cfg.Billing == nil || cfg.Authenticate == nil {
		return nil, errors.New("console: Config.Billing and Config.Authenticate are required")
	}
	c := &Console{b: cfg.Billing, auth: cfg.Authenticate, sessions: newSessions(cfg.Billing.ConsoleSessions, cfg.Idle, cfg.Lifetime),
		logger: cfg.Logger, now: cfg.Now}
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	if c.now == nil {
		c.now = time.Now
	}
	perMin := cfg.SignInPerMinute
	if perMin <= 0 {
		perMin = 10
	}
	c.signIn = newSignInLimit(perMin)
	if cfg.PerSecond >= 0 {
		ps, burst := cfg.PerSecond, cfg.Burst
		if ps == 0 {
			ps = 20
		}
		if burst <= 0 {
			burst = max(int(2*ps), 1)
		}
		c.limit = ratelimit.New(ps, burst)
	}
	if err := c.parseTemplates(); err != nil {
		return nil, err
	}
	c.routes()
	return c, nil
}

// newSignInLimit limits the sign-in attempts of an address to perMin a
// minute, with a burst of 5.
func newSignInLimit(perMin float64) *ratelimit.Buckets { return ratelimit.New(perMin/60, 5) }

// funcs are the templates' helpers.
var funcs = template.FuncMap{
	"pesos":     pesos,
	"fecha":     fecha,
	"fechaHora": fechaHora,
	"tipo":      tipoNombre,
	"estado":    func(e any) string { return estadoNombre(fmt.Sprint(e)) },
	"accion":    accionNombre,
	"dias":      diasNombre,
	"entrega":   entregaNombre,
	"ambiente":  ambienteNombre,
	"cesion":    cesionEstadoNombre,
	// empresaCampos are the company form's fields and labels.
	"empresaCampos": func() [][2]string { return empresaCampos },
	"deref64": func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return *p
	},
	"pesosDec": func(d dte.Decimal) string {
		if n, ok := d.Int64(); ok {
			return pesos(n)
		}
		return string(d)
	},
	"list": func(s ...string) []string { return s },
	// verdad is an optional flag that defaults to true.
	"verdad": func(p *bool) bool { return p == nil || *p },
	"inc":    func(i int) int { return i + 1 },
	// campo is one text field of a form with its error.
	"campo": func(name, label, value string, errs map[string]string) formField {
		return formField{Name: name, Label: label, Value: value, Error: errs[name]}
	},
	"deref": func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	},
}

// formField is a text field as the "campo" template draws it.
type formField struct{ Name, Label, Value, Error string }

// parseTemplates reads every page: each is the layout with the page's
// own file, which defines "content".
func (c *Console) parseTemplates() error {
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return err
	}
	c.pages = map[string]*template.Template{}
	for _, n := range names {
		base := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if base == "layout" {
			continue
		}
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", n)
		if err != nil {
			return fmt.Errorf("console: template %s: %w", n, err)
		}
		c.pages[base] = t
	}
	return nil
}

// contentSecurityPolicy lets a page load only the console's own
// stylesheet and frame its own PDFs: no script, inline or not, and no
// page of the console inside another site's frame.
const contentSecurityPolicy = "default-src 'none'; style-src 'self'; img-src 'self' data:; frame-src 'self'; " +
	"object-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// pdfPolicy is a PDF's: shown in a frame of the console's own pages.
const pdfPolicy = "default-src 'none'; frame-ancestors 'self'"

// ServeHTTP serves the paths under Prefix.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	// same-origin, not no-referrer: under no-referrer browsers send
	// "Origin: null" with the console's own forms, which sameOrigin refuses.
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	c.mux.ServeHTTP(w, r)
}

// A request is one page request of a signed-in session.
type request struct {
	w    http.ResponseWriter
	r    *http.Request
	p    *api.Principal
	sess *session
	c    *Console
}

// access is what a page requires of the session's credential.
type access int

const (
	read access = iota
	write
)

// handler serves one page for a signed-in session.
type handler func(q *request) error

// maxForm bounds a form's body, and maxUpload the file a form carries
// (a CAF or a logo: the API's bound for each, 256 KiB). A form with a
// file may be maxUploadBody long: the file at its bound with room for
// the other fields and the parts' headers, so that a file the API
// accepts is never refused for the form around it.
const (
	maxForm       = 64 << 10
	maxUpload     = 256 << 10
	maxUploadBody = maxUpload + maxForm
)

// tooLargeField and tooLargeMessage say why a file over maxUpload is
// refused: beside its field when the form arrived whole, on the error
// page when the body itself passed maxUploadBody.
const (
	tooLargeField   = "el archivo pesa más de 256 KiB, el máximo que se acepta"
	tooLargeMessage = "El archivo pesa más de 256 KiB, el máximo que se acepta. Elija uno más liviano y reintente."
)

// page registers a page that needs a session. Every POST must carry the
// session's CSRF token and, when acc is write, a credential that may
// write.
func (c *Console) page(pattern string, acc access, h handler) {
	c.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		sid := cookieValue(r, sessionCookieName)
		sess, err := c.sessions.get(r.Context(), sid, c.now())
		if err != nil {
			c.billingError(w, r, nil, err) // 503 while the store is unavailable
			return
		}
		if sess == nil {
			if r.Method == http.MethodGet {
				http.Redirect(w, r, Prefix+"ingresar", http.StatusSeeOther)
				return
			}
			c.fail(w, r, nil, http.StatusForbidden, "Su sesión terminó. Ingrese de nuevo.")
			return
		}
		p, err := c.auth(r.Context(), sess.credential)
		if err != nil {
			if k := fault.KindOf(err); k == fault.KindInternal || k == fault.KindUnavailable {
				c.internal(w, r, nil, err)
				return
			}
			// The key was revoked or the token expired: the session
			// ends with it.
			if err := c.sessions.close(r.Context(), sid); err != nil {
				c.logger.Warn("console: closing a session", slog.String("error", err.Error()))
			}
			clearCookie(w, r, sessionCookieName)
			http.Redirect(w, r, Prefix+"ingresar", http.StatusSeeOther)
			return
		}
		if sess.actua != "" && p.Operator {
			// The operator switched company: every page acts for that one.
			cp := *p
			cp.EmpresaID = sess.actua
			p = &cp
		}
		if c.limit != nil {
			if ok, wait := c.limit.Allow(p.Credential, c.now()); !ok {
				w.Header().Set("Retry-After", fmt.Sprint(int(wait.Seconds())+1))
				c.fail(w, r, sess, http.StatusTooManyRequests, "Demasiadas solicitudes. Espere un momento y reintente.")
				return
			}
		}
		if r.Method == http.MethodPost {
			r.Body = http.MaxBytesReader(w, r.Body, maxUploadBody)
			var err error
			if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "multipart/form-data" {
				// Parts are kept in memory: the body's bound is the
				// memory's.
				err = r.ParseMultipartForm(maxUploadBody)
			} else {
				r.Body = http.MaxBytesReader(w, r.Body, maxForm)
				err = r.ParseForm()
			}
			if err != nil {
				if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
					c.fail(w, r, sess, http.StatusRequestEntityTooLarge, tooLargeMessage)
					return
				}
				c.fail(w, r, sess, http.StatusBadRequest, "El formulario no se pudo leer.")
				return
			}
			if !sameOrigin(r) || !sameToken(r.PostForm.Get("csrf"), sess.csrf) {
				c.fail(w, r, sess, http.StatusForbidden, "El formulario venció o no viene de esta consola. Vuelva a la página y reintente.")
				return
			}
			if acc == write && !p.Write {
				c.fail(w, r, sess, http.StatusForbidden, "Esta clave es de solo lectura: puede ver, no actuar. Pida al operador una clave con escritura.")
				return
			}
		}
		q := &request{w: w, r: r, p: p, sess: sess, c: c}
		if err := h(q); err != nil {
			c.billingError(w, r, sess, err)
		}
	})
}

// sameOrigin reports whether a POST came from a page of this host, when
// the browser says where it came from (Origin); a request without the
// header rests on the CSRF token alone.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && u.Host == r.Host
}

func cookieValue(r *http.Request, name string) string {
	ck, err := r.Cookie(name)
	if err != nil {
		return ""
	}
	return ck.Value
}

// setCookie sets one of the console's cookies: HttpOnly, SameSite=Strict,
// limited to the console's paths, and Secure when the request came over
// TLS.
func setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge time.Duration) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: Prefix, HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil, MaxAge: int(maxAge.Seconds())})
}

func clearCookie(w http.ResponseWriter, r *http.Request, name string) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: Prefix, HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil, MaxAge: -1})
}

// view is what every page's template receives.
type view struct {
	Title   string
	Nav     string
	CSRF    string
	Empresa *api.Empresa
	Write   bool
	// Admin is the company's admin role: the mail settings and the API
	// keys.
	Admin bool
	// Operador is the server operator's role: the list of companies to
	// switch to.
	Operador bool
	Aviso    string
	Error    string
	Errores  []string
	Data     any
}

// render writes a page with status.
func (c *Console) render(w http.ResponseWriter, status int, name string, v *view) {
	t := c.pages[name]
	if t == nil {
		http.Error(w, "página desconocida", http.StatusInternalServerError)
		return
	}
	var buf strings.Builder
	if err := t.ExecuteTemplate(&buf, "layout.html", v); err != nil {
		c.logger.Error("console: rendering", slog.String("page", name), slog.String("error", err.Error()))
		http.Error(w, "Error interno al mostrar la página.", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(buf.String()))
}

// show renders a page of a signed-in session.
func (q *request) show(status int, name, title, nav string, data any, notes ...string) error {
	e, err := q.c.b.Company.Get(q.r.Context(), q.p.EmpresaID)
	if err != nil {
		return err
	}
	v := &view{Title: title, Nav: nav, CSRF: q.sess.csrf, Empresa: e, Write: q.p.Write, Admin: q.p.Admin, Operador: q.p.Operator, Data: data}
	if len(notes) > 0 {
		v.Aviso = notes[0]
	}
	q.c.render(q.w, status, name, v)
	return nil
}

// fail renders the error page.
func (c *Console) fail(w http.ResponseWriter, _ *http.Request, sess *session, status int, msg string, details ...string) {
	v := &view{Title: "Error", Error: msg, Errores: details}
	if sess != nil {
		v.CSRF = sess.csrf
		v.Nav = "-"
	}
	c.render(w, status, "error", v)
}

func (c *Console) internal(w http.ResponseWriter, r *http.Request, sess *session, err error) {
	c.logger.Error("console: internal error", slog.String("path", r.URL.Path), slog.String("error", err.Error()))
	c.fail(w, r, sess, http.StatusInternalServerError, "Ocurrió un error interno. Reintente en unos minutos.")
}

// billingError renders a billing error as its page: not found (another
// company's id too) is 404, a refused field 400 with the fields named.
func (c *Console) billingError(w http.ResponseWriter, r *http.Request, sess *session, err error) {
	fe := fault.As(err)
	if fe == nil {
		c.internal(w, r, sess, err)
		return
	}
	switch fe.Kind {
	case fault.KindNotFound:
		c.fail(w, r, sess, http.StatusNotFound, "No existe en esta empresa.")
	case fault.KindValidation:
		var ds []string
		for _, d := range fe.Details {
			ds = append(ds, d.Field+": "+d.Message)
		}
		c.fail(w, r, sess, http.StatusBadRequest, "La solicitud tiene datos que no son válidos.", ds...)
	case fault.KindConflict:
		c.fail(w, r, sess, http.StatusConflict, "No se puede en el estado actual: "+fe.Message)
	case fault.KindRateLimited:
		c.fail(w, r, sess, http.StatusTooManyRequests, "Demasiadas solicitudes. Espere un momento y reintente.")
	case fault.KindUnavailable:
		c.fail(w, r, sess, http.StatusServiceUnavailable, "El servicio no está disponible ahora. Reintente en unos minutos.")
	default:
		c.internal(w, r, sess, err)
	}
}

// notFound is the 404 of a path or id the console does not know.
var errNotFound = &fault.Error{Kind: fault.KindNotFound, Code: fault.NotFound, Message: "not found"}

// clientAddr is the host part of the request's remote address.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
