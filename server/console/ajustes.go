package console

import (
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte"
)

// ajustesView is the Ajustes page: the company's data and its forms, the
// certificate, the mail settings, and the company's API keys.
type ajustesView struct {
	E           *api.Empresa
	Certificado *api.CertificadoStatus
	Correo      *api.CorreoSettings
	Logo        bool
	Claves      []api.APIKey
	// Valores are the company form's values as typed, when it is shown
	// again with its errors; Errores the field errors beside their
	// fields, Otros those of no field shown.
	Valores map[string]string
	Errores map[string]string
	Otros   []string
	// NuevaClave is a key just created, on the one page that shows it.
	NuevaClave *api.APIKey
	// Lectura is the outcome of the mailbox's test read.
	Lectura *api.LecturaCorreo
}

// empresaCampos are the company form's fields, in the form's order, with
// their labels.
var empresaCampos = [][2]string{{"razon_social", "Razón social"}, {"giro", "Giro"}, {"direccion", "Dirección"},
	{"comuna", "Comuna"}, {"ciudad", "Ciudad"}, {"oficina_sii", "Oficina del SII"}}

// ambienteCampos are the move's fields.
var ambienteCampos = []string{"ambiente", "fecha_resolucion", "numero_resolucion"}

// loadAjustes reads what the page shows.
func loadAjustes(q *request) (*ajustesView, error) {
	ctx, b, emp := q.r.Context(), q.c.b, q.p.EmpresaID
	v := &ajustesView{Errores: map[string]string{}}
	var err error
	if v.E, err = b.Company.Get(ctx, emp); err != nil {
		return nil, err
	}
	if v.Certificado, err = b.Company.Certificate(ctx, emp); err != nil {
		return nil, err
	}
	if v.Correo, err = b.Mail.Settings(ctx, emp); err != nil {
		return nil, err
	}
	if _, err := b.Company.Logo(ctx, emp); err == nil {
		v.Logo = true
	} else if fault.KindOf(err) != fault.KindNotFound {
		return nil, err
	}
	if v.Claves, err = b.Keys.List(ctx, emp); err != nil {
		return nil, err
	}
	v.Valores = map[string]string{"razon_social": v.E.RazonSocial, "giro": v.E.Giro, "direccion": v.E.Direccion,
		"comuna": v.E.Comuna, "ciudad": v.E.Ciudad, "oficina_sii": v.E.OficinaSII, "fecha_resolucion": v.E.FechaResolucion}
	if v.E.NumeroResolucion > 0 {
		v.Valores["numero_resolucion"] = strconv.Itoa(v.E.NumeroResolucion)
	}
	for k, val := range correoValores(v.Correo) {
		v.Valores[k] = val
	}
	return v, nil
}

func ajustes(q *request) error {
	v, err := loadAjustes(q)
	if err != nil {
		return err
	}
	var note string
	switch q.r.URL.Query().Get("hecho") {
	case "empresa":
		note = "Datos de la empresa guardados."
	case "ambiente":
		note = "Ambiente cambiado a " + ambienteNombre(v.E.Ambiente) + "."
	case "logo":
		note = "Logo guardado: se imprime en los PDF desde ahora."
	case "correo":
		note = "Correo guardado."
	case "revocada":
		note = "Clave revocada: deja de servir de inmediato."
	}
	return q.show(http.StatusOK, "ajustes", "Ajustes", "ajustes", v, note)
}

// refused shows Ajustes again with a form's values and the refusal's
// field errors beside their fields (fields names those of the form); an
// error that is not a refusal of fields is returned as it is.
func refused(q *request, err error, values map[string]string, fields []string) error {
	fe := fault.As(err)
	if fe == nil || fe.Kind != fault.KindValidation {
		return err
	}
	v, lerr := loadAjustes(q)
	if lerr != nil {
		return lerr
	}
	for k, val := range values {
		v.Valores[k] = val
	}
	if len(fe.Details) == 0 {
		v.Otros = append(v.Otros, fe.Message)
	}
	for _, d := range fe.Details {
		name, _, _ := strings.Cut(d.Field, "[")
		name = strings.ReplaceAll(name, ".", "_")
		known := false
		for _, f := range fields {
			known = known || f == name
		}
		if _, dup := v.Errores[name]; !known || dup {
			v.Otros = append(v.Otros, d.Field+": "+d.Message)
			continue
		}
		v.Errores[name] = mensajeCampo(d)
	}
	return q.show(http.StatusBadRequest, "ajustes", "Ajustes", "ajustes", v)
}

func ajustarEmpresa(q *request) error {
	f := q.r.PostForm
	in := api.EmpresaUpdate{}
	values := map[string]string{}
	fields := make([]string, 0, len(empresaCampos))
	for _, c := range empresaCampos {
		fields = append(fields, c[0])
		if _, ok := f[c[0]]; !ok {
			continue
		}
		val := f.Get(c[0])
		values[c[0]] = val
		switch c[0] {
		case "razon_social":
			in.RazonSocial = &val
		case "giro":
			in.Giro = &val
		case "direccion":
			in.Direccion = &val
		case "comuna":
			in.Comuna = &val
		case "ciudad":
			in.Ciudad = &val
		case "oficina_sii":
			in.OficinaSII = &val
		}
	}
	if _, err := q.c.b.Company.Update(q.r.Context(), q.p.EmpresaID, in); err != nil {
		return refused(q, err, values, fields)
	}
	http.Redirect(q.w, q.r, Prefix+"ajustes?hecho=empresa", http.StatusSeeOther)
	return nil
}

// cambiarAmbiente moves the company between certificación and
// producción, with the resolution when given; the face refuses a move to
// producción without a resolution or a valid certificate, and its field
// errors stand beside the form's fields.
func cambiarAmbiente(q *request) error {
	f := q.r.PostForm
	amb := f.Get("ambiente")
	values := map[string]string{"fecha_resolucion": f.Get("fecha_resolucion"), "numero_resolucion": f.Get("numero_resolucion")}
	in := api.EmpresaUpdate{Ambiente: &amb}
	if s := strings.TrimSpace(values["fecha_resolucion"]); s != "" {
		in.FechaResolucion = &s
	}
	if s := strings.TrimSpace(values["numero_resolucion"]); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return refused(q, fault.Invalid("numero_resolucion", dte.CodeInvalidValue, "el número de resolución debe ser un entero"), values, ambienteCampos)
		}
		in.NumeroResolucion = &n
	}
	if _, err := q.c.b.Company.Update(q.r.Context(), q.p.EmpresaID, in); err != nil {
		return refused(q, err, values, ambienteCampos)
	}
	http.Redirect(q.w, q.r, Prefix+"ajustes?hecho=ambiente", http.StatusSeeOther)
	return nil
}

// uploaded reads the form's one file of field name.
func uploaded(q *request, name, what string) ([]byte, error) {
	if q.r.MultipartForm == nil || len(q.r.MultipartForm.File[name]) != 1 {
		return nil, fault.Invalid(name, dte.CodeRequired, "elija "+what)
	}
	fh := q.r.MultipartForm.File[name][0]
	if fh.Size > maxUpload {
		return nil, fault.Invalid(name, fault.DetailCertTooLarge, tooLargeField)
	}
	file, err := fh.Open()
	if err != nil {
		return nil, fault.Invalid(name, dte.CodeInvalidValue, "el archivo no se pudo leer")
	}
	defer file.Close()
	body := make([]byte, fh.Size)
	if _, err := io.ReadFull(file, body); err != nil {
		return nil, fault.Invalid(name, dte.CodeInvalidValue, "el archivo no se pudo leer")
	}
	return body, nil
}

func subirLogo(q *request) error {
	body, err := uploaded(q, "logo", "una imagen PNG o JPEG")
	if err == nil {
		_, err = q.c.b.Company.SetLogo(q.r.Context(), q.p.EmpresaID, body)
	}
	if err != nil {
		// The face names the upload "file"; the form's field is "logo".
		return refused(q, renamed(err, func(f string) string {
			if f == "file" {
				return "logo"
			}
			return f
		}), nil, []string{"logo"})
	}
	http.Redirect(q.w, q.r, Prefix+"ajustes?hecho=logo", http.StatusSeeOther)
	return nil
}

// correoCampos are the mail form's fields; the passwords are never
// shown again, and one left empty keeps the password on record.
// Their names are the face's, in dot notation made flat, after
// "correo_" (the company form has a direccion too).
var correoCampos = []string{"correo_direccion", "correo_enviar_dte", "correo_smtp_host", "correo_smtp_port", "correo_smtp_seguridad",
	"correo_smtp_usuario", "correo_smtp_password", "correo_imap_host", "correo_imap_port", "correo_imap_seguridad",
	"correo_imap_usuario", "correo_imap_password", "correo_imap_carpeta"}

// correoValores are the form's values of settings c (no password).
func correoValores(c *api.CorreoSettings) map[string]string {
	v := map[string]string{"correo_direccion": c.Direccion, "correo_enviar_dte": string(c.EnviarDTE)}
	for name, srv := range map[string]*api.CorreoServidor{"correo_smtp": c.SMTP, "correo_imap": c.IMAP} {
		if srv == nil {
			continue
		}
		v[name+"_host"], v[name+"_port"], v[name+"_seguridad"], v[name+"_usuario"] = srv.Host, strconv.Itoa(srv.Port), srv.Seguridad, srv.Usuario
		v[name+"_carpeta"] = srv.Carpeta
	}
	return v
}

// ajustarCorreo replaces the company's mail settings, which only an
// admin may do (as PUT /empresa/correo: they carry the servers'
// passwords). A server without a host is removed.
func ajustarCorreo(q *request) error {
	if !q.p.Admin {
		q.c.fail(q.w, q.r, q.sess, http.StatusForbidden, "Solo una credencial de administrador puede cambiar el correo de la empresa.")
		return nil
	}
	f := q.r.PostForm
	values := map[string]string{}
	for _, name := range correoCampos {
		if !strings.HasSuffix(name, "_password") {
			values[name] = strings.TrimSpace(f.Get(name))
		}
	}
	acuse := f.Get("acuse_automatico") == "si"
	in := api.CorreoSettings{Direccion: values["correo_direccion"], EnviarDTE: api.CuandoEnviar(values["correo_enviar_dte"]), AcuseAutomatico: &acuse}
	var bad []dte.FieldError
	server := func(srvName string) *api.CorreoServidor {
		name := "correo_" + srvName
		if values[name+"_host"] == "" {
			return nil
		}
		srv := &api.CorreoServidor{Host: values[name+"_host"], Seguridad: values[name+"_seguridad"], Usuario: values[name+"_usuario"],
			Password: f.Get(name + "_password"), Carpeta: values[name+"_carpeta"]}
		n, err := strconv.Atoi(values[name+"_port"])
		if err != nil {
			bad = append(bad, dte.FieldError{Field: srvName + ".port", Code: dte.CodeInvalidFormat, Message: "el puerto es un número"})
		}
		srv.Port = n
		return srv
	}
	in.SMTP, in.IMAP = server("smtp"), server("imap")
	var err error
	if len(bad) > 0 {
		err = &fault.Error{Kind: fault.KindValidation, Code: fault.Validation, Message: "datos no válidos", Details: bad}
	} else {
		_, err = q.c.b.Mail.UpdateSettings(q.r.Context(), q.p.EmpresaID, in)
	}
	if err != nil {
		return refused(q, prefixed(err, "correo."), values, correoCampos)
	}
	http.Redirect(q.w, q.r, Prefix+"ajustes?hecho=correo", http.StatusSeeOther)
	return nil
}

// probarCorreo reads the company's mailbox now, the test the face
// offers (it has no test of sending), and shows the outcome.
func probarCorreo(q *request) error {
	res, err := q.c.b.Mail.Poll(q.r.Context(), q.p.EmpresaID)
	v, lerr := loadAjustes(q)
	if lerr != nil {
		return lerr
	}
	if err != nil {
		fe := fault.As(err)
		if fe == nil || fe.Kind == fault.KindInternal || fe.Kind == fault.KindNotFound {
			return err
		}
		// The face's sentence names the failure's category only.
		v.Otros = append(v.Otros, "No se pudo leer el buzón: "+fe.Message)
		return q.show(http.StatusOK, "ajustes", "Ajustes", "ajustes", v)
	}
	v.Lectura = res
	return q.show(http.StatusOK, "ajustes", "Ajustes", "ajustes", v, "Buzón leído.")
}

// keysAdminOnly refuses the key forms to a credential without the admin
// role: a key that could mint keys would outlive its own revocation.
func keysAdminOnly(q *request) bool {
	if q.p.Admin {
		return false
	}
	q.c.fail(q.w, q.r, q.sess, http.StatusForbidden, "Solo una credencial de administrador puede crear o revocar claves.")
	return true
}

func crearClave(q *request) error {
	if keysAdminOnly(q) {
		return nil
	}
	k, err := q.c.b.Keys.Create(q.r.Context(), q.p.EmpresaID, api.APIKeyInput{Write: q.r.PostForm.Get("escritura") == "si"})
	if err != nil {
		return err
	}
	v, err := loadAjustes(q)
	if err != nil {
		return err
	}
	v.NuevaClave = k
	return q.show(http.StatusOK, "ajustes", "Ajustes", "ajustes", v, "Clave creada. Cópiela ahora: no se volverá a mostrar.")
}

func revocarClave(q *request) error {
	if keysAdminOnly(q) {
		return nil
	}
	id, err := q.id()
	if err != nil {
		return err
	}
	if err := q.c.b.Keys.Revoke(q.r.Context(), q.p.EmpresaID, id); err != nil {
		return err
	}
	http.Redirect(q.w, q.r, Prefix+"ajustes?hecho=revocada", http.StatusSeeOther)
	return nil
}

// renamed is a refusal with its fields renamed by to.
func renamed(err error, to func(string) string) error {
	fe := fault.As(err)
	if fe == nil || fe.Kind != fault.KindValidation {
		return err
	}
	cp := *fe
	cp.Details = append([]dte.FieldError(nil), fe.Details...)
	for i := range cp.Details {
		cp.Details[i].Field = to(cp.Details[i].Field)
	}
	return &cp
}

// prefixed is a refusal with prefix before each field's name.
func prefixed(err error, prefix string) error {
	return renamed(err, func(f string) string { return prefix + f })
}
