package pdf_test

import (
	"bytes"
	"fmt"
	"html"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"

	"github.com/dtekit/dtekit/internal/oracle"
)

// Helpers around the independent tools: qpdf, pdftotext, pdftoppm and
// ZXingReader. Expected values are read from the signed XML with regular
// expressions (not through dte.ParseDTE) and formatted here by the rules
// the issue states, so the renderer's own formatting is never its oracle.

// xmlField returns the text of the first <name> element of a signed DTE
// (ISO-8859-1), decoded to UTF-8 with its entities resolved; name may list
// alternatives separated by "|" (RznSoc|RznSocEmisor).
func xmlField(t *testing.T, xml []byte, name string) string {
	t.Helper()
	var m [][]byte
	for _, n := range strings.Split(name, "|") {
		re := regexp.MustCompile(`<` + n + `>([^<]*)</` + n + `>`)
		if m = re.FindSubmatch(xml); m != nil {
			break
		}
	}
	if m == nil {
		t.Fatalf("the XML has no <%s>", name)
	}
	s, err := charmap.ISO8859_1.NewDecoder().Bytes(m[1])
	if err != nil {
		t.Fatalf("decoding <%s>: %v", name, err)
	}
	return html.UnescapeString(string(s))
}

// xmlTED cuts the <TED>…</TED> element out of the XML byte for byte.
func xmlTED(t *testing.T, xml []byte) []byte {
	t.Helper()
	i := bytes.Index(xml, []byte("<TED "))
	j := bytes.Index(xml, []byte("</TED>"))
	if i < 0 || j < i {
		t.Fatal("the XML has no TED element")
	}
	return xml[i : j+len("</TED>")]
}

// dotted writes a number's integer digits with a dot every three from the
// right: "1234567" → "1.234.567".
func dotted(digits string) string {
	var b strings.Builder
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte('.')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// printedRUT writes "76192083-9" as "76.192.083-9".
func printedRUT(rut string) string {
	body, dv, _ := strings.Cut(rut, "-")
	return dotted(body) + "-" + strings.ToUpper(dv)
}

// printedAmount writes an XML amount as the issue asks: "$ 1.234.567" for
// pesos; for an export, its currency ("US$" for DOLAR USA) and the
// decimals as written after a comma: "US$ 18.338,8".
func printedAmount(amount, moneda string) string {
	sym := "$"
	switch moneda {
	case "", "PESO CL":
	case "DOLAR USA":
		sym = "US$"
	case "EURO":
		sym = "€"
	default:
		sym = moneda
	}
	ip, frac, ok := strings.Cut(amount, ".")
	s := sym + " " + dotted(ip)
	if ok {
		s += "," + frac
	}
	return s
}

// squash collapses every run of white space (line breaks included) into
// one space, so that checks do not depend on pdftotext's column layout.
func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

// writeTemp writes data into dir and returns the path.
func writeTemp(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// qpdfCheck runs qpdf --check and fails the test when it reports a problem.
func qpdfCheck(t *testing.T, file string) {
	t.Helper()
	out, err := oracle.Command(t, "qpdf", "--check", file).CombinedOutput()
	if err != nil {
		t.Errorf("qpdf --check %s: %v\n%s", filepath.Base(file), err, out)
		return
	}
	if !bytes.Contains(out, []byte("No syntax or stream encoding errors")) {
		t.Errorf("qpdf --check %s did not report a clean file:\n%s", filepath.Base(file), out)
	}
}

// pageCount asks qpdf for the number of pages.
func pageCount(t *testing.T, file string) int {
	t.Helper()
	out := oracle.Run(t, "qpdf", "--show-npages", file)
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("qpdf --show-npages %s: %q", file, out)
	}
	return n
}

// pdfText runs pdftotext (with -layout when layout is set) on pages
// first..last (0 means all) and returns the UTF-8 text.
func pdfText(t *testing.T, file string, layout bool, first, last int) string {
	t.Helper()
	args := []string{"-enc", "UTF-8"}
	if layout {
		args = append(args, "-layout")
	}
	if first > 0 {
		args = append(args, "-f", strconv.Itoa(first), "-l", strconv.Itoa(last))
	}
	return string(oracle.Run(t, "pdftotext", append(args, file, "-")...))
}

// rasterize renders one page of file as a grayscale PNG at dpi and returns
// its path.
func rasterize(t *testing.T, file string, page, dpi int) string {
	t.Helper()
	root := strings.TrimSuffix(file, ".pdf") + "-" + strconv.Itoa(dpi)
	oracle.Run(t, "pdftoppm", "-r", strconv.Itoa(dpi), "-gray", "-png", "-singlefile",
		"-f", strconv.Itoa(page), "-l", strconv.Itoa(page), file, root)
	return root + ".png"
}

// readGray loads a PNG written by pdftoppm -gray.
func readGray(t *testing.T, file string) image.Image {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("decoding %s: %v", file, err)
	}
	return img
}

// dark reports whether a pixel is dark (below half intensity).
func dark(img image.Image, x, y int) bool {
	r, g, b, _ := img.At(x, y).RGBA()
	return (r+g+b)/3 < 0x8000
}

// darkBox returns the bounding box of the dark pixels inside area.
func darkBox(img image.Image, area image.Rectangle) image.Rectangle {
	area = area.Intersect(img.Bounds())
	var box image.Rectangle
	found := false
	for y := area.Min.Y; y < area.Max.Y; y++ {
		for x := area.Min.X; x < area.Max.X; x++ {
			if !dark(img, x, y) {
				continue
			}
			p := image.Rect(x, y, x+1, y+1)
			if !found {
				box, found = p, true
			} else {
				box = box.Union(p)
			}
		}
	}
	return box
}

// mm converts pixels at dpi to millimetres.
func mm(px, dpi int) float64 { return float64(px) * 25.4 / float64(dpi) }

// px converts millimetres to pixels at dpi, rounded up.
func px(v float64, dpi int) int { return int(v*float64(dpi)/25.4 + 0.999) }

// stampMeasure is the stamp as measured on a raster.
type stampMeasure struct {
	box        image.Rectangle // dark pixels of the symbol
	widthMM    float64
	heightMM   float64
	leftMM     float64
	rightMM    float64 // distance from the right edge of the paper
	pageWidth  float64 // mm
	quietClean bool    // no dark pixel within 1 mm around the symbol
}

// measureStamp measures the symbol ZXing located: the dark pixels inside
// its Position box grown by 1 mm (the quiet zone and a little more, short
// of the texts under the stamp) must coincide with the symbol's own edges
// (within two pixels), which shows the quiet zone is clear.
func measureStamp(t *testing.T, file string, zx *oracle.PDF417Report, dpi int) stampMeasure {
	t.Helper()
	img := readGray(t, file)
	g := px(1, dpi)
	area := image.Rect(zx.Box.Min.X-g, zx.Box.Min.Y-g, zx.Box.Max.X+g, zx.Box.Max.Y+g)
	box := darkBox(img, area)
	tol := 2
	clean := abs(box.Min.X-zx.Box.Min.X) <= tol && abs(box.Min.Y-zx.Box.Min.Y) <= tol &&
		abs(box.Max.X-zx.Box.Max.X) <= tol && abs(box.Max.Y-zx.Box.Max.Y) <= tol
	pw := img.Bounds().Dx()
	return stampMeasure{
		box:        box,
		widthMM:    mm(box.Dx(), dpi),
		heightMM:   mm(box.Dy(), dpi),
		leftMM:     mm(box.Min.X, dpi),
		rightMM:    mm(pw-box.Max.X, dpi),
		pageWidth:  mm(pw, dpi),
		quietClean: clean,
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// String summarizes a measure for error messages.
func (m stampMeasure) String() string {
	return fmt.Sprintf("%.1f × %.1f mm at %.1f mm from the left, %.1f mm from the right (box %v)",
		m.widthMM, m.heightMM, m.leftMM, m.rightMM, m.box)
}

// layoutValue returns the value printed after label in the text of
// pdftotext -layout: the text right of the label on its line, up to a gap
// of three spaces, and the lines below that continue it at the same column
// while nothing stands under the label. ok is false when no line holds the
// label.
func layoutValue(layout, label string) (value string, ok bool) {
	lines := strings.Split(layout, "\n")
	for i, line := range lines {
		at := strings.Index(line, label)
		if at < 0 {
			continue
		}
		r := []rune(line)
		lc := utf8.RuneCountInString(line[:at])
		vc := lc + utf8.RuneCountInString(label)
		for vc < len(r) && r[vc] == ' ' {
			vc++
		}
		cell := func(r []rune) string {
			s := string(r[vc:])
			if end := strings.Index(s, "   "); end >= 0 {
				s = s[:end]
			}
			return strings.TrimSpace(s)
		}
		parts := []string{cell(r)}
		for _, next := range lines[i+1:] {
			n := []rune(next)
			if len(n) <= vc || n[vc] == ' ' || n[vc-1] != ' ' || strings.TrimSpace(string(n[lc:vc])) != "" {
				break
			}
			parts = append(parts, cell(n))
		}
		return strings.Join(parts, " "), true
	}
	return "", false
}
