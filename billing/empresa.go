package billing

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/signer"
	"github.com/dtekit/dtekit/store"
)

// Get returns the company.
func (r *CompanyService) Get(ctx context.Context, empresaID string) (*api.Empresa, error) {
	s := r.s
	e, err := s.st.GetEmpresa(ctx, empresaID)
	if err != nil {
		return nil, storeErr(err, "reading the company", "empresa", empresaID)
	}
	return empresaFromStore(e), nil
}

// multilineFields are the free texts that may hold line feeds and tabs.
var multilineFields = map[string]bool{"notas": true, "descripcion": true}

// checkText appends the problem of one text, if any, by dte.CheckText's
// rules (the ones the SII's documents need: blank when required, too
// long, a control character, a character ISO-8859-1 cannot hold), so
// that no bad text reaches the store on either backend.
func checkText(details []dte.FieldError, field, v string, required bool, maxLen int) []dte.FieldError {
	if p := dte.CheckText(field, v, maxLen, required, multilineFields[field]); p != nil {
		return append(details, *p)
	}
	return details
}

// maxSearch bounds a catalog search text.
const maxSearch = 200

// checkSearch refuses a search text that could not match any stored
// text (a control character, one outside ISO-8859-1) or is too long.
func checkSearch(q string) *fault.Error {
	return invalid(checkText(nil, "q", q, false, maxSearch))
}

func invalid(details []dte.FieldError) *fault.Error {
	if len(details) == 0 {
		return nil
	}
	return fault.FromValidation(&dte.ValidationError{Details: details})
}

// invalidEmisor applies dte.Emisor.Validate, the one check of an issuer.
// With fields given, only problems of those fields count (an update leaves
// the others as they were); a problem of acteco[i] counts for acteco.
func invalidEmisor(e *dte.Emisor, fields map[string]bool) *fault.Error {
	var ve *dte.ValidationError
	if !errors.As(e.Validate(), &ve) {
		return nil
	}
	d := ve.Details
	if fields != nil {
		d = nil
		for _, f := range ve.Details {
			if name, _, _ := strings.Cut(f.Field, "["); fields[name] {
				d = append(d, f)
			}
		}
	}
	return invalid(d)
}

// Update changes the company's tax and contact data.
func (r *CompanyService) Update(ctx context.Context, empresaID string, in api.EmpresaUpdate) (*api.Empresa, error) {
	s := r.s
	var logo *api.Logo
	if in.Logo != nil {
		var e *fault.Error
		if logo, e = cleanLogo(in.Logo); e != nil {
			return nil, e
		}
	}
	var out *store.Empresa
	err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		e, err := tx.GetEmpresa(ctx, empresaID)
		if err != nil {
			return err
		}
		set := func(dst *string, v *string) {
			if v != nil {
				*dst = strings.TrimSpace(*v)
			}
		}
		set(&e.RazonSocial, in.RazonSocial)
		set(&e.Giro, in.Giro)
		set(&e.Direccion, in.Direccion)
		set(&e.Comuna, in.Comuna)
		set(&e.Ciudad, in.Ciudad)
		set(&e.OficinaSII, in.OficinaSII)
		set(&e.FechaResolucion, in.FechaResolucion)
		set(&e.InboundEmail, in.InboundEmail)
		if in.NumeroResolucion != nil {
			e.NumeroResolucion = int64(*in.NumeroResolucion)
		}
		if in.Acteco != nil {
			e.Acteco = e.Acteco[:0]
			for _, a := range *in.Acteco {
				e.Acteco = append(e.Acteco, int64(a))
			}
		}
		updated := map[string]bool{"razon_social": in.RazonSocial != nil, "giro": in.Giro != nil,
			"direccion": in.Direccion != nil, "comuna": in.Comuna != nil, "ciudad": in.Ciudad != nil,
			"fecha_resolucion": in.FechaResolucion != nil, "numero_resolucion": in.NumeroResolucion != nil,
			"acteco": in.Acteco != nil, "oficina_sii": in.OficinaSII != nil}
		em := empresaFromStore(e).Emisor()
		if bad := invalidEmisor(&em, updated); bad != nil {
			return bad
		}
		var d []dte.FieldError
		if in.OficinaSII != nil {
			d = checkText(d, "oficina_sii", e.OficinaSII, false, maxOficinaSII)
		}
		if in.InboundEmail != nil {
			d = checkEmailField(d, "inbound_email", e.InboundEmail)
		}
		if bad := invalid(d); bad != nil {
			return bad
		}
		if in.Ambiente != nil && *in.Ambiente != e.Ambiente {
			if bad := s.checkAmbienteMove(ctx, tx, e, *in.Ambiente); bad != nil {
				return bad
			}
			e.Ambiente = *in.Ambiente
		}
		if logo != nil {
			if err := tx.SetEmpresaLogo(ctx, empresaID, &store.Logo{ContentType: logo.ContentType, Data: logo.Data}); err != nil {
				return err
			}
		}
		e.UpdatedAt = time.Time{}
		out = e
		return tx.UpdateEmpresa(ctx, e)
	})
	if err != nil {
		return nil, storeErr(err, "updating the company", "empresa", empresaID)
	}
	s.issuers.Delete(empresaID)
	return empresaFromStore(out), nil
}

// maxOficinaSII bounds the SII office's name (the longest SII office
// names are about 30 characters).
const maxOficinaSII = 60

// checkAmbienteMove checks that the company may move to ambiente: one of
// the two environments, and for produccion a resolution (a number above
// 0 and its date) and a signing certificate that has not expired. CAFs
// are per environment, so none of the other one carries over.
func (s *Service) checkAmbienteMove(ctx context.Context, tx store.Tx, e *store.Empresa, ambiente string) *fault.Error {
	switch ambiente {
	case dte.AmbienteCertificacion:
		return nil
	case dte.AmbienteProduccion:
	default:
		return fault.Invalid("ambiente", dte.CodeInvalidValue, fmt.Sprintf("ambiente %q is neither %q nor %q", ambiente, dte.AmbienteCertificacion, dte.AmbienteProduccion))
	}
	var d []dte.FieldError
	if e.NumeroResolucion <= 0 {
		d = append(d, dte.FieldError{Field: "numero_resolucion", Code: dte.CodeRequired,
			Message: "produccion needs the number of the SII resolution that authorizes the company to issue (0 is certificación's)",
			Action:  "give numero_resolucion (and fecha_resolucion) with the move"})
	}
	if e.FechaResolucion == "" {
		d = append(d, dte.FieldError{Field: "fecha_resolucion", Code: dte.CodeRequired,
			Message: "produccion needs the date of the SII resolution that authorizes the company to issue"})
	}
	cert, err := tx.GetCertificado(ctx, e.ID)
	switch {
	case errors.Is(err, store.ErrNotFound) || err == nil && !cert.IsActive:
		d = append(d, dte.FieldError{Field: "ambiente", Code: fault.DetailCertRequired,
			Message: "produccion needs the company's signing certificate", Action: "upload the certificate first"})
	case err != nil:
		return fault.Failed("reading the certificate", err)
	case !s.now().Before(cert.FechaVencimiento):
		d = append(d, dte.FieldError{Field: "ambiente", Code: fault.DetailCertExpired,
			Message: "the company's signing certificate expired on " + cert.FechaVencimiento.UTC().Format(time.DateOnly),
			Action:  "upload a valid certificate first"})
	}
	return invalid(d)
}

// List returns every company, oldest first, or those working in
// p.Ambiente when it is not empty: an operator's view across companies,
// which no API route serves, so it is a slice and not a page.
func (r *CompanyService) List(ctx context.Context, p api.EmpresaListParams) ([]api.Empresa, error) {
	s := r.s
	ambiente := p.Ambiente
	if ambiente != "" && ambiente != dte.AmbienteCertificacion && ambiente != dte.AmbienteProduccion {
		return nil, fault.Invalid("ambiente", dte.CodeInvalidValue,
			fmt.Sprintf("ambiente %q is neither %q nor %q", ambiente, dte.AmbienteCertificacion, dte.AmbienteProduccion))
	}
	out := []api.Empresa{}
	for e, err := range store.Empresas(ctx, s.st) {
		if err != nil {
			return nil, fault.Failed("listing companies", err)
		}
		if ambiente == "" || e.Ambiente == ambiente {
			out = append(out, *empresaFromStore(e))
		}
	}
	return out, nil
}

// Create registers a company (operator operation, no tenant).
func (r *CompanyService) Create(ctx context.Context, in api.EmpresaInput) (*api.Empresa, error) {
	s := r.s
	// The text fields are stored trimmed, and checked as they will be stored.
	em := dte.Emisor{Rut: in.Rut, RazonSocial: strings.TrimSpace(in.RazonSocial), Giro: strings.TrimSpace(in.Giro),
		Direccion: strings.TrimSpace(in.Direccion), Comuna: strings.TrimSpace(in.Comuna), Ciudad: strings.TrimSpace(in.Ciudad),
		Ambiente: in.Ambiente, FechaResolucion: in.FechaResolucion, NumeroResolucion: in.NumeroResolucion, Acteco: in.Acteco}
	if bad := invalidEmisor(&em, nil); bad != nil {
		return nil, bad
	}
	rut, _ := dte.ParseRUT(in.Rut)
	rec := &store.Empresa{ID: newID(), Rut: rut.String(), RazonSocial: em.RazonSocial, Giro: em.Giro,
		Direccion: em.Direccion, Comuna: em.Comuna, Ciudad: em.Ciudad,
		Ambiente: in.Ambiente, FechaResolucion: in.FechaResolucion, NumeroResolucion: int64(in.NumeroResolucion)}
	for _, a := range in.Acteco {
		rec.Acteco = append(rec.Acteco, int64(a))
	}
	err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertEmpresa(ctx, rec) })
	if err != nil {
		return nil, storeErr(err, "creating the company", "empresa", rec.ID)
	}
	return empresaFromStore(rec), nil
}

// UploadCertificate installs the company's signing certificate from a
// .pfx/.p12 file (in.File) of at most MaxCertificateSize bytes, opened with
// in.Password; the certificate's RUT must be in.RutFirmante. The key is stored sealed by
// the Keyring; the password is not kept.
func (r *CompanyService) UploadCertificate(ctx context.Context, empresaID string, in api.CertificadoUpload) (*api.CertificadoStatus, error) {
	s := r.s
	if _, err := s.st.GetEmpresa(ctx, empresaID); err != nil {
		return nil, storeErr(err, "reading the company", "empresa", empresaID)
	}
	now := s.now()
	cert, e := checkCertificate(in.File, in.Password, in.RutFirmante, now)
	if e != nil {
		return nil, e
	}
	plain, err := encodeCredential(cert)
	if err != nil {
		return nil, fault.Failed("encoding the certificate", err)
	}
	uploaded := now.UTC().Truncate(time.Microsecond)
	sealed, err := s.keys.Seal(plain, certAAD(empresaID))
	if err != nil {
		return nil, fault.Failed("sealing the certificate", err)
	}
	rut, _ := cert.RUT()
	rec := &store.Certificado{EmpresaID: empresaID, RutFirmante: rut, Subject: cert.Subject(),
		FechaVencimiento: cert.NotAfter(), Sealed: sealed, IsActive: true, UploadedAt: uploaded}
	err = s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.PutCertificado(ctx, rec) })
	if err != nil {
		return nil, storeErr(err, "storing the certificate", "empresa", empresaID)
	}
	s.certs.put(empresaID, certKey(rec), cert)
	s.issuers.Delete(empresaID)
	s.log.Info("billing: certificate installed", "empresa_id", empresaID, "rut_firmante", rut)
	return certStatus(cert, uploaded, now), nil
}

// certAAD binds a sealed certificate to its company.
func certAAD(empresaID string) []byte { return secretAAD("certificado", empresaID, "") }

// certKey identifies one stored certificate of a company (a new upload
// replaces it and changes the key).
func certKey(c *store.Certificado) string { return c.UploadedAt.UTC().Format(time.RFC3339Nano) }

// Certificate describes the company's certificate.
func (r *CompanyService) Certificate(ctx context.Context, empresaID string) (*api.CertificadoStatus, error) {
	s := r.s
	if _, err := s.st.GetEmpresa(ctx, empresaID); err != nil {
		return nil, storeErr(err, "reading the company", "empresa", empresaID)
	}
	cert, rec, err := s.loadCert(ctx, empresaID)
	if err != nil {
		var be *fault.Error
		if errors.As(err, &be) && be.Code == fault.CertificateRequired {
			return &api.CertificadoStatus{}, nil
		}
		return nil, err
	}
	st := certStatus(cert, rec.UploadedAt, s.now())
	st.IsActive = st.IsActive && rec.IsActive
	return st, nil
}

// issuerTTL is how long issuer caches a company's data and certificate
// record for emission. Changes made through this Service are seen at once;
// changes made by another process sharing the database within this delay.
const issuerTTL = 2 * time.Second

// cachedIssuer is what every emission of a company needs of it: the
// company, its certificate and an Emitter for both (it holds no state of
// its own, so emissions share it).
type cachedIssuer struct {
	emp  *api.Empresa
	cert *signer.Certificate
	em   *dte.Emitter
	at   time.Time
}

// issuer returns the company and its opened certificate for an emission,
// from a short-lived cache (two reads saved per emission under load).
func (s *Service) issuer(ctx context.Context, empresaID string) (*cachedIssuer, error) {
	now := time.Now()
	if v, ok := s.issuers.Load(empresaID); ok {
		if c := v.(*cachedIssuer); now.Sub(c.at) < issuerTTL {
			return c, nil
		}
	}
	emp, err := s.st.GetEmpresa(ctx, empresaID)
	if err != nil {
		return nil, storeErr(err, "reading the company", "empresa", empresaID)
	}
	cert, err := s.signingCert(ctx, empresaID)
	if err != nil {
		return nil, err
	}
	e := empresaFromStore(emp)
	c := &cachedIssuer{emp: e, cert: cert, em: &dte.Emitter{Emisor: e.Emisor(), Cert: cert}, at: now}
	s.issuers.Store(empresaID, c)
	return c, nil
}

// signingCert returns the company's opened certificate (cached).
func (s *Service) signingCert(ctx context.Context, empresaID string) (*signer.Certificate, error) {
	c, _, err := s.loadCert(ctx, empresaID)
	return c, err
}

func (s *Service) loadCert(ctx context.Context, empresaID string) (*signer.Certificate, *store.Certificado, error) {
	rec, err := s.st.GetCertificado(ctx, empresaID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, &fault.Error{Kind: fault.KindValidation, Code: fault.CertificateRequired,
			Message: "the company has no signing certificate; upload one first",
			Details: []dte.FieldError{{Field: "certificado", Code: fault.DetailCertRequired, Message: "no certificate uploaded",
				Action: "upload the company's signing certificate"}}}
	}
	if err != nil {
		return nil, nil, fault.Failed("reading the certificate", err)
	}
	if c := s.certs.get(empresaID, certKey(rec)); c != nil {
		return c, rec, nil
	}
	plain, err := s.keys.Open(rec.Sealed, certAAD(empresaID))
	if err != nil {
		return nil, nil, fault.Failed("opening the stored certificate", err)
	}
	c, err := decodeCredential(plain)
	if err != nil {
		return nil, nil, fault.Failed("reading the stored certificate", err)
	}
	s.certs.put(empresaID, certKey(rec), c)
	return c, rec, nil
}
