package sii

import (
	"errors"
	"fmt"
	"net"
)

// ErrNotFound is wrapped by the boleta API calls when the SII answers 404:
// the track id or document is unknown to it.
var ErrNotFound = errors.New("sii: not found")

// TransportKind says how a call to the SII failed below the protocol level.
type TransportKind string

// The transport failures the client distinguishes. All of them are
// retryable: the SII answers with HTML pages and "Error 500" under load.
const (
	// KindNetwork is a connection failure (refused, reset, DNS, TLS).
	KindNetwork TransportKind = "network"
	// KindTimeout means the call's deadline passed before a full answer.
	KindTimeout TransportKind = "timeout"
	// KindHTML is an HTML page where XML or JSON was expected.
	KindHTML TransportKind = "html"
	// KindError500 is the literal body "Error 500" (any HTTP status).
	KindError500 TransportKind = "error500"
	// KindFault is a SOAP Fault.
	KindFault TransportKind = "soap-fault"
	// KindEmpty is a response without a body.
	KindEmpty TransportKind = "empty"
	// KindHTTP is an unexpected HTTP status with an unrecognised body.
	KindHTTP TransportKind = "http"
	// KindMalformed is a body that is not the document the protocol
	// promises (unparseable XML or JSON, a missing element).
	KindMalformed TransportKind = "malformed"
	// KindTooLarge is a response longer than Config.MaxResponseBytes.
	KindTooLarge TransportKind = "too-large"
)

// TransportError reports a call that got no usable protocol answer. It is
// always retryable; for an upload it leaves open whether the SII kept the
// envelope (see the package documentation).
type TransportError struct {
	// Op is the operation ("getSeed", "getToken", "upload", "getEstUp",
	// "getEstDte", "getEstDteAv", "boleta.semilla", "boleta.token", "boleta.envio",
	// "boleta.estado", "boleta.dte", and the registry's
	// "ingresarAceptacionReclamoDoc", "listarEventosHistDoc",
	// "consultarDocDteCedible", "consultarFechaRecepcionSii", and the
	// credit-transfer registry's "RTCAnotEnvio", "getEstEnvio",
	// "getEstCesion", "getEstCesionRelac").
	Op string
	// URL is the address called.
	URL string
	// Kind classifies the failure.
	Kind TransportKind
	// StatusCode is the HTTP status, 0 when no response arrived.
	StatusCode int
	// Detail is the SOAP faultstring, or the start of an unexpected body.
	Detail string
	// Err is the underlying error, if any (a net error, context.DeadlineExceeded).
	Err error
}

func (e *TransportError) Error() string {
	msg := fmt.Sprintf("sii: %s %s: %s", e.Op, e.URL, e.Kind)
	if e.StatusCode != 0 {
		msg += fmt.Sprintf(" (HTTP %d)", e.StatusCode)
	}
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *TransportError) Unwrap() error { return e.Err }

// Retryable reports true: a transport failure says nothing about the
// request itself.
func (e *TransportError) Retryable() bool { return true }

// AuthError reports a seed or token request the SII answered with an error
// ESTADO (manual de autenticación §5.2.2), or an HTTP 401 that persisted
// after a fresh token.
type AuthError struct {
	// Op is "getSeed", "getToken", "boleta.semilla", "boleta.token", or the
	// operation whose token was refused.
	Op string
	// Estado is the SII's code ("-07", "05", "08", ...), or "401".
	Estado string
	// Glosa is the SII's text, when it sent one.
	Glosa string
}

func (e *AuthError) Error() string {
	s := fmt.Sprintf("sii: %s: ESTADO %s", e.Op, e.Estado)
	if e.Glosa != "" {
		s += " (" + e.Glosa + ")"
	}
	if hint := authHint(e.Estado); hint != "" {
		s += ": " + hint
	}
	return s
}

// Retryable reports whether the same request may succeed later without a
// change of configuration: a timed-out or missing seed, the SII's internal
// errors. Invalid signatures, a missing certificate or an unregistered RUT
// (-07, 11, 12, 04, 05, 21) need the user to act.
func (e *AuthError) Retryable() bool {
	switch e.Estado {
	case "-1", "-2", "07", "08", "09", "10", "401":
		return true
	}
	return false
}

// authHint explains the codes that need a user's action.
func authHint(estado string) string {
	switch estado {
	case "-07":
		return "the certificate's RUT is not registered at the SII with certificate authentication"
	case "04", "05", "21":
		return "the signed seed's signature was refused"
	case "11":
		return "the signed seed carries no certificate"
	case "12":
		return "the SII refused the request (check the certificate and its RUT)"
	}
	return ""
}

// IsRetryable reports whether err is worth retrying later as it is: a
// *TransportError, or an *AuthError whose Retryable says so.
func IsRetryable(err error) bool {
	var te *TransportError
	if errors.As(err, &te) {
		return true
	}
	var ae *AuthError
	if errors.As(err, &ae) {
		return ae.Retryable()
	}
	return false
}

// MayHaveArrived reports whether a failed Upload may have left the
// envelope at the SII: the request went out (or may have) and no readable
// answer came back, through a timeout, a connection cut after connecting,
// an empty, unreadable or oversized answer. An HTML page, "Error 500", a
// SOAP fault or another HTTP error is the SII's front refusing the request,
// and a failed dial never reached it: those are sent again. After an
// upload that may have arrived, ask DocumentStatusAdvanced for the
// envelope that carried the document before sending it again.
func MayHaveArrived(err error) bool {
	var te *TransportError
	if !errors.As(err, &te) {
		return false
	}
	switch te.Kind {
	case KindTimeout, KindEmpty, KindMalformed, KindTooLarge:
		return true
	case KindNetwork:
		var oe *net.OpError
		return !(errors.As(err, &oe) && oe.Op == "dial")
	}
	return false
}
