package dte

import (
	"errors"
	"fmt"
	"time"

	"github.com/dtekit/dtekit/signer"
)

// SignedXML writes an SII file whose signed part is one element carrying an
// ID attribute, the way BuildEnvio writes an envelope: the ISO-8859-1
// declaration; a root element in the SII namespace whose
// xsi:schemaLocation names its schema (the SII picks the schema from it and
// answers SCH-00001 when it is missing) and whose version is "1.0"; the
// element to sign; and, once Sign closes both, the enveloped Signature of
// the SII profile right after that element. Package libro writes the
// libros and the RCOF with it (LibroCompraVenta/EnvioLibro,
// ConsumoFolios/DocumentoConsumoFolios).
//
// Elements are written in the order of the calls, so the caller follows
// its schema's sequence. Text is escaped and encoded as the DTE writer does
// it: the first character that ISO-8859-1 XML cannot carry is reported by
// Sign, as a *ValidationError naming the field the caller gave.
type SignedXML struct {
	w            xw
	root, signed string
	id           string
}

// NewSignedXML starts a file with root element root (its schema file
// named schema, e.g. "LibroCV_v10.xsd") holding the element signed, whose
// ID attribute is id.
func NewSignedXML(root, schema, signed, id string) (*SignedXML, error) {
	for _, name := range []string{root, signed} {
		if !envValidID(name) {
			return nil, fmt.Errorf("dte: signed xml: %q is not an element name dtekit writes", name)
		}
	}
	if !envValidID(id) {
		return nil, fmt.Errorf("dte: signed xml: ID %q is not a valid XML ID", id)
	}
	if !envValidID(schema) {
		return nil, fmt.Errorf("dte: signed xml: schema %q is not a plain file name", schema)
	}
	x := &SignedXML{root: root, signed: signed, id: id, w: xw{buf: make([]byte, 0, 4096)}}
	x.w.raw(xmlDeclaration)
	xwSignedRoot(&x.w, root, schema)
	x.w.raw(`<` + signed + ` ID="` + id + `">`)
	return x, nil
}

// xwSignedRoot writes the start tag of a signed file's root element: the
// SII namespace, xsi:schemaLocation naming schema, and version 1.0.
func xwSignedRoot(w *xw, root, schema string) {
	w.raw(`<` + root + ` xmlns="` + NamespaceSiiDte + `" xmlns:xsi="` + namespaceXSI +
		`" xsi:schemaLocation="` + NamespaceSiiDte + ` ` + schema + `" version="1.0">`)
}

// Open writes the start tag <name>.
func (x *SignedXML) Open(name string) { x.w.open(name) }

// OpenVersion writes the start tag <name version="1.0">, as the schemas
// ask of some carátulas.
func (x *SignedXML) OpenVersion(name string) { x.w.raw("<" + name + ` version="1.0">`) }

// Close writes the end tag </name>.
func (x *SignedXML) Close(name string) { x.w.close(name) }

// Int writes <name>n</name>.
func (x *SignedXML) Int(name string, n int64) { x.w.int(name, n) }

// Text writes <name>value</name> with value trimmed, cut to max characters
// (0: no limit), escaped and encoded in ISO-8859-1; an empty value writes
// nothing. field names the value in errors ("detalle[2].razon_social").
func (x *SignedXML) Text(name, field, value string, max int) { x.w.text(name, field, value, max) }

// Decimal writes <name>d</name> in the plain form the schemas accept ("0.6"
// for "0.60"); an absent d writes nothing.
func (x *SignedXML) Decimal(name string, d Decimal) { x.w.dec(name, d) }

// Timestamp writes <name>t</name> as the SII's timestamps are written
// (TmstFirma, TmstFirmaEnv): Chile local time, YYYY-MM-DDThh:mm:ss.
func (x *SignedXML) Timestamp(name string, t time.Time) { x.w.plain(name, xwTimestamp(t)) }

// Sign closes the signed element and the root, and signs the element with
// cert in the SII profile, the Signature following it inside the root. It
// returns the file, or the first error of the writing (a text ISO-8859-1
// cannot carry) or of the signature. The SignedXML is spent afterwards.
func (x *SignedXML) Sign(cert *signer.Certificate) ([]byte, error) {
	if cert == nil {
		return nil, errors.New("dte: signed xml: no signing certificate")
	}
	if x.w.err != nil {
		return nil, x.w.err
	}
	x.w.close(x.signed)
	x.w.raw("</" + x.root + ">\n")
	out, err := signInPlace(cert, x.w.buf, x.id, nil)
	x.w.buf = nil
	if err != nil {
		return nil, fmt.Errorf("dte: signed xml: signing %s: %w", x.signed, err)
	}
	return out, nil
}
