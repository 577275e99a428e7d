package caf

import (
	"fmt"
	"sync"
	"time"
	_ "time/tzdata" // America/Santiago must load on machines without a zone database
)

// chileLocation loads America/Santiago once; the result never changes.
var chileLocation = sync.OnceValues(func() (*time.Location, error) {
	return time.LoadLocation("America/Santiago")
})

// chile returns the America/Santiago location.
func chile() (*time.Location, error) {
	loc, err := chileLocation()
	if err != nil {
		return nil, fmt.Errorf("caf: loading time zone America/Santiago: %w", err)
	}
	return loc, nil
}

// parseDate reads a "YYYY-MM-DD" date and returns the start of that day in
// Chile.
func parseDate(s string) (time.Time, error) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not a date like 2006-01-02", s)
	}
	y, m, d := t.Date()
	return startOfDay(y, m, d), nil
}

// startOfDay returns midnight of a Chilean calendar day (or the first
// instant of it when a daylight-saving change skips midnight). It falls back
// to UTC if the zone database cannot be loaded.
func startOfDay(y int, m time.Month, d int) time.Time {
	loc, err := chile()
	if err != nil {
		loc = time.UTC
	}
	return time.Date(y, m, d, 0, 0, 0, 0, loc)
}
