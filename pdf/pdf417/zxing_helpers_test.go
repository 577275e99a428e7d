package pdf417_test

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

// writePNG writes img as a PNG file in dir and returns its path.
func writePNG(t testing.TB, dir, name string, img image.Image) string {
	t.Helper()
	p := filepath.Join(dir, name)
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.NoCompression}
	if err := enc.Encode(&buf, img); err != nil {
		t.Fatalf("png.Encode %s: %v", name, err)
	}
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatalf("write %s: %v", p, err)
	}
	return p
}

// tedLike returns n bytes shaped like a flattened TED in ISO-8859-1: tags,
// RUTs, dates, amounts, names with accented letters (bytes ≥ 0x80), and a
// base64-looking key and signature, cut to length n.
func tedLike(n int, seed int) []byte {
	var b bytes.Buffer
	b.WriteString(`<TED version="1.0"><DD><RE>76354771-K</RE><TD>33</TD>`)
	fmt.Fprintf(&b, `<F>%d</F><FE>2024-05-%02d</FE><RR>12345678-9</RR>`, 1000+seed, 1+seed%28)
	b.WriteString("<RSR>Compa\xf1\xeda Ferreter\xeda \xd1and\xfa Ltda.</RSR><MNT>119000</MNT>")
	b.WriteString("<IT1>Caj\xf3n de dise\xf1o \xb0 n\xba 5</IT1><CAF version=\"1.0\"><DA><RE>76354771-K</RE>")
	b.WriteString("<RS>EMPRESA DE PRUEBA \xc1\xc9\xcd\xd3\xda</RS><TD>33</TD><RNG><D>1</D><H>200</H></RNG><FA>2024-01-02</FA>")
	b.WriteString("<RSAPK><M>")
	const b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	x := uint32(2463534242 + seed)
	for b.Len() < n {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b.WriteByte(b64[x%64])
		if x%97 == 0 {
			b.WriteString("</M><E>Aw==</E></RSAPK><IDK>100</IDK></DA><FRMA algoritmo=\"SHA1withRSA\">")
		}
	}
	return b.Bytes()[:n]
}

// renderModules draws a grid of cols × rows modules (dark(x, row) tells
// which are dark) with pxPerModule pixels per module, rows 3 modules high and
// a quiet zone of quiet modules.
func renderModules(cols, rows, quiet int, dark func(x, row int) bool) *image.Gray {
	const rowModules = 3
	w := (cols + 2*quiet) * pxPerModule
	h := (rows*rowModules + 2*quiet) * pxPerModule
	img := image.NewGray(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	for row := range rows {
		for x := range cols {
			if !dark(x, row) {
				continue
			}
			x0 := (x + quiet) * pxPerModule
			y0 := (row*rowModules + quiet) * pxPerModule
			for y := y0; y < y0+rowModules*pxPerModule; y++ {
				for px := x0; px < x0+pxPerModule; px++ {
					img.Pix[y*img.Stride+px] = 0
				}
			}
		}
	}
	return img
}
