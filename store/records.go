package store

import "time"

// Empresa is a company (tenant). Every other record belongs to exactly one
// Empresa through its EmpresaID.
type Empresa struct {
	ID               string
	Rut              string
	RazonSocial      string
	Giro             string
	Direccion        string
	Comuna           string
	Ciudad           string
	Ambiente         string // "certificacion" or "produccion"
	FechaResolucion  string // YYYY-MM-DD
	NumeroResolucion int64
	InboundEmail     string
	InboundStatus    string
	Acteco           []int64 // economic activity codes, in the order given
	OficinaSII       string  // the SII office printed on its documents ("" when not given)
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

// Logo is a company's logo, printed on its documents' PDFs. Data is an
// image the service has checked and re-encoded; the store keeps it as
// given.
type Logo struct {
	ContentType string // "image/png" or "image/jpeg"
	Data        []byte
}

// Certificado is a company's digital signature certificate. A company has
// at most one: uploading a new one replaces the previous one. Sealed holds
// the PKCS#12 (or the private key and chain) encrypted by the caller; the
// store never sees it in clear.
type Certificado struct {
	EmpresaID        string
	RutFirmante      string
	Subject          string
	FechaVencimiento time.Time // the certificate's NotAfter
	Sealed           []byte    // encrypted key material (opaque to the store)
	IsActive         bool
	UploadedAt       time.Time
}

// CAF is an authorized folio range of one document type. NextFolio is the
// next folio TakeFolio will hand out; the range is exhausted when NextFolio
// exceeds FolioHasta. The CAF's private key is kept apart from its public
// document: XML holds the authorization without the key, SealedKey the key
// encrypted by the caller (rows written before SealedKey existed have it
// nil and the key still in XML, until the caller seals it).
type CAF struct {
	ID                string
	EmpresaID         string
	TipoDTE           int
	FolioDesde        int64
	FolioHasta        int64
	NextFolio         int64
	Ambiente          string // "certificacion" or "produccion"
	FechaAutorizacion string // YYYY-MM-DD
	XML               []byte // the CAF's public document (the authorization, without its private key)
	SealedKey         []byte // the CAF's private key, encrypted (opaque to the store); nil when not sealed
	IsActive          bool   // false takes the range out of TakeFolio's reach
	CreatedAt         time.Time
}

// FoliosDisponibles reports how many folios of the range have not been
// handed out.
func (c *CAF) FoliosDisponibles() int64 {
	if c.NextFolio > c.FolioHasta {
		return 0
	}
	return c.FolioHasta - c.NextFolio + 1
}

// EstadoPendiente is the state of a DTE row between the two transactions
// of the folio protocol: a folio is taken and the request recorded, but
// the document is not signed yet. Every other state is stored as the
// contract writes it (dte.Estado: "firmado", "aceptado", …); pendiente is
// the store's own and is shown as borrador.
const EstadoPendiente = "pendiente"

// DTE is an emitted (or being emitted) tax document. The JSON fields are
// kept as the caller encoded them; the store does not interpret them.
type DTE struct {
	ID                  string
	EmpresaID           string
	TipoDTE             int
	Folio               int64
	CAFID               string
	Estado              string
	RutReceptor         string
	RazonSocialReceptor string
	// Ambiente is the environment the document was emitted in (its CAF's:
	// "certificacion" or "produccion"); it never changes, even when the
	// company moves.
	Ambiente     string
	FechaEmision string // YYYY-MM-DD, used by list filters
	MontoTotal   int64
	AutoSend     bool
	Request      []byte    // the emission request (JSON) as accepted
	Emisor       []byte    // snapshot of the issuer data used (JSON)
	EmittedAt    time.Time // the signing timestamp fixed in the first transaction
	XML          []byte    // signed document; nil until signed; nil in list results
	Totals       []byte    // computed totals (JSON); nil until signed
	Tracking     []byte    // TrackingInfo (JSON); nil when none
	SIIStatus    []byte    // SIIStatusInfo (JSON); nil when none
	Metadata     []byte    // integrator metadata (JSON); nil when none
	// Intercambio is what the receptor answered about the document by
	// mail (JSON, opaque to the store; SetDTEIntercambio); nil when none.
	// GetDTE and GetDTEByFolio read it; lists leave it nil.
	Intercambio []byte
	CreatedAt   time.Time
	UpdatedAt   time.Time

	// Cedido is true when the document has a cesión the registry
	// recorded (a Cesion of the company in state CesionAceptada). It is
	// no column: ListDTEs reads it with each page, in the same query; the
	// reads of one document leave it false (the service reads the
	// document's cesión itself), and writes ignore it.
	Cedido bool
}

// Cliente is a customer of a company's catalog. Rut is unique among the
// company's clientes that are not deleted.
type Cliente struct {
	ID          string
	EmpresaID   string
	Rut         string
	RazonSocial string
	Giro        string
	Direccion   string
	Comuna      string
	Ciudad      string
	Email       string
	Telefono    string
	Contacto    string
	Notas       string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Producto is a product of a company's catalog. Codigo, when not empty, is
// unique among the company's productos that are not deleted.
type Producto struct {
	ID             string
	EmpresaID      string
	Codigo         string
	Nombre         string
	Descripcion    string
	PrecioUnitario int64
	Unidad         string
	EsExento       bool
	Categoria      string
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// Webhook is a company's webhook registration. Secret is sealed by the
// caller; the store never sees it in clear.
type Webhook struct {
	ID        string
	EmpresaID string
	URL       string
	Events    []string
	Secret    []byte // encrypted signing secret (opaque to the store)
	IsActive  bool
	CreatedAt time.Time
	UpdatedAt time.Time
}

// APIKey is an API credential. Only a hash of the key is stored; the
// plaintext is shown once by whoever creates it.
type APIKey struct {
	ID        string
	EmpresaID string
	Hash      []byte // e.g. SHA-256 of the key; unique
	Write     bool   // write access (contract §1 private beta)
	Label     string
	CreatedAt time.Time
	RevokedAt time.Time // zero while valid
}

// Idempotency states.
const (
	IdempotencyInProgress = "in_progress"
	IdempotencyDone       = "done"
)

// Idempotency records one Idempotency-Key of a company: the hash of the
// request it was first used with and, once done, the response.
// ResponseBody is the JSON of the service's answer (billing.EmitResponse);
// ResponseStatus is no longer written (rows of earlier versions hold the
// HTTP status 201 there) and nothing reads it.
type Idempotency struct {
	EmpresaID string
	// Ambiente is the environment the company worked in when the key was
	// first used: a key is one key within one environment, so the same
	// key after the move to produccion is a new one.
	Ambiente       string
	Key            string
	BodyHash       []byte
	State          string // IdempotencyInProgress or IdempotencyDone
	DTEID          string // the document the key produced, once known
	ResponseStatus int
	ResponseBody   []byte
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// Event is an outbox entry: something that happened to a company, with its
// payload frozen at the moment it was recorded (webhook deliveries send
// these bytes).
type Event struct {
	ID        string
	EmpresaID string
	Type      string // e.g. "dte.created"
	Payload   []byte // the event body as it will be delivered
	CreatedAt time.Time
}

// Delivery states.
const (
	DeliveryPending   = "pending"
	DeliverySucceeded = "succeeded"
	DeliveryFailed    = "failed" // gave up after the last attempt
)

// Delivery is one event sent (or to be sent) to one webhook, with the
// outcome of its latest attempt.
type Delivery struct {
	ID             string
	EmpresaID      string
	WebhookID      string
	EventID        string
	State          string // DeliveryPending, DeliverySucceeded or DeliveryFailed
	Attempts       int
	LastStatusCode int
	LastError      string
	NextAttemptAt  time.Time // zero when no attempt is scheduled
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// Envio is one submission of documents to the SII (an EnvioDTE or
// EnvioBOLETA envelope) and what the SII has said about it so far.
type Envio struct {
	ID        string
	EmpresaID string
	DTEIDs    []string // documents carried by the envelope, in envelope order
	// Ambiente is the environment the envelope goes to ("certificacion"
	// or "produccion"), its documents' own; "" on rows written before it
	// was kept.
	Ambiente string
	TrackID  string // the SII's track id, empty until uploaded
	Estado   string // submission state, as the submission names it
	Attempts int
	XML      []byte // the envelope sent; nil until built
	Response []byte // the SII's last answer (raw), nil when none
	// Results is the caller's JSON of each document's result (opaque to
	// the store); nil when none.
	Results   []byte
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Kinds of sealed secrets (Sealed.Kind).
const (
	SealedCertificado = "certificado"    // Certificado.Sealed; Sealed.ID is ""
	SealedCAFKey      = "caf_key"        // CAF.SealedKey
	SealedWebhook     = "webhook_secret" // Webhook.Secret
)

// SealedKinds lists every kind of sealed secret the store keeps.
var SealedKinds = []string{SealedCertificado, SealedCAFKey, SealedWebhook, SealedCorreoIMAP, SealedCorreoSMTP, SealedConsoleSession}

// Sealed is one secret the caller sealed, wherever the store keeps it: the
// kind of field, the record that holds it and the sealed bytes. It lets the
// caller check and re-seal every secret without knowing each record.
type Sealed struct {
	Kind      string // one of SealedKinds
	EmpresaID string
	ID        string // the record's id; "" for a certificado (one per company)
	Data      []byte
}

// Names of settings (Reader.Setting).
const (
	// SettingKEKFingerprint holds the fingerprint of the key-encryption
	// key the secrets are sealed under.
	SettingKEKFingerprint = "kek_fingerprint"
	// SettingCAFKeysSealed is set once no CAF holds its private key in its
	// document any more (every CAF written since seals it).
	SettingCAFKeysSealed = "caf_keys_sealed"
)
