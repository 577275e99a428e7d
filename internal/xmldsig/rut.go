package xmldsig

import (
	"crypto/x509"
	"encoding/asn1"

	"github.com/dtekit/dtekit/internal/chile"
)

// OID of the SAN otherName the Chilean certification authorities use for
// the holder's RUT (an IA5String such as "07880442-4").
var oidRUTOtherName = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 8321, 1}

var oidSubjectAltName = asn1.ObjectIdentifier{2, 5, 29, 17}

// CertRUT extracts the holder's RUT from a certificate: from the
// subjectAltName otherName 1.3.6.1.4.1.8321.1 when present, otherwise from
// the subject serialNumber, in canonical form ("12345678-9").
func CertRUT(cert *x509.Certificate) (string, bool) {
	for _, ext := range cert.Extensions {
		if ext.Id.Equal(oidSubjectAltName) {
			if rut, ok := sanRUT(ext.Value); ok {
				return rut, true
			}
		}
	}
	return NormalizeRUT(cert.Subject.SerialNumber)
}

// sanRUT looks for the RUT otherName in a DER-encoded GeneralNames value.
func sanRUT(der []byte) (string, bool) {
	var names []asn1.RawValue
	if rest, err := asn1.Unmarshal(der, &names); err != nil || len(rest) != 0 {
		return "", false
	}
	for _, n := range names {
		if n.Class != asn1.ClassContextSpecific || n.Tag != 0 || !n.IsCompound {
			continue // not an otherName
		}
		// OtherName ::= SEQUENCE { type-id OID, value [0] EXPLICIT ANY };
		// the [0] IMPLICIT tag replaced the SEQUENCE tag, so n.Bytes holds
		// the two fields.
		var oid asn1.ObjectIdentifier
		rest, err := asn1.Unmarshal(n.Bytes, &oid)
		if err != nil || !oid.Equal(oidRUTOtherName) {
			continue
		}
		var wrapped asn1.RawValue
		if _, err := asn1.Unmarshal(rest, &wrapped); err != nil || wrapped.Tag != 0 || wrapped.Class != asn1.ClassContextSpecific {
			continue
		}
		var inner asn1.RawValue
		if _, err := asn1.Unmarshal(wrapped.Bytes, &inner); err != nil || inner.Class != asn1.ClassUniversal {
			continue
		}
		switch inner.Tag {
		case asn1.TagIA5String, asn1.TagPrintableString, asn1.TagUTF8String, 26 /* VisibleString */, asn1.TagT61String:
			if rut, ok := NormalizeRUT(string(inner.Bytes)); ok {
				return rut, true
			}
		}
	}
	return "", false
}

// NormalizeRUT turns "07.880.442-4", "7880442-4" or "78804424" into
// "7880442-4" and checks the modulo-11 verifier digit.
func NormalizeRUT(s string) (string, bool) {
	n, dv, err := chile.ParseRUT(s)
	if err != nil {
		return "", false
	}
	return chile.FormatRUT(n, dv), true
}
