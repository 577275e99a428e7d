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
}

// Aprobado reports whether the state is the one the certification needs:
// an envelope EPR with every document accepted (0 reparos, 0 rechazos), or
// a libro LOK. (The RCOF of a day from 2022-08 on ends RPR with reparo 250,
// "no es obligatorio", which the boleta certification accepts; Tabla
// shows it without a warning.)
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
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("certificacion: %s: %w", filepath.Join(dir, ManifestFile), err)
	}
	if m.RutEmisor == "" {
		return nil, fmt.Errorf("certificacion: %s has no rut_emisor", filepath.Join(dir, ManifestFile))
	}
	return &m, nil
}

// SaveManifest writes m as dir's manifest.json, through a temporary file
// renamed into place so a reader never sees half of it.
func SaveManifest(dir string, m *Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("certificacion: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".manifest-*.json")
	if err != nil {
		return fmt.Errorf("certificacion: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("certificacion: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("certificacion: %w", err)
	}
	if err := os.Chmod(tmp.Name(), filePermission); err != nil {
		return fmt.Errorf("certificacion: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, ManifestFile)); err != nil {
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
	// Libro marks a libro or the RCOF.
	Libro bool
	// Envio is the manifest's record, nil until uploaded.
	Envio **Envio
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
		out = append(out, Upload{Set: name, Atencion: l.NumeroAtencion, File: l.File, Libro: true, Envio: &l.Envio})
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
func Enviar(ctx context.Context, c *sii.Client, dir string, now func() time.Time) (*Manifest, error) {
	if now == nil {
		now = time.Now
	}
	m, err := ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	for _, u := range m.Uploads() {
		if *u.Envio != nil && (*u.Envio).TrackID != "" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(u.File)))
		if err != nil {
			return m, fmt.Errorf("certificacion: %w", err)
		}
		res, err := c.UploadClassic(ctx, m.RutEmisor, data)
		if err != nil {
			return m, fmt.Errorf("certificacion: uploading %s: %w", u.File, err)
		}
		if !res.Accepted() {
			o := sii.UploadOutcome(res)
			return m, &UploadRefusedError{File: u.File, Status: o.Code, Glosa: o.Glosa}
		}
		*u.Envio = &Envio{TrackID: res.TrackID, Fecha: now().In(dte.SantiagoLocation()).Format(time.RFC3339), Boleta: res.Boleta}
		if err := SaveManifest(dir, m); err != nil {
			return m, err
		}
	}
	return m, nil
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
			if e.Final && !e.Aprobado() && e.Estado != "RPR" {
				estado += " ⚠"
			}
		}
		fmt.Fprintf(&b, "| %s | %s | `%s` | %s | %s | %s |\n", u.Set, orDash(u.Atencion), u.File, track, fecha, estado)
	}
	return b.String()
}
