package signer

import (
	"strings"
	"testing"
)

// A document with more Signature elements than an envelope can hold is
// refused before any RSA work.
func TestVerifyRefusesTooManySignatures(t *testing.T) {
	sig := `<Signature xmlns="http://www.w3.org/2000/09/xmldsig#"/>`
	doc := "<r>" + strings.Repeat(sig, MaxSignatures+1) + "</r>"
	res, err := Verify([]byte(doc))
	if err == nil || res != nil || !strings.Contains(err.Error(), "more than the 2001") {
		t.Fatalf("Verify of %d signatures: results %d, err %v", MaxSignatures+1, len(res), err)
	}
	// At the bound the signatures are each checked (and each fails, being empty).
	res, err = Verify([]byte("<r>" + strings.Repeat(sig, 2) + "</r>"))
	if err == nil || len(res) != 2 {
		t.Fatalf("Verify of 2 empty signatures: results %d, err %v", len(res), err)
	}
}
