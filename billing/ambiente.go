package billing

import (
	"context"
	"errors"
	"fmt"
	"github.com/dtekit/dtekit/api"

	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/store"
)

// The SII numbers folios from 1 in certificación and again in producción,
// so a company that moved keeps two numberings side by side: CAFs,
// documents and Idempotency-Keys belong to one environment (store.CAF,
// store.DTE and store.Idempotency keep it), and a list shows one
// environment at a time.

// listAmbiente checks the ambiente filter of a list and returns the
// store's: "" (or the field absent) is the company's current environment,
// api.AmbienteTodos both ("" to the store), and "certificacion" or
// "produccion" that one. It reads the company, so an unknown company is
// not found.
func (s *Service) listAmbiente(ctx context.Context, empresaID, ambiente string) (string, error) {
	switch ambiente {
	case api.AmbienteTodos, dte.AmbienteCertificacion, dte.AmbienteProduccion, "":
	default:
		return "", fault.Invalid("ambiente", dte.CodeInvalidValue, fmt.Sprintf("ambiente %q is none of %q, %q and %q",
			ambiente, dte.AmbienteCertificacion, dte.AmbienteProduccion, api.AmbienteTodos))
	}
	emp, err := s.st.GetEmpresa(ctx, empresaID)
	if err != nil {
		return "", storeErr(err, "reading the company", "empresa", empresaID)
	}
	switch ambiente {
	case api.AmbienteTodos:
		return "", nil
	case "":
		return emp.Ambiente, nil
	}
	return ambiente, nil
}

// ambienteName is how an error message names an environment.
func ambienteName(a string) string {
	switch a {
	case dte.AmbienteProduccion:
		return "production"
	case dte.AmbienteCertificacion:
		return "certification"
	}
	return a
}

// noFoliosError is the refusal of an emission TakeFolio found nothing
// for: no CAF of the type registered in the company's environment (a
// company just moved to producción, whose CAFs are all of certificación),
// or none with folios left.
func noFoliosError(err error, tipo dte.TipoDTE, ambiente string) *fault.Error {
	if errors.Is(err, store.ErrNoCAF) {
		msg := fmt.Sprintf("no %s CAF of tipo %d is registered", ambienteName(ambiente), tipo)
		return &fault.Error{Kind: fault.KindConflict, Code: fault.NoFolios, Message: msg,
			Details: []dte.FieldError{{Field: "tipo_dte", Code: fault.DetailCAFNotRegistered, Message: msg,
				Action: fmt.Sprintf("register a CAF of tipo %d authorized for %s (POST /caf)", tipo, ambiente)}}}
	}
	return &fault.Error{Kind: fault.KindConflict, Code: fault.NoFolios,
		Message: fmt.Sprintf("no registered %s CAF of tipo %d has folios left", ambienteName(ambiente), tipo),
		Details: []dte.FieldError{{Field: "tipo_dte", Code: fault.DetailNoFolios, Message: "register a CAF for this document type", Action: "register a CAF of this type"}}}
}
