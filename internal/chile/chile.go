// Package chile holds the small Chilean facts that several dtekit packages
// need and none may export: the America/Santiago time zone (with its data
// compiled in) and the RUT's módulo-11 check digit.
package chile

import (
	"fmt"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // America/Santiago must load on machines without a zone database
)

// santiago loads America/Santiago once; the result never changes.
var santiago = sync.OnceValues(func() (*time.Location, error) {
	return time.LoadLocation("America/Santiago")
})

// Location returns the America/Santiago location. It fails only if the
// embedded zone data cannot be read; the error names the zone.
func Location() (*time.Location, error) {
	loc, err := santiago()
	if err != nil {
		return nil, fmt.Errorf("loading time zone America/Santiago: %w", err)
	}
	return loc, nil
}

// CheckRUT validates a RUT written as 1 to 8 digits, '-', check digit (no
// dots, no spaces), and returns it with an upper-case K. It fails, quoting
// s, when the form is wrong, the body is zero or the check digit does not
// match.
func CheckRUT(s string) (string, error) {
	body, dv, ok := strings.Cut(s, "-")
	if !ok || len(body) == 0 || len(body) > 8 || len(dv) != 1 {
		return "", fmt.Errorf("%q is not a RUT like 12345678-5", s)
	}
	n := 0
	for _, r := range body {
		if r < '0' || r > '9' {
			return "", fmt.Errorf("%q is not a RUT like 12345678-5", s)
		}
		n = n*10 + int(r-'0')
	}
	if n == 0 {
		return "", fmt.Errorf("RUT %q has a zero body", s)
	}
	got := strings.ToUpper(dv)[0]
	if want := CheckDigit(n); got != want {
		return "", fmt.Errorf("RUT %q: check digit %c does not match (expected %c)", s, got, want)
	}
	return body + "-" + string(got), nil
}

// CheckDigit computes the módulo-11 check digit of a RUT body: '0' to '9'
// or 'K'. A body of zero or less yields '0'.
func CheckDigit(n int) byte {
	sum, mul := 0, 2
	for ; n > 0; n /= 10 {
		sum += (n % 10) * mul
		if mul++; mul > 7 {
			mul = 2
		}
	}
	switch r := 11 - sum%11; r {
	case 11:
		return '0'
	case 10:
		return 'K'
	default:
		return byte('0' + r)
	}
}
