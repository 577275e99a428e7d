package chile

import "testing"

func TestSameRUT(t *testing.T) {
	t.Parallel()
	// 76086428-5: 8·2+2·3+4·4+6·5+8·6+0·7+6·2+7·3 = 149; 149 mod 11 = 6;
	// 11−6 = 5.
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"76086428-5", "76.086.428-5", true},
		{"76086428-5", "760864285", true},
		{"76086428", "76086428-5", true}, // no check digit: the number matches
		{"76086428-5", "076086428", true},
		{"76086428", "76086429-3", false},
		{"76086428-4", "76086428-4", false}, // bad check digit: not a RUT
		{"x", "x", false},
		{"", "", false},
		{"12345678-5", "12.345.678-5", true},
		{"12345678-5", "8-6", false},
	} {
		if got := SameRUT(c.a, c.b); got != c.want {
			t.Errorf("SameRUT(%q, %q) = %v", c.a, c.b, got)
		}
	}
}
