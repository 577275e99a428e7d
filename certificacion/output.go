package certificacion

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/pdf"
)

// Manifest describes a generated folder: manifest.json.
type Manifest struct {
	RutEmisor string `json:"rut_emisor"`
	// Fecha is the emission date of every document.
	Fecha string        `json:"fecha"`
	Sets  []ManifestSet `json:"sets"`
	// Libros lists the libros (ventas, compras, guías) and the RCOF built
	// from the sets, in upload order; filled by the libros' generator.
	Libros []LibroEntry `json:"libros"`
	// Muestras lists the printed samples in upload order.
	Muestras []string `json:"muestras"`
	// Pendientes are the libro sets whose libro is not in the folder, with
	// the reason.
	Pendientes []string `json:"pendientes,omitempty"`
	// Intercambio lists the answers of the intercambio step, relative to
	// the folder, once written.
	Intercambio []string `json:"intercambio,omitempty"`
}

// ManifestSet is one set of the manifest.
type ManifestSet struct {
	Name           string `json:"name"`
	Kind           string `json:"kind"`
	NumeroAtencion string `json:"numero_atencion"`
	// Envelope is the set's signed envelope, relative to the folder; ""
	// for a set that emits no documents (the libro sets).
	Envelope string         `json:"envelope,omitempty"`
	Cases    []ManifestCase `json:"cases"`
	// Envio is the envelope's upload (Enviar) and last state (Estado).
	Envio *Envio `json:"envio,omitempty"`
}

// ManifestCase is one emitted case.
type ManifestCase struct {
	CaseID     string      `json:"case_id"`
	TipoDTE    dte.TipoDTE `json:"tipo_dte"`
	Folio      int64       `json:"folio"`
	File       string      `json:"file"`
	MontoTotal dte.Decimal `json:"monto_total"`
	// PDFs are the case's printed samples: the document, then its cedible
	// copy where the type has one.
	PDFs []string `json:"pdfs"`
}

// LibroEntry is one libro (or RCOF) file of the folder.
type LibroEntry struct {
	Kind string `json:"kind"`
	File string `json:"file"`
	// Set is the set the libro answers ("SET LIBRO DE VENTAS", or the
	// boleta set for the RCOF) and NumeroAtencion its número de atención.
	Set            string `json:"set,omitempty"`
	NumeroAtencion string `json:"numero_atencion,omitempty"`
	// FolioNotificacion is the FolioNotificacion of File (a libro), and
	// SecEnvio its SecEnvio (the RCOF).
	FolioNotificacion int64 `json:"folio_notificacion,omitempty"`
	SecEnvio          int   `json:"sec_envio,omitempty"`
	// Envio is the libro's upload (Enviar) and last state (Estado).
	Envio *Envio `json:"envio,omitempty"`
	// Intentos are the earlier attempts, oldest first: each file sent
	// before File, with its FolioNotificacion or SecEnvio and what the SII
	// said (Enviar signs a new attempt after a refusal or a lost answer).
	Intentos []LibroIntento `json:"intentos,omitempty"`
}

// LibroIntento is one earlier attempt at sending a libro or the RCOF.
type LibroIntento struct {
	File              string `json:"file"`
	FolioNotificacion int64  `json:"folio_notificacion,omitempty"`
	SecEnvio          int    `json:"sec_envio,omitempty"`
	Envio             *Envio `json:"envio,omitempty"`
}

// Sample is one printed sample.
type Sample struct {
	// Name is the file name, numbered in upload order:
	// "001-T33F1-tributario.pdf", "002-T33F1-cedible.pdf".
	Name string
	Doc  *Doc
	// Cedible marks the cedible copy.
	Cedible bool
	PDF     []byte
}

// HasCedible reports whether a document's printed samples include a
// cedible copy (sii-wave3-notes §7): 33, 34, 43, 46, and the guía 52 when
// it is a sale (IndTraslado 1); a traslado that is not a sale has none, and
// notes and exports never do.
func HasCedible(d *Doc) bool {
	t := d.Emitted.Tipo
	if !t.HasCedible() {
		return false
	}
	if t == 52 {
		return d.Request.IndTraslado != nil && *d.Request.IndTraslado == 1
	}
	return true
}

// Samples renders every document of the result as the SII will see it,
// from the exact signed XML (so the PDF417 carries the very TED the SII
// accepted): one letter-size PDF per document, followed by its cedible
// copy where it has one, numbered in upload order.
func (r *Result) Samples(emisor dte.Emisor) ([]Sample, error) {
	opts := pdf.OptionsFor(emisor)
	var out []Sample
	for _, s := range r.Sets {
		for _, d := range s.Docs {
			doc, err := dte.ParseDTE(d.Emitted.XML)
			if err != nil {
				return nil, caseError(d.Case, "reading the signed document back: %v", err)
			}
			copies := []bool{false}
			if HasCedible(d) {
				copies = append(copies, true)
			}
			for _, ced := range copies {
				o := opts
				o.Cedible = ced
				b, err := pdf.RenderBytes(doc, o)
				if err != nil {
					return nil, caseError(d.Case, "printing: %v", err)
				}
				kind := "tributario"
				if ced {
					kind = "cedible"
				}
				out = append(out, Sample{Name: fmt.Sprintf("%03d-%s-%s.pdf", len(out)+1, d.Emitted.ID, kind), Doc: d, Cedible: ced, PDF: b})
			}
		}
	}
	return out, nil
}

// Folder layout.
const (
	ManifestFile = "manifest.json"
	LeemeFile    = "LEEME.md"
	DocumentsDir = "documentos"
	EnvelopesDir = "envios"
	LibrosDir    = "libros"
	// IntercambioDir receives the answers of the intercambio step
	// ("dtekit certificacion intercambio").
	IntercambioDir = "intercambio"
	SamplesDir     = "muestras"
	filePermission = 0o644
)

// ErrOutputExists is returned by WriteDir when the folder exists and is
// not empty.
var ErrOutputExists = errors.New("certificacion: the output folder exists and is not empty")

// EnvelopeName returns the file name of a set's envelope, numbered in
// upload order: "01-EnvioDTE-BASICO-414175.xml".
func EnvelopeName(n int, s *Set, boleta bool) string {
	root := "EnvioDTE"
	if boleta {
		root = "EnvioBOLETA"
	}
	slug := strings.NewReplacer(" ", "_", "(", "", ")", "").Replace(string(s.Kind))
	if s.Atencion != "" {
		slug += "-" + s.Atencion
	}
	return fmt.Sprintf("%02d-%s-%s.xml", n, root, slug)
}

// LibroName returns the file name of a libro, numbered in upload order:
// "01-LibroVentas-414176.xml", "04-ConsumoFolios.xml".
func LibroName(n int, l *LibroResult) string {
	name := map[LibroKind]string{LibroVentas: "LibroVentas", LibroCompras: "LibroCompras", LibroComprasExentos: "LibroComprasExentos",
		LibroGuias: "LibroGuias", LibroRCOF: "ConsumoFolios"}[l.Kind]
	if l.Set != nil && l.Set.Atencion != "" {
		name += "-" + l.Set.Atencion
	}
	return fmt.Sprintf("%02d-%s.xml", n, name)
}

// WriteDir writes the result into dir, which must be absent or empty: the
// signed documents (documentos/T33F1.xml …), one envelope per set in
// upload order (envios/01-EnvioDTE-BASICO-414175.xml …), the printed
// samples in upload order (muestras/001-T33F1-tributario.pdf …), the
// signed libros and RCOF in upload order (libros/01-LibroVentas-414176.xml
// …), the manifest.json and the LEEME.md that says what to upload and
// declare. The
// folder is written beside dir and renamed into place, so a failure leaves
// no half-written folder. It returns the manifest.
func WriteDir(dir string, r *Result, emisor dte.Emisor) (*Manifest, error) {
	samples, err := r.Samples(emisor)
	if err != nil {
		return nil, err
	}
	m, files, err := r.layout(samples)
	if err != nil {
		return nil, err
	}
	if m.RutEmisor == "" { // a folder of libro sets alone: the emisor says who sends
		rut, err := dte.ParseRUT(emisor.Rut)
		if err != nil {
			return nil, fmt.Errorf("certificacion: emisor rut: %w", err)
		}
		m.RutEmisor = rut.String()
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrOutputExists, dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("certificacion: %w", err)
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("certificacion: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, ".dtekit-certificacion-*")
	if err != nil {
		return nil, fmt.Errorf("certificacion: %w", err)
	}
	defer os.RemoveAll(tmp)
	for _, sub := range []string{DocumentsDir, EnvelopesDir, LibrosDir, SamplesDir} {
		if err := os.Mkdir(filepath.Join(tmp, sub), 0o755); err != nil {
			return nil, fmt.Errorf("certificacion: %w", err)
		}
	}
	mj, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("certificacion: %w", err)
	}
	files = append(files, outFile{ManifestFile, append(mj, '\n')}, outFile{LeemeFile, []byte(Leeme(m))})
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(tmp, filepath.FromSlash(f.name)), f.data, filePermission); err != nil {
			return nil, fmt.Errorf("certificacion: %w", err)
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return nil, fmt.Errorf("certificacion: %w", err)
	}
	// An empty dir is replaced; a non-empty one was refused above.
	if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("certificacion: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return nil, fmt.Errorf("certificacion: %w", err)
	}
	return m, nil
}

type outFile struct {
	name string // slash-separated, relative to the folder
	data []byte
}

// layout names every file of the folder and builds the manifest.
func (r *Result) layout(samples []Sample) (*Manifest, []outFile, error) {
	m := &Manifest{Fecha: r.Fecha, Libros: []LibroEntry{}, Muestras: []string{}}
	pdfs := map[*Doc][]string{}
	var files []outFile
	for _, s := range samples {
		name := SamplesDir + "/" + s.Name
		pdfs[s.Doc] = append(pdfs[s.Doc], name)
		m.Muestras = append(m.Muestras, name)
		files = append(files, outFile{name, s.PDF})
	}
	n := 0
	for _, s := range r.Sets {
		ms := ManifestSet{Name: s.Set.Name, Kind: string(s.Set.Kind), NumeroAtencion: s.Set.Atencion, Cases: []ManifestCase{}}
		if s.Envelope != nil {
			n++
			ms.Envelope = EnvelopesDir + "/" + EnvelopeName(n, s.Set, s.Set.Kind == SetBoleta)
			files = append(files, outFile{ms.Envelope, s.Envelope})
		}
		for _, d := range s.Docs {
			if m.RutEmisor == "" {
				doc, err := dte.ParseDTE(d.Emitted.XML)
				if err != nil {
					return nil, nil, caseError(d.Case, "%v", err)
				}
				m.RutEmisor = doc.Emisor.Rut
			}
			file := DocumentsDir + "/" + d.Emitted.ID + ".xml"
			files = append(files, outFile{file, d.Emitted.XML})
			ms.Cases = append(ms.Cases, ManifestCase{CaseID: d.Case.ID, TipoDTE: d.Emitted.Tipo, Folio: d.Emitted.Folio,
				File: file, MontoTotal: d.Emitted.MontoTotal, PDFs: pdfs[d]})
		}
		m.Sets = append(m.Sets, ms)
	}
	for i, l := range r.Libros {
		e := LibroEntry{Kind: string(l.Kind), File: LibrosDir + "/" + LibroName(i+1, l), FolioNotificacion: l.FolioNotificacion, SecEnvio: l.SecEnvio}
		if l.Set != nil {
			e.Set, e.NumeroAtencion = l.Set.Name, l.Set.Atencion
		}
		m.Libros = append(m.Libros, e)
		files = append(files, outFile{e.File, l.XML})
	}
	for _, p := range r.Pending {
		m.Pendientes = append(m.Pendientes, fmt.Sprintf("%s (número de atención %s): %s", p.Set.Name, orDash(p.Set.Atencion), p.Reason))
	}
	return m, files, nil
}

// Leeme returns the LEEME.md of a folder: what to upload and declare, in
// order, in Spanish (the language of the SII's portal).
func Leeme(m *Manifest) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	w("# Certificación SII: qué subir y declarar, en orden")
	w("")
	w("Emisor %s. Todos los documentos tienen fecha de emisión %s: súbalos ese mismo día (una fecha de más de 3 días da el reparo DTE-1-650).", m.RutEmisor, m.Fecha)
	w("Los sets deben enviarse dentro de 2 meses desde su descarga. No vuelva a descargar el set: una descarga nueva reemplaza la anterior y los envíos se revisan contra la última.")
	w("")
	w("## 1. Subir los envíos")
	w("")
	w("Suba cada archivo en este orden (DTEUpload, o la página de envío de DTE del ambiente de certificación) y anote el número de envío (track id) y la fecha. Cada envío debe quedar **EPR con 0 reparos y 0 rechazos**; si un caso tiene reparos, se vuelve a emitir con un folio nuevo (el mismo folio da rechazo por duplicado).")
	w("")
	w("`dtekit certificacion enviar --dir CARPETA` sube los envíos y los libros en este orden y anota cada track id en manifest.json; `dtekit certificacion estado --dir CARPETA --esperar 10m` consulta su estado hasta que sea final e imprime la tabla para declarar el avance.")
	w("")
	w("| # | set | número de atención | archivo | documentos | track id | fecha |")
	w("|---|---|---|---|---|---|---|")
	n := 0
	for _, s := range m.Sets {
		if s.Envelope == "" {
			continue
		}
		n++
		w("| %d | %s | %s | `%s` | %d | | |", n, s.Name, orDash(s.NumeroAtencion), s.Envelope, len(s.Cases))
	}
	for _, s := range m.Sets {
		if s.Kind == string(SetBoleta) {
			w("")
			w("El set de boletas va en **un solo EnvioBOLETA por DTEUpload** (maullin), no por la API REST de boletas: el revisor del set no ve los envíos REST ni los envíos separados (\"El Documento no está en el envío\"). Luego pida la revisión en la página de certificación de boletas (`?SET=2`) con el track id.")
		}
	}
	w("")
	w("## 2. Declarar avance")
	w("")
	w("Cuando cada envío esté EPR, declare el avance del set de pruebas con el track id y la fecha de cada set (tabla de arriba). El SII responde por correo \"SOK – SET DE PRUEBA CORRECTO\" o \"SRH\" con los reparos.")
	w("")
	w("## 3. Libros")
	w("")
	if len(m.Libros) == 0 && len(m.Pendientes) == 0 {
		w("Este archivo de set no pide libros.")
	}
	if len(m.Libros) > 0 {
		w("Suba cada libro en este orden por DTEUpload; cada uno debe quedar **LOK**, y declare su avance con su track id (el Libro de Ventas, después de que el SET BASICO esté aprobado; la Consumo de Folios va con el set de boletas):")
		w("")
		w("| # | libro | set | número de atención | archivo | track id | fecha |")
		w("|---|---|---|---|---|---|---|")
		for i, l := range m.Libros {
			w("| %d | %s | %s | %s | `%s` | | |", i+1, l.Kind, orDash(l.Set), orDash(l.NumeroAtencion), l.File)
		}
		w("")
		w("El SII identifica cada libro especial por empresa, operación, período y FolioNotificacion, y rechaza un segundo envío TOTAL de la misma identidad (LNC, \"Libro Cerrado\"). Si un libro queda rechazado, o su envío no tuvo respuesta, `dtekit certificacion enviar` lo firma de nuevo con el siguiente FolioNotificacion que ningún libro de la carpeta usó (la Consumo de Folios, con el siguiente SecEnvio), lo deja junto al anterior (…-intento2.xml) y lo envía; declare el track id del último intento.")
	}
	if len(m.Pendientes) > 0 {
		w("")
		w("Libros que no están en esta carpeta (genere la carpeta con el archivo de set completo):")
		w("")
		for _, p := range m.Pendientes {
			w("- %s", p)
		}
	}
	w("")
	w("## 4. Muestras impresas")
	w("")
	w("Suba los PDF en este orden en la página de muestras impresas del SII (un documento por archivo; los tipos con copia cedible llevan el ejemplar tributario y el cedible). Están impresos desde el XML firmado exacto, así que el timbre coincide con el documento que aceptó el SII. El SII agrega los archivos subidos en vez de reemplazarlos: borre los que suba por error.")
	w("")
	for _, p := range m.Muestras {
		w("- `%s`", p)
	}
	w("")
	w("## Casos")
	w("")
	w("| set | caso | tipo | folio | monto total | archivo |")
	w("|---|---|---|---|---|---|")
	for _, s := range m.Sets {
		for _, c := range s.Cases {
			w("| %s | %s | %d | %d | %s | `%s` |", s.Name, c.CaseID, c.TipoDTE, c.Folio, c.MontoTotal, c.File)
		}
	}
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
