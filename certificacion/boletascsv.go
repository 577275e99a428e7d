package certificacion

import (
	"encoding/csv"
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dtekit/dtekit/dte"
)

// The boleta set as a spreadsheet (../shared/sii/sets/007-boletas.csv): not
// a file the SII hands out but a transcription of the pre-2020 boleta set
// that LibreDTE kept beside its example that emits it
// (LibreDTE/libredte-lib-core, examples/set_pruebas/007-boletas.csv and
// examples/029-set_boleta.php). The layout: UTF-8, `;`-separated, the
// header below, a row with a Folio starts a boleta and the rows without one
// add items to it; IndExe 1 is an exempt item; prices include IVA.
//
// Anular and Rebajar are the credit notes (61) the set asks for, read as
// that example emits them: Anular 1 is a note that annuls the boleta
// (CodRef 1, "ANULA BOLETA", every line of the boleta), and Rebajar N is a
// note that lowers the item of that row by N % of its quantity at the
// boleta's price (CodRef 3, "SE REBAJA EN UN N%": the example takes 40 % of
// QtyItem, 5 → 2 and 3.8 → 1.52), not by N units.
//
// The boletas are the cases of a SetBoleta (cases "1", "2" … from the
// Folio column, one EnvioBOLETA); the notes a SetBoletaNotas after it
// (cases "NC-1" …, one EnvioDTE: an EnvioBOLETA carries only boletas). The
// kit writes in the plan's warnings that the file is a transcription.

// boletasCSVHeader is the first line of the layout, folded.
const boletasCSVHeader = "FOLIO;INDEXE;NMBITEM;QTYITEM;UNMDITEM;PRCITEM;ANULAR;REBAJAR"

// SetBoletaNotas is the credit notes on boletas the pre-2020 boleta set
// asks for (only from the 007-boletas.csv layout).
const SetBoletaNotas SetKind = "NOTAS DE CREDITO DE BOLETAS"

const (
	boletasCSVCols   = 8
	maxBoletaNmbItem = 80 // Detalle/NmbItem
	maxBoletaUnmd    = 4  // Detalle/UnmdItem
	maxBoletaFolio   = 999999
)

var reDigits = regexp.MustCompile(`^\d+$`)

// isBoletasCSV reports whether the file's first line is the layout's
// header.
func isBoletasCSV(lines []string) bool {
	return len(lines) > 0 && strings.ReplaceAll(fold(lines[0]), " ", "") == boletasCSVHeader
}

// boletasCSV reads the layout into a plan.
func (p *parser) boletasCSV() error {
	bol := &Set{Kind: SetBoleta, Name: "SET DE BOLETA ELECTRONICA (transcripción 007-boletas.csv)", Line: 1}
	p.plan.Sets = append(p.plan.Sets, bol)
	p.set = bol
	p.plan.Warnings = append(p.plan.Warnings, Warning{Line: 1, Text: strings.TrimSpace(p.lines[0]),
		Reason: "this file is a spreadsheet transcription of the pre-2020 boleta set (LibreDTE's examples/set_pruebas/007-boletas.csv), not a file the SII hands out: rehearse with it, certify with the set the SII's boleta portal gives you"})
	type rebaja struct {
		c    *Case
		it   *Item
		pct  int
		line int
	}
	var (
		cur     *Case
		anulada = map[*Case]int{} // the line of the boleta's Anular
		rebajas []rebaja
		byFolio = map[int]bool{}
	)
	for i := 1; i < len(p.lines); i++ {
		raw := p.lines[i]
		if strings.TrimSpace(raw) == "" || strings.Trim(raw, "; \t") == "" {
			continue
		}
		p.kase = ""
		if cur != nil {
			p.kase = cur.ID
		}
		r := csv.NewReader(strings.NewReader(raw))
		r.Comma, r.FieldsPerRecord = ';', boletasCSVCols
		cols, err := r.Read()
		if err != nil || len(cols) != boletasCSVCols {
			why := fmt.Sprintf("not a row of %d `;`-separated fields (Folio;IndExe;NmbItem;QtyItem;UnmdItem;PrcItem;Anular;Rebajar)", boletasCSVCols)
			if pe, ok := err.(*csv.ParseError); ok && pe.Err != csv.ErrFieldCount {
				why = "a field the kit cannot read: " + pe.Err.Error()
			}
			// A row of a boleta (after one, or starting one with its
			// Folio) is the case's own data; any other is left aside.
			first, _, _ := strings.Cut(raw, ";")
			if cur != nil || reDigits.MatchString(strings.TrimSpace(first)) {
				return p.errf(i, "%s", why)
			}
			if err := p.warn(i, "%s, before the first boleta; left aside", why); err != nil {
				return err
			}
			continue
		}
		for j := range cols {
			cols[j] = strings.TrimSpace(cols[j])
		}
		if strings.ReplaceAll(fold(strings.Join(cols, ";")), " ", "") == boletasCSVHeader {
			if err := p.warn(i, "the header again; left aside"); err != nil {
				return err
			}
			continue
		}
		if cols[0] != "" {
			n, err := strconv.Atoi(cols[0])
			if err != nil || n < 1 || n > maxBoletaFolio {
				return p.errf(i, "Folio %q is not a number from 1 to %d", cols[0], maxBoletaFolio)
			}
			if byFolio[n] {
				return p.errf(i, "Folio %d starts a second boleta", n)
			}
			byFolio[n] = true
			if len(bol.Cases) >= maxCasesPerSet {
				return p.errf(i, "more than %d boletas", maxCasesPerSet)
			}
			cur = &Case{ID: strconv.Itoa(n), N: n, Line: i + 1, Documento: "BOLETA ELECTRONICA", Tipo: dte.BoletaElectronica,
				Columns: []string{"CANTIDAD", "UNIDAD MEDIDA", "PRECIO UNITARIO CON IVA"}}
			bol.Cases = append(bol.Cases, cur)
			p.kase = cur.ID
		} else if cur == nil {
			if err := p.warn(i, "an item row before the first boleta (no Folio yet); left aside"); err != nil {
				return err
			}
			continue
		}
		it, err := p.boletaItem(i, cols)
		if err != nil {
			return err
		}
		if len(cur.Items) >= maxItemsPerCase {
			return p.errf(i, "more than %d items in boleta %s", maxItemsPerCase, cur.ID)
		}
		cur.Items = append(cur.Items, it)
		switch cols[6] {
		case "", "0":
		case "1":
			anulada[cur] = i + 1
		default:
			return p.errf(i, "Anular %q is neither 1 nor empty", cols[6])
		}
		if v := strings.TrimSuffix(cols[7], "%"); v != "" {
			pct, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || pct < 1 || pct > 100 {
				return p.errf(i, "Rebajar %q is not a percentage from 1 to 100", cols[7])
			}
			rebajas = append(rebajas, rebaja{cur, it, pct, i + 1})
		}
	}
	p.kase = ""
	if len(bol.Cases) == 0 {
		return &ParseError{Reason: "a boleta spreadsheet without boletas"}
	}
	// The notes, in the order of their boletas: an annulment, or one note
	// lowering the rows that carry Rebajar.
	notas := &Set{Kind: SetBoletaNotas, Name: "NOTAS DE CREDITO DE BOLETAS (transcripción 007-boletas.csv)", Line: 1}
	for _, b := range bol.Cases {
		var nc *Case
		if line, ok := anulada[b]; ok {
			nc = &Case{Razon: "ANULA BOLETA", CodRef: 1, Ref: &CaseRef{Documento: b.Documento, CaseID: b.ID, Line: line}}
		}
		for _, r := range rebajas {
			if r.c != b {
				continue
			}
			if nc != nil && nc.CodRef == 1 {
				return &ParseError{Line: r.line, Text: p.lines[r.line-1], Case: b.ID, Reason: "Rebajar on a boleta that Anular annuls"}
			}
			if nc == nil {
				nc = &Case{Razon: fmt.Sprintf("SE REBAJA EN UN %d%%", r.pct), CodRef: 3, Ref: &CaseRef{Documento: b.Documento, CaseID: b.ID, Line: r.line}}
			} else if want := fmt.Sprintf("SE REBAJA EN UN %d%%", r.pct); nc.Razon != want {
				return &ParseError{Line: r.line, Text: p.lines[r.line-1], Case: b.ID, Reason: "two Rebajar percentages on one boleta: the kit emits one note per boleta"}
			}
			for _, other := range b.Items {
				if other != r.it && strings.TrimSpace(other.Nombre) == strings.TrimSpace(r.it.Nombre) {
					// The note names its item by name (NmbItem): two of
					// one name cannot be told apart.
					return &ParseError{Line: r.line, Text: p.lines[r.line-1], Case: b.ID, Reason: fmt.Sprintf("Rebajar on %q, a name boleta %s gives two items", r.it.Nombre, b.ID)}
				}
			}
			qty, err := lowered(r.it.Cantidad, r.pct)
			if err != nil {
				return &ParseError{Line: r.line, Text: p.lines[r.line-1], Case: b.ID, Reason: err.Error()}
			}
			nc.Items = append(nc.Items, &Item{Nombre: r.it.Nombre, Cantidad: qty, Unidad: r.it.Unidad, Line: r.line})
		}
		if nc == nil {
			continue
		}
		nc.N = len(notas.Cases) + 1
		nc.ID = "NC-" + b.ID
		nc.Line = nc.Ref.Line
		nc.Documento, nc.Tipo = "NOTA DE CREDITO ELECTRONICA", dte.NotaCreditoElectronica
		notas.Cases = append(notas.Cases, nc)
	}
	if len(notas.Cases) > 0 {
		p.plan.Sets = append(p.plan.Sets, notas)
	}
	return nil
}

// boletaItem reads the item of row i.
func (p *parser) boletaItem(i int, cols []string) (*Item, error) {
	it := &Item{Nombre: cols[2], Unidad: cols[4], Line: i + 1}
	if it.Nombre == "" {
		return nil, p.errf(i, "NmbItem is empty")
	}
	if utf8.RuneCountInString(it.Nombre) > maxBoletaNmbItem {
		return nil, p.errf(i, "NmbItem has more than %d characters", maxBoletaNmbItem)
	}
	if strings.ContainsRune(it.Nombre, utf8.RuneError) {
		return nil, p.errf(i, "NmbItem has a character lost in a re-save (U+FFFD); the kit does not guess accents")
	}
	if utf8.RuneCountInString(it.Unidad) > maxBoletaUnmd {
		return nil, p.errf(i, "UnmdItem %q has more than %d characters", it.Unidad, maxBoletaUnmd)
	}
	switch cols[1] {
	case "", "0":
	case "1":
		it.Exento = true
	default:
		return nil, p.errf(i, "IndExe %q is neither 1 (exempt) nor empty", cols[1])
	}
	for _, f := range []struct {
		name string
		v    string
		to   *dte.Decimal
	}{{"QtyItem", cols[3], &it.Cantidad}, {"PrcItem", cols[5], &it.Precio}} {
		v := strings.ReplaceAll(f.v, ",", ".")
		if !reNumber.MatchString(v) {
			return nil, p.errf(i, "%s %q is not a number", f.name, f.v)
		}
		*f.to = dte.Decimal(v)
	}
	return it, nil
}

// lowered returns pct % of quantity q, rounded half up to the 6 decimals
// of QtyItem.
func lowered(q dte.Decimal, pct int) (dte.Decimal, error) {
	r := q.Rat()
	if r == nil {
		return "", fmt.Errorf("the QtyItem %q is not a number", q)
	}
	r = new(big.Rat).Mul(r, big.NewRat(int64(pct), 100))
	d := dte.DecimalFromRat(r, 6)
	if d == "0" {
		return "", fmt.Errorf("the Rebajar of %d%% of QtyItem %s comes to less than 0.000001", pct, q)
	}
	return d, nil
}
