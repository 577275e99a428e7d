package store

import "time"

// This file holds the records of the company's mail and inbox: the files
// received from suppliers (Recepcion) and the documents they carry
// (Recibido), the mail the service sends (Correo) and the mail it has read
// (Mensaje), and the company's mailbox settings (CorreoConfig).

// Constraint names of the inbox records (ConflictError).
const (
	ConstraintRecepcion = "recepcion_digest" // a Recepcion with this digest exists in the company
	ConstraintRecibido  = "recibido_key"     // a Recibido with this DedupeKey exists in the company
	ConstraintMensaje   = "mensaje"          // a Mensaje with this Digest exists in the company
)

// Kinds of sealed secrets of the mailbox settings (Sealed.Kind); Sealed.ID
// is "" for both (one setting per company).
const (
	SealedCorreoIMAP = "correo_imap" // CorreoConfig.SealedIMAP
	SealedCorreoSMTP = "correo_smtp" // CorreoConfig.SealedSMTP
)

// Recepcion is one file a company received, by upload or by mail, as it
// arrived, with what the verification found: an EnvioDTE from a supplier,
// or an answer a customer sent about the company's own documents (Tipo).
// A file that could not be read is kept too, with its report: nothing
// received is dropped.
type Recepcion struct {
	ID        string
	EmpresaID string
	// Numero is the company's own number for the file (the CodEnvio its
	// answers carry), from 1 up, assigned by InsertRecepcion: the next
	// after the company's highest, never shared by two files of the
	// company even under concurrent inserts.
	Numero int64
	// Digest is the lowercase hex SHA-256 of XML: one file is one
	// Recepcion per company (ConstraintRecepcion).
	Digest string
	// Tipo says what the file is, as the service names it ("envio" for
	// the files recorded before the service named others).
	Tipo string
	// Ambiente is the environment the file belongs to ("certificacion"
	// or "produccion", as the service decides it); InsertRecepcion
	// records the company's current one when it is "".
	Ambiente string
	Origen   string // "upload" or "correo"
	// MensajeID is the Mensaje the file came in ("" for an upload).
	MensajeID string
	// Remitente is the address the file came from ("" for an upload).
	Remitente string
	Estado    string // the reception state, as the service names it
	// XML is the file as received, or only its first bytes when
	// Descartado; nil in list results.
	XML    []byte
	Report []byte // the verification report (JSON, opaque to the store)
	// Size is the file's size as received, in bytes.
	Size int64
	// Descartado marks a file refused whole, that did nothing: XML holds
	// only its first bytes (the caller cuts them), and PurgeInbox deletes
	// it once the company's retention period has passed.
	Descartado bool
	// Stored is what the file keeps, in bytes: what the company's quota
	// counts (InboxUsage). The caller may count more than the record
	// (the documents read from it); InsertRecepcion sets it to the
	// record's XML and Report when zero.
	Stored    int64
	CreatedAt time.Time
}

// InboxSettings are a company's limits on what its inbox keeps; a nil
// field means the service's default.
type InboxSettings struct {
	EmpresaID string
	// MaxRecepciones and MaxRecepcionBytes bound the received files kept
	// (their number, and their Stored bytes); MaxMensajes the mails read
	// kept.
	MaxRecepciones    *int64
	MaxRecepcionBytes *int64
	MaxMensajes       *int64
	// RetencionDias is how long refused files (Recepcion.Descartado) and
	// mails read are kept, in days.
	RetencionDias *int64
	UpdatedAt     time.Time
}

// InboxUsage is what a company's inbox holds (Reader.InboxUsage).
type InboxUsage struct {
	Recepciones    int64 // received files
	RecepcionBytes int64 // their Stored bytes
	Mensajes       int64 // mails read
}

// Recibido is one document a supplier sent the company, read from a
// Recepcion, and what the company and the SII did with it since.
type Recibido struct {
	ID          string
	EmpresaID   string
	RecepcionID string
	// Ambiente is the environment the document belongs to
	// ("certificacion" or "produccion", as the service decides it);
	// InsertRecibido records its file's when it is "".
	Ambiente string
	// DedupeKey makes intake idempotent: at most one Recibido of the
	// company has it (ConstraintRecibido). The service chooses it (the
	// environment, then the emitter, type and folio of a readable
	// document; a digest of the bytes otherwise).
	DedupeKey         string
	RutEmisor         string // "" when unreadable
	RazonSocialEmisor string
	TipoDTE           int    // 0 when unreadable
	Folio             int64  // 0 when unreadable
	FechaEmision      string // YYYY-MM-DD; "" when unreadable
	MontoTotal        int64
	Estado            string // as the service names it
	// CorreoEmisor is where answers about the document go ("" when
	// unknown).
	CorreoEmisor string
	XML          []byte // the document's own signed bytes; nil in list results
	Report       []byte // the document's verification report (JSON)
	Respuesta    []byte // the company's answers so far (JSON); nil when none
	RCV          []byte // the SII registry's state and events (JSON); nil until asked
	// FechaRecepcionSII is when the SII received the document (the legal
	// window runs from it) and PlazoVence when that window closes; both
	// zero until known.
	FechaRecepcionSII time.Time
	PlazoVence        time.Time
	// PlazoAvisadoAt is when the service warned that the window is about
	// to close; zero until it did.
	PlazoAvisadoAt time.Time
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// RecibidoFilter selects received documents for ListRecibidos. Zero fields
// select everything; pages run newest first, with stable cursors.
type RecibidoFilter struct {
	// Ambiente, when not "", keeps the documents of that environment.
	Ambiente   string
	RutEmisor  string
	TipoDTE    int
	Estado     string
	FechaDesde string // FechaEmision, YYYY-MM-DD, inclusive
	FechaHasta string // FechaEmision, YYYY-MM-DD, inclusive
	// PlazoHasta, when not zero, keeps the documents whose window is
	// known (PlazoVence not zero) and closes at or before it.
	PlazoHasta time.Time
	// SinAviso keeps the documents not yet warned about (PlazoAvisadoAt
	// zero).
	SinAviso bool
	// PlazoDesde, when not zero, keeps the documents whose window is
	// unknown (PlazoVence zero) or closes after it.
	PlazoDesde time.Time
	Cursor     string
	Limit      int
}

// RecepcionFilter selects received files for ListRecepciones; pages run
// newest first, with stable cursors.
type RecepcionFilter struct {
	// Ambiente, when not "", keeps the files of that environment.
	Ambiente string
	Cursor   string
	Limit    int
}

// Correo is one mail the service sends for a company: a document to its
// receptor, or an answer to a supplier. Message is fixed when the mail is
// queued, so every attempt sends the same bytes (and the same Message-ID).
type Correo struct {
	ID         string
	EmpresaID  string
	Tipo       string // what it carries: "dte", "acuse", "resultado", "recibos"
	DTEID      string // the company's document it carries or answers about; "" when none
	RecibidoID string // the received document it answers; "" when none
	Para       string // the recipient's address
	MessageID  string // the Message-ID header of Message
	Estado     string // "pendiente", "enviado" or "fallido"
	Attempts   int
	LastError  string
	Message    []byte    // the whole RFC 5322 message; nil in list results
	SentAt     time.Time // zero until sent
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// CorreoFilter selects mails for ListCorreos: those of one document of the
// company, or of one received document, or all of them; newest first.
type CorreoFilter struct {
	DTEID      string
	RecibidoID string
	Cursor     string
	Limit      int
}

// Mensaje is one mail the service read from a company's mailbox: how the
// same message is recognized when it is read again (by its Digest: a
// different message reusing a Message-ID is another message).
type Mensaje struct {
	ID        string
	EmpresaID string
	MessageID string // the Message-ID header; "" when it has none
	Digest    string // lowercase hex SHA-256 of the raw message
	From      string
	Subject   string
	Estado    string // "procesado" or "rechazado"
	Detalle   string // what was done with it, or why it was refused
	CreatedAt time.Time
}

// CorreoConfig is a company's mailbox settings: how its mail is read and
// sent. Config is the service's JSON (hosts, ports, users, addresses,
// options), opaque to the store; the two passwords are sealed by the
// caller. (What the reader has done needs no state here: the mailbox keeps
// it, as a keyword on each message processed.)
type CorreoConfig struct {
	EmpresaID  string
	Config     []byte
	SealedIMAP []byte // nil when none
	SealedSMTP []byte // nil when none
	UpdatedAt  time.Time
}

// Buzon is what the reader knows of a company's mailbox: how its last
// reads went, and when the next periodic read may run (a mailbox that
// fails is backed off).
type Buzon struct {
	EmpresaID string
	// Fallos counts the reads failed in a row (0 after one that worked).
	Fallos int
	// UltimoError is the category of the last failure ("dns", "refused",
	// "timeout", "tls", "auth", "rejected"); "" after a read that worked.
	UltimoError string
	// UltimoIntento is when a read was last tried, UltimaLectura when one
	// last worked; zero when never.
	UltimoIntento time.Time
	UltimaLectura time.Time
	// Proximo is the time before which no periodic read runs; zero: now.
	Proximo   time.Time
	UpdatedAt time.Time
}
