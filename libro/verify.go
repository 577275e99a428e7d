package libro

import (
	"errors"
	"fmt"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/xmltree"
	"github.com/dtekit/dtekit/signer"
)

// nsDSig is the XML signature namespace.
const nsDSig = "http://www.w3.org/2000/09/xmldsig#"

// VerifyReport is what Verify found in a signed libro or RCOF.
type VerifyReport struct {
	// Kind is the root element: RootCompraVenta, RootGuia or RootConsumo.
	Kind string `json:"kind"`
	// ID is the ID of the signed element (EnvioLibro,
	// DocumentoConsumoFolios).
	ID        string `json:"id"`
	RutEmisor string `json:"rut_emisor"`
	RutEnvia  string `json:"rut_envia"`
	// Periodo is the PeriodoTributario of a libro (YYYY-MM), or the days
	// an RCOF reports (FchInicio, or FchInicio/FchFinal).
	Periodo string `json:"periodo"`
	// Tipo is what the carátula says of it: "VENTA MENSUAL TOTAL" for a
	// libro, "GUIAS …" for a Libro de Guías, "RCOF" for the consumo.
	Tipo string `json:"tipo"`
	// Detalles counts the rows (Detalle; Resumen of an RCOF).
	Detalles  int       `json:"detalles"`
	Signature dte.Check `json:"signature"`
	// Signer is the certificate that signed it.
	Signer *dte.Signer `json:"signer,omitempty"`
	// Policy is the outcome of the signer policy of the options (OK when
	// none is stated): the emisor is RutEmisorLibro (RutEmisor of an RCOF).
	Policy dte.Check `json:"policy"`
}

// OK reports whether the signature and the signer policy passed.
func (r *VerifyReport) OK() bool { return r.Signature.OK && r.Policy.OK }

// Verify checks a signed LibroCompraVenta, LibroGuia or ConsumoFolios:
// that it reads as one (Parse, ParseGuia, ParseConsumo), that its shape is
// the schema's as far as signatures go (the root holds the signed element
// and then at most one Signature, and no Signature lies anywhere else),
// that the signature is valid and covers that element by its ID, and the
// signer policy of opts (AuthorizedSigners for the emisor,
// SignerIsRutEnvia, ValidAtSigning at TmstFirma or TmstFirmaEnv).
//
// The report is returned whenever the input reads as a libro; the error
// then wraps dte.ErrVerification when a check failed. Without a report,
// the error says why the input is not a libro Verify can read.
func Verify(data []byte, opts dte.VerifyOptions) (*VerifyReport, error) {
	d, err := xmltree.ParseWith(data, xmltree.Options{MaxBytes: MaxFileBytes, MaxDepth: maxParseDepth})
	if err != nil {
		return nil, fmt.Errorf("libro: %w", err)
	}
	root := d.Root
	rep := &VerifyReport{Kind: root.Local}
	var tmst time.Time
	switch {
	case root.Is(dte.NamespaceSiiDte, RootCompraVenta):
		l, err := Parse(data)
		if err != nil {
			return nil, err
		}
		c := l.Caratula
		rep.ID, rep.RutEmisor, rep.RutEnvia, rep.Periodo = l.ID, c.RutEmisorLibro, c.RutEnvia, c.PeriodoTributario
		rep.Tipo, rep.Detalles, tmst = c.TipoOperacion+" "+c.TipoLibro+" "+c.TipoEnvio, len(l.Detalle), l.TmstFirma
	case root.Is(dte.NamespaceSiiDte, RootGuia):
		l, err := ParseGuia(data)
		if err != nil {
			return nil, err
		}
		c := l.Caratula
		rep.ID, rep.RutEmisor, rep.RutEnvia, rep.Periodo = l.ID, c.RutEmisorLibro, c.RutEnvia, c.PeriodoTributario
		rep.Tipo, rep.Detalles, tmst = "GUIAS "+c.TipoLibro+" "+c.TipoEnvio, len(l.Detalle), l.TmstFirma
	case root.Is(dte.NamespaceSiiDte, RootConsumo):
		l, err := ParseConsumo(data)
		if err != nil {
			return nil, err
		}
		c := l.Caratula
		rep.ID, rep.RutEmisor, rep.RutEnvia, rep.Periodo = l.ID, c.RutEmisor, c.RutEnvia, c.FchInicio
		if c.FchFinal != "" && c.FchFinal != c.FchInicio {
			rep.Periodo += "/" + c.FchFinal
		}
		rep.Tipo, rep.Detalles, tmst = "RCOF", len(l.Resumen), c.TmstFirmaEnv
	default:
		return nil, fmt.Errorf("libro: root element %s is not %s, %s or %s", root.Local, RootCompraVenta, RootGuia, RootConsumo)
	}
	sigEl, err := signedShape(root)
	if err != nil {
		return nil, fmt.Errorf("libro: verify: %w", err)
	}
	rep.Policy = dte.Check{OK: true}
	switch {
	case sigEl == nil:
		rep.Signature = dte.Check{Error: "the " + rep.Kind + " is not signed"}
	default:
		s, err := signatureOver(data, rep.ID)
		rep.Signer = dte.SignerOf(s)
		if err == nil {
			var at string
			if !tmst.IsZero() {
				at = tmst.Format("2006-01-02T15:04:05")
			}
			if perr := dte.SignerPolicy(opts, s, rep.RutEmisor, rep.RutEnvia, at); perr != nil {
				rep.Policy = dte.Check{Error: perr.Error()}
			}
		}
		rep.Signature = dte.Check{OK: err == nil}
		if err != nil {
			rep.Signature.Error = err.Error()
		}
	}
	if !rep.OK() {
		return rep, fmt.Errorf("%w: %s signature: %s; signer policy: %s", dte.ErrVerification, rep.Kind,
			orOK(rep.Signature), orOK(rep.Policy))
	}
	return rep, nil
}

func orOK(c dte.Check) string {
	if c.OK {
		return "ok"
	}
	return c.Error
}

// signedShape checks that root holds the element its signature covers
// (its first child) and then at most one Signature,
// and that no other Signature lies in the document: one that covers an
// element while a reader takes another from elsewhere is how signature
// wrapping works. It returns the Signature, nil when unsigned.
func signedShape(root *xmltree.Element) (*xmltree.Element, error) {
	kids := root.Elements()
	var sig *xmltree.Element
	switch {
	case len(kids) == 2 && kids[1].Is(nsDSig, "Signature"):
		sig = kids[1]
	case len(kids) > 1:
		return nil, fmt.Errorf("<%s> holds <%s> after %s; only its Signature may follow", root.Local, kids[1].QName(), kids[0].Local)
	}
	var bad *xmltree.Element
	xmltree.Walk(root, func(e *xmltree.Element) {
		if bad == nil && e != sig && e.Is(nsDSig, "Signature") {
			bad = e
		}
	})
	if bad != nil {
		return nil, fmt.Errorf("a <%s> inside <%s>, where the SII's schema has none", bad.QName(), bad.Parent.QName())
	}
	return sig, nil
}

// signatureOver verifies the file's one signature and that it covers the
// element with ID id.
func signatureOver(data []byte, id string) (signer.VerifiedSignature, error) {
	sigs, err := signer.Verify(data)
	if len(sigs) != 1 {
		if err == nil {
			err = fmt.Errorf("%d signatures, want one", len(sigs))
		}
		return signer.VerifiedSignature{}, err
	}
	s := sigs[0]
	switch {
	case s.Err != nil:
		return s, s.Err
	case err != nil:
		return s, err
	case id == "" || s.ID != id:
		return s, errors.New("the signature does not cover the signed element by its ID (Reference URI " + fmt.Sprintf("%q", s.URI) + ", ID " + fmt.Sprintf("%q", id) + ")")
	}
	return s, nil
}
