package console

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/png"
	"net/http"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/api"
)

// rutLogo is a company's RUT, for the logo's bound; its check digit
// computed by hand (módulo 11 of 76111112: 4).
const rutLogo = "76111112-4"

// pngOfSize is a valid 4×3 PNG of exactly n bytes: Go's encoding padded
// with a tEXt chunk (a comment, which decoders skip) before IEND.
func pngOfSize(t *testing.T, n int) []byte {
	t.Helper()
	var img bytes.Buffer
	if err := png.Encode(&img, image.NewRGBA(image.Rect(0, 0, 4, 3))); err != nil {
		t.Fatal(err)
	}
	b := img.Bytes()
	iend := b[len(b)-12:]
	data := append([]byte("Comment\x00"), bytes.Repeat([]byte("x"), n-len(b)-12-8)...)
	chunk := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
	chunk = append(chunk, "tEXt"...)
	chunk = append(chunk, data...)
	chunk = binary.BigEndian.AppendUint32(chunk, crc32.ChecksumIEEE(chunk[4:]))
	out := append(append(append([]byte{}, b[:len(b)-12]...), chunk...), iend...)
	if len(out) != n {
		t.Fatalf("padded PNG of %d bytes, want %d", len(out), n)
	}
	if _, err := png.Decode(bytes.NewReader(out)); err != nil {
		t.Fatalf("the padded PNG does not decode: %v", err)
	}
	return out
}

// The logo's bound is the API's (PUT /empresa/logo: 256 KiB, 262,144
// bytes, written here by hand from the OpenAPI document): a PNG of
// exactly 262,144 bytes is installed through Ajustes; one byte more is
// refused beside the field, in Spanish; a file far larger (1 MiB), which
// overflows the form's body, is refused with a page that says why, in
// Spanish. Neither refusal changes the installed logo.
func (f *fixture) testLogoLimit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, err := f.b.Company.Create(ctx, api.EmpresaInput{Rut: rutLogo, RazonSocial: "Empresa D", Giro: "Comercio", Direccion: "Calle 4",
		Comuna: "Santiago", Ciudad: "Santiago", Ambiente: "certificacion", FechaResolucion: "2014-08-22", Acteco: []int{620200}})
	if err != nil {
		t.Fatal(err)
	}
	k, err := f.b.Keys.Create(ctx, e.ID, api.APIKeyInput{Write: true})
	if err != nil {
		t.Fatal(err)
	}
	b := f.session(t, k.Key)
	b.get(Prefix + "ajustes")

	const limit = 262144
	if p := b.postFile(Prefix+"ajustes/logo", "logo", pngOfSize(t, limit), b.csrf); p.status != http.StatusSeeOther {
		t.Fatalf("a logo of %d bytes: %d %s", limit, p.status, p.body)
	}
	installed, err := f.b.Company.Logo(ctx, e.ID)
	if err != nil || installed.ContentType != "image/png" {
		t.Fatalf("the logo at the limit: %+v %v", installed, err)
	}

	p := b.postFile(Prefix+"ajustes/logo", "logo", pngOfSize(t, limit+1), b.csrf)
	wantStatus(t, "a logo one byte over", p, http.StatusBadRequest)
	if !strings.Contains(p.body, `id="logo-error">el logo debe ser una imagen PNG o JPEG de hasta 256 KiB`) {
		t.Errorf("the logo one byte over: %s", p.body)
	}

	p = b.postFile(Prefix+"ajustes/logo", "logo", pngOfSize(t, 1<<20), b.csrf)
	wantStatus(t, "a logo of 1 MiB", p, http.StatusRequestEntityTooLarge)
	if !strings.Contains(p.body, "El archivo pesa más de 256 KiB, el máximo que se acepta.") {
		t.Errorf("the logo of 1 MiB: %s", p.body)
	}

	if l, err := f.b.Company.Logo(ctx, e.ID); err != nil || !bytes.Equal(l.Data, installed.Data) {
		t.Errorf("the refusals changed the logo: %v", err)
	}
}
