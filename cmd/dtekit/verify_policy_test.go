package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/dte/dtetest"
)

// dtekit verify prints who signed each document and the envelope, and
// applies a signer policy given as flags.
func TestVerifySignerPolicyFlags(t *testing.T) {
	dir := demoFiles(t)
	pem := filepath.Join(dir, "test-sii-authority.pub.pem")
	env := filepath.Join(dir, "EnvioDTE.xml")
	code, out, errs := runCLI(t, "", nil, "verify", "--trust", pem, "--signer", dtetest.EmisorRUT+"="+dtetest.SignerRUT,
		"--signer-is-rut-envia", "--valid-at-signing", env)
	if code != 0 || !strings.Contains(out, "signed by "+dtetest.SignerRUT) || !strings.Contains(out, "signer policy ok") {
		t.Fatalf("verify with the demo's own signer as policy: exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "CAF certificacion of ") {
		t.Errorf("the CAF's environment is not printed:\n%s", out)
	}
	code, out, _ = runCLI(t, "", nil, "verify", "--trust", pem, "--signer", dtetest.EmisorRUT+"=11111111-1", env)
	if code != 1 || !strings.Contains(out, "signer policy FAILED") || !strings.Contains(out, "is not authorized for 76192083-9") {
		t.Fatalf("verify with another authorized signer: exit %d, want 1 with a policy failure:\n%s", code, out)
	}
	code, _, errs = runCLI(t, "", nil, "verify", "--signer", "no-equals-sign", env)
	if code != 2 || !strings.Contains(errs, "EMISOR_RUT=SIGNER_RUT") {
		t.Fatalf("a malformed --signer: exit %d\n%s", code, errs)
	}
}
