package oracle

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// SchemaFiles maps the root elements the SII receives to their official
// schema: the envelopes, the libros, the RCOF and the AEC.
var SchemaFiles = map[string]string{
	"EnvioDTE":         "EnvioDTE_v10.xsd",
	"EnvioBOLETA":      "EnvioBOLETA_v11.xsd",
	"LibroCompraVenta": "LibroCV_v10.xsd",
	"LibroGuia":        "LibroGuia_v10.xsd",
	"ConsumoFolios":    "ConsumoFolio_v10.xsd",
	"AEC":              "AEC_v10.xsd",
}

// SchemaCheck returns a schema check for the fake SII's Options.Schema: it
// runs xmllint on a file with the official schema of its root element
// (SchemaFiles) and returns xmllint's error lines, none when the file is
// valid. A missing xmllint or schema folder skips or fails t, as Tool
// does; the check itself may run on any goroutine while t lasts.
func SchemaCheck(t testing.TB) func(root string, data []byte) []string {
	t.Helper()
	xmllint := Tool(t, "xmllint")
	schemas := Schemas(t)
	dir := t.TempDir()
	var n int
	var mu sync.Mutex
	return func(root string, data []byte) []string {
		xsd := SchemaFiles[root]
		if xsd == "" {
			return []string{"unknown root " + root}
		}
		mu.Lock()
		n++
		p := filepath.Join(dir, fmt.Sprintf("file-%d.xml", n))
		mu.Unlock()
		if err := os.WriteFile(p, data, 0o600); err != nil {
			return []string{err.Error()}
		}
		ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
		defer cancel()
		out, err := exec.CommandContext(ctx, xmllint, "--noout", "--schema", filepath.Join(schemas, xsd), p).CombinedOutput()
		if err == nil {
			return nil
		}
		var lines []string
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if l != "" && !strings.HasSuffix(l, "fails to validate") {
				lines = append(lines, l)
			}
		}
		if len(lines) == 0 {
			lines = []string{err.Error()}
		}
		return lines
	}
}
