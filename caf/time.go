package caf

import (
	"fmt"
	"time"

	"github.com/dtekit/dtekit/internal/chile"
)

// location returns the America/Santiago location.
func location() (*time.Location, error) {
	loc, err := chile.Location()
	if err != nil {
		return nil, fmt.Errorf("caf: %w", err)
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
	loc, err := location()
	if err != nil {
		loc = time.UTC
	}
	return time.Date(y, m, d, 0, 0, 0, 0, loc)
}
