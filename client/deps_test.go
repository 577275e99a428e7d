package client

import (
	"os/exec"
	"strings"
	"testing"
)

// TestSmall checks what a program that imports the client links: the
// standard library (but its SQL and mail packages), the models (api, with
// dte's document model and what it stands on) and webhook, and nothing
// that reads a database, sends mail, renders a PDF or runs jobs. An
// import outside the list fails until it is weighed and added here.
func TestSmall(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	const mod = "github.com/dtekit/dtekit/"
	allowed := []string{
		mod + "client", mod + "api", mod + "billing/fault", mod + "webhook",
		// dte's document model, which api's types embed, and its layers.
		mod + "dte", mod + "caf", mod + "ted", mod + "signer", mod + "internal/",
		// What dte stands on: ISO-8859-1 (x/text), PKCS#12 certificates.
		"golang.org/x/text/", "golang.org/x/crypto/", "software.sslmate.com/src/go-pkcs12",
	}
	bannedStd := []string{"database/sql", "net/smtp", "net/mail"}
	for _, dep := range strings.Fields(string(out)) {
		if !strings.Contains(strings.SplitN(dep, "/", 2)[0], ".") {
			// The standard library (vendor/ included).
			for _, b := range bannedStd {
				if dep == b || strings.HasPrefix(dep, b+"/") {
					t.Errorf("the client links %s", dep)
				}
			}
			continue
		}
		ok := false
		for _, a := range allowed {
			if dep == a || (strings.HasSuffix(a, "/") && strings.HasPrefix(dep, a)) || strings.HasPrefix(dep, a+"/internal/") {
				ok = true
			}
		}
		if !ok {
			t.Errorf("the client links %s, which is not on its list", dep)
		}
	}
}
