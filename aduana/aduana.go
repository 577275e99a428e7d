// Package aduana holds the code tables of Chile's customs service (Servicio
// Nacional de Aduanas, Compendio de Normas Aduaneras, Anexo 51) that an
// export DTE (types 110, 111 and 112) carries as numbers: countries, ports,
// transport routes, sale clauses and modalities, export payment forms,
// units of measure and package types, plus the currencies, which the DTE
// names rather than numbers.
//
// The tables are product data, embedded as the CSV files they are kept in
// (data/*.csv, copies of the project's shared reference data): each opens
// with a line naming the public transcriptions it was cross-checked
// against, a sources column says which of them list each code and a notes
// column records where they disagree. They are read once, on first use. Every lookup reports with ok whether the table lists the code; a
// code a table lacks has no name here, and callers print its number rather
// than a guess.
//
// Where the sources disagree the tables keep one reading and record the
// others in their notes column; this package follows those notes. Sale
// clause FCA is code 10 in three sources and 7 in two, so both read as
// "FCA".
package aduana

import (
	"bytes"
	"embed"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
)

// files are the customs tables, as copied from ../shared/sii/aduana.
//
//go:embed data/*.csv
var files embed.FS

// entry is one row of a code table: its short form (sigla) and its name.
// Tables without a short form leave sigla empty.
type entry struct{ sigla, name string }

// The tables, each parsed on first use. The column names are the headers of
// the CSV files.
var (
	paises     = codeTable("aduana_paises.csv", "", "name")
	puertos    = codeTable("aduana_puertos.csv", "", "name")
	vias       = codeTable("aduana_vias_transporte.csv", "", "name")
	modalidad  = codeTable("aduana_modalidades_venta.csv", "", "name")
	clausulas  = codeTable("aduana_clausulas_venta.csv", "sigla", "")
	formasPago = codeTable("aduana_formas_pago_exportacion.csv", "sigla", "description")
	unidades   = codeTable("aduana_unidades_medida.csv", "sigla", "name")
	bultos     = codeTable("aduana_tipos_bulto.csv", "sigla", "name")
	monedas    = sync.OnceValue(readMonedas)
)

// Pais returns the name of the country (or customs territory: free zones,
// "OTROS (PAÍS DESCONOCIDO)") with the customs code, as in
// Receptor/Extranjero/Nacionalidad, Aduana/CodPaisRecep and
// Aduana/CodPaisDestin: Pais(225) is "ESTADOS UNIDOS DE AMÉRICA". ok is
// false for a code the table does not list.
func Pais(code int) (name string, ok bool) {
	e, ok := paises()[code]
	return e.name, ok
}

// Puerto returns the name of the port, airport or border pass with the
// customs code, as in Aduana/CodPtoEmbarque and Aduana/CodPtoDesemb:
// Puerto(906) is "SAN ANTONIO". Codes 901 to 999 are Chilean. ok is false
// for a code the table does not list.
func Puerto(code int) (name string, ok bool) {
	e, ok := puertos()[code]
	return e.name, ok
}

// ViaTransporte returns the name of the transport route with the customs
// code, as in Aduana/CodViaTransp: ViaTransporte(4) is "AEREO". ok is false
// for a code the table does not list.
func ViaTransporte(code int) (name string, ok bool) {
	e, ok := vias()[code]
	return e.name, ok
}

// ModalidadVenta returns the name of the sale modality with the customs
// code, as in Aduana/CodModVenta: ModalidadVenta(1) is "A FIRME". ok is
// false for a code the table does not list.
func ModalidadVenta(code int) (name string, ok bool) {
	e, ok := modalidad()[code]
	return e.name, ok
}

// ClausulaVenta returns the short name (an Incoterm, or "S/CL" or "OTROS")
// of the sale clause with the customs code, as in Aduana/CodClauVenta:
// ClausulaVenta(5) is "FOB". Both 7 and 10 read as "FCA": the sources
// disagree on which code FCA has (the table marks 7 as disputed). ok is
// false for a code the table does not list.
func ClausulaVenta(code int) (sigla string, ok bool) {
	e, ok := clausulas()[code]
	// The table keeps FCA at 10 and writes the 7 that two sources give it
	// as "FCA (disputed)"; its notes say to print both as FCA.
	return strings.TrimSuffix(e.sigla, " (disputed)"), ok
}

// FormaPagoExportacion returns the short name and the description of the
// export payment form with the customs code, as in IdDoc/FmaPagExp:
// FormaPagoExportacion(1) is "COB1", "COBRANZA HASTA 1 AÑO". The
// descriptions of 50, 60 and 80 are read from their short names (no
// source spells them out). ok is false for a code the table does not list.
func FormaPagoExportacion(code int) (sigla, description string, ok bool) {
	e, ok := formasPago()[code]
	return e.sigla, e.name, ok
}

// UnidadMedida returns the short name and the name of the unit of measure
// with the customs code, as in Aduana/CodUnidMedTara, CodUnidPesoBruto and
// CodUnidPesoNeto: UnidadMedida(6) is "KN", "KILOGRAMO NETO". ok is false
// for a code the table does not list.
func UnidadMedida(code int) (sigla, name string, ok bool) {
	e, ok := unidades()[code]
	return e.sigla, e.name, ok
}

// TipoBulto returns the short name and the name of the package type with
// the customs code, as in Aduana/TipoBultos/CodTpoBultos: TipoBulto(99) is
// "S/EMBALAR", "SIN EMBALAR". ok is false for a code the table does not list
// (0 among them: the schema's codes are positive).
func TipoBulto(code int) (sigla, name string, ok bool) {
	e, ok := bultos()[code]
	return e.sigla, e.name, ok
}

// Moneda returns the customs code and the ISO 4217 code of the currency a
// DTE names in TpoMoneda, one of the schema's currency names ("DOLAR USA",
// "EURO", "PESO CL"): Moneda("DOLAR USA") is 13, "USD". A DTE carries the
// name, never the number. iso4217 is empty for currencies that no longer
// exist but remain in the schema ("MARCO AL", "PESETA"). ok is false for a
// name the table does not pair with a code; the name must be written as
// the schema writes it.
func Moneda(tpoMoneda string) (code int, iso4217 string, ok bool) {
	m, ok := monedas()[tpoMoneda]
	return m.code, m.iso, ok
}

// codeTable returns a function that parses file once and then returns its
// rows by code; siglaCol and nameCol name the columns read ("" for none).
func codeTable(file, siglaCol, nameCol string) func() map[int]entry {
	return sync.OnceValue(func() map[int]entry {
		out := map[int]entry{}
		forEachRow(file, []string{siglaCol, nameCol}, func(code int, cells []string) error {
			if _, dup := out[code]; dup {
				return fmt.Errorf("code %d appears twice", code)
			}
			out[code] = entry{sigla: cells[0], name: cells[1]}
			return nil
		})
		return out
	})
}

// moneda is a currency's customs and ISO codes.
type moneda struct {
	code int
	iso  string
}

// readMonedas maps the schema's currency names to their codes. Rows
// without a schema name (currencies the schema does not list) are left
// out.
func readMonedas() map[string]moneda {
	out := map[string]moneda{}
	forEachRow("aduana_monedas.csv", []string{"xsd_TpoMoneda_literal", "iso4217"}, func(code int, cells []string) error {
		if cells[0] == "" {
			return nil
		}
		if _, dup := out[cells[0]]; dup {
			return fmt.Errorf("currency name %q appears twice", cells[0])
		}
		out[cells[0]] = moneda{code: code, iso: cells[1]}
		return nil
	})
	return out
}

// forEachRow reads an embedded table and calls fn with each row's code and
// the cells of the columns named in cols ("" gives an empty cell). The
// tables are part of the program and their tests read every one of them,
// so a table that does not read is a broken build: it panics, naming the
// file and the line.
func forEachRow(file string, cols []string, fn func(code int, cells []string) error) {
	b, err := files.ReadFile("data/" + file)
	if err == nil {
		err = readTable(b, cols, fn)
	}
	if err != nil {
		panic(fmt.Sprintf("aduana: embedded table %s: %v", file, err))
	}
}

// readTable reads a table in CSV: a header naming the columns, one of
// them "code", after any lines that start with '#'. It calls fn with each
// row's code and the cells of the columns named in cols.
func readTable(b []byte, cols []string, fn func(code int, cells []string) error) error {
	r := csv.NewReader(bytes.NewReader(b))
	r.Comment = '#' // the first line names the sources
	header, err := r.Read()
	if err != nil {
		return fmt.Errorf("header: %w", err)
	}
	at := map[string]int{}
	for i, h := range header {
		at[h] = i
	}
	codeAt, ok := at["code"]
	if !ok {
		return fmt.Errorf("no code column in %q", header)
	}
	idx := make([]int, len(cols))
	for i, c := range cols {
		idx[i] = -1
		if c == "" {
			continue
		}
		if idx[i], ok = at[c]; !ok {
			return fmt.Errorf("no %s column in %q", c, header)
		}
	}
	cells := make([]string, len(cols))
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		line, _ := r.FieldPos(0)
		code, err := strconv.Atoi(rec[codeAt])
		if err != nil || code < 1 {
			return fmt.Errorf("line %d: code %q is not a positive number", line, rec[codeAt])
		}
		for i, j := range idx {
			cells[i] = ""
			if j >= 0 {
				cells[i] = strings.TrimSpace(rec[j])
			}
		}
		if err := fn(code, cells); err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
	}
}
