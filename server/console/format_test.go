package console

import (
	"testing"
	"time"
)

// The Chilean formats, from hand-written cases: dots between thousands,
// no decimals, the sign before the dollar; dates as DD-MM-YYYY in the
// America/Santiago zone.
func TestPesos(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   int64
		want string
	}{
		{0, "$0"}, {5, "$5"}, {999, "$999"}, {1000, "$1.000"}, {1190, "$1.190"},
		{25000, "$25.000"}, {119000, "$119.000"}, {1234567, "$1.234.567"},
		{-1190, "-$1.190"}, {-9223372036854775808, "-$9.223.372.036.854.775.808"},
		{9223372036854775807, "$9.223.372.036.854.775.807"},
	} {
		if got := pesos(c.in); got != c.want {
			t.Errorf("pesos(%d) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestFecha(t *testing.T) {
	t.Parallel()
	// 03:30 UTC on 30 November is still 29 November in Santiago (UTC−3
	// in summer time).
	late := time.Date(2026, 11, 30, 2, 30, 0, 0, time.UTC)
	for _, c := range []struct {
		in   any
		want string
	}{
		{"2026-11-29", "29-11-2026"},
		{"2026-01-05", "05-01-2026"},
		{late, "29-11-2026"},
		{&late, "29-11-2026"},
		{(*time.Time)(nil), ""},
		{time.Time{}, ""},
		{"29/11/2026", "29/11/2026"}, // not a date: shown as it came
		{42, ""},
	} {
		if got := fecha(c.in); got != c.want {
			t.Errorf("fecha(%#v) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := fechaHora(late); got != "29-11-2026 23:30" {
		t.Errorf("fechaHora = %q, want 29-11-2026 23:30", got)
	}
}

func TestDias(t *testing.T) {
	t.Parallel()
	zero, one, five := 0, 1, 5
	for _, c := range []struct {
		in   *int
		want string
	}{{nil, "sin dato del SII"}, {&zero, "vence hoy"}, {&one, "1 día"}, {&five, "5 días"}} {
		if got := diasNombre(c.in); got != c.want {
			t.Errorf("diasNombre = %q, want %q", got, c.want)
		}
	}
}
