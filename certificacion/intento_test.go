package certificacion_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/certificacion"
	"github.com/dtekit/dtekit/internal/oracle"
	"github.com/dtekit/dtekit/libro"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/sii/siitest"
)

// TestEnviarNuevoIntento: a libro sent again takes a new identity, as the
// notes recommend (sii-wave3-notes §3.3: the SII closes a libro's
// identity after one TOTAL, so reusing its FolioNotificacion gives LNC,
// "Libro Cerrado"). The same folder sent twice to one SII: the second
// copies of the libros end LNC and the RCOF RCH (its SecEnvio was
// taken); Enviar then signs new attempts, FolioNotificacion 4, 5 and 6
// (the folder used 1, 2 and 3) and SecEnvio 2, which end LOK and RPR,
// keep every row of the libro, pass the schemas and the signature check,
// and keep the earlier attempts in the manifest.
func TestEnviarNuevoIntento(t *testing.T) {
	res := generateFull(t)
	fake, c := fakeSII(t)
	ctx := context.Background()
	send := func(dir string) *certificacion.Manifest {
		t.Helper()
		if _, err := certificacion.Enviar(ctx, c, dir, func() time.Time { return testAt }); err != nil {
			t.Fatal(err)
		}
		m, err := certificacion.Estado(ctx, c, dir, certificacion.Poll{Rounds: 5})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	first, second := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	for _, d := range []string{first, second} {
		if _, err := certificacion.WriteDir(d, res, creds(t).Emisor); err != nil {
			t.Fatal(err)
		}
	}
	send(first)
	m := send(second)
	// The libros of ventas, compras and guías, and the RCOF.
	if len(m.Libros) != 4 {
		t.Fatalf("%d libros in the manifest, want 4", len(m.Libros))
	}
	for _, l := range m.Libros {
		want := "LNC"
		if l.Kind == string(certificacion.LibroRCOF) {
			want = "RCH"
		}
		if l.Envio == nil || l.Envio.Estado != want {
			t.Fatalf("%s sent again with its identity: %+v, want %s", l.File, l.Envio, want)
		}
	}
	m = send(second)
	wantFolio := map[string]int64{"LIBRO DE VENTAS": 4, "LIBRO DE COMPRAS": 5, "LIBRO DE GUIAS": 6}
	schemas := oracle.Schemas(t)
	for _, l := range m.Libros {
		if l.Envio == nil || (l.Envio.Estado != "LOK" && l.Envio.Estado != "RPR") || len(l.Intentos) != 1 {
			t.Errorf("%s: %+v after %d earlier attempts; want LOK (the RCOF RPR) after one", l.File, l.Envio, len(l.Intentos))
			continue
		}
		old := l.Intentos[0]
		if !strings.HasSuffix(l.File, "-intento2.xml") || strings.TrimSuffix(l.File, "-intento2.xml") != strings.TrimSuffix(old.File, ".xml") ||
			old.Envio == nil || (old.Envio.Estado != "LNC" && old.Envio.Estado != "RCH") {
			t.Errorf("%s: the earlier attempt %+v", l.File, old)
		}
		oldXML, err1 := os.ReadFile(filepath.Join(second, old.File))
		newXML, err2 := os.ReadFile(filepath.Join(second, l.File))
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		switch l.Kind {
		case string(certificacion.LibroRCOF):
			a, _ := libro.ParseConsumo(oldXML)
			b, err := libro.ParseConsumo(newXML)
			if err != nil || l.SecEnvio != 2 || b.Caratula.SecEnvio != 2 || a.Caratula.SecEnvio != 1 || !reflect.DeepEqual(a.Resumen, b.Resumen) {
				t.Errorf("RCOF: SecEnvio %d in the manifest, %+v in the file (was %+v): %v", l.SecEnvio, b.Caratula, a.Caratula, err)
			}
		case string(certificacion.LibroGuias):
			a, _ := libro.ParseGuia(oldXML)
			b, err := libro.ParseGuia(newXML)
			if err != nil || l.FolioNotificacion != wantFolio[l.Kind] || b.Caratula.FolioNotificacion != wantFolio[l.Kind] ||
				!reflect.DeepEqual(a.Detalle, b.Detalle) || !reflect.DeepEqual(a.ResumenPeriodo, b.ResumenPeriodo) {
				t.Errorf("%s: FolioNotificacion %d / %d, want %d; rows kept: %v", l.File, l.FolioNotificacion, b.Caratula.FolioNotificacion, wantFolio[l.Kind], err)
			}
		default:
			a, _ := libro.Parse(oldXML)
			b, err := libro.Parse(newXML)
			if err != nil || l.FolioNotificacion != wantFolio[l.Kind] || b.Caratula.FolioNotificacion != wantFolio[l.Kind] ||
				!reflect.DeepEqual(a.Detalle, b.Detalle) || !reflect.DeepEqual(a.ResumenPeriodo, b.ResumenPeriodo) {
				t.Errorf("%s: FolioNotificacion %d / %d, want %d; rows kept: %v", l.File, l.FolioNotificacion, b.Caratula.FolioNotificacion, wantFolio[l.Kind], err)
			}
		}
		xsd := map[string]string{"CONSUMO DE FOLIOS": "ConsumoFolio_v10.xsd", "LIBRO DE GUIAS": "LibroGuia_v10.xsd"}[l.Kind]
		if xsd == "" {
			xsd = "LibroCV_v10.xsd"
		}
		p := filepath.Join(second, l.File)
		oracle.Run(t, "xmllint", "--noout", "--schema", filepath.Join(schemas, xsd), p)
		oracle.Run(t, "xmlsec1", "--verify", "--id-attr:ID", "EnvioLibro", "--id-attr:ID", "DocumentoConsumoFolios",
			"--enabled-key-data", "key-value", "--enabled-key-data", "rsa", "--node-xpath", "/*/*[local-name()='Signature']", p)
	}
	// Approved now: a further run sends nothing.
	n := len(fake.Requests(siitest.Upload))
	send(second)
	if got := len(fake.Requests(siitest.Upload)); got != n {
		t.Errorf("a run after every libro was approved uploaded %d files", got-n)
	}
}

// TestEnviarRespuestaPerdida: the SII keeps a libro but its answer is
// lost. The next run must not send that identity again (LNC): it signs a
// new attempt with the next FolioNotificacion, which ends LOK.
func TestEnviarRespuestaPerdida(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "kit")
	if _, err := certificacion.WriteDir(dir, generate(t, "003-compras.txt"), creds(t).Emisor); err != nil {
		t.Fatal(err)
	}
	fake, c := fakeSII(t)
	quick, err := sii.New(sii.Config{Endpoints: fake.Endpoints(), Certificate: creds(t).Cert, Clock: func() time.Time { return testAt.Add(time.Minute) },
		Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	fake.Inject(siitest.Upload, siitest.Fault{Kind: siitest.FaultAcceptThenHang})
	ctx := context.Background()
	if _, err := certificacion.Enviar(ctx, quick, dir, nil); err == nil {
		t.Fatal("the lost answer was not reported")
	}
	m, err := certificacion.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if e := m.Libros[0].Envio; e == nil || !e.Enviando || e.TrackID != "" {
		t.Fatalf("after a lost answer the manifest says %+v, want the mark of an upload under way", e)
	}
	if len(fake.Envelopes()) != 1 {
		t.Fatalf("the fake kept %d files, want the one whose answer was lost", len(fake.Envelopes()))
	}
	if _, err := certificacion.Enviar(ctx, c, dir, nil); err != nil {
		t.Fatal(err)
	}
	m, err = certificacion.Estado(ctx, c, dir, certificacion.Poll{Rounds: 5})
	if err != nil {
		t.Fatal(err)
	}
	l := m.Libros[0]
	if l.Envio == nil || l.Envio.Estado != "LOK" || l.FolioNotificacion != 3 || len(l.Intentos) != 1 || !l.Intentos[0].Envio.Enviando || l.Intentos[0].FolioNotificacion != 2 {
		t.Errorf("the libro after the lost answer: %+v", l)
	}
	if tabla := certificacion.Tabla(m); strings.Contains(tabla, "⚠") {
		t.Errorf("the table warns:\n%s", tabla)
	}
}
