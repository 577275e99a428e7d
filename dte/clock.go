package dte

import (
	"sync"
	"time"
	_ "time/tzdata" // embed the zone database: Chile's rules must work on minimal machines
)

// clockZone is the IANA name of the zone the SII's dates and timestamps are
// written in (FchEmis, TSTED, TmstFirma), with no offset.
const clockZone = "America/Santiago"

// clockDateLayout is the layout of the SII's and the contract's dates.
const clockDateLayout = "2006-01-02"

// santiago loads America/Santiago once. With time/tzdata embedded the load
// cannot fail; should it ever, Chile's standard offset (UTC−4) stands in
// rather than panicking.
var santiago = sync.OnceValue(func() *time.Location {
	loc, err := time.LoadLocation(clockZone)
	if err != nil {
		return time.FixedZone("-04", -4*60*60)
	}
	return loc
})

// SantiagoLocation returns the America/Santiago time zone, loaded once from
// the embedded zone database.
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
