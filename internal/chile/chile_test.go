package chile

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestLocation(t *testing.T) {
	loc := Location()
	if loc.String() != "America/Santiago" {
		t.Fatalf("Location() = %s", loc)
	}
	if again := Location(); again != loc {
		t.Fatalf("second Location() = %p; want the same %p", again, loc)
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
		{"0-0", `RUT "0-0": body must not be zero`},
		{"00000000-0", "must not be zero"},
		{"97.975.000-5", "is not a RUT like 12345678-5"},
		{"979750005", "is not a RUT like 12345678-5"},
		{"123456789-2", "is not a RUT like 12345678-5"},
		{"97975000-55", "is not a RUT like 12345678-5"},
		{"97975000-", "is not a RUT like 12345678-5"},
		{"-5", "is not a RUT like 12345678-5"},
		{" 97975000-5", "is not a RUT like 12345678-5"},
		{"9797500a-5", "body must be 1 to 8 digits"},
		{"", "is not a RUT like 12345678-5"},
		{"97975000-Ñ", "is not a RUT like 12345678-5"}, // two bytes
	} {
		got, err := CheckRUT(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("CheckRUT(%q) = %q, %v; want error containing %q", tc.in, got, err, tc.wantErr)
		}
	}
}

func TestParseRUT(t *testing.T) {
	for _, tc := range []struct {
		in     string
		number int
		dv     byte
	}{
		{"7880442-4", 7880442, '4'},  // 2·2+4·3+4·4+0·5+8·6+8·7+7·2 = 150; 11-150%11 = 4
		{"07880442-4", 7880442, '4'}, // as the SII sample's certificate writes it
		{"007.880.442-4", 7880442, '4'},
		{"7.880.442-4", 7880442, '4'},
		{"78804424", 7880442, '4'},
		{"76.354.771-k", 76354771, 'K'},
		{"76 354 771 - K", 76354771, 'K'},
		{"  76354771K\t", 76354771, 'K'},
		{"6-k", 6, 'K'},               // 6·2 = 12; 11-1 = 10 → K
		{"10000004-0", 10000004, '0'}, // 4·2+1·3 = 11; 11-0 = 11 → 0
		{"99999999-9", 99999999, '9'}, // 9·27 = 243; 243%11 = 1; 11-1 = 10? no: see CheckDigit
	} {
		n, dv, err := ParseRUT(tc.in)
		if err != nil || n != tc.number || dv != tc.dv {
			t.Errorf("ParseRUT(%q) = %d, %c, %v; want %d, %c", tc.in, n, dv, err, tc.number, tc.dv)
		}
		if got := FormatRUT(n, dv); err == nil && got != FormatRUT(tc.number, tc.dv) {
			t.Errorf("FormatRUT = %q", got)
		}
	}
	for _, tc := range []struct {
		in       string
		badDigit bool
	}{
		{"", false}, {"-", false}, {"5", false}, {"abc", false}, {"12345678-", false},
		{"-5", false}, {"0-0", false}, {"00000000-0", false}, {"12345678-55", false},
		{"12.345.678-Z", false}, {"12345678-5-5", false}, {"1234567a-5", false},
		{"123456789-2", false}, // nine significant digits: longer than RUTType allows
		{"1234567890-1", false},
		{"7880442-5", true},
		{"12345678-4", true},
	} {
		_, _, err := ParseRUT(tc.in)
		var re *RUTError
		if !errors.As(err, &re) || re.BadCheckDigit != tc.badDigit || re.Input != tc.in {
			t.Errorf("ParseRUT(%q) err = %#v, want *RUTError with BadCheckDigit %v", tc.in, err, tc.badDigit)
		}
	}
}

// TestStrictAndLenientAgree: every RUT CheckRUT accepts, ParseRUT accepts
// with the same body and digit, and the 8-digit limit is the same in both.
func TestStrictAndLenientAgree(t *testing.T) {
	for n := 1; n < 100_000_000; n = n*7 + 3 {
		s := FormatRUT(n, CheckDigit(n))
		strict, err := CheckRUT(s)
		if err != nil || strict != s {
			t.Fatalf("CheckRUT(%q) = %q, %v", s, strict, err)
		}
		if pn, pdv, err := ParseRUT(s); err != nil || pn != n || pdv != CheckDigit(n) {
			t.Fatalf("ParseRUT(%q) = %d, %c, %v", s, pn, pdv, err)
		}
	}
	long := "100000000-" + string(CheckDigit(100000000))
	if _, err := CheckRUT(long); err == nil {
		t.Errorf("CheckRUT accepted the nine-digit %q", long)
	}
	if _, _, err := ParseRUT(long); err == nil {
		t.Errorf("ParseRUT accepted the nine-digit %q", long)
	}
}

func TestCAFExpiry(t *testing.T) {
	for _, tc := range []struct {
		fa, want string
	}{
		{"2024-01-15", "2024-07-15"},
		{"2024-08-31", "2025-02-28"}, // February lacks the 31st
		{"2023-08-31", "2024-02-29"}, // leap year
		{"2024-07-01", "2025-01-01"}, // across the year
		{"2024-12-31", "2025-06-30"},
	} {
		fa, _ := time.Parse(time.DateOnly, tc.fa)
		y, m, d := CAFExpiry(fa.Date())
		if got := time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Format(time.DateOnly); got != tc.want {
			t.Errorf("CAFExpiry(%s) = %s, want %s", tc.fa, got, tc.want)
		}
	}
	for tipo, want := range map[int]bool{33: true, 43: true, 46: true, 56: true, 61: true, 34: false, 39: false, 41: false, 52: false, 110: false, 111: false, 112: false} {
		if CAFExpires(tipo) != want {
			t.Errorf("CAFExpires(%d) = %v", tipo, !want)
		}
	}
}

// FuzzRUT: neither parser panics; whatever the strict one accepts the
// lenient one accepts with the same body and digit; a parsed RUT written
// back canonically passes both.
func FuzzRUT(f *testing.F) {
	for _, s := range []string{"76192083-9", "7.880.442-4", "6-k", "78804424", "0-0", "123456789-2", " 1-9 ", "-", "k"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, dv, err := ParseRUT(s)
		strict, serr := CheckRUT(s)
		if serr == nil {
			if err != nil {
				t.Fatalf("CheckRUT(%q) = %q but ParseRUT fails: %v", s, strict, err)
			}
			if sn, sdv, _ := ParseRUT(strict); sn != n || sdv != dv {
				t.Fatalf("%q: strict %q parses to %d-%c, lenient gave %d-%c", s, strict, sn, sdv, n, dv)
			}
		}
		if err != nil {
			return
		}
		if n < 1 || n > 99_999_999 || dv != CheckDigit(n) {
			t.Fatalf("ParseRUT(%q) = %d, %c", s, n, dv)
		}
		canon := FormatRUT(n, dv)
		if got, err := CheckRUT(canon); err != nil || got != canon {
			t.Fatalf("CheckRUT(%q) = %q, %v", canon, got, err)
		}
	})
}

func TestCanonRUT(t *testing.T) {
	for in, want := range map[string]string{
		"76.192.083-9": "76192083-9",
		"76192083-9":   "76192083-9",
		"7.880.442-4":  "7880442-4",
		"07.880.442-4": "7880442-4",
		"no es un rut": "no es un rut", // not a RUT: as written
		"76192083-0":   "76192083-0",   // a wrong check digit is not a RUT
	} {
		if got := CanonRUT(in); got != want {
			t.Errorf("CanonRUT(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestAppendThousands: hand-written cases of Chile's thousands dots.
func TestAppendThousands(t *testing.T) {
	for digits, want := range map[string]string{
		"": "", "0": "0", "999": "999", "1000": "1.000", "12345": "12.345",
		"1234567": "1.234.567", "9223372036854775807": "9.223.372.036.854.775.807",
	} {
		if got := string(AppendThousands([]byte("$"), digits)); got != "$"+want {
			t.Errorf("AppendThousands(%q) = %q, want %q", digits, got, "$"+want)
		}
	}
}
