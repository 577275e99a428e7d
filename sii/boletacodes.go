package sii

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"fmt"
	"strings"
	"sync"
)

// boletaCodesCSV is the table of the codes the boleta REST API answers, a
// copy of the project's shared reference data
// (../shared/sii/boleta-api-codes.csv): its first line names the sources,
// then one row per endpoint, field and code with its meaning and how
// clients classify it.
//
//go:embed data/boleta-api-codes.csv
var boletaCodesCSV []byte

// boletaCode is one row of the table.
type boletaCode struct {
	endpoint, field, code, meaning, classification string
}

// boletaCodes is the table, read on first use.
var boletaCodes = sync.OnceValues(func() ([]boletaCode, error) {
	data := boletaCodesCSV
	// The first line is the sources comment; the header follows.
	if i := bytes.IndexByte(data, '\n'); bytes.HasPrefix(data, []byte("#")) && i >= 0 {
		data = data[i+1:]
	}
	rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("sii: the boleta code table: %w", err)
	}
	if len(rows) == 0 || strings.Join(rows[0], ",") != "endpoint,field,code,meaning,meaning_source,client_classification" {
		return nil, fmt.Errorf("sii: the boleta code table has an unexpected header")
	}
	out := make([]boletaCode, 0, len(rows)-1)
	for _, r := range rows[1:] {
		out = append(out, boletaCode{endpoint: r[0], field: r[1], code: r[2], meaning: r[3], classification: r[5]})
	}
	return out, nil
})

// perBoletaEndpoint is the table's name of the per-boleta status query.
const perBoletaEndpoint = "GET boleta.electronica/{rut}-{dv}-{tipo}-{folio}/estado"

// Arrival is what a per-boleta status says about whether the SII has a
// boleta: the arrival check after an upload whose answer was lost.
type Arrival int

// The answers of the arrival check.
const (
	// ArrivalUnknown: the answer tells nothing (FNA, EMP, an unknown
	// code, or no answer at all: plain text, non-JSON, 4xx/5xx, a
	// timeout). Ask again later; never read it as not received.
	ArrivalUnknown Arrival = iota
	// ArrivalReceived: the SII has the boleta (DOK, DNK, FAN, TMD, TMC,
	// MMD, MMC, AND, ANC); it must never be sent again.
	ArrivalReceived
	// ArrivalNotReceived: FAU, the SII does not have the boleta.
	ArrivalNotReceived
)

func (a Arrival) String() string {
	switch a {
	case ArrivalReceived:
		return "received"
	case ArrivalNotReceived:
		return "not received"
	}
	return "unknown"
}

// BoletaArrival classifies a per-boleta status codigo (BoletaStatus's
// Estado) for the arrival check, from the code table: a code the clients
// classify as found is received; the one classified as plainly not found
// (FAU) is not received; every other code, and one the table lacks, is
// unknown. FNA ("not found / not authorized") is unknown too: a folio the
// SII does not recognise as authorized says nothing of whether the boleta
// arrived.
func BoletaArrival(codigo string) Arrival {
	c, ok := lookupBoletaCode(codigo)
	switch {
	case !ok:
		return ArrivalUnknown
	case strings.HasPrefix(c.classification, "found"):
		return ArrivalReceived
	case c.classification == "not found":
		return ArrivalNotReceived
	}
	return ArrivalUnknown
}

// BoletaCodeMeaning returns the table's meaning of a per-boleta status
// codigo ("" for a code it lacks).
func BoletaCodeMeaning(codigo string) string {
	c, _ := lookupBoletaCode(codigo)
	return c.meaning
}

// lookupBoletaCode finds a per-boleta status codigo in the table.
func lookupBoletaCode(codigo string) (boletaCode, bool) {
	codes, err := boletaCodes()
	if err != nil {
		return boletaCode{}, false
	}
	for _, c := range codes {
		if c.endpoint == perBoletaEndpoint && c.field == "codigo" && c.code == codigo {
			return c, true
		}
	}
	return boletaCode{}, false
}
