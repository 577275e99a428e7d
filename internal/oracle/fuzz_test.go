package oracle

import (
	"encoding/xml"
	"testing"
)

// TestEditXML: each edit of a small document, by hand.
func TestEditXML(t *testing.T) {
	doc := []byte(`<?xml version="1.0"?><a x="1"><b>uno</b><c/><b>dos</b></a>`)
	for _, tc := range []struct {
		n    uint
		op   uint8
		text string
		want string
	}{
		{1, EditText, "<3>", `<?xml version="1.0"?><a x="1"><b>&lt;3&gt;</b><c/><b>dos</b></a>`},
		{2, EditText, "z", `<?xml version="1.0"?><a x="1"><b>uno</b><c>z</c><b>dos</b></a>`},
		{1, EditDelete, "", `<?xml version="1.0"?><a x="1"><c/><b>dos</b></a>`},
		{3, EditDuplicate, "", `<?xml version="1.0"?><a x="1"><b>uno</b><c/><b>dos</b><b>dos</b></a>`},
		{0, EditRename, "Z-9", `<?xml version="1.0"?><Z9 x="1"><b>uno</b><c/><b>dos</b></Z9>`},
		{2, EditRename, "9", `<?xml version="1.0"?><a x="1"><b>uno</b><X9/><b>dos</b></a>`},
	} {
		got := string(EditXML(doc, tc.n, tc.op, tc.text))
		if got != tc.want {
			t.Errorf("EditXML(%d, %d, %q) = %s, want %s", tc.n, tc.op, tc.text, got, tc.want)
		}
		if err := xml.Unmarshal([]byte(got), new(struct{})); err != nil {
			t.Errorf("EditXML(%d, %d, %q) is not well-formed: %v", tc.n, tc.op, tc.text, err)
		}
	}
	if got := EditXML([]byte("no xml"), 3, EditDelete, ""); string(got) != "no xml" {
		t.Errorf("a document without elements: %q", got)
	}
}
