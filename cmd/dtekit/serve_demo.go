package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing"
	billingdemo "github.com/dtekit/dtekit/billing/demo"
	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/caf/caftest"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/server"
	"github.com/dtekit/dtekit/signer/signertest"
	"github.com/dtekit/dtekit/store"
)

// Files of the demo in the data directory.
const (
	demoFileName      = "demo.json"
	demoAuthorityFile = "demo-authority.pem" // the test SII authority's private key
	// demoAuthorityPubFile is its public key, for "dtekit verify --trust"
	// and the kit's --trust.
	demoAuthorityPubFile = "demo-authority.pub.pem"
	demoJWTKeyFile       = "demo-jwt-key.pem" // the key that signs the demo admin token
	demoIssuer           = "dtekit-demo"
	demoAudience         = "dtekit"
	// demoFolios is the size of each demo CAF's folio range.
	demoFolios = 100000
	// demoTokenLife is how long the demo admin token is valid; a new one
	// is written at every start.
	demoTokenLife = 30 * 24 * time.Hour
	demoPassword  = "dtekit-demo"
)

// demoFile is DIR/demo.json.
type demoFile struct {
	APIKey     string `json:"api_key"`
	AdminToken string `json:"admin_token"`
	EmpresaID  string `json:"empresa_id"`
	// The demo supplier's company and credentials: it sends documents to
	// the demo company.
	Proveedor *demoCompany `json:"proveedor,omitempty"`
}

// demoCompany is a demo company's id and credentials.
type demoCompany struct {
	EmpresaID  string `json:"empresa_id"`
	APIKey     string `json:"api_key"`
	AdminToken string `json:"admin_token"`
}

// demoState holds the demo's keys, kept in the data directory so that a
// restart trusts the same CAFs and tokens.
type demoState struct {
	dir       string
	authority *caftest.Authority
	jwtKey    *rsa.PrivateKey
	file      demoFile
}

// loadDemoKeys reads the demo's authority and JWT keys from dir, creating
// them on the first start.
func loadDemoKeys(dir string) (*demoState, error) {
	d := &demoState{dir: dir}
	authPEM, err := readOrCreate(filepath.Join(dir, demoAuthorityFile), func() ([]byte, error) {
		a, err := caftest.NewAuthority(nil, caf.IDKCertificacion)
		if err != nil {
			return nil, err
		}
		return a.PrivateKeyPEM()
	})
	if err != nil {
		return nil, err
	}
	if d.authority, err = caftest.LoadAuthority(nil, authPEM, caf.IDKCertificacion); err != nil {
		return nil, fmt.Errorf("%s: %w", demoAuthorityFile, err)
	}
	pub, err := d.authority.PublicKeyPEM()
	if err != nil {
		return nil, err
	}
	if err := writeFileAtomic(filepath.Join(dir, demoAuthorityPubFile), pub, true); err != nil {
		return nil, fmt.Errorf("%s: %w", demoAuthorityPubFile, err)
	}
	keyPEM, err := readOrCreate(filepath.Join(dir, demoJWTKeyFile), func() ([]byte, error) {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return nil, err
		}
		return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}), nil
	})
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(keyPEM)
	if block == nil {
		return nil, fmt.Errorf("%s: no PEM block", demoJWTKeyFile)
	}
	if d.jwtKey, err = x509.ParsePKCS1PrivateKey(block.Bytes); err != nil {
		return nil, fmt.Errorf("%s: %w", demoJWTKeyFile, err)
	}
	return d, nil
}

// readOrCreate returns the file at path, creating it (mode 0600) with
// create's bytes when it does not exist.
func readOrCreate(path string, create func() ([]byte, error)) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err == nil {
		return data, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if data, err = create(); err != nil {
		return nil, err
	}
	if err := writeSecretFile(path, data); err != nil {
		return nil, err
	}
	return data, nil
}

// writeSecretFile writes data to path atomically with mode 0600.
func writeSecretFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".dtekit-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// keyfunc trusts the demo JWT key.
func (d *demoState) keyfunc() jwt.Keyfunc {
	pub := &d.jwtKey.PublicKey
	return func(*jwt.Token) (any, error) { return pub, nil }
}

// provision makes sure the demo company exists with its certificate, the
// CAFs of the twelve types and a write-enabled API key, mints a fresh admin
// token, and writes demo.json. Every step is skipped when already done, so
// a restart (or a restart after a crash half-way) provisions nothing twice.
func (d *demoState) provision(ctx context.Context, b *billing.Service, st store.Store, issuer, audience string) error {
	path := filepath.Join(d.dir, demoFileName)
	if data, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(data, &d.file)
	}
	emisor := dtetest.DemoEmisor()
	// The company: the one demo.json names, else the one with the demo
	// RUT, else a new one.
	empresaID := ""
	if d.file.EmpresaID != "" {
		if _, err := b.Company.Get(ctx, d.file.EmpresaID); err == nil {
			empresaID = d.file.EmpresaID
		}
	}
	if empresaID == "" {
		id, err := findEmpresa(ctx, st, emisor.Rut, dte.AmbienteCertificacion)
		if err != nil {
			return err
		}
		empresaID = id
	}
	// The company, its certificate and a CAF of every type, each made
	// unless already there (billingdemo.Provision, with the demo's own
	// authority and a certificate made only when the company has none).
	creds, err := d.credentials(ctx, b, empresaID, emisor)
	if err != nil {
		return err
	}
	e, err := billingdemo.Provision(ctx, b, creds, billingdemo.Company{ID: empresaID, Tipos: dte.Tipos(), Hasta: demoFolios})
	if err != nil {
		return err
	}
	empresaID = e.ID
	if d.file.EmpresaID != empresaID {
		d.file = demoFile{EmpresaID: empresaID}
	}

	// The API key: the one in demo.json while it works, else a new one.
	if d.file.APIKey != "" {
		if p, err := b.Keys.Authenticate(ctx, d.file.APIKey); err != nil || p.EmpresaID != empresaID || !p.Write {
			d.file.APIKey = ""
		}
	}
	if d.file.APIKey == "" {
		k, err := b.Keys.Create(ctx, empresaID, api.APIKeyInput{Write: true})
		if err != nil {
			return fmt.Errorf("creating the API key: %w", err)
		}
		d.file.APIKey = k.Key
	}

	// A fresh admin token at every start.
	tok, err := d.adminToken(empresaID, issuer, audience)
	if err != nil {
		return err
	}
	d.file.AdminToken = tok
	return d.save()
}

// adminToken mints a demo admin token for a company.
func (d *demoState) adminToken(empresaID, issuer, audience string) (string, error) {
	now := time.Now()
	return jwt.NewWithClaims(jwt.SigningMethodRS256, server.Claims{
		RegisteredClaims: jwt.RegisteredClaims{Issuer: issuer, Audience: jwt.ClaimStrings{audience}, Subject: "demo-admin",
			IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(demoTokenLife))},
		EmpresaID: empresaID, Role: server.RoleAdmin,
	}).SignedString(d.jwtKey)
}

// save writes demo.json.
func (d *demoState) save() error {
	data, err := json.MarshalIndent(d.file, "", "  ")
	if err != nil {
		return err
	}
	return writeSecretFile(filepath.Join(d.dir, demoFileName), append(data, '\n'))
}

// credentials are what billingdemo.Provision needs to provision a demo
// company (the existing one empresaID names, or a new one when ""): the
// demo's authority, and a fresh certificate only when it has none.
func (d *demoState) credentials(ctx context.Context, b *billing.Service, empresaID string, emisor dte.Emisor) (*billingdemo.Credentials, error) {
	creds := &billingdemo.Credentials{Authority: d.authority, Emisor: emisor, Password: demoPassword, SignerRUT: dtetest.SignerRUT}
	if empresaID != "" {
		st, err := b.Company.Certificate(ctx, empresaID)
		if err != nil {
			return nil, err
		}
		if st.HasCertificado {
			return creds, nil
		}
	}
	now := time.Now()
	cert, err := signertest.NewCertificate(nil, signertest.CertOptions{CommonName: dtetest.SignerName, RUT: dtetest.SignerRUT,
		NotBefore: now.Add(-24 * time.Hour), NotAfter: now.AddDate(2, 0, 0)})
	if err != nil {
		return nil, err
	}
	if creds.P12, err = signertest.EncodePKCS12(cert, demoPassword, signertest.Modern); err != nil {
		return nil, err
	}
	return creds, nil
}

// findEmpresa returns the id of the company with this RUT in this
// environment, or "" when there is none.
func findEmpresa(ctx context.Context, st store.Reader, rut, ambiente string) (string, error) {
	e, err := st.GetEmpresaByRut(ctx, rut, ambiente)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return e.ID, nil
}

// demoFactura is the factura the printed curl command emits (contract
// §2.3): ten reams and an installation with a 10 % discount.
const demoFactura = `{"tipo_dte":33,` +
	`"receptor":{"rut":"76086428-5","razon_social":"Cliente de Prueba SpA","giro":"Servicios informáticos",` +
	`"direccion":"Av. Providencia 1234","comuna":"Providencia","ciudad":"Santiago"},` +
	`"detalle":[{"nombre":"Resma papel carta","cantidad":10,"unidad":"UN","precio":4990},` +
	`{"nombre":"Instalación de equipos","cantidad":1,"precio":45000,"descuento_pct":10}]}`

// printWelcome prints where the demo credentials are and a curl command
// that emits a factura.
func (d *demoState) printWelcome(w io.Writer, base string) {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "\nDemo company %s (certificación), credentials in %s\n", d.file.EmpresaID, filepath.Join(d.dir, demoFileName))
	fmt.Fprintf(&buf, "Emit a factura (run it twice: the same Idempotency-Key answers the same document):\n\n")
	fmt.Fprintf(&buf, "  curl -sS -X POST %s/api/v1/billing/dte \\\n", base)
	fmt.Fprintf(&buf, "    -H 'X-Api-Key: %s' \\\n", d.file.APIKey)
	fmt.Fprintf(&buf, "    -H 'Idempotency-Key: %s' \\\n", uuid.NewString())
	fmt.Fprintf(&buf, "    -H 'Content-Type: application/json' \\\n")
	fmt.Fprintf(&buf, "    -d '%s'\n\n", demoFactura)
	fmt.Fprintf(&buf, "Your supplier %s sent you %d facturas; list them, then accept or claim one:\n\n", demoSupplierNombre, demoSupplierDocs)
	fmt.Fprintf(&buf, "  curl -sS %s/api/v1/billing/recibidos -H 'X-Api-Key: %s'\n", base, d.file.APIKey)
	fmt.Fprintf(&buf, "  curl -sS -X POST %s/api/v1/billing/recibidos/ID/aceptar -H 'X-Api-Key: %s'\n\n", base, d.file.APIKey)
	fmt.Fprintf(&buf, "Or open the console at %s/console/ and sign in with the same API key.\n\n", base)
	w.Write(buf.Bytes())
}

// The demo supplier: a second company whose facturas land in the demo
// company's inbox, so that a newcomer can list, accept and claim at once.
const (
	demoSupplierRut    = "76543210-3"
	demoSupplierNombre = "Proveedora Demo SpA"
	demoSupplierDocs   = 3
)

// provisionSupplier makes sure the demo supplier exists, with its
// certificate and a CAF of facturas, and, while the demo company's inbox
// is empty, emits three facturas to it (sent to the demo's SII, so that
// the registry knows them) and hands them in through the upload path.
func (d *demoState) provisionSupplier(ctx context.Context, b *billing.Service, st store.Store, issuer, audience string) error {
	id, err := findEmpresa(ctx, st, demoSupplierRut, dte.AmbienteCertificacion)
	if err != nil {
		return err
	}
	emisor := dtetest.DemoEmisor()
	sup := emisor
	sup.Rut, sup.RazonSocial, sup.Giro = demoSupplierRut, demoSupplierNombre, "Venta de insumos de oficina"
	creds, err := d.credentials(ctx, b, id, sup)
	if err != nil {
		return err
	}
	e, err := billingdemo.Provision(ctx, b, creds, billingdemo.Company{ID: id, Rut: demoSupplierRut, RazonSocial: demoSupplierNombre,
		Tipos: []dte.TipoDTE{dte.FacturaElectronica}, Hasta: demoFolios})
	if err != nil {
		return fmt.Errorf("the demo supplier: %w", err)
	}
	// Its credentials: the API key on record while it works, a fresh admin
	// token at every start.
	sup0 := d.file.Proveedor
	if sup0 == nil || sup0.EmpresaID != e.ID {
		sup0 = &demoCompany{EmpresaID: e.ID}
	}
	if sup0.APIKey != "" {
		if p, err := b.Keys.Authenticate(ctx, sup0.APIKey); err != nil || p.EmpresaID != e.ID || !p.Write {
			sup0.APIKey = ""
		}
	}
	if sup0.APIKey == "" {
		k, err := b.Keys.Create(ctx, e.ID, api.APIKeyInput{Write: true})
		if err != nil {
			return err
		}
		sup0.APIKey = k.Key
	}
	if sup0.AdminToken, err = d.adminToken(e.ID, issuer, audience); err != nil {
		return err
	}
	d.file.Proveedor = sup0
	if err := d.save(); err != nil {
		return err
	}
	// Its facturas, while the demo company's inbox is empty.
	page, err := b.Received.List(ctx, d.file.EmpresaID, api.RecibidoListParams{ListParams: api.ListParams{Limit: 1}})
	if err != nil || page.TotalCount > 0 {
		return err
	}
	items := []struct {
		nombre string
		precio float64
	}{{"Resma papel carta", 4990}, {"Tóner impresora láser", 38990}, {"Archivador palanca", 2490}}
	for i := range demoSupplierDocs {
		req, err := dte.DecodeRequest(bytes.NewReader([]byte(fmt.Sprintf(`{"tipo_dte":33,"auto_send":true,`+
			`"receptor":{"rut":%q,"razon_social":%q,"giro":%q,"direccion":%q,"comuna":%q,"ciudad":%q},`+
			`"detalle":[{"nombre":%q,"cantidad":%d,"precio":%v}]}`,
			emisor.Rut, emisor.RazonSocial, truncateRunes(emisor.Giro, 40), emisor.Direccion, emisor.Comuna, emisor.Ciudad,
			items[i].nombre, 5*(i+1), items[i].precio))))
		if err != nil {
			return err
		}
		res, _, err := b.Documents.Emit(ctx, e.ID, api.EmitParams{IdempotencyKey: uuid.NewString(), Request: req})
		if err != nil {
			return fmt.Errorf("the demo supplier's factura: %w", err)
		}
		env, err := b.Documents.Intercambio(ctx, e.ID, res.ID)
		if err != nil {
			return err
		}
		if _, err := b.Received.Receive(ctx, d.file.EmpresaID, api.ReceiveParams{XML: env}); err != nil {
			return fmt.Errorf("the demo inbox: %w", err)
		}
	}
	return nil
}

// truncateRunes cuts s to at most n characters.
func truncateRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}
