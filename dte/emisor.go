package dte

import (
	"fmt"
	"time"
)

// Text lengths of a document's receptor in DTE_v10.xsd, in characters.
// Validate applies them to receptor.*; a store of customers who become
// receptors (billing's catalog) applies the same ones.
const (
	MaxRazonSocialReceptor = 100 // RznSocRecep (RznSocLargaType)
	MaxGiroReceptor        = 40  // GiroRecep
	MaxDireccionReceptor   = 70  // DirRecep
	MaxComunaReceptor      = 20  // CmnaRecep (ComunaType)
	MaxCiudadReceptor      = 20  // CiudadRecep (CiudadType)
)

// Text lengths of a document's issuer in DTE_v10.xsd, in characters.
const (
	maxRznSocEmisor = 100 // RznSoc (boletas: RznSocEmisor)
	maxGiroEmisor   = 80  // GiroEmis (boletas: GiroEmisor)
	maxDirOrigen    = 70  // DirOrigen
	maxCmnaOrigen   = 20  // CmnaOrigen
	maxCiudadOrigen = 20  // CiudadOrigen
	maxActeco       = 4   // Acteco maxOccurs
)

// Validate checks the issuer as contract §2.6 and the Emisor of the SII's
// DTE_v10.xsd require, and returns nil or a *ValidationError listing every
// problem, with fields named as in the JSON (rut, razon_social,
// acteco[1], ...):
//
//   - rut: a RUT with a valid check digit;
//   - razon_social (at most 100 characters), giro (80), direccion (70),
//     comuna and ciudad (20 each): not blank;
//   - ambiente: "certificacion" or "produccion";
//   - fecha_resolucion: a date YYYY-MM-DD; numero_resolucion: not negative
//     (0 in certificación);
//   - acteco: one to four codes (the schema's Acteco occurs at most four
//     times), each a positive number of at most six digits.
//
// It is the one check of an issuer: billing applies it to a company before
// storing it and the dtekit command to an --emisor file.
func (e *Emisor) Validate() error {
	var d []FieldError
	if p := CheckRUT("rut", e.Rut, true); p != nil {
		d = append(d, *p)
	}
	for _, f := range []struct {
		name, v string
		max     int
	}{
		{"razon_social", e.RazonSocial, maxRznSocEmisor}, {"giro", e.Giro, maxGiroEmisor}, {"direccion", e.Direccion, maxDirOrigen},
		{"comuna", e.Comuna, maxCmnaOrigen}, {"ciudad", e.Ciudad, maxCiudadOrigen},
	} {
		if p := CheckText(f.name, f.v, f.max, true, false); p != nil {
			d = append(d, *p)
		}
	}
	if e.Ambiente != AmbienteCertificacion && e.Ambiente != AmbienteProduccion {
		d = append(d, FieldError{Field: "ambiente", Code: CodeInvalidValue,
			Message: fmt.Sprintf("ambiente must be %q or %q", AmbienteCertificacion, AmbienteProduccion)})
	}
	if _, err := time.Parse(time.DateOnly, e.FechaResolucion); err != nil {
		d = append(d, FieldError{Field: "fecha_resolucion", Code: CodeInvalidFormat, Message: "fecha_resolucion must be a date YYYY-MM-DD"})
	}
	if e.NumeroResolucion < 0 {
		d = append(d, FieldError{Field: "numero_resolucion", Code: CodeOutOfRange, Message: "numero_resolucion must not be negative"})
	}
	if len(e.Acteco) == 0 || len(e.Acteco) > maxActeco {
		d = append(d, FieldError{Field: "acteco", Code: CodeRequired, Message: "give one to four SII economic activity codes"})
	}
	for i, a := range e.Acteco {
		if a <= 0 || a > 999999 {
			d = append(d, FieldError{Field: fmt.Sprintf("acteco[%d]", i), Code: CodeOutOfRange,
				Message: "an activity code is a positive number of at most 6 digits"})
		}
	}
	if len(d) > 0 {
		return &ValidationError{Details: d}
	}
	return nil
}
