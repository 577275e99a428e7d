package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Header names, as the Standard Webhooks specification writes them. Lookups
// by this package are case-insensitive; net/http sends them canonicalized
// ("Webhook-Id"), which receivers must accept.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// Limits checked on every delivery before any HMAC work.
const (
	// MaxIDBytes bounds the length of webhook-id.
	MaxIDBytes = 256
	// MaxSignatureHeaderBytes bounds the length of webhook-signature.
	MaxSignatureHeaderBytes = 4096
	// MaxSignatures bounds the number of entries in webhook-signature, and
	// so the number of secrets [Sign] accepts.
	MaxSignatures = 32
)

// Sign returns the three delivery headers for body, sent as message id at
// time ts, with one "v1," signature entry per secret in the given order
// (several while a key is being rotated).
//
// id must be 1 to 256 bytes of printable ASCII without '.' or spaces (see
// [NewMessageID]); ts must not be before 1970. The returned header uses the
// canonical names (Webhook-Id, Webhook-Timestamp, Webhook-Signature).
func Sign(secrets []Secret, id string, ts time.Time, body []byte) (http.Header, error) {
	if err := checkSignID(id); err != nil {
		return nil, err
	}
	unix := ts.Unix()
	if unix < 0 {
		return nil, fmt.Errorf("webhook: sign: timestamp %s is before 1970", ts.Format(time.RFC3339))
	}
	if len(secrets) == 0 {
		return nil, errors.New("webhook: sign: no secret given")
	}
	if len(secrets) > MaxSignatures {
		return nil, fmt.Errorf("webhook: sign: %d secrets, at most %d allowed", len(secrets), MaxSignatures)
	}
	tsText := strconv.FormatInt(unix, 10)
	var sig strings.Builder
	sig.Grow(len(secrets) * 48)
	for i, s := range secrets {
		if !s.valid() {
			return nil, fmt.Errorf("webhook: sign: secret %d is not initialized (use ParseSecret, NewSecret or GenerateSecret)", i)
		}
		m := hmac.New(sha256.New, s.key())
		writeSigned(m, id, tsText, body)
		if i > 0 {
			sig.WriteByte(' ')
		}
		sig.WriteString("v1,")
		sig.WriteString(base64.StdEncoding.EncodeToString(m.Sum(nil)))
	}
	h := make(http.Header, 3)
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, tsText)
	h.Set(HeaderSignature, sig.String())
	return h, nil
}

// NewMessageID returns a fresh webhook-id: "msg_" followed by 26 base32
// characters carrying 128 random bits from crypto/rand. Use one id per event
// and keep it for every retry of that event.
func NewMessageID() string {
	return "msg_" + rand.Text()
}

// checkSignID applies the sender-side rules for a message id.
func checkSignID(id string) error {
	if id == "" {
		return errors.New("webhook: sign: empty message id")
	}
	if len(id) > MaxIDBytes {
		return fmt.Errorf("webhook: sign: message id is %d bytes, at most %d allowed", len(id), MaxIDBytes)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if c <= ' ' || c >= 0x7f || c == '.' {
			return fmt.Errorf("webhook: sign: message id %q has byte %q at %d (want printable ASCII without '.' or spaces)", id, c, i)
		}
	}
	return nil
}

// byteWriter is the part of hash.Hash that writeSigned needs.
type byteWriter interface{ Write([]byte) (int, error) }

// writeSigned feeds "<id>.<ts>.<body>" to w.
func writeSigned(w byteWriter, id, ts string, body []byte) {
	w.Write([]byte(id))
	w.Write([]byte{'.'})
	w.Write([]byte(ts))
	w.Write([]byte{'.'})
	w.Write(body)
}
