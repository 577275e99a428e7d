package signer

import (
	"testing"

	"github.com/dtekit/dtekit/internal/xmldsig"
)

// TestConstantsAreTheEngines: the constants signer documents are the ones
// internal/xmldsig signs and verifies with.
func TestConstantsAreTheEngines(t *testing.T) {
	t.Parallel()
	for _, c := range [][2]string{{AlgC14N10, xmldsig.AlgC14N10}, {AlgRSASHA1, xmldsig.AlgRSASHA1},
		{AlgSHA1, xmldsig.AlgSHA1}, {AlgEnveloped, xmldsig.AlgEnveloped}} {
		if c[0] != c[1] {
			t.Errorf("signer says %q, xmldsig uses %q", c[0], c[1])
		}
	}
	if MaxSignatures != xmldsig.MaxSignatures {
		t.Errorf("MaxSignatures is %d, xmldsig bounds at %d", MaxSignatures, xmldsig.MaxSignatures)
	}
}
