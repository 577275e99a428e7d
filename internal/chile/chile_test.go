package chile

import (
	"strings"
	"testing"
	"time"
)

func TestLocation(t *testing.T) {
	loc, err := Location()
	if err != nil {
		t.Fatal(err)
	}
	if loc.String() != "America/Santiago" {
		t.Fatalf("Location() = %s", loc)
	}
	again, err := Location()
	if err != nil || again != loc {
		t.Fatalf("second Location() = %p, %v; want the same %p", again, err, loc)
	}
	// Chile keeps UTC-3 in the southern summer and UTC-4 in winter.
	for _, tc := range []struct {
		at         time.Time
		wantOffset int
	}{
		{time.Date(2024, 1, 15, 12, 0, 0, 0, time.UTC), -3 * 3600},
		{time.Date(2024, 7, 15, 12, 0, 0, 0, time.UTC), -4 * 3600},
	} {
		if _, off := tc.at.In(loc).Zone(); off != tc.wantOffset {
			t.Errorf("offset at %s = %d s, want %d s", tc.at, off, tc.wantOffset)
		}
	}
}

func TestCheckDigit(t *testing.T) {
	// Worked by hand: digits from the right times 2, 3, 4, 5, 6, 7, 2, 3…,
	// summed; the digit is 11 - sum%11, with 11 → 0 and 10 → K.
	tests := []struct {
		body int
		want byte
	}{
		{97975000, '5'}, // 0·2+0·3+0·4+5·5+7·6+9·7+7·2+9·3 = 171; 171%11 = 6; 11-6 = 5
		{60803000, 'K'}, // 15+56+18 = 89; 89%11 = 1; 11-1 = 10 → K (the SII's own RUT)
		{66666666, '6'}, // 6·(2+3+4+5+6+7+2+3) = 192; 192%11 = 5; 11-5 = 6
		{14, '0'},       // 4·2+1·3 = 11; 11%11 = 0; 11-0 = 11 → 0
		{6, 'K'},        // 6·2 = 12; 12%11 = 1 → K
		{1, '9'},        // 2; 11-2 = 9
		{0, '0'},
		{-5, '0'},
	}
	for _, tc := range tests {
		if got := CheckDigit(tc.body); got != tc.want {
			t.Errorf("CheckDigit(%d) = %c, want %c", tc.body, got, tc.want)
		}
	}
}

func TestCheckRUT(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"97975000-5", "97975000-5"},
		{"60803000-K", "60803000-K"},
		{"60803000-k", "60803000-K"},
		{"6-k", "6-K"},
		{"14-0", "14-0"},
		{"00000014-0", "00000014-0"},
	} {
		got, err := CheckRUT(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("CheckRUT(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ in, wantErr string }{
		{"97975000-6", `RUT "97975000-6": check digit 6 does not match (expected 5)`},
		{"60803000-0", "expected K"},
		{"0-0", `RUT "0-0" has a zero body`},
		{"00000000-0", "zero body"},
		{"97.975.000-5", "is not a RUT like 12345678-5"},
		{"979750005", "is not a RUT like 12345678-5"},
		{"123456789-2", "is not a RUT like 12345678-5"},
		{"97975000-55", "is not a RUT like 12345678-5"},
		{"97975000-", "is not a RUT like 12345678-5"},
		{"-5", "is not a RUT like 12345678-5"},
		{" 97975000-5", "is not a RUT like 12345678-5"},
		{"9797500a-5", "is not a RUT like 12345678-5"},
		{"", "is not a RUT like 12345678-5"},
		{"97975000-Ñ", "is not a RUT like 12345678-5"}, // two bytes
	} {
		got, err := CheckRUT(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("CheckRUT(%q) = %q, %v; want error containing %q", tc.in, got, err, tc.wantErr)
		}
	}
}
