package console

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/chile"
	"github.com/google/uuid"
)

func (c *Console) routes() {
	c.mux = http.NewServeMux()
	static, _ := fs.Sub(staticFS, "static")
	files := http.StripPrefix(Prefix+"static/", http.FileServerFS(static))
	c.mux.Handle("GET "+Prefix+"static/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		files.ServeHTTP(w, r)
	}))
	c.mux.HandleFunc("GET "+Prefix+"ingresar", c.signInForm)
	c.mux.HandleFunc("POST "+Prefix+"ingresar", c.signInPost)
	c.mux.HandleFunc("GET "+Prefix+"{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, Prefix+"resumen", http.StatusSeeOther)
	})
	c.page("POST "+Prefix+"salir", read, c.signOut)
	c.page("GET "+Prefix+"resumen", read, resumen)
	c.page("GET "+Prefix+"documentos", read, documentos)
	c.page("GET "+Prefix+"documentos/{id}", read, documento)
	c.page("GET "+Prefix+"documentos/{id}/pdf", read, documentoPDF)
	c.page("GET "+Prefix+"documentos/{id}/xml", read, documentoXML)
	c.page("POST "+Prefix+"documentos/{id}/enviar", write, enviarDocumento)
	c.page("POST "+Prefix+"documentos/{id}/ceder", write, ceder)
	c.page("GET "+Prefix+"envios", read, envios)
	c.page("GET "+Prefix+"emitir", write, emitirForm)
	c.page("POST "+Prefix+"emitir", write, emitir)
	c.page("GET "+Prefix+"recibidos", read, recibidos)
	c.page("GET "+Prefix+"recibidos/{id}", read, recibido)
	c.page("GET "+Prefix+"recibidos/{id}/pdf", read, recibidoPDF)
	c.page("POST "+Prefix+"recibidos/{id}/decidir", write, decidir)
	c.page("GET "+Prefix+"webhooks", read, webhooks)
	c.page("GET "+Prefix+"webhooks/{id}", read, webhook)
	c.page("POST "+Prefix+"webhooks/{id}/pausar", write, pausarWebhook)
	c.page("POST "+Prefix+"webhooks/{id}/activar", write, activarWebhook)
	c.page("POST "+Prefix+"webhooks/{id}/secreto", write, rotarSecreto)
	c.page("POST "+Prefix+"webhooks/{id}/entregas/{entrega}/reenviar", write, reenviarEntrega)
	c.page("GET "+Prefix+"ajustes", read, ajustes)
	c.page("POST "+Prefix+"ajustes/empresa", write, ajustarEmpresa)
	c.page("POST "+Prefix+"ajustes/ambiente", write, cambiarAmbiente)
	c.page("POST "+Prefix+"ajustes/logo", write, subirLogo)
	c.page("POST "+Prefix+"ajustes/correo/probar", write, probarCorreo)
	c.page("POST "+Prefix+"ajustes/correo", write, ajustarCorreo)
	c.page("POST "+Prefix+"ajustes/claves", write, crearClave)
	c.page("POST "+Prefix+"ajustes/claves/{id}/revocar", write, revocarClave)
	c.page("GET "+Prefix+"empresas", read, empresas)
	c.page("POST "+Prefix+"empresas/cambiar", write, cambiarEmpresa)
	c.page("GET "+Prefix+"folios", read, folios)
	c.page("POST "+Prefix+"folios", write, subirCAF)
	c.page("POST "+Prefix+"folios/umbral", write, umbral)
	c.mux.HandleFunc(Prefix, func(w http.ResponseWriter, r *http.Request) {
		c.fail(w, r, nil, http.StatusNotFound, "Esta página no existe.")
	})
}

// signInView is the sign-in page's data.
type signInView struct {
	Token string
}

// maxCredential bounds what the sign-in form accepts as a credential.
const maxCredential = 8192

func (c *Console) signInForm(w http.ResponseWriter, r *http.Request) {
	c.showSignIn(w, r, http.StatusOK, "")
}

// showSignIn renders the sign-in form with a fresh token, kept in a
// cookie of its own and compared at the POST (there is no session yet).
func (c *Console) showSignIn(w http.ResponseWriter, r *http.Request, status int, msg string) {
	tok := randomToken(csrfTokenBytes)
	setCookie(w, r, preCookieName, tok, 30*time.Minute)
	c.render(w, status, "ingresar", &view{Title: "Ingresar", Error: msg, Data: signInView{Token: tok}})
}

func (c *Console) signInPost(w http.ResponseWriter, r *http.Request) {
	if ok, wait := c.signIn.Allow("addr:"+clientAddr(r), c.now()); !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds())+1))
		c.showSignIn(w, r, http.StatusTooManyRequests, "Demasiados intentos de ingreso desde esta dirección. Espere un minuto.")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		c.showSignIn(w, r, http.StatusBadRequest, "El formulario no se pudo leer.")
		return
	}
	if !sameOrigin(r) || !sameToken(r.PostForm.Get("csrf"), cookieValue(r, preCookieName)) {
		c.showSignIn(w, r, http.StatusForbidden, "El formulario venció. Ingrese de nuevo.")
		return
	}
	cred := strings.TrimSpace(r.PostForm.Get("credencial"))
	if cred == "" || len(cred) > maxCredential {
		c.showSignIn(w, r, http.StatusUnauthorized, "Ingrese una clave de API o un token válido.")
		return
	}
	p, err := c.auth(r.Context(), cred)
	if err != nil {
		if k := fault.KindOf(err); k == fault.KindInternal || k == fault.KindUnavailable {
			c.internal(w, r, nil, err)
			return
		}
		c.showSignIn(w, r, http.StatusUnauthorized, "La clave o el token no es válido, está revocado o venció.")
		return
	}
	id, _, err := c.sessions.open(r.Context(), cred, p.EmpresaID, c.now())
	if errors.Is(err, billing.ErrConsoleSessionsFull) {
		c.showSignIn(w, r, http.StatusServiceUnavailable, "Hay demasiadas sesiones abiertas. Reintente más tarde.")
		return
	}
	if err != nil {
		c.billingError(w, r, nil, err)
		return
	}
	// A browser signed in already leaves its old session behind: it ends
	// here rather than at its idle time.
	if old := cookieValue(r, sessionCookieName); old != "" {
		if err := c.sessions.close(r.Context(), old); err != nil {
			c.logger.Warn("console: closing a session", slog.String("error", err.Error()))
		}
	}
	clearCookie(w, r, preCookieName)
	setCookie(w, r, sessionCookieName, id, c.sessions.lim.Lifetime)
	http.Redirect(w, r, Prefix+"resumen", http.StatusSeeOther)
}

func (c *Console) signOut(q *request) error {
	if err := c.sessions.close(q.r.Context(), cookieValue(q.r, sessionCookieName)); err != nil {
		return err
	}
	clearCookie(q.w, q.r, sessionCookieName)
	http.Redirect(q.w, q.r, Prefix+"ingresar", http.StatusSeeOther)
	return nil
}

// today is the date in Chile, as the API writes dates.
func (q *request) today() string { return q.c.now().In(chile.Location()).Format(time.DateOnly) }

// estadoCuenta is one state's count of today's documents.
type estadoCuenta struct {
	Estado dte.Estado
	Total  int64
}

// cafStock is one document type's available folios against the
// company's threshold.
type cafStock struct {
	Tipo        dte.TipoDTE
	Disponibles int64
}

type resumenView struct {
	Hoy         string
	HoyTotal    int64
	PorEstado   []estadoCuenta
	Problemas   []api.DTE
	Urgentes    []api.Recibido
	Pendientes  int64
	Umbral      int64
	FoliosBajos []cafStock
	Webhooks    []api.Webhook
	// Buzon is the company's mailbox when its reads are failing.
	Buzon *api.EstadoBuzon
}

// resumenStates are the states Resumen counts, in the order shown.
var resumenStates = []dte.Estado{dte.EstadoFirmado, dte.EstadoEnviando, dte.EstadoProcesando,
	dte.EstadoAceptado, dte.EstadoConReparos, dte.EstadoRechazado}

// urgentDays is how close to its end a window must be for Resumen to
// list the received document.
const urgentDays = 3

func resumen(q *request) error {
	ctx, b, emp := q.r.Context(), q.c.b, q.p.EmpresaID
	v := resumenView{Hoy: q.today()}
	for _, e := range resumenStates {
		page, err := b.Documents.List(ctx, emp, api.DTEListParams{ListParams: api.ListParams{Limit: 1}, Estado: e, FechaDesde: v.Hoy, FechaHasta: v.Hoy})
		if err != nil {
			return err
		}
		v.HoyTotal += page.TotalCount
		v.PorEstado = append(v.PorEstado, estadoCuenta{e, page.TotalCount})
	}
	for _, e := range []dte.Estado{dte.EstadoRechazado, dte.EstadoConReparos} {
		page, err := b.Documents.List(ctx, emp, api.DTEListParams{ListParams: api.ListParams{Limit: 10}, Estado: e})
		if err != nil {
			return err
		}
		v.Problemas = append(v.Problemas, page.Data...)
	}
	pend, err := b.Received.List(ctx, emp, api.RecibidoListParams{ListParams: api.ListParams{Limit: 1}, Estado: api.RecibidoPendiente})
	if err != nil {
		return err
	}
	v.Pendientes = pend.TotalCount
	days := urgentDays
	urg, err := b.Received.List(ctx, emp, api.RecibidoListParams{ListParams: api.ListParams{Limit: api.MaxLimit},
		Estado: api.RecibidoPendiente, DiasRestantes: &days})
	if err != nil {
		return err
	}
	v.Urgentes = urg.Data
	slices.SortStableFunc(v.Urgentes, func(a, b api.Recibido) int { return *a.DiasRestantes - *b.DiasRestantes })
	alerts, err := b.Company.AlertSettings(ctx, emp)
	if err != nil {
		return err
	}
	v.Umbral = alerts.CAFLowStockThreshold
	stock := map[dte.TipoDTE]int64{}
	var cursor string
	for range 10 { // at most 1,000 CAFs are read for the summary
		cafs, err := b.CAFs.List(ctx, emp, api.CAFListParams{ListParams: api.ListParams{Limit: api.MaxLimit, Cursor: cursor}})
		if err != nil {
			return err
		}
		for _, cf := range cafs.Data {
			if _, seen := stock[cf.TipoDTE]; !seen {
				stock[cf.TipoDTE] = 0
			}
			if cf.IsActive {
				stock[cf.TipoDTE] += cf.FoliosDisponibles
			}
		}
		if cafs.NextCursor == nil {
			break
		}
		cursor = *cafs.NextCursor
	}
	for _, t := range dte.Tipos() {
		if n, ok := stock[t]; ok && n <= v.Umbral {
			v.FoliosBajos = append(v.FoliosBajos, cafStock{t, n})
		}
	}
	hooks, err := b.Webhooks.List(ctx, emp)
	if err != nil {
		return err
	}
	for _, h := range hooks {
		if !h.IsActive {
			v.Webhooks = append(v.Webhooks, h)
		}
	}
	mail, err := b.Mail.Settings(ctx, emp)
	if err != nil {
		return err
	}
	if mail.Buzon != nil && mail.Buzon.Estado == api.BuzonFallando {
		v.Buzon = mail.Buzon
	}
	return q.show(http.StatusOK, "resumen", "Resumen", "resumen", v)
}

// documentosView is the list of documents with its filters.
type documentosView struct {
	Filtro    documentoFiltro
	Tipos     []dte.TipoDTE
	Estados   []dte.Estado
	Page      *api.Page[api.DTE]
	Siguiente string
}

// documentoFiltro is the list's filters as the form sent them; Cedidas
// is its checkbox ("si" keeps the facturas the registry recorded ceded).
type documentoFiltro struct {
	Tipo, Estado, Desde, Hasta, Receptor, Folio, Cedidas string
}

func (f documentoFiltro) query() url.Values {
	v := url.Values{}
	for k, s := range map[string]string{"tipo": f.Tipo, "estado": f.Estado, "desde": f.Desde, "hasta": f.Hasta, "receptor": f.Receptor, "folio": f.Folio,
		"cedidas": f.Cedidas} {
		if s != "" {
			v.Set(k, s)
		}
	}
	return v
}

// maxFilter bounds a filter's text.
const maxFilter = 64

// formValue is a query value, bounded.
func formValue(r *http.Request, name string) string {
	v := strings.TrimSpace(r.URL.Query().Get(name))
	if len(v) > maxFilter {
		v = v[:maxFilter]
	}
	return v
}

func documentos(q *request) error {
	f := documentoFiltro{Tipo: formValue(q.r, "tipo"), Estado: formValue(q.r, "estado"), Desde: formValue(q.r, "desde"),
		Hasta: formValue(q.r, "hasta"), Receptor: formValue(q.r, "receptor"), Folio: formValue(q.r, "folio"), Cedidas: formValue(q.r, "cedidas")}
	p := api.DTEListParams{ListParams: api.ListParams{Limit: 50, Cursor: q.r.URL.Query().Get("cursor")},
		Estado: dte.Estado(f.Estado), FechaDesde: f.Desde, FechaHasta: f.Hasta, RutReceptor: f.Receptor}
	if f.Tipo != "" {
		n, err := strconv.Atoi(f.Tipo)
		if err != nil {
			return fault.Invalid("tipo", dte.CodeInvalidValue, "el tipo debe ser un código de documento, como 33")
		}
		p.TipoDTE = dte.TipoDTE(n)
	}
	if f.Folio != "" {
		n, err := strconv.ParseInt(f.Folio, 10, 64)
		if err != nil || n <= 0 {
			return fault.Invalid("folio", dte.CodeInvalidValue, "el folio debe ser un número positivo")
		}
		p.Folio = n
	}
	switch f.Cedidas {
	case "":
	case "si":
		p.Cedido = true
	default:
		return fault.Invalid("cedidas", dte.CodeInvalidValue, `cedidas es "si" o se omite`)
	}
	page, err := q.c.b.Documents.List(q.r.Context(), q.p.EmpresaID, p)
	if err != nil {
		return err
	}
	v := documentosView{Filtro: f, Tipos: dte.Tipos(), Estados: resumenStates, Page: page}
	if page.NextCursor != nil {
		qs := f.query()
		qs.Set("cursor", *page.NextCursor)
		v.Siguiente = Prefix + "documentos?" + qs.Encode()
	}
	return q.show(http.StatusOK, "documentos", "Documentos", "documentos", v)
}

// id is the page's document id; ids are UUIDs, and anything else is not
// found before any read.
func (q *request) id() (string, error) { return q.idOf("id") }

// idOf is the path's wildcard name when it is an id, else not found.
func (q *request) idOf(name string) (string, error) {
	id := q.r.PathValue(name)
	// Only the 36-character form: uuid.Validate also takes the braced,
	// URN and undashed ones.
	if len(id) != 36 || uuid.Validate(id) != nil {
		return "", errNotFound
	}
	return id, nil
}

func documento(q *request) error {
	id, err := q.id()
	if err != nil {
		return err
	}
	var note string
	switch q.r.URL.Query().Get("hecho") {
	case "enviado":
		note = "Enviado al SII."
	case "emitido":
		note = "Documento emitido y firmado."
	case "cedida":
		note = "Cesión firmada: se envía al registro del SII, que la revisa en unos minutos."
	}
	return showDocumento(q, id, http.StatusOK, nil, note)
}

// showDocumento renders a document's page with status; ceder is the
// cesión form as posted, when it comes back with its errors.
func showDocumento(q *request, id string, status int, ceder *cederForm, note string) error {
	d, err := q.c.b.Documents.Get(q.r.Context(), q.p.EmpresaID, id, api.DTEGetParams{})
	if err != nil {
		return err
	}
	// The form to send a held document carries the Idempotency-Key of
	// its one submission, so a form sent twice sends once.
	v := documentoView{DTE: d, Enviar: d.Estado == dte.EstadoFirmado, Clave: uuid.NewString()}
	if v.Cesiones, err = cesionesOf(q, d, ceder); err != nil {
		return err
	}
	return q.show(status, "documento", fmt.Sprintf("%s N° %d", tipoNombre(d.TipoDTE), d.Folio), "documentos", v, note)
}

// documentoView is a document's page.
type documentoView struct {
	*api.DTE
	// Enviar is true while the document is held (firmado); Clave is the
	// Idempotency-Key of the form that sends it.
	Enviar bool
	Clave  string
	// Cesiones is the section of a factura the registry of credit
	// transfers takes; nil for the other types.
	Cesiones *cesionesView
}

func enviarDocumento(q *request) error {
	id, err := q.id()
	if err != nil {
		return err
	}
	key := q.r.PostForm.Get("clave")
	if len(key) > 64 {
		return fault.Invalid("clave", dte.CodeInvalidValue, "la clave del formulario no es válida; vuelva a la página")
	}
	if _, _, err := q.c.b.Envelopes.Submit(q.r.Context(), q.p.EmpresaID, id, api.SubmitParams{IdempotencyKey: key}); err != nil {
		return err
	}
	http.Redirect(q.w, q.r, Prefix+"documentos/"+id+"?hecho=enviado", http.StatusSeeOther)
	return nil
}

// enviosView is a page of the company's envelopes.
type enviosView struct {
	Page      *api.Page[api.Envio]
	Siguiente string
}

func envios(q *request) error {
	page, err := q.c.b.Envelopes.List(q.r.Context(), q.p.EmpresaID, api.EnvioListParams{ListParams: api.ListParams{Limit: 50, Cursor: q.r.URL.Query().Get("cursor")}})
	if err != nil {
		return err
	}
	v := enviosView{Page: page}
	if page.NextCursor != nil {
		v.Siguiente = Prefix + "envios?" + url.Values{"cursor": {*page.NextCursor}}.Encode()
	}
	return q.show(http.StatusOK, "envios", "Envíos al SII", "envios", v)
}

// sendFile writes a document's file for the session's browser.
func (q *request) sendFile(body []byte, contentType, disposition string) error {
	h := q.w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Disposition", disposition)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if contentType == "application/pdf" {
		h.Set("Content-Security-Policy", pdfPolicy)
		h.Set("X-Frame-Options", "SAMEORIGIN")
	}
	_, _ = q.w.Write(body)
	return nil
}

func documentoPDF(q *request) error {
	id, err := q.id()
	if err != nil {
		return err
	}
	out, err := q.c.b.Documents.PDF(q.r.Context(), q.p.EmpresaID, id, api.PDFOptions{})
	if err != nil {
		return err
	}
	return q.sendFile(out, "application/pdf", `inline; filename="dte-`+id+`.pdf"`)
}

func documentoXML(q *request) error {
	id, err := q.id()
	if err != nil {
		return err
	}
	out, err := q.c.b.Documents.XML(q.r.Context(), q.p.EmpresaID, id)
	if err != nil {
		return err
	}
	return q.sendFile(out, "application/xml; charset=ISO-8859-1", `attachment; filename="dte-`+id+`.xml"`)
}

// recibidosView is a list of received documents.
type recibidosView struct {
	Estado    string
	PorVencer bool
	Page      *api.Page[api.Recibido]
	Siguiente string
}

func recibidos(q *request) error {
	estado := formValue(q.r, "estado")
	if estado == "" {
		estado = string(api.RecibidoPendiente)
	}
	if estado != "todos" && !api.EstadoRecibido(estado).Valid() {
		return fault.Invalid("estado", dte.CodeInvalidValue, "estado debe ser pendiente, aceptado, reclamado, rechazado o todos")
	}
	p := api.RecibidoListParams{ListParams: api.ListParams{Limit: 50, Cursor: q.r.URL.Query().Get("cursor")}}
	if estado != "todos" {
		p.Estado = api.EstadoRecibido(estado)
	}
	// porVencer keeps the pending documents whose window closes within
	// urgentDays.
	porVencer := formValue(q.r, "por_vencer") == "si"
	if porVencer {
		days := urgentDays
		p.Estado, p.DiasRestantes, estado = api.RecibidoPendiente, &days, string(api.RecibidoPendiente)
	}
	page, err := q.c.b.Received.List(q.r.Context(), q.p.EmpresaID, p)
	if err != nil {
		return err
	}
	v := recibidosView{Estado: estado, PorVencer: porVencer, Page: page}
	if page.NextCursor != nil {
		qs := url.Values{"estado": {estado}, "cursor": {*page.NextCursor}}
		if porVencer {
			qs.Set("por_vencer", "si")
		}
		v.Siguiente = Prefix + "recibidos?" + qs.Encode()
	}
	return q.show(http.StatusOK, "recibidos", "Recibidos", "recibidos", v)
}

// recibidoView is a received document's page.
type recibidoView struct {
	R *api.Recibido
	// Decidir is true while a decision may be taken; Recibo while the
	// receipt of goods may be registered.
	Decidir, Recibo bool
}

func recibido(q *request) error {
	id, err := q.id()
	if err != nil {
		return err
	}
	rec, err := q.c.b.Received.Get(q.r.Context(), q.p.EmpresaID, id)
	if err != nil {
		return err
	}
	v := recibidoView{R: rec, Decidir: rec.Estado == api.RecibidoPendiente,
		Recibo: !rec.MercaderiasRecibidas && (rec.Estado == api.RecibidoPendiente || rec.Estado == api.RecibidoAceptado)}
	var note string
	// Only the known actions: the link's text is never the query's.
	if a := q.r.URL.Query().Get("hecho"); slices.Contains(acciones, a) {
		note = "Registrado: " + accionNombre(a) + "."
	}
	return q.show(http.StatusOK, "recibido", fmt.Sprintf("%s N° %d de %s", tipoNombre(rec.TipoDTE), rec.Folio, rec.RazonSocialEmisor),
		"recibidos", v, note)
}

func recibidoPDF(q *request) error {
	id, err := q.id()
	if err != nil {
		return err
	}
	out, err := q.c.b.Received.PDF(q.r.Context(), q.p.EmpresaID, id)
	if err != nil {
		return err
	}
	return q.sendFile(out, "application/pdf", `inline; filename="recibido-`+id+`.pdf"`)
}

// confirmarView is the confirmation step of a decision.
type confirmarView struct {
	R       *api.Recibido
	Accion  string
	Motivo  string
	Recinto string
}

// acciones are the decisions a form may ask for.
var acciones = []string{"ACD", "RCD", "RFP", "RFT", "ERM"}

// maxMotivo bounds a claim's reason and a receipt's place as the form
// sends them.
const maxMotivo = 256

func decidir(q *request) error {
	id, err := q.id()
	if err != nil {
		return err
	}
	form := q.r.PostForm
	in := api.DecisionInput{Accion: form.Get("accion"), Motivo: strings.TrimSpace(form.Get("motivo")), Recinto: strings.TrimSpace(form.Get("recinto"))}
	if !slices.Contains(acciones, in.Accion) {
		return fault.Invalid("accion", dte.CodeInvalidValue, "la acción debe ser ACD, RCD, RFP, RFT o ERM")
	}
	if len(in.Motivo) > maxMotivo {
		return fault.Invalid("motivo", dte.CodeInvalidValue, fmt.Sprintf("el motivo tiene más de %d caracteres", maxMotivo))
	}
	if len(in.Recinto) > maxMotivo {
		return fault.Invalid("recinto", dte.CodeInvalidValue, fmt.Sprintf("el recinto tiene más de %d caracteres", maxMotivo))
	}
	ctx := q.r.Context()
	if form.Get("confirmar") != "si" {
		// First step: the document is read (so another company's id is
		// not found here either) and the decision shown for confirmation.
		rec, err := q.c.b.Received.Get(ctx, q.p.EmpresaID, id)
		if err != nil {
			return err
		}
		if in.Accion != "ACD" && in.Accion != "ERM" && in.Motivo == "" {
			return fault.Invalid("motivo", dte.CodeRequired, "un reclamo necesita su motivo")
		}
		return q.show(http.StatusOK, "confirmar", "Confirmar la decisión", "recibidos",
			confirmarView{R: rec, Accion: in.Accion, Motivo: in.Motivo, Recinto: in.Recinto})
	}
	if _, err := q.c.b.Received.Decide(ctx, q.p.EmpresaID, id, in); err != nil {
		return err
	}
	http.Redirect(q.w, q.r, Prefix+"recibidos/"+id+"?hecho="+in.Accion, http.StatusSeeOther)
	return nil
}

// foliosView is the company's CAFs and the low-stock threshold.
type foliosView struct {
	Ambiente string
	CAFs     []api.CAF
	Stock    []cafStock
	Umbral   int64
	// Mas is true when the company has more CAFs than the page shows.
	Mas bool
}

// maxCAFsShown bounds the CAFs Folios reads (ten pages).
const maxCAFsShown = 1000

func folios(q *request) error {
	ctx, emp := q.r.Context(), q.p.EmpresaID
	amb := formValue(q.r, "ambiente")
	if amb != "" && amb != api.AmbienteTodos && amb != "certificacion" && amb != "produccion" {
		return fault.Invalid("ambiente", dte.CodeInvalidValue, "ambiente debe ser certificacion, produccion o todos")
	}
	v := foliosView{Ambiente: amb}
	stock := map[dte.TipoDTE]int64{}
	cursor := ""
	for len(v.CAFs) < maxCAFsShown {
		page, err := q.c.b.CAFs.List(ctx, emp, api.CAFListParams{ListParams: api.ListParams{Limit: api.MaxLimit, Cursor: cursor}, Ambiente: amb})
		if err != nil {
			return err
		}
		v.CAFs = append(v.CAFs, page.Data...)
		if page.NextCursor == nil {
			break
		}
		cursor = *page.NextCursor
		v.Mas = len(v.CAFs) >= maxCAFsShown
	}
	for _, cf := range v.CAFs {
		if cf.IsActive {
			stock[cf.TipoDTE] += cf.FoliosDisponibles
		} else if _, ok := stock[cf.TipoDTE]; !ok {
			stock[cf.TipoDTE] = 0
		}
	}
	for _, t := range dte.Tipos() {
		if n, ok := stock[t]; ok {
			v.Stock = append(v.Stock, cafStock{t, n})
		}
	}
	alerts, err := q.c.b.Company.AlertSettings(ctx, emp)
	if err != nil {
		return err
	}
	v.Umbral = alerts.CAFLowStockThreshold
	var note string
	switch q.r.URL.Query().Get("hecho") {
	case "caf":
		note = "CAF registrado."
	case "umbral":
		note = "Umbral actualizado."
	}
	return q.show(http.StatusOK, "folios", "Folios", "folios", v, note)
}

func subirCAF(q *request) error {
	body, err := uploaded(q, "archivo", "un archivo CAF del SII")
	if err != nil {
		return err
	}
	if _, err := q.c.b.CAFs.RegisterFile(q.r.Context(), q.p.EmpresaID, body); err != nil {
		return err
	}
	http.Redirect(q.w, q.r, Prefix+"folios?hecho=caf", http.StatusSeeOther)
	return nil
}

func umbral(q *request) error {
	n, err := strconv.ParseInt(strings.TrimSpace(q.r.PostForm.Get("umbral")), 10, 64)
	if err != nil {
		return fault.Invalid("caf_low_stock_threshold", dte.CodeInvalidValue, "el umbral debe ser un número entero")
	}
	if _, err := q.c.b.Company.UpdateAlertSettings(q.r.Context(), q.p.EmpresaID, api.AlertSettingsInput{CAFLowStockThreshold: &n}); err != nil {
		return err
	}
	http.Redirect(q.w, q.r, Prefix+"folios?hecho=umbral", http.StatusSeeOther)
	return nil
}

func webhooks(q *request) error {
	hooks, err := q.c.b.Webhooks.List(q.r.Context(), q.p.EmpresaID)
	if err != nil {
		return err
	}
	return q.show(http.StatusOK, "webhooks", "Webhooks", "webhooks", hooks)
}

// webhookView is a webhook's page with its latest deliveries.
type webhookView struct {
	W          *api.Webhook
	Deliveries *api.Page[api.Delivery]
	Siguiente  string
	// Secreto is the new secret, on the one page that answers its
	// rotation: it is never shown again.
	Secreto string
}

func webhook(q *request) error {
	id, err := q.id()
	if err != nil {
		return err
	}
	var note string
	switch q.r.URL.Query().Get("hecho") {
	case "pausado":
		note = "Webhook pausado: los eventos desde ahora no se le entregan."
	case "activado":
		note = "Webhook activado."
	case "reenviado":
		note = "Entrega reenviada: su intento aparece en la lista en unos segundos."
	}
	return showWebhook(q, id, "", note)
}

// showWebhook renders a webhook's page, with a secret just rotated when
// secreto is not empty.
func showWebhook(q *request, id, secreto, note string) error {
	ctx := q.r.Context()
	w, err := q.c.b.Webhooks.Get(ctx, q.p.EmpresaID, id)
	if err != nil {
		return err
	}
	ds, err := q.c.b.Webhooks.ListDeliveries(ctx, q.p.EmpresaID, api.DeliveryListParams{WebhookID: id,
		ListParams: api.ListParams{Limit: 50, Cursor: q.r.URL.Query().Get("cursor")}})
	if err != nil {
		return err
	}
	v := webhookView{W: w, Deliveries: ds, Secreto: secreto}
	if ds.NextCursor != nil {
		v.Siguiente = Prefix + "webhooks/" + id + "?" + url.Values{"cursor": {*ds.NextCursor}}.Encode()
	}
	return q.show(http.StatusOK, "webhook", "Webhook", "webhooks", v, note)
}

func pausarWebhook(q *request) error {
	id, err := q.id()
	if err != nil {
		return err
	}
	off := false
	if _, err := q.c.b.Webhooks.Update(q.r.Context(), q.p.EmpresaID, id, api.WebhookUpdate{IsActive: &off}); err != nil {
		return err
	}
	http.Redirect(q.w, q.r, Prefix+"webhooks/"+id+"?hecho=pausado", http.StatusSeeOther)
	return nil
}

func activarWebhook(q *request) error {
	id, err := q.id()
	if err != nil {
		return err
	}
	if _, err := q.c.b.Webhooks.Enable(q.r.Context(), q.p.EmpresaID, id); err != nil {
		return err
	}
	http.Redirect(q.w, q.r, Prefix+"webhooks/"+id+"?hecho=activado", http.StatusSeeOther)
	return nil
}
