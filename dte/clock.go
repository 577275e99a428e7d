package dte

import (
	"time"

	"github.com/dtekit/dtekit/internal/chile"
)

// clockDateLayout is the layout of the SII's and the contract's dates.
const clockDateLayout = "2006-01-02"

// santiago is the America/Santiago location, the zone of FchEmis, TSTED
// and TmstFirma.
func santiago() *time.Location { return chile.Location() }

// SantiagoLocation returns the America/Santiago time zone, loaded once from
// the zone database embedded in the binary.
func SantiagoLocation() *time.Location { return santiago() }

// ChileTime returns t as wall-clock time in America/Santiago, the time the
// SII expects in FchEmis, TSTED and TmstFirma.
func ChileTime(t time.Time) time.Time { return t.In(santiago()) }

// Today returns the Chilean business date of the instant now, as YYYY-MM-DD.
// Pass time.Now() in production and a fixed instant in tests.
func Today(now time.Time) string { return ChileTime(now).Format(clockDateLayout) }

// FechaEmision returns the request's fecha_emision, or when it is absent (or
// r is nil) the Chilean business date of now, as the contract (§2.3) asks.
func FechaEmision(r *EmitirDTERequest, now time.Time) string {
	if r != nil && r.FechaEmision != "" {
		return r.FechaEmision
	}
	return Today(now)
}
