package api_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLight checks that the models package stays light: nothing in its
// dependencies talks to a network, reads a database, sends mail, renders
// a PDF or runs jobs.
func TestLight(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	banned := []string{
		"net/http", "net/smtp", "net/mail", "database/sql", "crypto/tls",
		"github.com/dtekit/dtekit/store", "github.com/dtekit/dtekit/sii", "github.com/dtekit/dtekit/email",
		"github.com/dtekit/dtekit/pdf", "github.com/dtekit/dtekit/billing", "github.com/dtekit/dtekit/server",
		"github.com/riverqueue/", "github.com/jackc/", "modernc.org/sqlite", "github.com/go-pdf/",
		"github.com/emersion/",
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == "github.com/dtekit/dtekit/billing/fault" {
			continue // the error codes, kept beside the models
		}
		for _, b := range banned {
			if dep == b || strings.HasPrefix(dep, b+"/") || (strings.HasSuffix(b, "/") && strings.HasPrefix(dep, b)) {
				t.Errorf("the models package depends on %s (matches %q)", dep, b)
			}
		}
	}
}
