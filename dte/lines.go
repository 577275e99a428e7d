package dte

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file holds the rules that carry request text the contract accepts
// into the SII's narrower XML elements. Validate accepts exactly what these
// helpers can carry, and the XML writer calls them, so both agree.

// Lengths of SII XML elements that are shorter than the contract's fields.
const (
	// maxNmbItem is the length of Detalle/NmbItem (contract nombre: 200).
	maxNmbItem = 80
	// maxDscItem is the length of Detalle/DscItem (contract dsc_item: 1000).
	maxDscItem = 1000
	// maxRazonRef is the length of Referencia/RazonRef (contract: 200).
	maxRazonRef = 90
)

// ItemName returns the texts the XML carries in a line's NmbItem and DscItem.
//
// NmbItem holds 80 characters while the contract accepts a nombre of up to
// 200, so a longer nombre is never rejected nor silently cut:
//
//   - nombre of at most 80 characters: NmbItem = nombre, DscItem = dsc_item.
//   - longer nombre, empty dsc_item: NmbItem = its first 80 characters and
//     DscItem = the whole nombre.
//   - longer nombre and a dsc_item: NmbItem = its first 80 characters and
//     DscItem = the whole nombre, a line feed, then dsc_item. Validate
//     rejects the line (TOO_LONG on dsc_item) when that exceeds DscItem's
//     1000 characters.
//
// Characters are Unicode code points, which in ISO-8859-1 are one byte each.
// dsc is "" when the line has no description.
func (l LineaDetalle) ItemName() (nmb, dsc string) {
	if utf8.RuneCountInString(l.Nombre) <= maxNmbItem {
		return l.Nombre, l.DscItem
	}
	nmb = firstRunes(l.Nombre, maxNmbItem)
	if l.DscItem == "" {
		return nmb, l.Nombre
	}
	return nmb, l.Nombre + "\n" + l.DscItem
}

// itemDscLen returns the length in characters of the DscItem ItemName builds.
func (l LineaDetalle) itemDscLen() int {
	n, d := utf8.RuneCountInString(l.Nombre), utf8.RuneCountInString(l.DscItem)
	switch {
	case n <= maxNmbItem:
		return d
	case d == 0:
		return n
	default:
		return n + 1 + d
	}
}

// RazonRefXML returns the text the XML carries in Referencia/RazonRef: the
// first 90 characters of razon_ref. The contract accepts up to 200 characters
// but the SII's schema holds 90; the rest is dropped (a reference's reason is
// a short free comment, and the referenced document is fully identified by
// its type, folio and date).
func (r Referencia) RazonRefXML() string { return firstRunes(r.RazonRef, maxRazonRef) }

// firstRunes returns the first n characters (code points) of s.
func firstRunes(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}

// ClausulaVentaCodigo returns the code of the Chilean customs table of sale
// clauses that the XML's Aduana/CodClauVenta carries for
// export_data.clausula_venta, which the contract lets a client send either as
// the code itself ("5") or as a label ("FOB", any case, surrounding spaces
// ignored). Numeric codes 1–99 are taken as given;
// known labels follow the customs table of sale clauses: CIF 1, CFR 2, EXW 3,
// FAS 4, FOB 5, S/CL 6, OTROS 8, DDP 9, FCA 10, CPT 11, CIP 12, DAT 17 and
// DAP 18 (cross-checked against two independent public emitters' copies of
// that table). It reports false for anything else.
func ClausulaVentaCodigo(s string) (int, bool) {
	s = strings.ToUpper(strings.TrimSpace(s))
	if s != "" && len(s) <= 2 && allDigits(s) {
		n, _ := strconv.Atoi(s)
		return n, n >= 1
	}
	switch s {
	case "CIF":
		return 1, true
	case "CFR":
		return 2, true
	case "EXW":
		return 3, true
	case "FAS":
		return 4, true
	case "FOB":
		return 5, true
	case "S/CL": // sin cláusula
		return 6, true
	case "OTROS":
		return 8, true
	case "DDP":
		return 9, true
	case "FCA":
		return 10, true
	case "CPT":
		return 11, true
	case "CIP":
		return 12, true
	case "DAT":
		return 17, true
	case "DAP":
		return 18, true
	}
	return 0, false
}
