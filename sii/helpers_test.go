package sii_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/internal/clocktest"
	"github.com/dtekit/dtekit/internal/oracle"
	"github.com/dtekit/dtekit/signer"
	"github.com/dtekit/dtekit/signer/signertest"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/sii/siitest"
)

// creds is one set of test credentials for the whole package (generating
// one costs an RSA key).
var creds = sync.OnceValues(func() (*dtetest.Creds, error) { return dtetest.New(nil) })

// newClock returns the settable clock a rig shares between the fake and
// the client.
func newClock() *clocktest.Clock {
	return clocktest.New(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
}

// rig is a started fake and a client pointed at it.
type rig struct {
	t      *testing.T
	fake   *siitest.Fake
	client *sii.Client
	creds  *dtetest.Creds
	clock  *clocktest.Clock
	em     *dte.Emitter
}

// newRig starts a fake with opts (its Clock set to the rig's clock unless
// given) that knows the test signer and company, and a client with cfg's
// adjustments.
func newRig(t *testing.T, opts siitest.Options, adjust func(*sii.Config)) *rig {
	t.Helper()
	c, err := creds()
	if err != nil {
		t.Fatal(err)
	}
	clock := newClock()
	if opts.Clock == nil {
		opts.Clock = clock.Now
	}
	fake := siitest.New(opts).Start()
	t.Cleanup(fake.Close)
	fake.Register(dtetest.SignerRUT, dtetest.EmisorRUT)
	cfg := sii.Config{Endpoints: fake.Endpoints(), Certificate: c.Cert, Clock: clock.Now, RetryPause: time.Millisecond, Timeout: 10 * time.Second}
	if adjust != nil {
		adjust(&cfg)
	}
	client, err := sii.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	em, err := c.Emitter(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &rig{t: t, fake: fake, client: client, creds: c, clock: clock, em: em}
}

// emit issues one document of tipo (33 factura or 39 boleta) and returns
// its signed XML and parsed form.
func (r *rig) emit(tipo dte.TipoDTE) ([]byte, *dte.Emitted) {
	r.t.Helper()
	req := &dte.EmitirDTERequest{TipoDTE: tipo, Receptor: dte.Receptor{Rut: "76086428-5", RazonSocial: "Comercial Ñandú & Cía.",
		Giro: "Venta al por mayor", Direccion: "Av. Libertador 1449", Comuna: "Santiago", Ciudad: "Santiago"},
		Detalle: []dte.LineaDetalle{{Nombre: "Aceite de oliva «Señorío» 1 L", Cantidad: "12", Unidad: "UN", Precio: "6490"}}}
	if tipo.IsBoleta() {
		three := 3
		req.Receptor = dte.Receptor{Rut: "66666666-6", RazonSocial: "Consumidor final"}
		req.IndServicio = &three
	}
	res, err := r.em.Emit(context.Background(), req)
	if err != nil {
		r.t.Fatalf("emitting tipo %d: %v", tipo, err)
	}
	return res.XML, res
}

// envelope packs freshly emitted documents of the given types.
func (r *rig) envelope(tipos ...dte.TipoDTE) ([]byte, []*dte.Emitted) {
	r.t.Helper()
	var docs [][]byte
	var ems []*dte.Emitted
	for _, tp := range tipos {
		x, e := r.emit(tp)
		docs = append(docs, x)
		ems = append(ems, e)
	}
	env, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: r.creds.Emisor}, r.creds.Cert, docs...)
	if err != nil {
		r.t.Fatal(err)
	}
	return env, ems
}

// query is the getEstDte query of an emitted document.
func query(e *dte.Emitted, receptor string) sii.DocumentQuery {
	monto, _ := e.MontoTotal.Int64()
	return sii.DocumentQuery{RutEmisor: dtetest.EmisorRUT, RutReceptor: receptor, Tipo: int(e.Tipo), Folio: e.Folio,
		FechaEmision: e.FechaEmision, Monto: monto}
}

// xmllintSchema returns a fake schema check that runs xmllint with the
// official XSDs (see oracle.SchemaCheck).
func xmllintSchema(t *testing.T) func(root string, envelope []byte) []string {
	t.Helper()
	return oracle.SchemaCheck(t)
}

// siitestCert makes a certificate for another RUT (1024 bits, quick).
func siitestCert(rut string) (*signer.Certificate, error) {
	return signertest.NewCertificate(nil, signertest.CertOptions{RUT: rut, Bits: 1024})
}
