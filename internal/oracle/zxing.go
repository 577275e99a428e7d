package oracle

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"image"
	"strconv"
	"strings"
	"testing"
)

// PDF417Report is what ZXingReader reported for one image.
type PDF417Report struct {
	// Symbols counts the PDF417 symbols decoded (one "Bytes:" line each).
	Symbols int
	// Bytes are the last symbol's bytes, from the hexadecimal "Bytes:"
	// line, so they compare exactly, not as text.
	Bytes []byte
	// ECLevel is the last symbol's "EC Level:" line, e.g. "5".
	ECLevel string
	// Box bounds the last symbol's "Position:" corners (max exclusive).
	Box image.Rectangle
	// Error is the "Error:" line, if any.
	Error string
}

// ZXingPDF417 runs ZXingReader once over the image files (-format PDF417)
// and returns its report per path; every path has one, zero when nothing
// was decoded. The tool prints a "File:" block per image when given
// several and none when given one.
func ZXingPDF417(t testing.TB, files ...string) map[string]*PDF417Report {
	t.Helper()
	args := append([]string{"-format", "PDF417"}, files...)
	out, err := Command(t, "ZXingReader", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("ZXingReader %v: %v\n%s", args, err, out)
	}
	res := make(map[string]*PDF417Report, len(files))
	for _, f := range files {
		res[f] = &PDF417Report{}
	}
	cur := ""
	if len(files) == 1 {
		cur = files[0]
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		if key == "File" {
			cur = val
			continue
		}
		r := res[cur]
		if r == nil {
			continue
		}
		switch key {
		case "Bytes":
			b, err := hex.DecodeString(strings.ReplaceAll(val, " ", ""))
			if err != nil {
				t.Fatalf("ZXingReader: unreadable Bytes line for %s: %v", cur, err)
			}
			r.Symbols++
			r.Bytes = b
		case "EC Level":
			r.ECLevel = val
		case "Position":
			r.Box = zxingBox(t, val)
		case "Error":
			r.Error = val
		}
	}
	return res
}

// zxingBox reads a "Position:" line, "x1xy1 x2xy2 x3xy3 x4xy4", into the
// corners' bounding box (max exclusive).
func zxingBox(t testing.TB, s string) image.Rectangle {
	t.Helper()
	var box image.Rectangle
	for i, p := range strings.Fields(s) {
		xs, ys, ok := strings.Cut(p, "x")
		x, err1 := strconv.Atoi(xs)
		y, err2 := strconv.Atoi(ys)
		if !ok || err1 != nil || err2 != nil {
			t.Fatalf("ZXingReader: unreadable Position %q", s)
		}
		pt := image.Rect(x, y, x+1, y+1)
		if i == 0 {
			box = pt
		} else {
			box = box.Union(pt)
		}
	}
	return box
}
