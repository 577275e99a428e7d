package textclip

import "testing"

func TestClip(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 5, "abc"},
		{"abc", 2, "ab"},
		// "ñ" is 2 bytes (C3 B1): a cut after its first byte drops it.
		{"añb", 2, "a"},
		{"añb", 3, "añ"},
		// An invalid byte (FF) is dropped, then the bound applies.
		{"a\xffb", 5, "ab"},
		{"\xc3", 5, ""},
		{"", 0, ""},
	} {
		if got := Clip(c.in, c.n); got != c.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
	if got := ClipMark("añb", 2); got != "a…" {
		t.Errorf("ClipMark cut = %q, want %q", got, "a…")
	}
	if got := ClipMark("ab", 2); got != "ab" {
		t.Errorf("ClipMark whole = %q, want %q", got, "ab")
	}
}
