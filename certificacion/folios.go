package certificacion

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/dtekit/dtekit/dte"
)

// The folio ledger. Every folder the kit writes lists, in its
// manifest.json, each document with its type and folio: the folder is the
// ledger of the folios it used. A later run with the same CAFs (the
// simulación after the sets, a second generar after a reparo) reads the
// ledgers of the folders beside its own (FoldersBeside) and starts each
// type above the highest folio they used (Config.FoliosUsados), saying so
// in its LEEME.md; the SII rejects a second document with one folio as a
// duplicate, so reusing one would lose the whole run.

// maxLedgerFolders bounds how many folders FoliosUsados reads.
const maxLedgerFolders = 1000

// FoldersBeside returns the folders whose ledgers a run writing into out
// reads: out itself and every folder beside it (in out's parent) that
// holds a manifest.json, in name order, at most 1000.
func FoldersBeside(out string) ([]string, error) {
	out = filepath.Clean(out)
	dirs := []string{out}
	parent := filepath.Dir(out)
	entries, err := os.ReadDir(parent)
	if errors.Is(err, fs.ErrNotExist) {
		return dirs, nil
	}
	if err != nil {
		return nil, fmt.Errorf("certificacion: %w", err)
	}
	for _, e := range entries {
		if len(dirs) >= maxLedgerFolders {
			break
		}
		p := filepath.Join(parent, e.Name())
		if !e.IsDir() || p == out {
			continue
		}
		if _, err := os.Stat(filepath.Join(p, ManifestFile)); err == nil {
			dirs = append(dirs, p)
		}
	}
	return dirs, nil
}

// Ledger is what earlier folders used.
type Ledger struct {
	// Usados is the highest folio of each type used.
	Usados map[dte.TipoDTE]int64
	// Folders are the folders that used any, each with what it used
	// ("../sets: tipo 33 folios 1-9, tipo 61 folios 1-3").
	Folders []string
}

// FoliosUsados reads the ledgers (manifest.json) of dirs and returns the
// highest folio of each type the company rut's documents used there. A
// folder without manifest.json is passed over; one of another company is
// too; an unreadable manifest is an error naming it.
func FoliosUsados(rut string, dirs ...string) (*Ledger, error) {
	want, err := dte.ParseRUT(rut)
	if err != nil {
		return nil, fmt.Errorf("certificacion: emisor rut: %w", err)
	}
	l := &Ledger{Usados: map[dte.TipoDTE]int64{}}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, ManifestFile)); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		m, err := ReadManifest(d)
		if err != nil {
			return nil, err
		}
		if r, err := dte.ParseRUT(m.RutEmisor); err != nil || r != want {
			continue
		}
		lo, hi := map[dte.TipoDTE]int64{}, map[dte.TipoDTE]int64{}
		for _, s := range m.Sets {
			for _, c := range s.Cases {
				if c.Folio <= 0 {
					continue
				}
				if lo[c.TipoDTE] == 0 || c.Folio < lo[c.TipoDTE] {
					lo[c.TipoDTE] = c.Folio
				}
				hi[c.TipoDTE] = max(hi[c.TipoDTE], c.Folio)
				l.Usados[c.TipoDTE] = max(l.Usados[c.TipoDTE], c.Folio)
			}
		}
		if len(hi) == 0 {
			continue
		}
		tipos := make([]int, 0, len(hi))
		for t := range hi {
			tipos = append(tipos, int(t))
		}
		sort.Ints(tipos)
		parts := make([]string, len(tipos))
		for i, t := range tipos {
			parts[i] = fmt.Sprintf("tipo %d folios %d-%d", t, lo[dte.TipoDTE(t)], hi[dte.TipoDTE(t)])
		}
		l.Folders = append(l.Folders, d+": "+strings.Join(parts, ", "))
	}
	return l, nil
}

// reSetFileName is the name the SII gives the set file:
// SIISetDePruebas<RUT><DV>.txt, the RUT with or without its hyphen.
var reSetFileName = regexp.MustCompile(`(?i)^SIISetDePruebas(\d{6,8})-?([0-9K])(?:\s*\(\d+\))?\.txt$`)

// SetFileRUT returns the RUT the SII's name of a set file carries
// ("SIISetDePruebas761920839.txt" is 76192083-9), and false for a file
// renamed to anything else (the content carries no RUT) or whose RUT's
// check digit is wrong.
func SetFileRUT(path string) (string, bool) {
	m := reSetFileName.FindStringSubmatch(filepath.Base(path))
	if m == nil {
		return "", false
	}
	r, err := dte.ParseRUT(m[1] + "-" + strings.ToUpper(m[2]))
	if err != nil {
		return "", false
	}
	return r.String(), true
}
