package main

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
)

// TestAdminEmpresaCommands: "admin empresa update|show|list" and the
// refusals of "admin caf upload", in process. An update changes only the
// flags given and is refused whole (nothing kept, the logo neither) when
// a field is wrong; show and list print the company as JSON, list
// filtered by --ambiente.
func TestAdminEmpresaCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("opens a SQLite database")
	}
	t.Parallel()
	data := filepath.Join(t.TempDir(), "data")
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	admin := func(args ...string) (int, string, string) {
		t.Helper()
		return adminRun(t, append(append([]string{"admin"}, args...), "--data", data)...)
	}
	code, out, stderr := admin("empresa", "create", "--rut", "76543210-3", "--razon-social", "Mi Empresa SpA", "--giro", "Comercio",
		"--direccion", "Calle 1", "--comuna", "Santiago", "--ciudad", "Santiago", "--fecha-resolucion", "2024-01-01", "--acteco", "620200")
	var created struct{ ID string }
	if code != exitOK || json.Unmarshal([]byte(out), &created) != nil {
		t.Fatalf("empresa create: %d %s %s", code, out, stderr)
	}
	type empresa struct {
		ID, Rut, Ambiente, Giro string
		RazonSocial             string `json:"razon_social"`
		OficinaSII              string `json:"oficina_sii"`
		InboundEmail            string `json:"inbound_email"`
		Acteco                  []int
	}
	show := func() empresa {
		t.Helper()
		code, out, stderr := admin("empresa", "show", "--empresa", "76.543.210-3")
		var e empresa
		if code != exitOK || json.Unmarshal([]byte(out), &e) != nil {
			t.Fatalf("empresa show: %d %s %s", code, out, stderr)
		}
		return e
	}

	// Only the flags given change.
	code, out, stderr = admin("empresa", "update", "--empresa", "76543210-3", "--oficina-sii", "SANTIAGO ORIENTE",
		"--inbound-email", "dte@miempresa.cl", "--acteco", "620200,461000")
	if code != exitOK {
		t.Fatalf("empresa update: %d %s %s", code, out, stderr)
	}
	e := show()
	if e.ID != created.ID || e.OficinaSII != "SANTIAGO ORIENTE" || e.InboundEmail != "dte@miempresa.cl" ||
		len(e.Acteco) != 2 || e.RazonSocial != "Mi Empresa SpA" || e.Giro != "Comercio" || e.Ambiente != "certificacion" {
		t.Errorf("after update: %+v", e)
	}

	// A wrong field refuses the whole update, naming the field; the
	// logo given with it is not installed either.
	logoPath := filepath.Join(t.TempDir(), "logo.png")
	var logo bytes.Buffer
	png.Encode(&logo, image.NewRGBA(image.Rect(0, 0, 40, 20)))
	os.WriteFile(logoPath, logo.Bytes(), 0o600)
	code, _, stderr = admin("empresa", "update", "--empresa", "76543210-3", "--giro", "Otro", "--inbound-email", "not an address", "--logo", logoPath)
	if code != exitFail || !strings.Contains(stderr, "inbound_email") || !strings.Contains(stderr, "VALIDATION_ERROR") {
		t.Errorf("update with a bad e-mail: %d %s", code, stderr)
	}
	if e := show(); e.Giro != "Comercio" || e.InboundEmail != "dte@miempresa.cl" {
		t.Errorf("a refused update changed the company: %+v", e)
	}
	hasLogo := func() bool {
		t.Helper()
		db := adminDB{data: data}
		be, err := db.open(context.Background(), &cmdEnv{stderr: &bytes.Buffer{}, getenv: func(string) string { return "" }})
		if err != nil {
			t.Fatal(err)
		}
		defer be.st.Close()
		_, err = be.bill.Company.Logo(context.Background(), created.ID)
		return err == nil
	}
	if hasLogo() {
		t.Error("the logo of a refused update was installed")
	}
	notImage := filepath.Join(t.TempDir(), "logo.txt")
	os.WriteFile(notImage, []byte("not an image"), 0o600)
	if code, _, stderr := admin("empresa", "update", "--empresa", "76543210-3", "--giro", "Otro", "--logo", notImage); code != exitFail || !strings.Contains(stderr, "PNG") {
		t.Errorf("update with a file that is no image: %d %s", code, stderr)
	}
	if e := show(); e.Giro != "Comercio" {
		t.Errorf("an update refused for its logo changed the company: %+v", e)
	}
	if code, _, stderr := admin("empresa", "update", "--empresa", "76543210-3", "--logo", logoPath); code != exitOK || !hasLogo() {
		t.Errorf("update --logo: %d %s", code, stderr)
	}
	if code, _, stderr := admin("empresa", "update", "--empresa", "76543210-3", "--acteco", "x"); code != exitUsage || !strings.Contains(stderr, "--acteco") {
		t.Errorf("update --acteco x: %d %s", code, stderr)
	}
	if code, _, stderr := admin("empresa", "update", "--empresa", "76543210-3", "--ambiente", "pruebas"); code != exitFail || !strings.Contains(stderr, "ambiente") {
		t.Errorf("update --ambiente pruebas: %d %s", code, stderr)
	}
	if code, _, stderr := admin("empresa", "show", "--empresa", "11111111-1"); code != exitFail || !strings.Contains(stderr, "no company with RUT 11111111-1") {
		t.Errorf("show of an unknown company: %d %s", code, stderr)
	}
	if code, _, stderr := admin("empresa", "show"); code != exitUsage || !strings.Contains(stderr, "--empresa") {
		t.Errorf("show without --empresa: %d %s", code, stderr)
	}

	// list, whole and by ambiente.
	for _, c := range []struct {
		args []string
		n    int
	}{{nil, 1}, {[]string{"--ambiente", "certificacion"}, 1}, {[]string{"--ambiente", "produccion"}, 0}} {
		code, out, stderr := admin(append([]string{"empresa", "list"}, c.args...)...)
		var list []empresa
		if code != exitOK || json.Unmarshal([]byte(out), &list) != nil || len(list) != c.n || (c.n == 1 && list[0].ID != created.ID) {
			t.Errorf("empresa list %v: %d %s %s", c.args, code, out, stderr)
		}
	}
	if code, _, stderr := admin("empresa", "list", "--ambiente", "pruebas"); code != exitFail || !strings.Contains(stderr, `ambiente "pruebas"`) {
		t.Errorf("list --ambiente pruebas: %d %s", code, stderr)
	}

	// caf upload: one file, readable, a CAF; a --trust key must be one.
	if code, _, stderr := admin("caf", "upload", "--empresa", "76543210-3"); code != exitUsage || !strings.Contains(stderr, "one CAF file") {
		t.Errorf("caf upload without a file: %d %s", code, stderr)
	}
	missing := filepath.Join(t.TempDir(), "nothing.xml")
	if code, _, stderr := admin("caf", "upload", "--empresa", "76543210-3", missing); code != exitFail || !strings.Contains(stderr, "nothing.xml") {
		t.Errorf("caf upload of a missing file: %d %s", code, stderr)
	}
	if code, _, stderr := admin("caf", "upload", "--empresa", "76543210-3", notImage); code != exitFail || !strings.Contains(stderr, "INVALID_CAF") {
		t.Errorf("caf upload of a file that is no CAF: %d %s", code, stderr)
	}
	if code, _, stderr := admin("caf", "upload", "--empresa", "76543210-3", "--trust", "0="+logoPath, notImage); code != exitFail || !strings.Contains(stderr, "IDK") {
		t.Errorf("caf upload --trust 0=…: %d %s", code, stderr)
	}
	if code, _, stderr := admin("caf", "upload", "--empresa", "76543210-3", "--trust", logoPath, notImage); code != exitFail || !strings.Contains(stderr, codeInvalidTrust) {
		t.Errorf("caf upload --trust with a file that is no key: %d %s", code, stderr)
	}
}

// TestServeTrustsDemoCAFs: the CAFs "dtekit demo" makes load into a
// server given their authority's key: "admin caf upload --trust" takes
// one (and refuses it without the key), "serve --trust" takes another over
// the API, and the server emits with them.
func TestServeTrustsDemoCAFs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	wd, _ := newcomerDemo(t)
	demoDir := filepath.Join(wd, "dtekit-demo")
	pem := filepath.Join(demoDir, "test-sii-authority.pub.pem")
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	os.MkdirAll(data, 0o700)
	env := []string{"DTEKIT_KEK=", "DTEKIT_DATABASE_URL="}
	admin := func(code int, args ...string) result {
		t.Helper()
		res := runBin(t, dir, env, append(append([]string{"admin"}, args...), "--data", data)...)
		if res.code != code {
			t.Fatalf("dtekit admin %v: exit %d, want %d\n%s\n%s", args, res.code, code, res.stdout, res.stderr)
		}
		return res
	}
	admin(exitOK, "empresa", "create", "--rut", dtetest.EmisorRUT, "--razon-social", "Comercial Los Andes SpA", "--giro", "Comercio",
		"--direccion", "Calle 1", "--comuna", "Santiago", "--ciudad", "Santiago", "--fecha-resolucion", "2014-08-22", "--acteco", "620200")
	caf33 := filepath.Join(demoDir, "CAF-33.xml")
	res := admin(exitFail, "caf", "upload", "--empresa", dtetest.EmisorRUT, caf33)
	if !strings.Contains(res.stderr, "CAF_SIGNATURE") {
		t.Errorf("a demo CAF without its authority's key: %s", res.stderr)
	}
	res = admin(exitOK, "caf", "upload", "--empresa", dtetest.EmisorRUT, "--trust", pem, caf33)
	if !strings.Contains(res.stdout, `"tipo_dte": 33`) {
		t.Errorf("caf upload --trust: %s", res.stdout)
	}
	admin(exitOK, "certificado", "upload", "--empresa", dtetest.EmisorRUT, "--cert", filepath.Join(demoDir, "cert.p12"),
		"--cert-password-file", filepath.Join(demoDir, "cert-password.txt"), "--rut-firmante", dtetest.SignerRUT)
	var k struct{ Key string }
	json.Unmarshal([]byte(admin(exitOK, "apikey", "create", "--empresa", dtetest.EmisorRUT, "--write").stdout), &k)

	p := startServeArgs(t, builtBinary(t), []string{"--data", data, "--trust", pem}, env...)
	api := p.base + "/api/v1/billing"
	hc := &http.Client{Timeout: 30 * time.Second}
	caf34, err := os.ReadFile(filepath.Join(demoDir, "CAF-34.xml"))
	if err != nil {
		t.Fatal(err)
	}
	// The file is ISO-8859-1; a JSON string holds its characters.
	text := make([]rune, len(caf34))
	for i, b := range caf34 {
		text[i] = rune(b)
	}
	body, _ := json.Marshal(map[string]any{"tipo_dte": dte.FacturaNoAfectaOExenta, "caf_xml": string(text)})
	if st, b := call(t, hc, "POST", api+"/caf", k.Key, body); st != http.StatusCreated {
		t.Errorf("POST /caf of a demo CAF to serve --trust: %d %s", st, b)
	}
	hold := strings.Replace(demoFactura, `"tipo_dte":33,`, `"tipo_dte":33,"auto_send":false,`, 1)
	if st, b := call(t, hc, "POST", api+"/dte", k.Key, []byte(hold)); st != http.StatusCreated || !strings.Contains(string(b), `"folio":1`) {
		t.Errorf("emission with the demo CAF: %d %s", st, b)
	}
	p.stop(t)
}
