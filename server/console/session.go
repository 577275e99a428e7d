package console

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"time"

	"github.com/dtekit/dtekit/billing"
)

// A session is one signed-in browser. It lives in the store, through the
// billing face (billing.ConsoleSessionService), so that every process on
// the database serves it and a sign-out on one ends it on all: the
// browser holds its random id in a cookie, the store the id's SHA-256 and
// the credential sealed. The credential is kept so that every request is
// authenticated again (a key revoked or a token expired ends the session
// at its next request).
type session struct {
	credential string
	empresaID  string
	// actua is the company an admin switched to ("": the credential's
	// own); it applies only while the credential is an admin's.
	actua    string
	csrf     string
	created  time.Time
	lastSeen time.Time
}

// sessions opens, finds and closes sessions in the store, within their
// limits. It keeps nothing in memory: a session closed or switched by
// another process is seen at the next request.
type sessions struct {
	b   *billing.ConsoleSessionService
	lim billing.ConsoleSessionLimits
}

// Session bounds.
const (
	DefaultIdle       = 30 * time.Minute
	DefaultLifetime   = 12 * time.Hour
	maxSessions       = 10000
	maxPerCompany     = 50
	sessionIDBytes    = 32
	csrfTokenBytes    = 32
	sessionCookieName = "dtekit_console"
	// The sign-in form's token travels in a cookie of its own before
	// there is a session (double submit).
	preCookieName = "dtekit_console_ingreso"
)

func newSessions(b *billing.ConsoleSessionService, idle, life time.Duration) *sessions {
	if idle <= 0 {
		idle = DefaultIdle
	}
	if life <= 0 {
		life = DefaultLifetime
	}
	return &sessions{b: b, lim: billing.ConsoleSessionLimits{Idle: idle, Lifetime: life, PerCompany: maxPerCompany, Total: maxSessions}}
}

// randomToken is n random bytes in URL-safe base64.
func randomToken(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported systems
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// open creates a session for a credential that authenticated as a
// company, and returns its id. It fails with
// billing.ErrConsoleSessionsFull when the store holds its bound of live
// sessions of other companies.
func (s *sessions) open(ctx context.Context, credential, empresaID string, now time.Time) (id string, sess *session, err error) {
	id = randomToken(sessionIDBytes)
	bs := &billing.ConsoleSession{Credential: credential, EmpresaID: empresaID, CSRF: randomToken(csrfTokenBytes), Created: now}
	if err := s.b.Open(ctx, id, bs, s.lim); err != nil {
		return "", nil, err
	}
	return id, fromBilling(bs), nil
}

func fromBilling(b *billing.ConsoleSession) *session {
	return &session{credential: b.Credential, empresaID: b.EmpresaID, actua: b.Actua, csrf: b.CSRF, created: b.Created, lastSeen: b.LastSeen}
}

// get returns the live session of id; nil when there is none or it
// expired.
func (s *sessions) get(ctx context.Context, id string, now time.Time) (*session, error) {
	bs, err := s.b.Get(ctx, id, now, s.lim)
	if bs == nil || err != nil {
		return nil, err
	}
	return fromBilling(bs), nil
}

// switchTo makes the session of id act for empresaID ("" for the
// credential's own company).
func (s *sessions) switchTo(ctx context.Context, id, empresaID string) error {
	return s.b.Switch(ctx, id, empresaID)
}

// close ends the session of id, on every process.
func (s *sessions) close(ctx context.Context, id string) error { return s.b.Close(ctx, id) }

// sameToken compares a form's token with the expected one in constant
// time; an empty expected token never matches.
func sameToken(got, want string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}
