package pdf417_test

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/internal/oracle"
)

// zxResult is what ZXingReader reported for one image.
type zxResult struct {
	Found   bool   // a PDF417 symbol was decoded
	Bytes   []byte // the decoded bytes ("Bytes:" line)
	ECLevel string // the "EC Level:" line, e.g. "5"
	Error   string // the "Error:" line, if any
}

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

// zxingDecode runs ZXingReader once on all files (-format PDF417, which
// prints a "File:" block per image) and returns its report per file path.
func zxingDecode(t testing.TB, files ...string) map[string]zxResult {
	t.Helper()
	args := append([]string{"-format", "PDF417"}, files...)
	out, err := oracle.Command(t, "ZXingReader", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("ZXingReader %v: %v\n%s", args, err, out)
	}
	res := map[string]zxResult{}
	want := map[string]bool{}
	for _, f := range files {
		want[f] = true
	}
	var cur string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		switch key {
		case "File":
			if want[val] {
				cur = val
			}
		case "Bytes":
			if cur == "" {
				continue
			}
			b, err := hex.DecodeString(strings.ReplaceAll(val, " ", ""))
			if err != nil {
				t.Fatalf("ZXingReader: bad Bytes line for %s: %v", cur, err)
			}
			r := res[cur]
			r.Found, r.Bytes = true, b
			res[cur] = r
		case "EC Level":
			if cur != "" {
				r := res[cur]
				r.ECLevel = val
				res[cur] = r
			}
		case "Error":
			if cur != "" {
				r := res[cur]
				r.Error = val
				res[cur] = r
			}
		}
	}
	if len(files) == 1 && res[files[0]].Bytes == nil && bytes.Contains(out, []byte("Bytes:")) {
		// A single file gets no "File:" header.
		return zxingDecodeSingle(t, files[0], out)
	}
	return res
}

// zxingDecodeSingle parses ZXingReader's report for one file (no "File:"
// header).
func zxingDecodeSingle(t testing.TB, file string, out []byte) map[string]zxResult {
	t.Helper()
	var r zxResult
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		switch key {
		case "Bytes":
			b, err := hex.DecodeString(strings.ReplaceAll(val, " ", ""))
			if err != nil {
				t.Fatalf("ZXingReader: bad Bytes line for %s: %v", file, err)
			}
			r.Found, r.Bytes = true, b
		case "EC Level":
			r.ECLevel = val
		case "Error":
			r.Error = val
		}
	}
	return map[string]zxResult{file: r}
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
