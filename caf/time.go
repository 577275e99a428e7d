package caf

import (
	"fmt"
	"time"

	"github.com/dtekit/dtekit/internal/chile"
)

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
// instant of it when a daylight-saving change skips midnight).
func startOfDay(y int, m time.Month, d int) time.Time {
	return time.Date(y, m, d, 0, 0, 0, 0, chile.Location())
}
