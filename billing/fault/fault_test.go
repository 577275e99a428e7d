package fault_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/store"
)

func TestAs(t *testing.T) {
	if fault.As(nil) != nil {
		t.Error("As(nil) is not nil")
	}
	nf := fault.Missing("DTE", "x")
	wrapped := fmt.Errorf("reading: %w", nf)
	if got := fault.As(wrapped); got != nf {
		t.Errorf("As(wrapped Error) = %v, want the Error itself", got)
	}
	ve := &dte.ValidationError{Details: []dte.FieldError{{Field: "receptor.rut", Code: dte.CodeInvalidRUT, Message: "bad"}}}
	got := fault.As(fmt.Errorf("decoding: %w", ve))
	if got.Kind != fault.KindValidation || got.Code != fault.Validation || len(got.Details) != 1 ||
		got.Details[0].Field != "receptor.rut" || !errors.Is(got, ve) {
		t.Errorf("As(ValidationError) = %+v, want a validation Error with its one detail", got)
	}
	// By hand: one detail makes "the request has 1 invalid field(s)".
	if got.Message != "the request has 1 invalid field(s)" {
		t.Errorf("message %q", got.Message)
	}
	plain := errors.New("disk on fire")
	got = fault.As(plain)
	if got.Kind != fault.KindInternal || got.Code != fault.Internal || !errors.Is(got, plain) || got.Message != "internal error" {
		t.Errorf("As(plain error) = %+v, want an internal Error wrapping it, saying nothing of it", got)
	}
	if fault.KindOf(plain) != fault.KindInternal || fault.KindOf(nf) != fault.KindNotFound {
		t.Error("KindOf disagrees with As")
	}
}

func TestCodesIsACopyWithoutDuplicates(t *testing.T) {
	a := fault.Codes()
	seen := map[fault.Code]bool{}
	for _, c := range a {
		if seen[c] {
			t.Errorf("code %s listed twice", c)
		}
		seen[c] = true
	}
	a[0] = "CHANGED"
	if fault.Codes()[0] != fault.Validation {
		t.Error("Codes returns the package's own slice")
	}
}

func TestErrorTextKeepsTheCause(t *testing.T) {
	e := fault.Failed("storing the DTE", errors.New("database is locked"))
	if want := "billing: INTERNAL_ERROR: internal error while storing the DTE: database is locked"; e.Error() != want {
		t.Errorf("Error() = %q, want %q", e.Error(), want)
	}
	if e.Kind.String() != "internal" || fault.Kind(99).String() != "Kind(99)" {
		t.Errorf("Kind strings %q, %q", e.Kind, fault.Kind(99))
	}
}

// TestStorageFullIsUnavailable: a store error matching store.ErrStorageFull
// becomes a KindUnavailable SERVICE_UNAVAILABLE Error (the HTTP layer's
// 503), whether billing wrapped it with Failed or not; any other store
// error stays internal.
func TestStorageFullIsUnavailable(t *testing.T) {
	full := fmt.Errorf("store (sqlite): committing: %w", fmt.Errorf("%w: database or disk is full", store.ErrStorageFull))
	for name, e := range map[string]*fault.Error{"Failed": fault.Failed("saving a document", full), "As": fault.As(full)} {
		if e.Kind != fault.KindUnavailable || e.Code != fault.Unavailable || !errors.Is(e, store.ErrStorageFull) {
			t.Errorf("%s: got kind %v code %s (cause kept: %v), want unavailable SERVICE_UNAVAILABLE", name, e.Kind, e.Code, errors.Is(e, store.ErrStorageFull))
		}
	}
	if e := fault.Failed("saving a document", errors.New("store (sqlite): committing: disk I/O error")); e.Kind != fault.KindInternal || e.Code != fault.Internal {
		t.Errorf("another store error: got kind %v code %s, want internal", e.Kind, e.Code)
	}
}
