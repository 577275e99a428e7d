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
	// Advertencias are the set file's lines the kit did not understand and
	// left aside (Plan.Warnings), each naming its line.
	Advertencias []string `json:"advertencias,omitempty"`
	// NoGenerados are the sets of the file the kit does not know, with the
	// reason (Plan.Skipped).
	NoGenerados []string `json:"no_generados,omitempty"`
	// FoliosSaltados says which folios earlier runs used and where this
	// folder starts (Result.Saltados).
	FoliosSaltados []string `json:"folios_saltados,omitempty"`
	// Simulacion marks the folder of the simulación.
	Simulacion bool `json:"simulacion,omitempty"`
	// Invocacion is how the folder was made, for the commands LEEME.md
	// gives; nil prints placeholders.
	Invocacion *Invocacion `json:"invocacion,omitempty"`
}

// Invocacion is the files "dtekit certificacion generar" (or simulacion)
// was given, as absolute paths, so that LEEME.md's commands run as they
// are. The certificate's password is never written: only the file that
// holds it, when one was given.
type Invocacion struct {
	Carpeta          string   `json:"carpeta"`
	Set              string   `json:"set,omitempty"`
	Emisor           string   `json:"emisor,omitempty"`
	Cert             string   `json:"cert,omitempty"`
	CertPasswordFile string   `json:"cert_password_file,omitempty"`
	CAFs             []string `json:"cafs,omitempty"`
	Trust            []string `json:"trust,omitempty"`
	URLBoletas       string   `json:"url_boletas,omitempty"`
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
	opts.URLBoletas = r.URLBoletas
	var out []Sample
	for _, s := range r.Sets {
		if s.Set.Kind == SetFacturaGuias {
			continue // not a case of the set: no sample is asked for it
		}
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
	// LeemeBoletasFile is the short guide of the boleta certification,
	// written when the folder has the boleta set.
	LeemeBoletasFile = "LEEME-BOLETAS.md"
	DocumentsDir     = "documentos"
	EnvelopesDir     = "envios"
	LibrosDir        = "libros"
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
	return WriteDirWith(dir, r, emisor, nil)
}

// WriteDirWith is WriteDir recording in the manifest how the folder was
// made (inv, nil for none), which LEEME.md's commands use.
func WriteDirWith(dir string, r *Result, emisor dte.Emisor, inv *Invocacion) (*Manifest, error) {
	samples, err := r.Samples(emisor)
	if err != nil {
		return nil, err
	}
	m, files, err := r.layout(samples)
	if err != nil {
		return nil, err
	}
	m.Invocacion = inv
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
	if g := LeemeBoletas(m); g != "" {
		files = append(files, outFile{LeemeBoletasFile, []byte(g)})
	}
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
	if r.Plan != nil {
		for _, w := range r.Plan.Warnings {
			m.Advertencias = append(m.Advertencias, w.String())
		}
		for _, s := range r.Plan.Skipped {
			m.NoGenerados = append(m.NoGenerados, s.String())
		}
	}
	for _, f := range r.Saltados {
		m.FoliosSaltados = append(m.FoliosSaltados, f.String())
	}
	for _, s := range r.Sets {
		m.Simulacion = m.Simulacion || s.Set.Kind == SetSimulacion
	}
	return m, files, nil
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
