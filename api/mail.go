package api

import (
	"fmt"
	"io"
	"time"
)

// EstadoCorreo is the state of a mail the service sends for a company
// (Correo.Estado). A mail is queued pendiente and stays so while its
// attempts are retried; it ends enviado, or fallido when refused for
// good or out of attempts. A document's mail that could not even be
// composed is recorded in a final state of its own: sin_direccion (no
// address is known for the receptor) or sin_remitente (the company has
// no address or SMTP server to send from). Sending again makes a new mail.
type EstadoCorreo string

// The states of a mail.
const (
	CorreoPendiente    EstadoCorreo = "pendiente"
	CorreoEnviado      EstadoCorreo = "enviado"
	CorreoFallido      EstadoCorreo = "fallido"
	CorreoSinDireccion EstadoCorreo = "sin_direccion"
	CorreoSinRemitente EstadoCorreo = "sin_remitente"
)

// correoNext is the mail's transition table.
var correoNext = table[EstadoCorreo]{
	CorreoPendiente:    {CorreoEnviado, CorreoFallido},
	CorreoEnviado:      nil,
	CorreoFallido:      nil,
	CorreoSinDireccion: nil,
	CorreoSinRemitente: nil,
}

// Valid reports whether e is one of the states.
func (e EstadoCorreo) Valid() bool { return correoNext.valid(e) }

// Next returns the states a mail in state e may move to (none for a
// final state or an unknown one).
func (e EstadoCorreo) Next() []EstadoCorreo { return correoNext.next(e) }

// CanBecome reports whether a mail in state e may move to next.
func (e EstadoCorreo) CanBecome(next EstadoCorreo) bool { return correoNext.can(e, next) }

// Correo is a mail the service sent, or will send, for the company
// (GET /correos/{id}).
type Correo struct {
	ID          string       `json:"id"`
	Tipo        string       `json:"tipo"`
	DTEID       *string      `json:"dte_id"`
	RecibidoID  *string      `json:"recibido_id"`
	Para        string       `json:"para"`
	MessageID   string       `json:"message_id"`
	Estado      EstadoCorreo `json:"estado"`
	Intentos    int          `json:"intentos"`
	UltimoError *string      `json:"ultimo_error"`
	EnviadoAt   *time.Time   `json:"enviado_at"`
	CreatedAt   time.Time    `json:"created_at"`
	UpdatedAt   time.Time    `json:"updated_at"`
}

// CorreoListParams selects mails, newest first: those of one document, of
// one received document, or all (GET /correos).
type CorreoListParams struct {
	ListParams
	DTEID      string
	RecibidoID string
}

// Mensaje is a mail read from the company's mailbox.
type Mensaje struct {
	ID        string `json:"id"`
	MessageID string `json:"message_id"`
	From      string `json:"from"`
	Subject   string `json:"subject"`
	// Estado is "procesado" (its attachments were taken) or "rechazado"
	// (it could not be read within the limits; Detalle says why).
	Estado    string    `json:"estado"`
	Detalle   string    `json:"detalle"`
	CreatedAt time.Time `json:"created_at"`
}

// MensajeListParams pages the mails read from the company's mailbox
// (GET /empresa/correo/mensajes), newest first.
type MensajeListParams struct {
	ListParams
}

// LecturaCorreo is what one read of a company's mailbox did
// (POST /empresa/correo/leer).
type LecturaCorreo struct {
	// Leidos are the messages taken, Repetidos those skipped as read
	// before, Rechazados those refused (see the mails read, Mensaje).
	Leidos     int `json:"leidos"`
	Repetidos  int `json:"repetidos"`
	Rechazados int `json:"rechazados"`
}

// CorreoServidor is a mail server a company uses: its SMTP server to send,
// or its IMAP mailbox to read.
type CorreoServidor struct {
	Host string `json:"host"`
	Port int    `json:"port"`
	// Seguridad is "tls" (implicit TLS), "starttls" or "none" (only to a
	// loopback host; the password is never sent in clear elsewhere).
	Seguridad string `json:"seguridad"`
	Usuario   string `json:"usuario"`
	// Password is write-only: it is sealed at rest and never shown;
	// omitted on an update, the one on record is kept.
	Password string `json:"password,omitempty"`
	// PasswordSet says whether a password is on record (read-only).
	PasswordSet bool `json:"password_set"`
	// Carpeta is the IMAP folder read (default INBOX) and
	// CarpetaProcesados where processed messages are moved ("" keeps them
	// in place, flagged).
	Carpeta           string `json:"carpeta,omitempty"`
	CarpetaProcesados string `json:"carpeta_procesados,omitempty"`
}

// CuandoEnviar says when a company mails its documents to their
// receptors (CorreoSettings.EnviarDTE): a setting, not a state.
type CuandoEnviar string

// When a company mails its documents.
const (
	EnviarAlAceptar CuandoEnviar = "aceptado" // once the SII accepts it (the default)
	EnviarAlFirmar  CuandoEnviar = "firmado"  // as soon as it is signed
	EnviarNunca     CuandoEnviar = "nunca"    // never on its own (POST /dte/{id}/correo still does)
)

// CorreoSettings are a company's mail settings (GET/PUT
// /api/v1/billing/empresa/correo).
type CorreoSettings struct {
	// Direccion is the company's intercambio address: its mail comes from
	// it, and its suppliers send their documents to it.
	Direccion string          `json:"direccion"`
	SMTP      *CorreoServidor `json:"smtp"`
	IMAP      *CorreoServidor `json:"imap"`
	// EnviarDTE says when the company's documents are mailed to their
	// receptors: "aceptado" (default), "firmado" or "nunca".
	EnviarDTE CuandoEnviar `json:"enviar_dte"`
	// AcuseAutomatico acknowledges every file received (acuse de recibo)
	// at intake; default true.
	AcuseAutomatico *bool `json:"acuse_automatico"`
	// Buzon is how the reads of the mailbox go (read-only: ignored on
	// PUT); nil when the company has no imap.
	Buzon *EstadoBuzon `json:"buzon,omitempty"`
}

// EstadoLectura is the state of the reads of a company's mailbox
// (EstadoBuzon.Estado): sin_leer until a read is tried, then al_dia
// after a read that worked and fallando after one that failed, moving
// between the two with each read's outcome. New settings lift the
// backoff of a failing mailbox, not its state: the next read decides it.
type EstadoLectura string

// The states of a mailbox.
const (
	BuzonSinLeer  EstadoLectura = "sin_leer" // never read yet
	BuzonAlDia    EstadoLectura = "al_dia"   // its last read worked
	BuzonFallando EstadoLectura = "fallando" // its last read failed; reads are backed off
)

// buzonNext is the mailbox's transition table.
var buzonNext = table[EstadoLectura]{
	BuzonSinLeer:  {BuzonAlDia, BuzonFallando},
	BuzonAlDia:    {BuzonFallando},
	BuzonFallando: {BuzonAlDia},
}

// Valid reports whether e is one of the states.
func (e EstadoLectura) Valid() bool { return buzonNext.valid(e) }

// Next returns the states a mailbox in state e may move to.
func (e EstadoLectura) Next() []EstadoLectura { return buzonNext.next(e) }

// CanBecome reports whether a mailbox in state e may move to next.
func (e EstadoLectura) CanBecome(next EstadoLectura) bool { return buzonNext.can(e, next) }

// EstadoBuzon is how the reads of a company's mailbox go: a mailbox that
// fails is read less and less often (twice the interval, doubled at each
// failure, at most hourly) until a read works or its settings change.
type EstadoBuzon struct {
	Estado EstadoLectura `json:"estado"`
	// Fallos counts the reads failed in a row.
	Fallos int `json:"fallos"`
	// UltimoError is the category of the last failure: "dns",
	// "refused", "timeout", "tls", "auth" or "rejected" (the detail goes
	// to the service's log only); null after a read that worked.
	UltimoError *string `json:"ultimo_error"`
	// UltimoIntento is when a read was last tried, UltimaLectura when one
	// last worked, ProximoIntento the earliest the next periodic read
	// runs (null: at the next interval).
	UltimoIntento  *time.Time `json:"ultimo_intento"`
	UltimaLectura  *time.Time `json:"ultima_lectura"`
	ProximoIntento *time.Time `json:"proximo_intento"`
}

// ContribuyentesImportParams is one import of the SII's list of
// contribuyentes ("dtekit admin contribuyentes import"): the file and
// where it came from, and the bounds it is read within (zero: the
// defaults of sii.ContribuyentesLimits).
type ContribuyentesImportParams struct {
	// Archivo is the SII's file (ce_empresas_dwnld_YYYYMMDD.csv).
	Archivo io.Reader
	// Origen says where it came from (its name), kept with the list.
	Origen string
	// MaxBytes bounds the file, MaxLine one line (in bytes), MaxRows the
	// companies and MaxWarnings the warnings kept (all are counted).
	MaxBytes    int64
	MaxLine     int
	MaxRows     int
	MaxWarnings int
}

// ContribuyentesImport is what an import of the SII's list of
// contribuyentes did ("dtekit admin contribuyentes import").
type ContribuyentesImport struct {
	// Lista is the id of the list now current; Origen where it came from.
	Lista  int64  `json:"lista"`
	Origen string `json:"origen"`
	// Lineas are the file's lines, the header included; Contribuyentes
	// the companies on the new list, ConCorreo those with an address.
	Lineas         int   `json:"lineas"`
	Contribuyentes int64 `json:"contribuyentes"`
	ConCorreo      int64 `json:"con_correo"`
	// Advertencias are the first lines skipped or read in part, each with
	// its line number; TotalAdvertencias counts them all.
	Advertencias      []ContribuyentesAdvertencia `json:"advertencias"`
	TotalAdvertencias int                         `json:"total_advertencias"`
	// Eliminados are the rows of older lists deleted after it.
	Eliminados int64 `json:"eliminados"`
	// Duracion is how long the import took.
	Duracion string `json:"duracion"`
}

// ContribuyentesAdvertencia is a line of the list skipped or read in part,
// and why.
type ContribuyentesAdvertencia struct {
	Linea   int    `json:"linea"`
	Mensaje string `json:"mensaje"`
}

// String is the warning as a line of text.
func (w ContribuyentesAdvertencia) String() string {
	return fmt.Sprintf("line %d: %s", w.Linea, w.Mensaje)
}
