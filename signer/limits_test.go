package signer

import (
	"errors"
	"runtime"
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

// Many signatures over the same large element would canonicalize it once
// each: Verify stops once the references have covered a few times the
// document's size, before hashing more.
func TestVerifyBoundsCanonicalWork(t *testing.T) {
	c := testCert(t)
	doc, err := c.SignEnveloped([]byte(`<r><big ID="b">`+strings.Repeat("<x>payload</x>", 50_000)+`</big></r>`), "b")
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i := strings.Index(s, "<Signature ")
	sig := s[i : strings.Index(s, "</Signature>")+len("</Signature>")]
	flood := s[:i] + strings.Repeat(sig, 200) + s[i+len(sig):]
	res, err := Verify([]byte(flood))
	if !errors.Is(err, ErrTooCostly) {
		t.Fatalf("200 signatures over a 700 KB element: %v", err)
	}
	n := 0
	for _, r := range res {
		if r.Err == nil {
			n++
		}
	}
	// Each full check canonicalizes the 700 KB element once; the budget is
	// four times the input plus 64 KiB.
	big := strings.Index(s, "</big>") - strings.Index(s, "<big ")
	if max := (4*len(flood) + 1<<16) / big; n > max {
		t.Fatalf("%d signatures were checked in full; the budget allows %d", n, max)
	}
	if _, err := Verify(doc); err != nil {
		t.Fatalf("the genuine document: %v", err)
	}
}

// Two elements with the same ID make any reference to it ambiguous.
func TestVerifyRefusesDuplicateIDs(t *testing.T) {
	c := testCert(t)
	doc, err := c.SignEnveloped([]byte(`<r><a ID="x">signed</a></r>`), "x")
	if err != nil {
		t.Fatal(err)
	}
	dup := strings.Replace(string(doc), "<r>", `<r><a ID="x">edited</a>`, 1)
	if _, err := Verify([]byte(dup)); !errors.Is(err, ErrDuplicateID) {
		t.Fatalf("duplicate ID: %v", err)
	}
}

// Verify keeps in memory only the signatures and the elements a reference
// may name: a signed document followed by 100,000 unknown elements
// (1.6 MB) allocates a small fraction of their size more than the document
// alone, where a tree node per element took about 250 bytes each.
func TestVerifyDoesNotKeepUnknownElements(t *testing.T) {
	c := testCert(t)
	doc, err := c.SignEnveloped([]byte(`<r><a ID="x"><b>signed</b></a><pad></pad></r>`), "x")
	if err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("<unknown n=\"1\"/>", 100_000)
	padded := strings.Replace(string(doc), "<pad></pad>", "<pad>"+pad+"</pad>", 1)
	allocated := func(doc []byte) uint64 {
		var a, b runtime.MemStats
		runtime.ReadMemStats(&a)
		if _, err := Verify(doc); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&b)
		return b.TotalAlloc - a.TotalAlloc
	}
	plain, more := allocated(doc), allocated([]byte(padded))
	t.Logf("Verify allocated %d bytes, %d with %d bytes of unknown elements", plain, more, len(pad))
	// The padded run may allocate less than the plain one (the first run
	// also pays for what later runs reuse): compare without wrapping.
	if more > plain && more-plain > uint64(len(pad))/4 {
		t.Fatalf("%d bytes of unknown elements cost Verify %d bytes more", len(pad), more-plain)
	}
}
