package billing

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/dte"
)

// checkCAF parses an uploaded CAF and checks that the company may use it:
// the declared type, the SII's signature under the keys of the company's
// environment (IDK 100 for certificación, 300 for producción), the
// issuer's RUT, the key pair, and that it is not expired at now.
func checkCAF(in CAFInput, emp *Empresa, trust caf.TrustedKeys, now time.Time) (*caf.CAF, *fault.Error) {
	if strings.TrimSpace(in.CAFXML) == "" {
		return nil, fault.Invalid("caf_xml", dte.CodeRequired, "caf_xml is missing")
	}
	if !in.TipoDTE.Valid() {
		return nil, fault.Invalid("tipo_dte", dte.CodeInvalidValue, fmt.Sprintf("tipo_dte %d is not one of the twelve DTE types", in.TipoDTE))
	}
	c, err := caf.Parse([]byte(in.CAFXML))
	if err != nil {
		return nil, fault.Invalid("caf_xml", fault.DetailInvalidCAF, err.Error())
	}
	if c.Tipo != int(in.TipoDTE) {
		return nil, fault.Invalid("tipo_dte", fault.DetailTipoMismatch, fmt.Sprintf("the CAF is for tipo %d, not %d", c.Tipo, in.TipoDTE))
	}
	if c.Ambiente() != emp.Ambiente {
		return nil, fault.Invalid("caf_xml", fault.DetailAmbienteMismatch,
			fmt.Sprintf("the CAF was authorized for %q (IDK %d) and the company works in %q", c.Ambiente(), c.IDK, emp.Ambiente))
	}
	if err := c.Verify(trust); err != nil {
		return nil, fault.Invalid("caf_xml", fault.DetailCAFSignature, "the SII's signature over the CAF does not verify: "+err.Error())
	}
	want, err1 := dte.ParseRUT(emp.Rut)
	got, err2 := dte.ParseRUT(c.RutEmisor)
	if err1 != nil || err2 != nil || want != got {
		return nil, fault.Invalid("caf_xml", fault.DetailRutMismatch, fmt.Sprintf("the CAF was issued to %s, not to the company %s", c.RutEmisor, emp.Rut))
	}
	if err := c.CheckKeyPair(); err != nil {
		return nil, fault.Invalid("caf_xml", fault.DetailInvalidCAF, err.Error())
	}
	if err := c.CheckUsable(now); err != nil {
		code := dte.DetailCode(fault.DetailInvalidCAF)
		if errors.Is(err, caf.ErrExpired) {
			code = fault.DetailCAFExpired
		}
		return nil, fault.Invalid("caf_xml", code, err.Error())
	}
	return c, nil
}
