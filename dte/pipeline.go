package dte

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/signer"
	"github.com/dtekit/dtekit/ted"
)

// FolioSource hands out folios. The caller implements it over its own
// counter (an ERP's numbering, a database sequence, dtekit's store): each
// call must return a folio never handed out before for that type, with the
// CAF whose range covers it. NewMemoryFolios is a simple in-memory one.
//
// A folio is consumed once returned: if the emission fails afterwards (the
// CAF is expired, signing fails), that folio stays unused and the Emitter's
// error says which it was, so it can be annulled with the SII or reused by
// the caller's own policy.
type FolioSource interface {
	NextFolio(ctx context.Context, tipo TipoDTE) (folio int64, c *caf.CAF, err error)
}

// Emitter turns emission requests into signed DTEs for one issuing company.
// Configure it once and call Emit from any number of goroutines (it holds
// no mutable state of its own; the FolioSource must be safe for concurrent
// use, as MemoryFolios is).
type Emitter struct {
	// Emisor is the issuing company; its RUT must match the CAFs'.
	Emisor Emisor
	// Cert signs the documents.
	Cert *signer.Certificate
	// Folios supplies a folio and its CAF per document.
	Folios FolioSource
	// Now is the clock (nil means time.Now): it sets the default
	// fecha_emision, TSTED, TmstFirma and the CAF checks.
	Now func() time.Time
	// TrustedKeys, when set, makes Emit verify each CAF's FRMA (the SII's
	// signature over the CAF) before using it: caf.SIIKeys() in
	// production, a test authority's Keys in tests. Nil skips the check.
	TrustedKeys caf.TrustedKeys
	// Finishing marks an Emitter that finishes emissions whose folio a
	// service took already (its recovery of an emission interrupted
	// between taking the folio and signing): a rule that came into force
	// since must not leave that folio unused, so what the transport rule
	// of Res. Ex. SII 154/2025 would refuse is only a warning.
	Finishing bool
}

// Emitted is a signed document and its summary.
type Emitted struct {
	// XML is the signed DTE, ISO-8859-1, ready to store, print or pack.
	XML []byte
	// ID is the signed element's ID, e.g. "T33F1001".
	ID           string
	Tipo         TipoDTE
	Folio        int64
	FechaEmision string
	// MontoTotal is Totales/MntTotal: a CLP integer, or an amount with up
	// to 4 decimals in the export's currency.
	MontoTotal Decimal
	// Totals holds every computed amount.
	Totals *Totals
	// TED is the <TED> element as placed in XML (the PDF417 content).
	TED []byte
	// SignedAt is the instant written (in Chile time) in TSTED and
	// TmstFirma.
	SignedAt time.Time
	// Warnings are the problems the gate reported without refusing the
	// request (see ValidateFor), nil when there are none.
	Warnings []FieldError

	// sealed lets BuildEnvioEmitted paste XML without scanning it, while
	// XML holds the bytes Stamp wrote (see sealedDTE).
	sealed *sealedDTE
}

// Emission steps named by EmitError.
const (
	StepFolio = "folio"
	StepCAF   = "caf"
	StepTED   = "ted"
	StepSign  = "sign"
)

// EmitError is a failure of Emit after validation: Step names the stage
// (StepFolio, StepCAF, StepTED, StepSign) and Folio the folio that was
// taken, or 0 if none was. Problems with the request itself are returned as
// *ValidationError instead.
type EmitError struct {
	Step  string
	Tipo  TipoDTE
	Folio int64
	Err   error
}

// Error says which step failed, for which type and folio, and why.
func (e *EmitError) Error() string {
	if e.Folio != 0 {
		return fmt.Sprintf("dte: emit tipo %d folio %d: %s: %v", e.Tipo, e.Folio, e.Step, e.Err)
	}
	return fmt.Sprintf("dte: emit tipo %d: %s: %v", e.Tipo, e.Step, e.Err)
}

// Unwrap returns the underlying error (for errors.Is with caf.ErrExpired,
// caf.ErrFolioOutOfRange, ErrNoFolios, ...).
func (e *EmitError) Unwrap() error { return e.Err }

// Emit validates a request, computes its totals, takes a folio, writes the
// XML, stamps the TED with the CAF's key and signs the document:
//
//	Validate → ComputeTotals → XML (all but the folio) → folio → CAF checks → TED → sign
//
// The request is written before a folio is taken, so a request that cannot
// be written never consumes one. CAF checks: the CAF is for the emisor's
// RUT and the request's type, covers the folio, is not dated after the
// document (fecha_emision) and, for 33, 43, 46, 56 and 61, is still within
// its six months at both fecha_emision and the signing instant; with
// TrustedKeys its FRMA must verify.
//
// Problems with the request come back as *ValidationError (from Validate,
// ComputeTotals or the XML writer); later failures as *EmitError.
func (e *Emitter) Emit(ctx context.Context, req *EmitirDTERequest) (*Emitted, error) {
	if e.Cert == nil || e.Folios == nil {
		if req == nil {
			return nil, nilRequest()
		}
		return nil, errors.New("dte: Emitter needs a Cert and a FolioSource")
	}
	now := time.Now()
	if e.Now != nil {
		now = e.Now()
	}
	p, err := e.Prepare(req, now)
	if err != nil {
		return nil, err
	}
	tipo := req.TipoDTE
	if err := ctx.Err(); err != nil {
		return nil, &EmitError{Step: StepFolio, Tipo: tipo, Err: err}
	}
	folio, c, err := e.Folios.NextFolio(ctx, tipo)
	if err != nil {
		return nil, &EmitError{Step: StepFolio, Tipo: tipo, Err: err}
	}
	return e.Stamp(p, folio, c)
}

func nilRequest() error {
	return &ValidationError{Details: []FieldError{{Field: "request", Code: CodeRequired, Message: "the emission request is missing"}}}
}

// Prepared is a request validated, totalled and written as XML except for
// its folio, at a fixed instant: the part of Emit before a folio is taken.
// A service that takes folios from its own store (in a transaction, with
// the signature outside it) calls Prepare, takes the folio, then Stamp.
// Prepare and Stamp are deterministic: the same request, Emisor, instant,
// folio, CAF and certificate give the same bytes, so an emission
// interrupted after its folio was taken can be finished later identically.
type Prepared struct {
	// Tipo is the document type.
	Tipo TipoDTE
	// FechaEmision is the document date (the request's, or the Chilean
	// business date at At).
	FechaEmision string
	// At is the emission instant, written in TSTED and TmstFirma.
	At time.Time
	// Totals holds every computed amount.
	Totals *Totals
	// Warnings are the problems the gate reported without refusing the
	// request (ValidateFor), nil when there are none.
	Warnings []FieldError

	prep *docPrepared
}

// Prepare validates req at the instant at, by the rules of the Emisor's
// environment (ValidateFor), computes its totals and writes its XML for
// the Emitter's Emisor, leaving out the folio, the TED and the signature.
// Problems with the request come back as *ValidationError; the warnings
// are in Prepared.Warnings.
// Prepare needs neither Cert nor Folios.
func (e *Emitter) Prepare(req *EmitirDTERequest, at time.Time) (*Prepared, error) {
	if req == nil {
		return nil, nilRequest()
	}
	rules := e.Emisor.Ambiente
	if e.Finishing {
		rules = rulesFinishing
	}
	tot, warnings, err := validateTotals(req, at, rules) // ValidateFor and ComputeTotals in one pass
	if err != nil {
		return nil, err
	}
	fecha := FechaEmision(req, at)
	prep, err := prepareDoc(&docInput{req: req, tot: tot, em: &e.Emisor, fecha: fecha})
	if err != nil {
		return nil, err
	}
	return &Prepared{Tipo: req.TipoDTE, FechaEmision: fecha, At: at, Totals: tot, Warnings: warnings, prep: prep}, nil
}

// Stamp finishes a prepared document with a folio already taken and the
// CAF that covers it: CAF checks (as in Emit, at p.At), TED, signature.
// Failures are *EmitError naming the step and the folio.
func (e *Emitter) Stamp(p *Prepared, folio int64, c *caf.CAF) (*Emitted, error) {
	if p == nil || p.prep == nil {
		return nil, errors.New("dte: Stamp needs a document from Prepare")
	}
	tipo := p.Tipo
	if e.Cert == nil {
		return nil, &EmitError{Step: StepSign, Tipo: tipo, Folio: folio, Err: errors.New("the Emitter has no Cert")}
	}
	if c == nil {
		return nil, &EmitError{Step: StepFolio, Tipo: tipo, Folio: folio, Err: errors.New("the folio source returned no CAF")}
	}
	now := p.At
	if err := e.CheckCAF(p, folio, c); err != nil {
		return nil, err
	}
	ted, err := pipeTED(p.prep, folio, c, now)
	if err != nil {
		return nil, &EmitError{Step: StepTED, Tipo: tipo, Folio: folio, Err: err}
	}
	id := DocumentID(tipo, folio)
	// The document is this call's own: the Signature goes into its spare
	// capacity instead of a copy.
	signed, strict, err := signInPlaceStrict(e.Cert, p.prep.assemble(folio, ted, now), id, nil)
	if err != nil {
		return nil, &EmitError{Step: StepSign, Tipo: tipo, Folio: folio, Err: err}
	}
	out := &Emitted{
		XML: signed, ID: id, Tipo: tipo, Folio: folio, FechaEmision: p.FechaEmision,
		MontoTotal: p.Totals.Totales.MntTotal, Totals: p.Totals, TED: ted, SignedAt: now, Warnings: p.Warnings,
	}
	if strict {
		out.sealed = sealDTE(signed, id, tipo, folio, p.prep.rutEmisor)
	}
	return out, nil
}

// CheckCAF runs the CAF checks Stamp runs for this document, folio and CAF,
// without stamping or signing: a caller that takes folios in a transaction
// can check, before committing, that Stamp will accept them. Failures are
// *EmitError at StepCAF.
func (e *Emitter) CheckCAF(p *Prepared, folio int64, c *caf.CAF) error {
	if p == nil || p.prep == nil || c == nil {
		return errors.New("dte: CheckCAF needs a document from Prepare and a CAF")
	}
	if err := e.checkCAF(c, p.prep, folio, p.At); err != nil {
		return &EmitError{Step: StepCAF, Tipo: p.Tipo, Folio: folio, Err: err}
	}
	return nil
}

// checkCAF checks that c may stamp this document.
func (e *Emitter) checkCAF(c *caf.CAF, prep *docPrepared, folio int64, now time.Time) error {
	if c.Tipo != int(prep.tipo) {
		return fmt.Errorf("%s is for tipo %d, not %d", c, c.Tipo, prep.tipo)
	}
	if r, err := ParseRUT(c.RutEmisor); err != nil || r.String() != prep.rutEmisor {
		return fmt.Errorf("%s was issued to %s, not to the emisor %s", c, c.RutEmisor, prep.rutEmisor)
	}
	if c.PrivateKey == nil {
		return fmt.Errorf("%w: %s", caf.ErrNoPrivateKey, c)
	}
	if err := c.CheckFolio(folio); err != nil {
		return err
	}
	day, err := time.ParseInLocation(clockDateLayout, prep.fecha, SantiagoLocation())
	if err != nil {
		return fmt.Errorf("fecha_emision %q: %w", prep.fecha, err)
	}
	if err := c.CheckUsable(day); err != nil {
		return err
	}
	if err := c.CheckUsable(now); err != nil {
		return err
	}
	if e.TrustedKeys != nil {
		if err := c.Verify(e.TrustedKeys); err != nil {
			return err
		}
	}
	return nil
}

// pipeTED stamps the document with the CAF's key: the flattened
// ISO-8859-1 <TED> element that goes into the DTE and its PDF417.
func pipeTED(p *docPrepared, folio int64, c *caf.CAF, now time.Time) ([]byte, error) {
	return ted.Build(ted.DD{
		RE: p.rutEmisor, TD: int(p.tipo), F: folio, FE: p.fecha,
		RR: p.rr, RSR: p.rsr, MNT: string(p.mnt), IT1: p.it1,
		CAF: c, TSTED: now,
	}, c.PrivateKey)
}

// Errors of MemoryFolios.
var (
	// ErrNoFolios means no CAF was loaded for the requested type.
	ErrNoFolios = errors.New("dte: no CAF loaded for this document type")
	// ErrFoliosExhausted means every folio of the type's CAFs was used.
	ErrFoliosExhausted = errors.New("dte: the CAFs of this document type have no folios left")
)

// MemoryFolios is an in-memory FolioSource: for each type it hands out the
// folios of its CAFs in ascending order, one after the other. It is safe
// for concurrent use. It forgets everything when the process ends, so it
// suits tests, demos and callers that persist the next folio themselves
// (see Next and SetNext).
type MemoryFolios struct {
	mu    sync.Mutex
	types map[TipoDTE]*memFolios
}

type memFolios struct {
	cafs []*caf.CAF // sorted by Desde, non-overlapping
	next int64
}

// NewMemoryFolios loads CAFs (any types, several per type allowed as long
// as their ranges don't overlap); each type starts at its lowest folio.
func NewMemoryFolios(cafs ...*caf.CAF) (*MemoryFolios, error) {
	m := &MemoryFolios{types: map[TipoDTE]*memFolios{}}
	for _, c := range cafs {
		if c == nil {
			return nil, errors.New("dte: NewMemoryFolios: nil CAF")
		}
		t := TipoDTE(c.Tipo)
		f := m.types[t]
		if f == nil {
			f = &memFolios{}
			m.types[t] = f
		}
		f.cafs = append(f.cafs, c)
	}
	for _, f := range m.types {
		sort.Slice(f.cafs, func(i, j int) bool { return f.cafs[i].Desde < f.cafs[j].Desde })
		for i := 1; i < len(f.cafs); i++ {
			if f.cafs[i].Desde <= f.cafs[i-1].Hasta {
				return nil, fmt.Errorf("dte: NewMemoryFolios: %s overlaps %s", f.cafs[i], f.cafs[i-1])
			}
		}
		f.next = f.cafs[0].Desde
	}
	return m, nil
}

// NextFolio returns the type's next unused folio and its CAF.
func (m *MemoryFolios) NextFolio(ctx context.Context, tipo TipoDTE) (int64, *caf.CAF, error) {
	if err := ctx.Err(); err != nil {
		return 0, nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	f := m.types[tipo]
	if f == nil {
		return 0, nil, fmt.Errorf("%w (tipo %d)", ErrNoFolios, tipo)
	}
	for _, c := range f.cafs {
		if f.next < c.Desde {
			f.next = c.Desde
		}
		if f.next <= c.Hasta {
			folio := f.next
			f.next++
			return folio, c, nil
		}
	}
	return 0, nil, fmt.Errorf("%w (tipo %d)", ErrFoliosExhausted, tipo)
}

// Next returns the folio the next NextFolio call would hand out for tipo, or
// 0 when none is left or no CAF is loaded.
func (m *MemoryFolios) Next(tipo TipoDTE) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	f := m.types[tipo]
	if f == nil {
		return 0
	}
	for _, c := range f.cafs {
		if f.next <= c.Hasta {
			return max(f.next, c.Desde)
		}
	}
	return 0
}

// SetNext makes folio the next one handed out for tipo (to resume after a
// restart); it must lie in one of the type's CAFs.
func (m *MemoryFolios) SetNext(tipo TipoDTE, folio int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	f := m.types[tipo]
	if f == nil {
		return fmt.Errorf("%w (tipo %d)", ErrNoFolios, tipo)
	}
	for _, c := range f.cafs {
		if c.Contains(folio) {
			f.next = folio
			return nil
		}
	}
	return fmt.Errorf("%w: folio %d is in no CAF of tipo %d", caf.ErrFolioOutOfRange, folio, tipo)
}
