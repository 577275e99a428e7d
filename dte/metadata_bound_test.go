package dte

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestMetadataWorstSize: the largest metadata the limits let through, in
// JSON (how it is stored, and shown in every list item). A member is its
// name in quotes, a colon and its value; a name of MaxMetadataKey (40)
// characters takes at most 6 bytes a character (one JSON escapes, such as
// '<' as \u003c), so a member takes at most 2 + 240 + 1 + 500 = 743 bytes,
// and 50 members with 49 commas and 2 braces 50 × 743 + 51 = 37,201 bytes.
// A document keeps it twice (in its request and on its own): about 74 KB.
func TestMetadataWorstSize(t *testing.T) {
	const want = 50*(2+240+1+500) + 49 + 2
	escaped := []string{"<", ">", "&", "\u2028", "\u2029"} // 6 bytes each in JSON
	r := loadRequest(t, "factura.json")
	r.Metadata = map[string]any{}
	for i := range MaxMetadataKeys {
		// 37 '<' and three escaped characters that tell the names apart.
		name := strings.Repeat("<", MaxMetadataKey-3) + escaped[i/25] + escaped[i/5%5] + escaped[i%5]
		r.Metadata[name] = strings.Repeat("<", (MaxMetadataValue-2)/6) // 83 × 6 + 2 = 500 bytes
	}
	if len(r.Metadata) != MaxMetadataKeys {
		t.Fatalf("%d distinct names, want %d", len(r.Metadata), MaxMetadataKeys)
	}
	if err := ValidateAt(r, testToday); err != nil {
		t.Fatalf("the largest metadata is refused: %v", err)
	}
	b, err := json.Marshal(r.Metadata)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != want {
		t.Errorf("the largest metadata takes %d bytes of JSON, want %d by the limits", len(b), want)
	}
}
