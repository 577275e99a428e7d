package certificacion

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/signer"
)

// Config is what Generate needs besides the plan.
type Config struct {
	// Emisor is the applicant company as registered for certification
	// (pe_construccion_dte): NumeroResolucion 0 and the certification
	// FechaResolucion, which every envelope's Carátula carries.
	Emisor dte.Emisor
	// Cert signs the documents and the envelopes.
	Cert *signer.Certificate
	// CAFs authorize the folios, any number per type; each type the plan
	// emits needs enough folios for its cases.
	CAFs []*caf.CAF
	// TrustedKeys checks each CAF's SII signature (caf.SIIKeys() for the
	// SII's certification CAFs); nil skips the check.
	TrustedKeys caf.TrustedKeys
	// Fecha is the emission date, YYYY-MM-DD; empty means today in Chile.
	// The SII wants today's date (a stale one gives DTE-1-650).
	Fecha string
	// Now is the clock (nil means time.Now), read once: every document and
	// envelope is signed at that instant.
	Now func() time.Time
	// Receptores is the pool of receptors, one per factura, guía de venta
	// and boleta in the order of the plan; nil uses DefaultReceptores.
	Receptores []dte.Receptor
	// FoliosUsados is the highest folio of each type that earlier runs
	// (generar, simulacion) used with these CAFs, as FoliosUsados reads
	// them from their folders: every type starts above it, so that no
	// folio is sent twice (the SII rejects a second document with one
	// folio as a duplicate).
	FoliosUsados map[dte.TipoDTE]int64
	// URLBoletas is the address where the company's customers check their
	// boletas, printed under the timbre of the boleta samples instead of
	// the SII's (sii-wave3-notes §6.4); required when the plan has boletas.
	URLBoletas string
}

// Result is a generated plan.
type Result struct {
	Plan *Plan
	// Fecha is the emission date of every document.
	Fecha string
	// At is the signing instant.
	At time.Time
	// Sets are the plan's sets, in order (the libro sets with no
	// documents).
	Sets []*SetResult
	// Libros are the signed libros the plan's libro sets ask for (ventas,
	// compras, guías) and the RCOF of the boleta set, in upload order.
	Libros []*LibroResult
	// Pending are the libro sets whose libro this plan alone cannot give
	// (a Libro de Ventas without the basic set in the file).
	Pending []PendingLibro
	// Saltados says, per type, which folios earlier runs used and where
	// this run started instead (Config.FoliosUsados).
	Saltados []FoliosSaltados
	// URLBoletas is Config.URLBoletas, printed on the boleta samples.
	URLBoletas string
}

// FoliosSaltados is one type whose first folios an earlier run used.
type FoliosSaltados struct {
	Tipo dte.TipoDTE
	// Usados is the highest folio used before; Desde where this run
	// started.
	Usados, Desde int64
}

// String says it in the words of LEEME.md.
func (f FoliosSaltados) String() string {
	return fmt.Sprintf("tipo %d (%s): los folios hasta el %d ya se usaron en una generación anterior; esta carpeta empieza en el %d", f.Tipo, f.Tipo.Name(), f.Usados, f.Desde)
}

// SetResult is one set's documents and envelope.
type SetResult struct {
	Set *Set
	// Docs are the set's documents in the order of its cases.
	Docs []*Doc
	// Envelope is the signed EnvioDTE (EnvioBOLETA for the boleta set)
	// carrying Docs in order; nil for a set that emits nothing.
	Envelope []byte
}

// Doc is one emitted case.
type Doc struct {
	Case    *Case
	Request *dte.EmitirDTERequest
	Emitted *dte.Emitted
	// Guia is, for a factura of SetFacturaGuias, the guía it invoices.
	Guia *Doc
}

// MissingCAFError lists the types the plan emits that the CAFs do not
// cover, each with the folios it needs and has.
type MissingCAFError struct {
	Missing []MissingCAF
}

// MissingCAF is one type short of folios.
type MissingCAF struct {
	Tipo       dte.TipoDTE
	Need, Have int64
	// Sets names the sets that need the type.
	Sets []string
}

// Error lists every type short of folios.
func (e *MissingCAFError) Error() string {
	parts := make([]string, len(e.Missing))
	for i, m := range e.Missing {
		if m.Have == 0 {
			parts[i] = fmt.Sprintf("no CAF for tipo %d (%s), which %s needs for %d case(s)", m.Tipo, m.Tipo.Name(), strings.Join(m.Sets, " and "), m.Need)
		} else {
			parts[i] = fmt.Sprintf("tipo %d (%s) needs %d folios for %s; the CAFs give %d", m.Tipo, m.Tipo.Name(), m.Need, strings.Join(m.Sets, " and "), m.Have)
		}
	}
	return "certificacion: " + strings.Join(parts, "; ")
}

// Needs returns how many documents of each type the plan emits.
func (p *Plan) Needs() map[dte.TipoDTE]int64 {
	n := map[dte.TipoDTE]int64{}
	for _, c := range p.Cases() {
		n[c.Tipo]++
	}
	return n
}

// CheckCAFs checks, before anything is signed, that cafs cover every type
// the plan emits with enough folios, and that they were issued to the
// emisor; it returns a *MissingCAFError listing every type short of
// folios.
func (p *Plan) CheckCAFs(emisor dte.Emisor, cafs []*caf.CAF) error {
	return p.CheckFolios(emisor, cafs, nil)
}

// CheckFolios is CheckCAFs counting only the folios above usados, the
// highest folio of each type earlier runs used (Config.FoliosUsados).
func (p *Plan) CheckFolios(emisor dte.Emisor, cafs []*caf.CAF, usados map[dte.TipoDTE]int64) error {
	rut, err := dte.ParseRUT(emisor.Rut)
	if err != nil {
		return fmt.Errorf("certificacion: emisor rut: %w", err)
	}
	have := map[dte.TipoDTE]int64{}
	for _, c := range cafs {
		if r, err := dte.ParseRUT(c.RutEmisor); err != nil || r != rut {
			return fmt.Errorf("certificacion: %s was issued to %s, not to the emisor %s", c, c.RutEmisor, rut)
		}
		have[dte.TipoDTE(c.Tipo)] += libres(c, usados)
	}
	sets := map[dte.TipoDTE][]string{}
	for _, s := range p.Sets {
		if !s.Kind.Emits() {
			continue
		}
		seen := map[dte.TipoDTE]bool{}
		for _, c := range s.Cases {
			if !seen[c.Tipo] {
				seen[c.Tipo] = true
				sets[c.Tipo] = append(sets[c.Tipo], s.Name)
			}
		}
	}
	needs := p.Needs()
	if p.facturaDeGuias() != nil {
		needs[dte.FacturaElectronica]++
		sets[dte.FacturaElectronica] = append(sets[dte.FacturaElectronica], "SET LIBRO DE GUIAS")
	}
	var miss []MissingCAF
	for t, n := range needs {
		if have[t] < n {
			miss = append(miss, MissingCAF{Tipo: t, Need: n, Have: have[t], Sets: sets[t]})
		}
	}
	if len(miss) == 0 {
		return nil
	}
	sort.Slice(miss, func(i, j int) bool { return miss[i].Tipo < miss[j].Tipo })
	return &MissingCAFError{Missing: miss}
}

// libres returns how many folios of c lie above the highest folio of its
// type used before.
func libres(c *caf.CAF, usados map[dte.TipoDTE]int64) int64 {
	from := max(c.Desde, usados[dte.TipoDTE(c.Tipo)]+1)
	if from > c.Hasta {
		return 0
	}
	return c.Hasta - from + 1
}

// generator carries one Generate run.
type generator struct {
	cfg      Config
	saltados []FoliosSaltados
	fecha    string
	at       time.Time
	pool     []dte.Receptor
	nextRcp  int
}

// Generate emits every case of the plan's emitting sets, in order, and
// packs each set into one signed envelope (the boleta set into one
// EnvioBOLETA), addressed to the SII (60803000-K) with the emisor's
// certification resolution. It then signs the libros the libro sets ask
// for: the Libro de Ventas of the SET BASICO's documents (of SET FACTURA
// EXENTA's without it), the Libro de Compras of the set's table
// (ComprasRows), the Libro de Guías of the guía set's guías, and the RCOF
// of the boleta set; a libro whose source set is not in the file is listed
// in Result.Pending. It checks first, before signing anything,
// that the CAFs cover every type the plan needs (*MissingCAFError) and
// that the emisor is registered for certification (NumeroResolucion 0).
// Liquidación-factura cases are not described by the SII material the kit
// follows: a LIQUIDACION FACTURA set is listed as not generated (in the
// Result's Plan.Skipped, so in the manifest and LEEME.md) and the rest of
// the file is generated; such a case inside another set is refused.
func Generate(ctx context.Context, plan *Plan, cfg Config) (*Result, error) {
	if plan == nil {
		return nil, errors.New("certificacion: no plan")
	}
	if cfg.Cert == nil {
		return nil, errors.New("certificacion: no signing certificate")
	}
	if err := cfg.Emisor.Validate(); err != nil {
		return nil, fmt.Errorf("certificacion: emisor: %w", err)
	}
	if cfg.Emisor.NumeroResolucion != 0 {
		return nil, fmt.Errorf("certificacion: the emisor's numero_resolucion is %d; in certification it is 0 (a wrong pair gives CRT-3-19)", cfg.Emisor.NumeroResolucion)
	}
	plan = withoutLiquidaciones(plan)
	if len(plan.Sets) == 0 {
		return nil, errors.New("certificacion: the file has no set the kit generates (see the plan's skipped sets)")
	}
	for _, c := range plan.Cases() {
		if c.Tipo == dte.LiquidacionFacturaElectronica {
			return nil, caseError(c, "liquidación-factura (43) cases are not supported: the SII material the kit follows does not describe them")
		}
	}
	if err := plan.CheckFolios(cfg.Emisor, cfg.CAFs, cfg.FoliosUsados); err != nil {
		return nil, err
	}
	if cfg.URLBoletas == "" {
		for _, c := range plan.Cases() {
			if c.Tipo.IsBoleta() {
				return nil, errors.New("certificacion: the boleta samples print the address where customers check their boletas (sii-wave3-notes §6.4), and none was given (Config.URLBoletas, --url-boletas)")
			}
		}
	}
	g, em, folios, err := start(cfg)
	if err != nil {
		return nil, err
	}
	at := g.at
	res := &Result{Plan: plan, Fecha: g.fecha, At: at, Saltados: g.saltados, URLBoletas: cfg.URLBoletas}
	var boletas map[string]*built
	for _, s := range plan.Sets {
		sr := &SetResult{Set: s}
		res.Sets = append(res.Sets, sr)
		if !s.Kind.Emits() {
			continue
		}
		docs := map[string]*built{}
		if s.Kind == SetBoletaNotas && boletas != nil {
			docs = boletas // the notes refer to the boleta set before them
		}
		if s.Kind == SetBoleta {
			boletas = docs
		}
		emitted := make([]*dte.Emitted, 0, len(s.Cases))
		for _, c := range s.Cases {
			folio := folios.Next(c.Tipo)
			req, err := g.request(c, docs)
			if err != nil {
				return nil, err
			}
			out, err := em.Emit(ctx, req)
			if err != nil {
				return nil, caseError(c, "%v", err)
			}
			if out.Folio != folio {
				return nil, caseError(c, "took folio %d, expected %d", out.Folio, folio)
			}
			docs[c.ID] = &built{c: c, req: req, out: out}
			sr.Docs = append(sr.Docs, &Doc{Case: c, Request: req, Emitted: out})
			emitted = append(emitted, out)
		}
		env, err := dte.BuildEnvioEmitted(dte.EnvioOptions{Emisor: cfg.Emisor, At: at}, cfg.Cert, emitted...)
		if err != nil {
			return nil, fmt.Errorf("certificacion: envelope of %s: %w", s.Name, err)
		}
		sr.Envelope = env
	}
	if lg := plan.facturaDeGuias(); lg != nil {
		sr, err := g.facturasDeGuias(ctx, em, lg, res)
		if err != nil {
			return nil, err
		}
		// Right after the guía set: uploaded after the guías it invoices.
		at := len(res.Sets)
		for i, s := range res.Sets {
			if s.Set.Kind == SetGuiaDespacho {
				at = i + 1
				break
			}
		}
		res.Sets = append(res.Sets[:at], append([]*SetResult{sr}, res.Sets[at:]...)...)
	}
	if err := g.libros(res); err != nil {
		return nil, err
	}
	return res, nil
}

// start reads the clock once and returns the run's generator, an
// emitter signing at that instant and the folios of the CAFs.
func start(cfg Config) (*generator, *dte.Emitter, *dte.MemoryFolios, error) {
	now := time.Now
	if cfg.Now != nil {
		now = cfg.Now
	}
	at := now()
	fecha := cfg.Fecha
	if fecha == "" {
		fecha = dte.Today(at)
	} else if _, err := time.Parse("2006-01-02", fecha); err != nil {
		return nil, nil, nil, fmt.Errorf("certificacion: fecha %q is not YYYY-MM-DD", fecha)
	}
	folios, err := dte.NewMemoryFolios(cfg.CAFs...)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("certificacion: %w", err)
	}
	saltados, err := skipUsed(folios, cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	em := &dte.Emitter{Emisor: cfg.Emisor, Cert: cfg.Cert, Folios: folios, Now: func() time.Time { return at }, TrustedKeys: cfg.TrustedKeys}
	g := &generator{cfg: cfg, fecha: fecha, at: at, pool: cfg.Receptores, saltados: saltados}
	if g.pool == nil {
		g.pool = DefaultReceptores()
	}
	return g, em, folios, nil
}

// skipUsed moves each type's next folio above the highest one earlier
// runs used (cfg.FoliosUsados), to the first free folio of its CAFs, and
// says where each type starts.
func skipUsed(folios *dte.MemoryFolios, cfg Config) ([]FoliosSaltados, error) {
	var out []FoliosSaltados
	for _, t := range dte.Tipos() {
		used := cfg.FoliosUsados[t]
		next := folios.Next(t)
		if used == 0 || next == 0 || next > used {
			continue
		}
		from := int64(0)
		for _, c := range cfg.CAFs {
			if dte.TipoDTE(c.Tipo) != t || c.Hasta <= used {
				continue
			}
			if f := max(c.Desde, used+1); from == 0 || f < from {
				from = f
			}
		}
		if from == 0 {
			// No folio left: the type is not usable (CheckFolios and the
			// simulación's check say so before anything is signed).
			continue
		}
		if err := folios.SetNext(t, from); err != nil {
			return nil, fmt.Errorf("certificacion: %w", err)
		}
		out = append(out, FoliosSaltados{Tipo: t, Usados: used, Desde: from})
	}
	return out, nil
}

// receptor returns the next receptor of the pool for a factura, guía or
// boleta (the foreign receptor for exports, the anonymous one for
// boletas).
func (g *generator) receptor(c *Case) dte.Receptor {
	switch {
	case c.Tipo.IsExport():
		return dte.Receptor{Rut: ExtranjeroRUT, RazonSocial: "IMPORTADOR DE PRUEBA " + c.ID, Giro: "IMPORTACION",
			Direccion: "DIRECCION EN EL EXTRANJERO"}
	case c.Tipo.IsBoleta():
		return dte.Receptor{Rut: "66666666-6", RazonSocial: "CLIENTE SIN IDENTIFICAR"}
	}
	r := g.pool[g.nextRcp%len(g.pool)]
	g.nextRcp++
	return r
}

// self is the emisor as receptor: a traslado interno's guía.
func (g *generator) self() dte.Receptor {
	e := g.cfg.Emisor
	return dte.Receptor{Rut: e.Rut, RazonSocial: e.RazonSocial, Giro: firstRunes(e.Giro, maxGiroRecep), Direccion: e.Direccion, Comuna: e.Comuna, Ciudad: e.Ciudad}
}

// DefaultReceptores returns the receptor pool Generate uses when none is
// given: companies with valid RUTs, full giros and addresses, one per
// factura.
func DefaultReceptores() []dte.Receptor {
	out := make([]dte.Receptor, 0, 24)
	for i := range 24 {
		body := 76100100 + i*1013
		rut := fmt.Sprintf("%d-%c", body, dte.CheckDigit(body))
		out = append(out, dte.Receptor{Rut: rut, RazonSocial: fmt.Sprintf("EMPRESA RECEPTORA DE PRUEBA %d LIMITADA", i+1),
			Giro: "VENTA AL POR MAYOR DE PRODUCTOS", Direccion: fmt.Sprintf("AVENIDA LIBERTADOR BERNARDO O'HIGGINS %d", 1000+i*10),
			Comuna: "SANTIAGO", Ciudad: "SANTIAGO"})
	}
	return out
}

// maxGiroRecep is the length of the receptor's GiroRecep in the schema
// (the emisor's giro may be longer).
const maxGiroRecep = 40

// firstRunes returns the first n characters of s.
func firstRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}

// withoutLiquidaciones returns plan without its LIQUIDACION FACTURA sets,
// each listed in Skipped with the reason instead: the kit generates the
// rest of the file. plan itself is not changed.
func withoutLiquidaciones(plan *Plan) *Plan {
	var keep []*Set
	var skipped []SkippedSet
	for _, s := range plan.Sets {
		if s.Kind != SetLiquidacionFactura {
			keep = append(keep, s)
			continue
		}
		skipped = append(skipped, SkippedSet{Name: s.Name, Atencion: s.Atencion, Line: s.Line,
			Reason: "liquidación-factura (43) cases are not generated: the SII material the kit follows does not describe them; emit them by other means"})
	}
	if skipped == nil {
		return plan
	}
	cp := *plan
	cp.Sets = keep
	cp.Skipped = append(slices.Clip(plan.Skipped), skipped...)
	return &cp
}
