package console

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"sync"
	"time"
)

// A session is one signed-in browser. It lives in the process's memory
// only: the browser holds its random id in a cookie, never the
// credential. The credential is kept here so that every request is
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

// sessions is the in-memory table of sessions, keyed by the SHA-256 of
// their id (a timing leak of the map's lookup then says nothing of an id).
type sessions struct {
	mu   sync.Mutex
	m    map[[32]byte]*session
	idle time.Duration
	life time.Duration
	// perCompany bounds one company's sessions: its oldest is closed
	// when a new one would pass the bound, so that no company can fill
	// the table for others. max bounds the table.
	perCompany int
	max        int
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

func newSessions(idle, life time.Duration) *sessions {
	if idle <= 0 {
		idle = DefaultIdle
	}
	if life <= 0 {
		life = DefaultLifetime
	}
	return &sessions{m: map[[32]byte]*session{}, idle: idle, life: life, perCompany: maxPerCompany, max: maxSessions}
}

// randomToken is n random bytes in URL-safe base64.
func randomToken(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported systems
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

func hashID(id string) [32]byte { return sha256.Sum256([]byte(id)) }

// open creates a session for a credential that authenticated as a
// company, and returns its id. ok is false when the table is full of
// live sessions of other companies.
func (s *sessions) open(credential, empresaID string, now time.Time) (id string, sess *session, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var oldestKey [32]byte
	var oldest time.Time
	mine := 0
	for k, v := range s.m {
		if s.expired(v, now) {
			delete(s.m, k)
			continue
		}
		if v.empresaID == empresaID {
			mine++
			if oldest.IsZero() || v.created.Before(oldest) {
				oldestKey, oldest = k, v.created
			}
		}
	}
	if mine >= s.perCompany {
		delete(s.m, oldestKey)
	}
	if len(s.m) >= s.max {
		return "", nil, false
	}
	id = randomToken(sessionIDBytes)
	sess = &session{credential: credential, empresaID: empresaID, csrf: randomToken(csrfTokenBytes), created: now, lastSeen: now}
	s.m[hashID(id)] = sess
	return id, sess, true
}

func (s *sessions) expired(v *session, now time.Time) bool {
	return now.Sub(v.lastSeen) > s.idle || now.Sub(v.created) > s.life
}

// get returns the live session of id and marks it seen; nil when there
// is none or it expired (then it is removed).
func (s *sessions) get(id string, now time.Time) *session {
	if id == "" || len(id) > 128 {
		return nil
	}
	k := hashID(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.m[k]
	if v == nil {
		return nil
	}
	if s.expired(v, now) {
		delete(s.m, k)
		return nil
	}
	v.lastSeen = now
	cp := *v
	return &cp
}

// switchTo makes the session of id act for empresaID ("" for the
// credential's own company).
func (s *sessions) switchTo(id, empresaID string) {
	k := hashID(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	if v := s.m[k]; v != nil {
		v.actua = empresaID
	}
}

// close ends the session of id.
func (s *sessions) close(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, hashID(id))
}

// sameToken compares a form's token with the expected one in constant
// time; an empty expected token never matches.
func sameToken(got, want string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}
