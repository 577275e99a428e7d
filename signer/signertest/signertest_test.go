package signertest_test

import (
	"testing"

	"github.com/dtekit/dtekit/signer"
	"github.com/dtekit/dtekit/signer/signertest"
)

// Each Encryption writes a file signer.Load reads back under its own
// name; a value outside the three is refused.
func TestEncodePKCS12Encryptions(t *testing.T) {
	cert, err := signertest.NewCertificate(nil, signertest.CertOptions{Bits: 1024})
	if err != nil {
		t.Fatal(err)
	}
	for enc, name := range map[signertest.Encryption]string{
		signertest.Modern: "modern", signertest.Legacy: "legacy", signertest.LegacyDES: "legacy-des",
	} {
		if enc.String() != name {
			t.Errorf("%d.String() = %q, want %q", int(enc), enc, name)
		}
		p12, err := signertest.EncodePKCS12(cert, "pw", enc)
		if err != nil {
			t.Fatalf("%v: %v", enc, err)
		}
		back, err := signer.Load(p12, "pw")
		if err != nil {
			t.Fatalf("%v: reading back: %v", enc, err)
		}
		if !back.Leaf.Equal(cert.Leaf) {
			t.Errorf("%v: read back another certificate", enc)
		}
	}
	bad := signertest.Encryption(7)
	if bad.String() != "Encryption(7)" {
		t.Errorf("String() = %q", bad)
	}
	if _, err := signertest.EncodePKCS12(cert, "pw", bad); err == nil {
		t.Error("EncodePKCS12 accepted Encryption(7)")
	}
}
