// Package siitest provides a fake SII for tests: the seed, token, upload
// and status services (getEstUp, getEstDte, getEstDteAv) of the classic
// SOAP protocol and of the boleta REST API, and the registry of
// acceptances and claims (registroreclamodteservice), served on loopback
// with net/http/httptest, as strict as the real services on everything
// the SII documents.
//
// The fake checks what the SII checks: the seed's age against an
// injectable clock and its single use, the signed seed's XML signature and
// certificate, the token cookie, a browser-like User-Agent, the multipart
// fields and their order, an explicit Content-Length, the sender's
// permission for the company, the company's authorisation, the envelope's
// schema (through a caller-supplied check, such as xmllint with the
// official XSDs), its signatures and its carátula. It answers in the SII's
// formats: SOAP with the RESPUESTA escaped inside the return element,
// RESP_BODY before RESP_HDR, zero-padded 10-digit track ids, and the
// boleta API's JSON.
//
// The registry knows the documents it was seeded with (SeedRCV) and those
// another company uploaded to the fake and its review accepted, so a
// receptor can accept or claim a document its issuer sent through the
// same fake; see serveRCV's rules in rcv.go.
//
// Libros and the RCOF uploaded through DTEUpload are reviewed as the SII
// and its certification reviewer do (libro.go): schema, signature,
// carátula, the envío's parts, the cuadratura of every total and, for the
// sales and guías libros, each row against the document the fake received;
// getEstUp answers LSO and then LOK, LRH, LRC, LRF or LNC (an RCOF, RPR
// with reparo 250, or RCH when it differs from the boletas received).
// DTEUpload also takes an EnvioBOLETA, as in the boleta certification; the
// boleta REST API takes nothing else (an RCOF there is HTTP 400).
//
// The registry of credit transfers (rtc.go) takes AEC uploads
// (RTCAnotEnvio.cgi) and answers wsRPETCConsulta (getEstEnvio,
// getEstCesion, getEstCesionRelac): it reviews each AEC as strictly as
// the real registry (schema, the three signature levels, the carátula,
// the ceded document known and accepted, the chain of cesiones) and
// records the cesiones it accepts; Cesiones and AECUploads read it back,
// ScriptAEC scripts a rejection.
//
// DeclararAvance is the certification reviewer (avance.go): given the
// track ids a company declares for a set of tests, it answers the SETMAIL,
// SOK or SRH with reparo lines, from what the uploads show: the SET
// reference and case order of every document, the notes' references, the
// channel of the boleta set, the libros' states and kinds.
//
// Tests steer it through its Go API: Register the signers and companies,
// Script the outcome of each document (accepted, with reparos, rejected
// with a detail code, or its whole envelope rejected) and the states its
// envelope walks through, Inject faults per endpoint (HTML pages,
// "Error 500", SOAP faults, resets, hangs, a hang after accepting an
// upload, arbitrary STATUS or ESTADO codes, a per-boleta codigo, plain
// text), and read back every request it recorded.
package siitest

import (
	"crypto/rand"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/sii"
)

// Endpoint names one service of the fake, for fault injection and request
// recording.
type Endpoint string

// The fake's endpoints.
const (
	Seed         Endpoint = "getSeed"
	Token        Endpoint = "getToken"
	Upload       Endpoint = "upload"
	EstUp        Endpoint = "getEstUp"
	EstDte       Endpoint = "getEstDte"
	EstDteAv     Endpoint = "getEstDteAv"
	BoletaSeed   Endpoint = "boleta.semilla"
	BoletaToken  Endpoint = "boleta.token"
	BoletaUpload Endpoint = "boleta.envio"
	BoletaStatus Endpoint = "boleta.estado"
	BoletaDTE    Endpoint = "boleta.dte"
)

// Defaults of Options.
const (
	// DefaultSeedTTL is the seed's lifetime (manual de autenticación §2).
	DefaultSeedTTL = 2 * time.Minute
	// DefaultTokenTTL is how long the fake honours a token.
	DefaultTokenTTL = time.Hour
	// DefaultMaxUpload is the largest envelope accepted (STATUS 2 above).
	DefaultMaxUpload = 10 << 20
)

// DefaultSteps are the states an envelope reports before its final one.
func DefaultSteps() []string { return []string{"SOK", "CRT", "FOK", "PDR"} }

// Options configures a Fake. Zero fields take the documented defaults.
type Options struct {
	// Clock is the fake's time (default time.Now): seed age, token age,
	// timestamps, and the timeline when StepEvery is set.
	Clock func() time.Time
	// SeedTTL is the seed's lifetime (default DefaultSeedTTL).
	SeedTTL time.Duration
	// TokenTTL is the token's lifetime (default DefaultTokenTTL).
	TokenTTL time.Duration
	// AnyUserAgent accepts any User-Agent; by default uploads whose agent
	// does not start with "Mozilla/" get STATUS 5 (REST: HTTP 401).
	AnyUserAgent bool
	// AllowChunked accepts uploads without a Content-Length; by default
	// they get STATUS 3.
	AllowChunked bool
	// MaxUpload bounds the envelope (default DefaultMaxUpload).
	MaxUpload int64
	// Schema, when set, checks an envelope against its schema and returns
	// the error lines (none when valid). root is "EnvioDTE" or
	// "EnvioBOLETA", or for a libro "LibroCompraVenta", "LibroGuia" or
	// "ConsumoFolios", or "AEC" for the registry of credit transfers.
	Schema func(root string, envelope []byte) []string
	// DeferRejections reports schema and signature failures of DTEUpload
	// later, as the envelope states RSC and RFR, instead of as upload
	// STATUS 7 and 8. (The boleta API always defers them.)
	DeferRejections bool
	// Steps are the states before the final one (default DefaultSteps);
	// each getEstUp (or boleta status query) advances one step.
	Steps []string
	// StepEvery, when positive, also advances an envelope one step per
	// StepEvery of Clock time since it was received, polled or not.
	StepEvery time.Duration
	// ReviewDelay, when positive, holds an envelope's review: it reports
	// no final state (it stays at its last step) until ReviewDelay of
	// Clock time has passed since it was received, however often it is
	// polled, and until then the per-document queries do not find its
	// documents, as at the SII while a review is under way. SetReviewDelay
	// changes it for the envelopes received afterwards.
	ReviewDelay time.Duration
	// Quirks of the SII's encoding the fake reproduces.
	Quirks Quirks
	// CAFKeys are the CAF keys the registry of credit transfers trusts for
	// the stamp of a ceded DTE. Nil skips the stamp's own check: the DTE
	// must anyway be the very document (its SignatureValue) an envelope
	// review of the fake accepted.
	CAFKeys caf.TrustedKeys
	// AnySigner treats every certificate RUT as registered, with
	// permission to send for any company, and every company as an
	// authorised issuer: for manual tests with your own credentials. Tests
	// should Register instead.
	AnySigner bool
}

// Quirks are encoding habits of the real SII that clients must survive.
type Quirks struct {
	// PrefixedReturn writes <ns1:opReturn> instead of <opReturn>.
	PrefixedReturn bool
	// CDATA wraps the inner document in CDATA instead of escaping it.
	CDATA bool
	// Latin1 sends SOAP answers in ISO-8859-1 bytes while declaring UTF-8.
	Latin1 bool
}

// DocResult is a document's fate in its envelope's review.
type DocResult int

// Document results.
const (
	Accepted DocResult = iota
	Reparo
	Rejected
)

// Outcome scripts what the fake's review of a document says.
type Outcome struct {
	// Result is the document's fate in an EPR review (default Accepted).
	Result DocResult
	// Detail is the detail code of a rejection or reparo ("DTE-3-101").
	Detail string
	// Envelope, when set to RSC, RFR or RCT, rejects the whole envelope
	// holding the document with that state.
	Envelope string
	// Steps overrides Options.Steps for the document's envelope.
	Steps []string
}

// FaultKind is a failure the fake can inject.
type FaultKind int

// Fault kinds.
const (
	// FaultError500 answers HTTP 500 with the literal body "Error 500".
	FaultError500 FaultKind = iota + 1
	// FaultHTML503 answers HTTP 503 with an HTML page.
	FaultHTML503
	// FaultHTML200 answers HTTP 200 with an HTML page.
	FaultHTML200
	// FaultSOAP answers HTTP 500 with a SOAP Fault (Code: faultstring).
	FaultSOAP
	// FaultReset closes the connection without an answer.
	FaultReset
	// FaultHang never answers (until the client gives up).
	FaultHang
	// FaultAcceptThenHang processes the request fully (an upload gets its
	// track id) and then never answers.
	FaultAcceptThenHang
	// FaultStatus answers an upload with STATUS Code and no track id.
	FaultStatus
	// FaultEstado answers a seed or token request with ESTADO Code, a
	// registry call with codResp Code (consultarFechaRecepcionSii: the
	// string Code).
	FaultEstado
	// FaultLate handles the request as if it arrived Late after it did
	// (for example a signed seed presented after the seed expired).
	FaultLate
	// FaultCodigo answers a per-boleta status query (BoletaDTE) with the
	// JSON of codigo Code and the code table's descripcion, whatever the
	// fake knows of the boleta: FNA, EMP, FAN, TMD...
	FaultCodigo
	// FaultPlainText answers HTTP 200 with Code as a text/plain body, as
	// the boleta API answers some requests.
	FaultPlainText
)

// Fault is one injected failure, consumed by one request.
type Fault struct {
	Kind FaultKind
	// Code is the STATUS, ESTADO, faultstring, codigo or text of
	// FaultStatus, FaultEstado, FaultSOAP, FaultCodigo and
	// FaultPlainText.
	Code string
	// Late is FaultLate's delay.
	Late time.Duration
}

// Request is one request the fake received.
type Request struct {
	Endpoint Endpoint
	Method   string
	Path     string
	Header   http.Header
	// ContentLength is the declared length (-1 when absent).
	ContentLength int64
	// Chunked is true when the body came with chunked transfer encoding.
	Chunked bool
	// Fields are the multipart field names of an upload, in order.
	Fields []string
	// Token is the token the request carried (cookie or SOAP part).
	Token string
	// At is the fake's time of arrival.
	At time.Time
	// Result summarises the answer ("STATUS 0 TRACKID 0000004711",
	// "ESTADO 00", "fault error500"...).
	Result string
}

// Doc is a document the fake received in an envelope.
type Doc struct {
	RutEmisor string
	Tipo      int
	Folio     int64
	// Fecha is FchEmis (YYYY-MM-DD), Monto MntTotal, Receptor RUTRecep.
	Fecha    string
	Monto    int64
	Receptor string
	// SignatureValue is the DTE's own SignatureValue as uploaded,
	// whitespace removed (what getEstDteAv's FirmaDte must equal).
	SignatureValue string
	// Result and Detail are the document's review result.
	Result DocResult
	Detail string
	raw    []byte
	// refs and fmaPago are what the registry of acceptances and claims
	// reads: a credit note's references, an invoice's payment form.
	refs    []dte.Referencia
	fmaPago int
}

// Envelope is an envelope the fake gave a track id.
type Envelope struct {
	TrackID string
	Company string
	Sender  string
	// Boleta marks an EnvioBOLETA; REST one uploaded through the boleta
	// REST API rather than DTEUpload.
	Boleta, REST bool
	Received     time.Time
	Docs         []Doc
	// Polls counts the status queries answered for it.
	Polls int
	// Final is the state it ends in (EPR, RSC, RFR, RCT), Steps the
	// states before.
	Final string
	Steps []string
	// ReviewedAt, when not zero, is the earliest time its review may end
	// (Options.ReviewDelay after Received).
	ReviewedAt time.Time
	// Raw is the envelope as uploaded.
	Raw []byte
	// Libro is set when the upload was a libro or an RCOF rather than an
	// envelope of documents (Docs is then empty); see libro.go.
	Libro *LibroReview
}

// Fake is a fake SII. Build it with New, serve it with Start (or mount
// Handler yourself), and Close it when done.
type Fake struct {
	opts Options

	late atomic.Int64 // FaultLate's accumulated shift, in nanoseconds

	mu        sync.Mutex
	seeds     map[string]time.Time
	seedNext  int64
	tokens    map[string]*tokenInfo
	signers   map[string]map[string]bool // signer RUT → companies
	issuers   map[string]bool
	scripts   map[string]Outcome
	deflt     Outcome
	faults    map[Endpoint][]Fault
	requests  []Request
	envelopes []*Envelope
	byTrack   map[string]*Envelope
	trackNext int64
	rcvSeeds  map[string]*RCVSeed        // docKey → seeded document
	rcvEvents map[string][]sii.RCVEvent  // docKey → events registered
	resol     map[string]resolucion      // company → its resolution (SetResolucion)
	approved  map[string]map[string]bool // company → sets reviewed SOK (DeclararAvance)
	rtc       rtcRegistry                // the registry of credit transfers (rtc.go)
	journal   *journal                   // what Persist keeps on disk (journal.go)

	classic, api, envio *httptest.Server
}

type tokenInfo struct {
	rut     string
	rest    bool
	at      time.Time
	revoked bool
}

// New returns a fake with no registered signers.
func New(opts Options) *Fake {
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.SeedTTL <= 0 {
		opts.SeedTTL = DefaultSeedTTL
	}
	if opts.TokenTTL <= 0 {
		opts.TokenTTL = DefaultTokenTTL
	}
	if opts.MaxUpload <= 0 {
		opts.MaxUpload = DefaultMaxUpload
	}
	if opts.Steps == nil {
		opts.Steps = DefaultSteps()
	}
	return &Fake{
		opts:      opts,
		seeds:     map[string]time.Time{},
		seedNext:  1234,
		tokens:    map[string]*tokenInfo{},
		signers:   map[string]map[string]bool{},
		issuers:   map[string]bool{},
		scripts:   map[string]Outcome{},
		faults:    map[Endpoint][]Fault{},
		byTrack:   map[string]*Envelope{},
		trackNext: 4711,
		rcvSeeds:  map[string]*RCVSeed{},
		rcvEvents: map[string][]sii.RCVEvent{},
		resol:     map[string]resolucion{},
		approved:  map[string]map[string]bool{},
	}
}

// Start serves the fake on three loopback listeners (the classic services,
// the boleta API and the boleta upload host, as at the SII) and returns
// it.
func (f *Fake) Start() *Fake {
	h := f.Handler()
	f.classic = httptest.NewServer(h)
	f.api = httptest.NewServer(h)
	f.envio = httptest.NewServer(h)
	return f
}

// Close stops the listeners (and closes the journal of Persist).
func (f *Fake) Close() {
	for _, s := range []*httptest.Server{f.classic, f.api, f.envio} {
		if s != nil {
			s.CloseClientConnections()
			s.Close()
		}
	}
	f.closeJournal()
}

// Endpoints returns the base URLs of a started fake, for sii.Config.
func (f *Fake) Endpoints() sii.Endpoints {
	return sii.Endpoints{Classic: f.classic.URL, Upload: f.classic.URL, BoletaAPI: f.api.URL, BoletaUpload: f.envio.URL,
		RCV: f.classic.URL, RCVAuth: f.classic.URL}
}

// Register lets the holder of a certificate with signerRUT authenticate
// and send envelopes for each company, and marks the companies as
// authorised DTE issuers.
func (f *Fake) Register(signerRUT string, companies ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m := f.signers[signerRUT]
	if m == nil {
		m = map[string]bool{}
		f.signers[signerRUT] = m
	}
	for _, c := range companies {
		m[c] = true
		f.issuers[c] = true
	}
}

// Withdraw takes back signerRUT's permission to send for company (uploads
// get STATUS 1); the signer can still authenticate.
func (f *Fake) Withdraw(signerRUT, company string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.signers[signerRUT], company)
}

// Deauthorize withdraws company's authorisation to issue DTEs (uploads get
// STATUS 6, getEstDte EMP).
func (f *Fake) Deauthorize(company string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.issuers, company)
}

// Script sets the outcome of one document (issuer RUT, type, folio).
func (f *Fake) Script(rutEmisor string, tipo int, folio int64, o Outcome) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.scripts[docKey(rutEmisor, tipo, folio)] = o
}

// SetReviewDelay sets Options.ReviewDelay for the envelopes received from
// now on; those already received keep theirs.
func (f *Fake) SetReviewDelay(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.opts.ReviewDelay = d
}

// SetDefault sets the outcome of documents without a script (default:
// accepted after Options.Steps).
func (f *Fake) SetDefault(o Outcome) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deflt = o
}

// Inject queues faults for an endpoint; each request to it consumes the
// next one.
func (f *Fake) Inject(ep Endpoint, faults ...Fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults[ep] = append(f.faults[ep], faults...)
}

// RevokeTokens makes every token issued so far invalid (uploads get STATUS
// 5, getEstUp ESTADO 001, the REST API 401).
func (f *Fake) RevokeTokens() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, t := range f.tokens {
		t.revoked = true
	}
}

// Requests returns the requests received for ep ("" for all), in order.
func (f *Fake) Requests(ep Endpoint) []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Request
	for _, r := range f.requests {
		if ep == "" || r.Endpoint == ep {
			r.Header = r.Header.Clone()
			r.Fields = slices.Clone(r.Fields)
			out = append(out, r)
		}
	}
	return out
}

// Envelopes returns copies of the envelopes that got a track id, in order.
func (f *Fake) Envelopes() []Envelope {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Envelope, len(f.envelopes))
	for i, e := range f.envelopes {
		out[i] = *e
		out[i].Docs = slices.Clone(e.Docs)
		out[i].Steps = slices.Clone(e.Steps)
	}
	return out
}

// Envelope returns a copy of the envelope with trackID (with or without
// its leading zeros, as the boleta API writes it).
func (f *Fake) Envelope(trackID string) (Envelope, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e := f.lookupTrack(trackID)
	if e == nil {
		return Envelope{}, false
	}
	out := *e
	out.Docs = slices.Clone(e.Docs)
	return out, true
}

// now is the fake's current time, including FaultLate's shift.
func (f *Fake) now() time.Time { return f.opts.Clock().Add(time.Duration(f.late.Load())) }

// nextFault pops the next fault queued for ep.
func (f *Fake) nextFault(ep Endpoint) (Fault, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	q := f.faults[ep]
	if len(q) == 0 {
		return Fault{}, false
	}
	f.faults[ep] = q[1:]
	return q[0], true
}

// record appends a request to the log and returns its index.
func (f *Fake) record(r Request) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, r)
	return len(f.requests) - 1
}

// result sets the Result of a recorded request.
func (f *Fake) result(i int, format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests[i].Result = fmt.Sprintf(format, args...)
}

func docKey(rut string, tipo int, folio int64) string {
	return fmt.Sprintf("%s|%d|%d", strings.ToUpper(rut), tipo, folio)
}

// randomToken returns a 13-character alphanumeric token, as the SII's.
func randomToken() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 13)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}
