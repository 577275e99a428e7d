//go:build !openssl

package smallrsa

import (
	"strings"
	"testing"
)

// TestBackendIsGo: the default build signs in Go, with the key itself.
func TestBackendIsGo(t *testing.T) {
	t.Parallel()
	priv := testKey(t, 512, 3)
	if s := Signer(priv); s != priv {
		t.Errorf("Signer gave %T, want the key itself", s)
	}
	if b := Backend(); !strings.HasPrefix(b, "Go") {
		t.Errorf("Backend() = %q in the default build", b)
	}
}
