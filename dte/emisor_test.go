package dte_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/dte"
)

// TestEmisorValidate checks the issuer rules against the bounds of the
// Emisor in the SII's DTE_v10.xsd (RznSoc 100, GiroEmis 80, DirOrigen 70,
// CmnaOrigen and CiudadOrigen 20 characters; Acteco occurs one to four
// times, a positive integer of at most six digits) and contract §2.6.
func TestEmisorValidate(t *testing.T) {
	valid := func() dte.Emisor {
		return dte.Emisor{Rut: "76192083-9", RazonSocial: "Comercial Los Andes SpA", Giro: "Comercio",
			Direccion: "Av. Providencia 1234", Comuna: "Providencia", Ciudad: "Santiago",
			Ambiente: "certificacion", FechaResolucion: "2014-08-22", Acteco: []int{620200}}
	}
	for _, c := range []struct {
		name   string
		change func(*dte.Emisor)
		want   []string // field:code, in order; nil means valid
	}{
		{"valid", func(*dte.Emisor) {}, nil},
		{"four acteco, six digits", func(e *dte.Emisor) { e.Acteco = []int{1, 22, 333333, 999999} }, nil},
		{"limits exactly", func(e *dte.Emisor) {
			e.RazonSocial, e.Giro, e.Direccion = strings.Repeat("ñ", 100), strings.Repeat("a", 80), strings.Repeat("a", 70)
			e.Comuna, e.Ciudad = strings.Repeat("a", 20), strings.Repeat("a", 20)
		}, nil},
		{"one over", func(e *dte.Emisor) {
			e.RazonSocial, e.Giro, e.Direccion = strings.Repeat("ñ", 101), strings.Repeat("a", 81), strings.Repeat("a", 71)
			e.Comuna, e.Ciudad = strings.Repeat("a", 21), strings.Repeat("a", 21)
		}, []string{"razon_social:TOO_LONG", "giro:TOO_LONG", "direccion:TOO_LONG", "comuna:TOO_LONG", "ciudad:TOO_LONG"}},
		{"blank", func(e *dte.Emisor) { e.RazonSocial, e.Ciudad = " ", "" }, []string{"razon_social:REQUIRED", "ciudad:REQUIRED"}},
		{"check digit", func(e *dte.Emisor) { e.Rut = "76192083-8" }, []string{"rut:INVALID_RUT"}},
		{"ambiente", func(e *dte.Emisor) { e.Ambiente = "prod" }, []string{"ambiente:INVALID_VALUE"}},
		{"fecha", func(e *dte.Emisor) { e.FechaResolucion = "22-08-2014" }, []string{"fecha_resolucion:INVALID_FORMAT"}},
		{"numero negative", func(e *dte.Emisor) { e.NumeroResolucion = -1 }, []string{"numero_resolucion:OUT_OF_RANGE"}},
		{"no acteco", func(e *dte.Emisor) { e.Acteco = nil }, []string{"acteco:REQUIRED"}},
		{"five acteco", func(e *dte.Emisor) { e.Acteco = []int{1, 2, 3, 4, 5} }, []string{"acteco:REQUIRED"}},
		{"acteco zero and seven digits", func(e *dte.Emisor) { e.Acteco = []int{0, 1000000} },
			[]string{"acteco[0]:OUT_OF_RANGE", "acteco[1]:OUT_OF_RANGE"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := valid()
			c.change(&e)
			err := e.Validate()
			var got []string
			var ve *dte.ValidationError
			if errors.As(err, &ve) {
				for _, d := range ve.Details {
					got = append(got, d.Field+":"+string(d.Code))
				}
			} else if err != nil {
				t.Fatalf("error %T %v, want *dte.ValidationError", err, err)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}
