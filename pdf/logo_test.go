package pdf_test

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/internal/oracle"
	"github.com/dtekit/dtekit/pdf"
)

// testLogo draws a w×h image and encodes it as PNG or JPEG.
func testLogo(t *testing.T, w, h int, asJPEG bool) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x * 255 / w), 40, uint8(y * 255 / h), 255})
		}
	}
	var buf bytes.Buffer
	var err error
	if asJPEG {
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90})
	} else {
		err = png.Encode(&buf, img)
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestLogoPrinted: a PNG or JPEG logo appears in the PDF (pdfimages, an
// independent reader, lists it with its pixel size) on letter and 80 mm
// paper, beside the issuer and the SII office; a file that is not an image
// fails with ErrLogo.
func TestLogoPrinted(t *testing.T) {
	s := samples(t)[33]
	dir := t.TempDir()
	for _, tc := range []struct {
		name   string
		logo   []byte
		format pdf.Format
		size   string // pdfimages' "width height"
		enc    string // pdfimages' encoding column
	}{
		{"png-carta", testLogo(t, 240, 80, false), pdf.Carta, "240 80", "image"},
		{"jpeg-carta", testLogo(t, 100, 100, true), pdf.Carta, "100 100", "jpeg"},
		{"png-80mm", testLogo(t, 300, 90, false), pdf.Termica80, "300 90", "image"},
	} {
		opts := pdf.Options{Resolucion: pdf.Resolucion{Numero: 80, Fecha: "2014-08-22"}}
		opts.Format, opts.Logo, opts.OficinaSII = tc.format, tc.logo, "SANTIAGO ORIENTE"
		out, err := pdf.RenderBytes(s.doc, opts)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		file := writeTemp(t, dir, tc.name+".pdf", out)
		qpdfCheck(t, file)
		list := string(oracle.Run(t, "pdfimages", "-list", file))
		found := false
		for _, line := range strings.Split(list, "\n") {
			f := strings.Fields(line)
			// page num type width height color comp bpc enc …
			if len(f) > 8 && f[2] == "image" && f[3]+" "+f[4] == tc.size && f[8] == tc.enc {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: pdfimages lists no %s image of %s pixels:\n%s", tc.name, tc.enc, tc.size, list)
		}
		if text := squash(pdfText(t, file, false, 0, 0)); !strings.Contains(text, "S.I.I. - SANTIAGO ORIENTE") {
			t.Errorf("%s: the SII office is not printed:\n%s", tc.name, text)
		}
	}
	// Without a logo there is no image but the stamp's.
	out, err := pdf.RenderBytes(s.doc, pdf.Options{Resolucion: pdf.Resolucion{Numero: 80, Fecha: "2014-08-22"}})
	if err != nil {
		t.Fatal(err)
	}
	file := writeTemp(t, dir, "none.pdf", out)
	if list := string(oracle.Run(t, "pdfimages", "-list", file)); strings.Contains(list, " 240 ") || strings.Count(list, "\n") > 3 {
		t.Errorf("no logo given, but pdfimages lists:\n%s", list)
	}
	for _, bad := range [][]byte{[]byte("not an image"), testLogo(t, 1, 1, false)[:20]} {
		opts := pdf.Options{Resolucion: pdf.Resolucion{Numero: 80, Fecha: "2014-08-22"}}
		opts.Logo = bad
		if _, err := pdf.RenderBytes(s.doc, opts); !errors.Is(err, pdf.ErrLogo) {
			t.Errorf("logo %q: %v, want ErrLogo", bad[:8], err)
		}
	}
}
