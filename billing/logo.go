package billing

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/store"
)

// MaxLogoSize bounds an uploaded logo file, in bytes.
const MaxLogoSize = 256 << 10

// MaxLogoSide bounds each side of a logo, in pixels.
const MaxLogoSide = 2000

// SetLogo installs the company's logo, printed on its documents' PDFs: a
// PNG or JPEG file of at most MaxLogoSize bytes and MaxLogoSide pixels a
// side. The image is decoded and encoded again by the service (PNG stays
// PNG, JPEG stays JPEG), so what is stored and printed is an image the
// service wrote, not the bytes as uploaded.
func (r *CompanyService) SetLogo(ctx context.Context, empresaID string, file []byte) (*api.Logo, error) {
	s := r.s
	l, e := cleanLogo(file)
	if e != nil {
		return nil, e
	}
	err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.SetEmpresaLogo(ctx, empresaID, &store.Logo{ContentType: l.ContentType, Data: l.Data})
	})
	if err != nil {
		return nil, storeErr(err, "storing the logo", "empresa", empresaID)
	}
	return l, nil
}

// Logo returns the company's logo (fault.KindNotFound when it has none).
func (r *CompanyService) Logo(ctx context.Context, empresaID string) (*api.Logo, error) {
	s := r.s
	l, err := s.st.GetEmpresaLogo(ctx, empresaID)
	if err != nil {
		return nil, storeErr(err, "reading the logo", "logo", empresaID)
	}
	return &api.Logo{ContentType: l.ContentType, Data: l.Data}, nil
}

// DeleteLogo removes the company's logo (fault.KindNotFound when it has
// none); its PDFs print none from then on.
func (r *CompanyService) DeleteLogo(ctx context.Context, empresaID string) error {
	s := r.s
	err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.DeleteEmpresaLogo(ctx, empresaID) })
	return storeErr(err, "deleting the logo", "logo", empresaID)
}

// logoFor is the logo to print on the company's PDFs: nil when it has
// none.
func (s *Service) logoFor(ctx context.Context, empresaID string) ([]byte, error) {
	l, err := s.st.GetEmpresaLogo(ctx, empresaID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fault.Failed("reading the logo", err)
	}
	return l.Data, nil
}

// cleanLogo checks an uploaded logo and encodes it again.
func cleanLogo(file []byte) (*api.Logo, *fault.Error) {
	bad := func(code dte.DetailCode, format string, args ...any) *fault.Error {
		return fault.Invalid("file", code, fmt.Sprintf(format, args...))
	}
	switch {
	case len(file) == 0:
		return nil, bad(dte.CodeRequired, "the logo file is empty")
	case len(file) > MaxLogoSize:
		return nil, bad(fault.DetailCertTooLarge, "the logo has %d bytes; at most %d are allowed", len(file), MaxLogoSize)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(file))
	if err != nil || format != "png" && format != "jpeg" {
		return nil, bad(dte.CodeInvalidFormat, "the logo must be a PNG or JPEG image")
	}
	if cfg.Width < 1 || cfg.Height < 1 || cfg.Width > MaxLogoSide || cfg.Height > MaxLogoSide {
		return nil, bad(dte.CodeOutOfRange, "the logo is %d×%d pixels; each side must be 1 to %d", cfg.Width, cfg.Height, MaxLogoSide)
	}
	img, _, err := image.Decode(bytes.NewReader(file))
	if err != nil {
		return nil, bad(dte.CodeInvalidFormat, "the logo's image data cannot be read: the file is damaged")
	}
	var buf bytes.Buffer
	out := &api.Logo{ContentType: "image/png"}
	if format == "jpeg" {
		out.ContentType = "image/jpeg"
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90})
	} else {
		err = (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&buf, img)
	}
	if err != nil {
		return nil, &fault.Error{Kind: fault.KindInternal, Code: fault.Internal, Message: "internal error while encoding the logo", Err: err}
	}
	out.Data = buf.Bytes()
	return out, nil
}
