package pdf

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // DecodeConfig reads JPEG logos
	_ "image/png"  // and PNG ones

	"github.com/go-pdf/fpdf"
)

// ErrLogo means Options.Logo is not a PNG or JPEG image of a usable size.
var ErrLogo = errors.New("pdf: invalid logo")

// MaxLogoPixels bounds each side of a logo, in pixels.
const MaxLogoPixels = 4000

// Where the logo is printed: at most logoMaxH high and logoMaxW wide on
// letter paper (its issuer block moves right), and at most rollLogoMaxH
// high, centred, on 80 mm paper.
const (
	logoMaxH     = 18.0
	logoMaxW     = 45.0
	rollLogoMaxH = 14.0
)

// logo is a checked Options.Logo: its fpdf image type and pixel size.
type logo struct {
	kind          string // "PNG" or "JPG"
	width, height int
}

// checkLogo reads the logo's header: PNG or JPEG, each side 1 to
// MaxLogoPixels pixels. nil when there is no logo.
func checkLogo(b []byte) (*logo, error) {
	if len(b) == 0 {
		return nil, nil
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%w: not a PNG or JPEG image", ErrLogo)
	}
	kind := map[string]string{"png": "PNG", "jpeg": "JPG"}[format]
	if kind == "" {
		return nil, fmt.Errorf("%w: a %s image; give a PNG or JPEG", ErrLogo, format)
	}
	if cfg.Width < 1 || cfg.Height < 1 || cfg.Width > MaxLogoPixels || cfg.Height > MaxLogoPixels {
		return nil, fmt.Errorf("%w: %d×%d pixels; each side must be 1 to %d", ErrLogo, cfg.Width, cfg.Height, MaxLogoPixels)
	}
	return &logo{kind: kind, width: cfg.Width, height: cfg.Height}, nil
}

// fit returns the logo's printed size within maxW × maxH millimetres,
// keeping its proportions.
func (l *logo) fit(maxW, maxH float64) (w, h float64) {
	h = maxH
	w = h * float64(l.width) / float64(l.height)
	if w > maxW {
		w = maxW
		h = w * float64(l.height) / float64(l.width)
	}
	return w, h
}

// drawLogo prints the logo at x, y in w × h millimetres (when drawing).
func (r *renderer) drawLogo(x, y, w, h float64) {
	if !r.draw || r.logo == nil {
		return
	}
	opts := fpdf.ImageOptions{ImageType: r.logo.kind}
	r.f.RegisterImageOptionsReader("logo", opts, bytes.NewReader(r.opts.Logo))
	r.f.ImageOptions("logo", x, y, w, h, false, opts, 0, "")
}
