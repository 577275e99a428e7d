package billing

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/dte"
)

// Config builds a Service.
type Config struct {
	// Keyring seals certificate keys and webhook secrets at rest
	// (required).
	Keyring *Keyring
	// TrustedKeys verifies the SII's signature (FRMA) over registered
	// CAFs. Nil means caf.SIIKeys(); tests pass a test authority's Keys.
	TrustedKeys caf.TrustedKeys
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger receives operational messages (ids, never bodies or
	// secrets); nil discards them.
	Logger *slog.Logger
	// IdempotencyTTL is how long completed Idempotency-Keys are kept;
	// zero means 24 hours (contract §8).
	IdempotencyTTL time.Duration
	// RecoveryAfter is how old a borrador emission must be before the
	// recovery job finishes it; zero means 30 seconds.
	RecoveryAfter time.Duration
}

// Defaults of Config.
const (
	DefaultIdempotencyTTL = 24 * time.Hour
	DefaultRecoveryAfter  = 30 * time.Second
)

// Service is the billing application. Build it with New; it is safe for
// concurrent use.
type Service struct {
	cfg    Config
	keys   *Keyring
	trust  caf.TrustedKeys
	now    func() time.Time
	log    *slog.Logger
	certs  certCache
	ttl    time.Duration
	recAge time.Duration
}

// New builds a Service from cfg.
func New(cfg Config) (*Service, error) {
	if cfg.Keyring == nil {
		return nil, errors.New("billing: Config.Keyring is required")
	}
	s := &Service{cfg: cfg, keys: cfg.Keyring, trust: cfg.TrustedKeys, now: cfg.Now, log: cfg.Logger,
		ttl: cfg.IdempotencyTTL, recAge: cfg.RecoveryAfter}
	if s.trust == nil {
		s.trust = caf.SIIKeys()
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.ttl <= 0 {
		s.ttl = DefaultIdempotencyTTL
	}
	if s.recAge <= 0 {
		s.recAge = DefaultRecoveryAfter
	}
	return s, nil
}

// EmitDTE emits a document for the company from the raw JSON body of an
// emission request (contract §2.3), under an Idempotency-Key.
//
// The first call with a key answers Status 201 and the EmitirDTEResponse
// JSON in Body; a later call with the same key and the same request
// (compared after decoding, so formatting does not matter) answers the
// same bytes with Replay set. The same key with another request fails with
// KindIdempotencyMismatch, and while the first call is still running with
// KindIdempotencyInProgress.
func (s *Service) EmitDTE(ctx context.Context, empresaID, idempotencyKey string, body []byte) (*EmitResult, error) {
	return nil, errNotImplemented("EmitDTE")
}

// GetDTE returns a document; includeXML adds the signed XML
// (xml_documento).
func (s *Service) GetDTE(ctx context.Context, empresaID, id string, includeXML bool) (*dte.DTE, error) {
	return nil, errNotImplemented("GetDTE")
}

// ListDTE lists the company's documents, newest first, with keyset
// cursors that stay stable under concurrent inserts.
func (s *Service) ListDTE(ctx context.Context, empresaID string, f DTEFilter) (*DTEPage, error) {
	return nil, errNotImplemented("ListDTE")
}

// DTEXML returns a document's signed XML (ISO-8859-1 bytes).
func (s *Service) DTEXML(ctx context.Context, empresaID, id string) ([]byte, error) {
	return nil, errNotImplemented("DTEXML")
}

// DTEPDF renders a document's printed form.
func (s *Service) DTEPDF(ctx context.Context, empresaID, id string, opts PDFOptions) ([]byte, error) {
	return nil, errNotImplemented("DTEPDF")
}

// RegisterCAF registers a CAF file for the company: it must parse, carry
// the SII's valid signature (certification keys for a certification
// company), be issued to the company's RUT, match the company's
// environment and the declared type, and not overlap a registered range
// of the same type (KindConflict, CAF_RANGE_CONFLICT).
func (s *Service) RegisterCAF(ctx context.Context, empresaID string, in CAFInput) (*CAF, error) {
	return nil, errNotImplemented("RegisterCAF")
}

// ListCAF lists the company's CAFs; tipo 0 lists every type.
func (s *Service) ListCAF(ctx context.Context, empresaID string, tipo dte.TipoDTE) ([]CAF, error) {
	return nil, errNotImplemented("ListCAF")
}

// GetCAF returns one CAF.
func (s *Service) GetCAF(ctx context.Context, empresaID, id string) (*CAF, error) {
	return nil, errNotImplemented("GetCAF")
}

// GetEmpresa returns the company.
func (s *Service) GetEmpresa(ctx context.Context, empresaID string) (*Empresa, error) {
	return nil, errNotImplemented("GetEmpresa")
}

// UpdateEmpresa changes the company's tax and contact data.
func (s *Service) UpdateEmpresa(ctx context.Context, empresaID string, in EmpresaUpdate) (*Empresa, error) {
	return nil, errNotImplemented("UpdateEmpresa")
}

// UploadCertificate installs the company's signing certificate from a
// .pfx/.p12 file of at most MaxCertificateSize bytes, opened with password;
// the certificate's RUT must be rutFirmante. The key is stored sealed by
// the Keyring.
func (s *Service) UploadCertificate(ctx context.Context, empresaID string, p12 []byte, password, rutFirmante string) (*CertificadoStatus, error) {
	return nil, errNotImplemented("UploadCertificate")
}

// CertificateStatus describes the company's certificate.
func (s *Service) CertificateStatus(ctx context.Context, empresaID string) (*CertificadoStatus, error) {
	return nil, errNotImplemented("CertificateStatus")
}

// CreateCliente adds a customer; its rut is unique within the company
// (KindConflict, CLIENTE_RUT_CONFLICT).
func (s *Service) CreateCliente(ctx context.Context, empresaID string, in ClienteInput) (*Cliente, error) {
	return nil, errNotImplemented("CreateCliente")
}

// GetCliente returns a customer that was not deleted.
func (s *Service) GetCliente(ctx context.Context, empresaID, id string) (*Cliente, error) {
	return nil, errNotImplemented("GetCliente")
}

// UpdateCliente changes a customer (never its rut).
func (s *Service) UpdateCliente(ctx context.Context, empresaID, id string, in ClienteUpdate) (*Cliente, error) {
	return nil, errNotImplemented("UpdateCliente")
}

// DeleteCliente soft-deletes a customer: it disappears from reads and its
// rut may be used again.
func (s *Service) DeleteCliente(ctx context.Context, empresaID, id string) error {
	return errNotImplemented("DeleteCliente")
}

// ListClientes pages through the customers; p.Q searches by razon_social
// or rut.
func (s *Service) ListClientes(ctx context.Context, empresaID string, p ListParams) (*ClientePage, error) {
	return nil, errNotImplemented("ListClientes")
}

// CreateProducto adds a product; a codigo, when given, is unique within
// the company (KindConflict, PRODUCTO_CODIGO_CONFLICT).
func (s *Service) CreateProducto(ctx context.Context, empresaID string, in ProductoInput) (*Producto, error) {
	return nil, errNotImplemented("CreateProducto")
}

// GetProducto returns a product that was not deleted.
func (s *Service) GetProducto(ctx context.Context, empresaID, id string) (*Producto, error) {
	return nil, errNotImplemented("GetProducto")
}

// UpdateProducto changes a product.
func (s *Service) UpdateProducto(ctx context.Context, empresaID, id string, in ProductoUpdate) (*Producto, error) {
	return nil, errNotImplemented("UpdateProducto")
}

// DeleteProducto soft-deletes a product.
func (s *Service) DeleteProducto(ctx context.Context, empresaID, id string) error {
	return errNotImplemented("DeleteProducto")
}

// ListProductos pages through the products; p.Q searches by nombre or
// codigo.
func (s *Service) ListProductos(ctx context.Context, empresaID string, p ListParams) (*ProductoPage, error) {
	return nil, errNotImplemented("ListProductos")
}

// AuthenticateAPIKey resolves an API key to its company and write flag;
// an unknown or revoked key fails with KindUnauthorized.
func (s *Service) AuthenticateAPIKey(ctx context.Context, key string) (*Principal, error) {
	return nil, errNotImplemented("AuthenticateAPIKey")
}

// CreateEmpresa registers a company (operator operation, no tenant).
func (s *Service) CreateEmpresa(ctx context.Context, in EmpresaInput) (*Empresa, error) {
	return nil, errNotImplemented("CreateEmpresa")
}

// CreateAPIKey issues an API key for the company; the plaintext is in the
// result's Key and is never shown again (only its hash is stored).
func (s *Service) CreateAPIKey(ctx context.Context, empresaID string, write bool) (*APIKey, error) {
	return nil, errNotImplemented("CreateAPIKey")
}

// RevokeAPIKey revokes one of the company's API keys.
func (s *Service) RevokeAPIKey(ctx context.Context, empresaID, keyID string) error {
	return errNotImplemented("RevokeAPIKey")
}

// ListWebhooks lists the company's webhooks, secrets masked.
func (s *Service) ListWebhooks(ctx context.Context, empresaID string) ([]Webhook, error) {
	return nil, errNotImplemented("ListWebhooks")
}

// WebhookInput registers a webhook (contract §4.4).
type WebhookInput struct {
	URL    string   `json:"url"`
	Events []string `json:"events"`
	Secret string   `json:"secret,omitempty"`
}

// CreateWebhook registers a webhook; the answer carries the secret in
// full, the only time it is shown.
func (s *Service) CreateWebhook(ctx context.Context, empresaID string, in WebhookInput) (*Webhook, error) {
	return nil, errNotImplemented("CreateWebhook")
}

// DeleteWebhook removes a webhook.
func (s *Service) DeleteWebhook(ctx context.Context, empresaID, id string) error {
	return errNotImplemented("DeleteWebhook")
}
