package dte

import (
	"bytes"
	"fmt"
	"reflect"
)

// EnvioFastPath reports whether BuildEnvio reads data in one strict scan
// and steps over it when it digests the SetDTE.
func EnvioFastPath(data []byte) bool {
	var s envScan
	_, _, _, fast, err := s.document(data, DefaultSetID)
	return err == nil && fast
}

// EnvioSealed reports whether BuildEnvioEmitted pastes e on its seal
// (without reading it) in an envelope whose SetDTE ID is setID.
func EnvioSealed(e *Emitted, setID string) bool { return sealedFor(e, setID) != nil }

// SealedAgainstScan compares e's seal with what the envelope's strict scan
// finds in e.XML: the same body, span (offsets, left-out declarations,
// element count) and identity. It returns "" when they agree, or what
// differs.
func SealedAgainstScan(e *Emitted) string {
	s := e.sealed
	if s == nil {
		return "not sealed"
	}
	var sc envScan
	body, doc, span, fast, err := sc.document(e.XML, DefaultSetID)
	switch {
	case err != nil || !fast:
		return fmt.Sprintf("the scan does not take the fast path (%v)", err)
	case !reflect.DeepEqual(span, s.span):
		return fmt.Sprintf("span %+v, the scan's %+v", s.span, span)
	case doc != s.doc:
		return fmt.Sprintf("identity %+v, the scan's %+v", s.doc, doc)
	case !bytes.Equal(body, s.xml[s.span.Start:s.span.End]):
		return "the body differs from the scan's"
	}
	return ""
}
