package certificacion

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/libro"
	"github.com/dtekit/dtekit/signer"
	"github.com/dtekit/dtekit/sii"
)

// Envio is what the SII said of one uploaded file: its track id, when it
// was uploaded and the last state read.
type Envio struct {
	TrackID string `json:"track_id"`
	// Fecha is the upload's instant, RFC 3339 in Chile's time.
	Fecha string `json:"fecha"`
	// Boleta marks an EnvioBOLETA sent through the boleta REST API, whose
	// state is asked there. Enviar sends it through DTEUpload (Boleta
	// false); the field reads folders sent otherwise.
	Boleta bool `json:"boleta,omitempty"`
	// Estado and Glosa are the SII's last state ("EPR", "LOK", …) and its
	// text; NumAtencion the SII's attention number, when it gave one.
	Estado      string `json:"estado,omitempty"`
	Glosa       string `json:"glosa,omitempty"`
	NumAtencion string `json:"num_atencion,omitempty"`
	// Informados, Aceptados, Reparos and Rechazados are an envelope's
	// document counts once processed (EPR).
	Informados int `json:"informados,omitempty"`
	Aceptados  int `json:"aceptados,omitempty"`
	Reparos    int `json:"reparos,omitempty"`
	Rechazados int `json:"rechazados,omitempty"`
	// Final is true once Estado is final.
	Final bool `json:"final"`
	// Enviando marks a libro's upload under way (no track id yet): if it
	// stays, the answer was lost and the SII may have the file.
	Enviando bool `json:"enviando,omitempty"`
}

// Aprobado reports whether the state is the one the certification needs:
// an envelope EPR with every document accepted (0 reparos, 0 rechazos), or
// a libro LOK. (The RCOF of a day from 2022-08 on ends RPR with reparo 250,
// "no es obligatorio", which the boleta certification accepts: see
// Upload.Aprobado, which knows which file is the RCOF.)
func (e *Envio) Aprobado() bool {
	switch e.Estado {
	case "EPR":
		return e.Reparos == 0 && e.Rechazados == 0 && e.Aceptados == e.Informados
	case "LOK":
		return true
	}
	return false
}

// ReadManifest reads dir's manifest.json.
func ReadManifest(dir string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return nil, fmt.Errorf("certificacion: %w", err)
	}
	m, err := parseManifest(b)
	if err != nil {
		return nil, fmt.Errorf("certificacion: %s: %w", filepath.Join(dir, ManifestFile), err)
	}
	return m, nil
}

// parseManifest reads manifest.json's bytes: a rut_emisor, and paths
// inside the folder only.
func parseManifest(b []byte) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	if m.RutEmisor == "" {
		return nil, fmt.Errorf("no rut_emisor")
	}
	if err := m.checkPaths(); err != nil {
		return nil, err
	}
	return &m, nil
}

// checkPaths refuses a manifest naming a file outside its folder: every
// path it holds is relative, with slashes, and stays inside the folder
// (no "..", no absolute path, no volume). A manifest is outside input: a
// folder received from someone else must not make Enviar read or write
// elsewhere.
func (m *Manifest) checkPaths() error {
	check := func(field, p string) error {
		if p == "" || strings.ContainsRune(p, '\\') || !filepath.IsLocal(filepath.FromSlash(p)) {
			return fmt.Errorf("%s %q is not a path inside the folder", field, p)
		}
		return nil
	}
	for i, s := range m.Sets {
		if s.Envelope != "" {
			if err := check(fmt.Sprintf("sets[%d].envelope", i), s.Envelope); err != nil {
				return err
			}
		}
		for j, c := range s.Cases {
			if err := check(fmt.Sprintf("sets[%d].cases[%d].file", i, j), c.File); err != nil {
				return err
			}
			for k, p := range c.PDFs {
				if err := check(fmt.Sprintf("sets[%d].cases[%d].pdfs[%d]", i, j, k), p); err != nil {
					return err
				}
			}
		}
	}
	for i, l := range m.Libros {
		if err := check(fmt.Sprintf("libros[%d].file", i), l.File); err != nil {
			return err
		}
		for j, a := range l.Intentos {
			if err := check(fmt.Sprintf("libros[%d].intentos[%d].file", i, j), a.File); err != nil {
				return err
			}
		}
	}
	for i, p := range m.Muestras {
		if err := check(fmt.Sprintf("muestras[%d]", i), p); err != nil {
			return err
		}
	}
	for i, p := range m.Intercambio {
		if err := check(fmt.Sprintf("intercambio[%d]", i), p); err != nil {
			return err
		}
	}
	return nil
}

// readLocal reads the file rel (a manifest's path, checked by
// checkPaths) inside dir, through an os.Root: a symbolic link that leads
// out of the folder is refused too.
func readLocal(dir, rel string) ([]byte, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("certificacion: %w", err)
	}
	defer root.Close()
	data, err := root.ReadFile(filepath.FromSlash(rel))
	if err != nil {
		return nil, fmt.Errorf("certificacion: %w", err)
	}
	return data, nil
}

// SaveManifest writes m as dir's manifest.json, through a temporary file
// renamed into place so a reader never sees half of it, and renders the
// folder's guides (LEEME.md, LEEME-BOLETAS.md) again from it, so that they
// show the track ids and states it holds.
func SaveManifest(dir string, m *Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("certificacion: %w", err)
	}
	if err := writeFileAtomic(filepath.Join(dir, ManifestFile), append(b, '\n')); err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(dir, LeemeFile), []byte(Leeme(m))); err != nil {
		return err
	}
	if g := LeemeBoletas(m); g != "" {
		return writeFileAtomic(filepath.Join(dir, LeemeBoletasFile), []byte(g))
	}
	return nil
}

// writeFileAtomic writes data to path through a temporary file in the
// same folder renamed into place, so a reader never sees half of it.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("certificacion: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("certificacion: %w", err)
	}
	// On disk before the rename: the manifest's marks (an upload under
	// way, a track id) must survive a power loss.
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("certificacion: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("certificacion: %w", err)
	}
	if err := os.Chmod(tmp.Name(), filePermission); err != nil {
		return fmt.Errorf("certificacion: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("certificacion: %w", err)
	}
	return nil
}

// Upload is one file of the folder to send, in manifest order.
type Upload struct {
	// Set is the set's name ("SET BASICO") or the libro's kind; Atencion
	// its número de atención.
	Set, Atencion string
	// File is relative to the folder.
	File string
	// Libro marks a libro or the RCOF, RCOF the RCOF.
	Libro, RCOF bool
	// Envio is the manifest's record, nil until uploaded.
	Envio **Envio
	// libro is the manifest's entry of a libro or the RCOF.
	libro *LibroEntry
}

// Aprobado reports whether the upload's last state is the one the
// certification needs: an envelope EPR with every document accepted (0
// reparos, 0 rechazos), a libro LOK, the RCOF EPR or RPR (for a day from
// 2022-08 on the SII answers every RCOF with reparo 250, "no es
// obligatorio", and the boleta certification accepts it:
// sii-wave3-notes §4.3).
func (u Upload) Aprobado() bool {
	e := *u.Envio
	if e == nil {
		return false
	}
	if u.RCOF {
		return e.Final && (e.Estado == "EPR" || e.Estado == "RPR")
	}
	if u.Libro {
		return e.Estado == "LOK"
	}
	return e.Aprobado()
}

// Uploads lists the folder's files to send in order: every set's envelope,
// then every libro.
func (m *Manifest) Uploads() []Upload {
	var out []Upload
	for i := range m.Sets {
		s := &m.Sets[i]
		if s.Envelope != "" {
			out = append(out, Upload{Set: s.Name, Atencion: s.NumeroAtencion, File: s.Envelope, Envio: &s.Envio})
		}
	}
	for i := range m.Libros {
		l := &m.Libros[i]
		name := l.Kind
		if l.Set != "" {
			name = l.Set
		}
		out = append(out, Upload{Set: name, Atencion: l.NumeroAtencion, File: l.File, Libro: true, RCOF: l.Kind == string(LibroRCOF), Envio: &l.Envio, libro: l})
	}
	return out
}

// UploadRefusedError is an upload the SII refused, with its status.
type UploadRefusedError struct {
	// File is relative to the folder; Status and Glosa the SII's answer
	// (STATUS 7 "schema", a boleta's estado …).
	File, Status, Glosa string
}

// Error names the file and the SII's answer.
func (e *UploadRefusedError) Error() string {
	return fmt.Sprintf("certificacion: the SII refused %s: status %s, %s", e.File, e.Status, e.Glosa)
}

// Enviar uploads every envelope and libro of the folder dir that has no
// track id yet, in manifest order, for the manifest's company, and records
// each track id in manifest.json as soon as the SII gives it (so a second
// run sends only what is left). Everything goes through DTEUpload
// (sii.Client.UploadClassic), the boleta set's EnvioBOLETA too: the SII's
// reviewer of the boleta set sees only the envelopes uploaded there, not
// those of the boleta REST API (sii-wave3-notes §6.4). An upload the SII
// refuses stops the run with an *UploadRefusedError naming the file and
// the SII's status.
//
// A libro is sent again under a new identity: the SII knows an ESPECIAL
// libro by its company, operation, period and FolioNotificacion, and
// refuses a second TOTAL of one identity ("Libro Cerrado", LNC), so every
// attempt takes a FolioNotificacion no libro of the folder used yet
// (sii-wave3-notes §3.3: "auto-increment FolioNotificacion on retry"),
// and the RCOF the next SecEnvio (§4.5). Enviar signs that new attempt,
// with the client's certificate, when the last one ended in a final state
// other than LOK (the RCOF's: EPR or RPR), was refused at upload, or got
// no answer (the SII may have kept it: a mark is written in manifest.json
// before each libro's upload); the earlier file and its state stay in the
// entry's Intentos. Envelopes are not sent again once they have a track
// id: a refused case is emitted again with a new folio.
func Enviar(ctx context.Context, c *sii.Client, dir string, now func() time.Time) (*Manifest, error) {
	if now == nil {
		now = time.Now
	}
	m, err := ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	stamp := func() string { return now().In(dte.SantiagoLocation()).Format(time.RFC3339) }
	for _, u := range m.Uploads() {
		e := *u.Envio
		switch {
		case e == nil:
		case u.libro != nil && (e.TrackID == "" || (e.Final && !u.Aprobado())):
			if err := nuevoIntento(dir, m, u.libro, c.Certificate(), now()); err != nil {
				return m, err
			}
			if err := SaveManifest(dir, m); err != nil {
				return m, err
			}
		case e.TrackID != "":
			continue
		}
		file := u.File
		if u.libro != nil {
			file = u.libro.File
			// The mark of an upload under way: if its answer is lost, the
			// next run sends a new attempt rather than this identity again.
			*u.Envio = &Envio{Fecha: stamp(), Enviando: true}
			if err := SaveManifest(dir, m); err != nil {
				return m, err
			}
		}
		data, err := readLocal(dir, file)
		if err != nil {
			return m, err
		}
		res, err := c.UploadClassic(ctx, m.RutEmisor, data)
		if err != nil {
			return m, fmt.Errorf("certificacion: uploading %s: %w", file, err)
		}
		if !res.Accepted() {
			o := sii.UploadOutcome(res)
			if u.libro != nil {
				*u.Envio = &Envio{Fecha: stamp(), Estado: o.Code, Glosa: o.Glosa, Final: true}
				if err := SaveManifest(dir, m); err != nil {
					return m, err
				}
			}
			return m, &UploadRefusedError{File: file, Status: o.Code, Glosa: o.Glosa}
		}
		*u.Envio = &Envio{TrackID: res.TrackID, Fecha: stamp(), Boleta: res.Boleta}
		if err := SaveManifest(dir, m); err != nil {
			return m, err
		}
	}
	return m, nil
}

// nuevoIntento signs the libro (or RCOF) of entry l again as a new
// attempt, at, with cert: the next FolioNotificacion above every one the
// folder's libros used (the RCOF: the next SecEnvio), RutEnvia the
// certificate's holder, everything else as it was. The new file is
// written beside the old one ("…-intento2.xml") and becomes l.File; the
// old file and its state move to l.Intentos. The caller saves the
// manifest.
func nuevoIntento(dir string, m *Manifest, l *LibroEntry, cert *signer.Certificate, at time.Time) error {
	if cert == nil {
		return fmt.Errorf("certificacion: %s must be signed again for a new attempt, and the client has no certificate", l.File)
	}
	data, err := readLocal(dir, l.File)
	if err != nil {
		return err
	}
	bad := func(err error) error {
		return fmt.Errorf("certificacion: reading %s for a new attempt: %w", l.File, err)
	}
	root, err := dte.RootName(data)
	if err != nil {
		return bad(err)
	}
	next := int64(0)
	for _, o := range m.Libros {
		next = max(next, o.FolioNotificacion)
		for _, i := range o.Intentos {
			next = max(next, i.FolioNotificacion)
		}
	}
	sec := l.SecEnvio
	for _, i := range l.Intentos {
		sec = max(sec, i.SecEnvio)
	}
	var signed []byte
	switch root {
	case libro.RootCompraVenta:
		lb, err := libro.Parse(data)
		if err != nil {
			return bad(err)
		}
		next = max(next, lb.Caratula.FolioNotificacion) + 1
		lb.Caratula.FolioNotificacion, lb.Caratula.RutEnvia, lb.TmstFirma = next, "", at
		if signed, err = lb.Sign(cert); err != nil {
			return bad(err)
		}
	case libro.RootGuia:
		lg, err := libro.ParseGuia(data)
		if err != nil {
			return bad(err)
		}
		next = max(next, lg.Caratula.FolioNotificacion) + 1
		lg.Caratula.FolioNotificacion, lg.Caratula.RutEnvia, lg.TmstFirma = next, "", at
		if signed, err = lg.Sign(cert); err != nil {
			return bad(err)
		}
	case libro.RootConsumo:
		rc, err := libro.ParseConsumo(data)
		if err != nil {
			return bad(err)
		}
		sec = max(sec, rc.Caratula.SecEnvio) + 1
		if sec > 999 {
			return fmt.Errorf("certificacion: %s: SecEnvio %d is past 999, the most the RCOF takes", l.File, sec)
		}
		rc.Caratula.SecEnvio, rc.Caratula.RutEnvia, rc.Caratula.TmstFirmaEnv = sec, "", at
		if signed, err = rc.Sign(cert); err != nil {
			return bad(err)
		}
	default:
		return fmt.Errorf("certificacion: %s is a <%s>, not a libro or an RCOF", l.File, root)
	}
	base := strings.TrimSuffix(l.File, ".xml")
	if i := strings.LastIndex(base, "-intento"); i >= 0 {
		base = base[:i]
	}
	file := fmt.Sprintf("%s-intento%d.xml", base, len(l.Intentos)+2)
	if err := writeFileAtomic(filepath.Join(dir, filepath.FromSlash(file)), signed); err != nil {
		return err
	}
	l.Intentos = append(l.Intentos, LibroIntento{File: l.File, FolioNotificacion: l.FolioNotificacion, SecEnvio: l.SecEnvio, Envio: l.Envio})
	l.File, l.Envio = file, nil
	if root == libro.RootConsumo {
		l.SecEnvio = sec
	} else {
		l.FolioNotificacion = next
	}
	return nil
}

// Poll bounds Estado's polling.
type Poll struct {
	// Interval between rounds of queries (0: none, for tests).
	Interval time.Duration
	// Rounds bounds the rounds (0 means one round: ask once).
	Rounds int
}

// Estado asks the SII for the state of every uploaded file of the folder
// whose state is not final yet, round after round until all are final or
// poll's rounds run out, and records each answer in manifest.json. It
// returns the manifest; a file not yet uploaded is left as it is.
func Estado(ctx context.Context, c *sii.Client, dir string, poll Poll) (*Manifest, error) {
	m, err := ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	rounds := max(poll.Rounds, 1)
	for round := 0; round < rounds; round++ {
		if round > 0 && poll.Interval > 0 {
			t := time.NewTimer(poll.Interval)
			select {
			case <-ctx.Done():
				t.Stop()
				return m, ctx.Err()
			case <-t.C:
			}
		}
		pending := 0
		for _, u := range m.Uploads() {
			e := *u.Envio
			if e == nil || e.TrackID == "" || e.Final {
				continue
			}
			var s *sii.EnvelopeStatus
			if e.Boleta {
				s, err = c.BoletaEnvelopeStatus(ctx, m.RutEmisor, e.TrackID)
			} else {
				s, err = c.EnvelopeStatus(ctx, m.RutEmisor, e.TrackID)
			}
			if err != nil {
				return m, fmt.Errorf("certificacion: the state of %s (track id %s): %w", u.File, e.TrackID, err)
			}
			record(e, s, u.Libro)
			if !e.Final {
				pending++
			}
		}
		if err := SaveManifest(dir, m); err != nil {
			return m, err
		}
		if pending == 0 {
			break
		}
	}
	return m, nil
}

// record copies a status answer into e and decides whether it is final:
// a libro's L-states other than LSO, and an envelope's (or the RCOF's)
// final contract states (sii.EnvelopeOutcome).
func record(e *Envio, s *sii.EnvelopeStatus, libro bool) {
	e.Estado, e.Glosa = s.Estado, s.Glosa
	if s.NumAtencion != "" {
		e.NumAtencion = s.NumAtencion
	}
	c, _ := s.CountsFor(0)
	e.Informados, e.Aceptados, e.Reparos, e.Rechazados = c.Informados, c.Aceptados, c.Reparos, c.Rechazados
	if libro && strings.HasPrefix(s.Estado, "L") {
		e.Final = s.Estado != "LSO"
		return
	}
	e.Final = sii.EnvelopeOutcome(s, 0).Final()
}

// Tabla returns the table the SII's portal asks for when declaring
// progress: per uploaded file, the set, its número de atención, the track
// id, the upload date and the state, as Markdown.
func Tabla(m *Manifest) string {
	var b strings.Builder
	b.WriteString("| set | número de atención | archivo | track id | fecha | estado |\n|---|---|---|---|---|---|\n")
	for _, u := range m.Uploads() {
		e := *u.Envio
		track, fecha, estado := "—", "—", "sin enviar"
		if e != nil {
			track, fecha, estado = e.TrackID, e.Fecha, orDash(e.Estado)
			if len(fecha) >= 10 {
				fecha = fecha[:10]
			}
			if e.Estado == "EPR" {
				estado = fmt.Sprintf("EPR (%d aceptados, %d reparos, %d rechazos)", e.Aceptados, e.Reparos, e.Rechazados)
			}
			if e.Enviando {
				estado = "sin respuesta del SII (enviar manda un nuevo intento)"
			}
			if e.Final && !u.Aprobado() {
				estado += " ⚠"
			}
		}
		fmt.Fprintf(&b, "| %s | %s | `%s` | %s | %s | %s |\n", u.Set, orDash(u.Atencion), u.File, track, fecha, estado)
	}
	return b.String()
}
