// Package demo provisions the companies of dtekit's demo: a company
// created (or completed) with a signing certificate and a CAF of each
// type it asks for, issued by a test CAF authority the service trusts.
// `dtekit serve --demo` builds its demo company and supplier with it, and
// billing/billingtest provisions the companies of tests through it.
//
// Nothing here touches the SII's keys, and nothing here is test code: the
// package imports neither testing nor the test-only helpers of internal/,
// so the binary that uses it carries none of them. The CAFs come from a
// caf/caftest authority and the certificate is a throwaway one
// (signer/signertest); both are stand-ins a verifier accepts only when told
// to trust them.
package demo

import (
	"context"
	"fmt"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing"
	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/caf/caftest"
	"github.com/dtekit/dtekit/dte"
)

// Credentials are the test authority and signing certificate the
// companies provisioned here use.
type Credentials struct {
	// Authority issues CAFs; TrustedKeys trusts it (and the SII's keys).
	Authority   *caftest.Authority
	TrustedKeys caf.TrustedKeys
	// Emisor is the demo company's data (ambiente certificación).
	Emisor dte.Emisor
	// P12 is the signing certificate, protected by Password, issued to
	// the person with RUT SignerRUT.
	P12       []byte
	Password  string
	SignerRUT string
	// CAFFiles holds a CAF of Emisor for folios 1–1000 of each type.
	CAFFiles map[dte.TipoDTE][]byte
}

// Company says which company Provision makes, or completes.
type Company struct {
	// ID names a company that exists already: Provision completes it
	// instead of creating one. Empty means a new company.
	ID string
	// Rut and RazonSocial name a new company; empty means the demo
	// emisor's (Credentials.Emisor).
	Rut, RazonSocial string
	// Tipos lists the document types that get a CAF (folios 1–Hasta);
	// nil means none.
	Tipos []dte.TipoDTE
	// Hasta is the last folio of each CAF; zero means 1000.
	Hasta int64
}

// Provision makes sure a company is ready to emit: it creates the
// company (unless c.ID names one) with the demo emisor's address,
// activity and resolution, uploads creds' signing certificate unless the
// company has one, and registers a CAF, issued by creds.Authority and
// authorized a week ago, for each type of c.Tipos that has none. Each
// step already done is skipped, so running it again after an interrupted
// run completes what is missing.
func Provision(ctx context.Context, s *billing.Service, creds *Credentials, c Company) (*api.Empresa, error) {
	em := creds.Emisor
	if c.Hasta == 0 {
		c.Hasta = 1000
	}
	var e *api.Empresa
	var err error
	if c.ID != "" {
		if e, err = s.Company.Get(ctx, c.ID); err != nil {
			return nil, fmt.Errorf("demo: company %s: %w", c.ID, err)
		}
	} else {
		if c.Rut == "" {
			c.Rut, c.RazonSocial = em.Rut, em.RazonSocial
		}
		e, err = s.Company.Create(ctx, api.EmpresaInput{Rut: c.Rut, RazonSocial: c.RazonSocial, Giro: em.Giro,
			Direccion: em.Direccion, Comuna: em.Comuna, Ciudad: em.Ciudad, Ambiente: em.Ambiente,
			FechaResolucion: em.FechaResolucion, NumeroResolucion: em.NumeroResolucion, Acteco: em.Acteco})
		if err != nil {
			return nil, fmt.Errorf("demo: creating company %s: %w", c.Rut, err)
		}
	}
	cert, err := s.Company.Certificate(ctx, e.ID)
	if err != nil {
		return nil, fmt.Errorf("demo: certificate of %s: %w", e.Rut, err)
	}
	if !cert.HasCertificado {
		if len(creds.P12) == 0 {
			return nil, fmt.Errorf("demo: company %s has no certificate and the credentials carry none", e.Rut)
		}
		if _, err := s.Company.UploadCertificate(ctx, e.ID, api.CertificadoUpload{File: creds.P12, Password: creds.Password, RutFirmante: creds.SignerRUT}); err != nil {
			return nil, fmt.Errorf("demo: certificate of %s: %w", e.Rut, err)
		}
	}
	have := map[dte.TipoDTE]bool{}
	for _, tipo := range c.Tipos {
		cafs, err := s.CAFs.List(ctx, e.ID, api.CAFListParams{TipoDTE: tipo, ListParams: api.ListParams{Limit: 1}})
		if err != nil {
			return nil, fmt.Errorf("demo: CAFs of %s: %w", e.Rut, err)
		}
		have[tipo] = len(cafs.Data) > 0
	}
	fa := dte.ChileTime(time.Now()).AddDate(0, 0, -7)
	for _, tipo := range c.Tipos {
		if have[tipo] {
			continue
		}
		file, err := creds.Authority.Issue(caftest.IssueRequest{RutEmisor: e.Rut, RazonSocial: e.RazonSocial,
			Tipo: int(tipo), Desde: 1, Hasta: c.Hasta, FechaAutorizacion: fa})
		if err != nil {
			return nil, fmt.Errorf("demo: issuing a CAF of type %d: %w", tipo, err)
		}
		if _, err := s.CAFs.Register(ctx, e.ID, api.CAFInput{TipoDTE: tipo, CAFXML: string(file)}); err != nil {
			return nil, fmt.Errorf("demo: registering the CAF of type %d: %w", tipo, err)
		}
	}
	return e, nil
}
