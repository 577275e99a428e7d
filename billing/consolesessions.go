package billing

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"time"

	"github.com/dtekit/dtekit/store"
)

// ConsoleSessionService keeps the web console's sessions in the store, so
// that every process on the database serves every request of a signed-in
// browser and a sign-out on one ends the session on all. The browser
// holds a random id; the store keys the session by the id's SHA-256 and
// keeps the credential sealed under the key-encryption key, bound to the
// company and that key, so that a copy of the database yields neither a
// session a browser could present nor a credential.
type ConsoleSessionService struct{ s *Service }

// ConsoleSession is one signed-in browser as the console sees it.
type ConsoleSession struct {
	// Credential is what the browser signed in with (an API key or a
	// bearer token): the console authenticates it again on every
	// request.
	Credential string
	// EmpresaID is the credential's company at sign-in.
	EmpresaID string
	// Actua is the company an operator switched to; "" for its own.
	Actua string
	// CSRF is the token every form of the session carries.
	CSRF string
	// Created is the sign-in; LastSeen the last use recorded, at most
	// ConsoleSessionTouchEvery behind the true last use.
	Created, LastSeen time.Time
}

// ConsoleSessionLimits end and bound sessions: after Idle without a
// request or Lifetime after sign-in a session has expired; a company
// keeps at most PerCompany live sessions (a new one closes its oldest)
// and the database Total (a new one beyond is refused).
type ConsoleSessionLimits struct {
	Idle, Lifetime    time.Duration
	PerCompany, Total int
}

func (l ConsoleSessionLimits) bounds(now time.Time) store.ConsoleSessionBounds {
	return store.ConsoleSessionBounds{PerCompany: l.PerCompany, Total: l.Total,
		IdleBefore: now.Add(-l.Idle), CreatedBefore: now.Add(-l.Lifetime)}
}

func (l ConsoleSessionLimits) expired(s *store.ConsoleSession, now time.Time) bool {
	return now.Sub(s.LastSeen) > l.Idle || now.Sub(s.CreatedAt) > l.Lifetime
}

// ErrConsoleSessionsFull is Open's error when the database holds its
// total of live sessions.
var ErrConsoleSessionsFull = errors.New("billing: too many console sessions open")

// ConsoleSessionTouchEvery is how stale a session's recorded last use may
// grow before a request writes it again: a page read does not write on
// every request.
const ConsoleSessionTouchEvery = time.Minute

// consoleSessionPurge bounds the expired sessions a sign-in deletes.
const consoleSessionPurge = 100

// maxConsoleSessionID bounds the id a browser may present.
const maxConsoleSessionID = 128

// consoleSessionKey is the store's key of a browser's session id.
func consoleSessionKey(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])
}

// consoleSessionAAD binds a sealed credential to its company and session.
func consoleSessionAAD(empresaID, key string) []byte {
	return secretAAD("console_session", empresaID, key)
}

// Open records the session of the browser id (random, chosen by the
// console) for sess, signed in at sess.Created, within lim. Expired
// sessions are purged first, a bounded number per sign-in.
func (r *ConsoleSessionService) Open(ctx context.Context, id string, sess *ConsoleSession, lim ConsoleSessionLimits) error {
	s := r.s
	key := consoleSessionKey(id)
	sealed, err := s.keys.Seal([]byte(sess.Credential), consoleSessionAAD(sess.EmpresaID, key))
	if err != nil {
		return err
	}
	rec := &store.ConsoleSession{ID: key, EmpresaID: sess.EmpresaID, Actua: sess.Actua, SealedCredential: sealed, CSRF: sess.CSRF,
		CreatedAt: sess.Created, LastSeen: sess.Created}
	b := lim.bounds(sess.Created)
	err = s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		if _, err := tx.PurgeConsoleSessions(ctx, b.IdleBefore, b.CreatedBefore, consoleSessionPurge); err != nil {
			return err
		}
		return tx.InsertConsoleSession(ctx, rec, b)
	})
	if errors.Is(err, store.ErrConsoleSessionsFull) {
		return ErrConsoleSessionsFull
	}
	return storeErr(err, "opening a console session", "empresa", sess.EmpresaID)
}

// Get returns the live session of the browser id at now, or nil when
// there is none: never opened, closed (on any process), expired (then it
// is deleted) or sealed under a key that no longer opens it. It records
// the use when the last one recorded is ConsoleSessionTouchEvery old.
func (r *ConsoleSessionService) Get(ctx context.Context, id string, now time.Time, lim ConsoleSessionLimits) (*ConsoleSession, error) {
	if id == "" || len(id) > maxConsoleSessionID {
		return nil, nil
	}
	s := r.s
	key := consoleSessionKey(id)
	rec, err := s.st.GetConsoleSession(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, storeErr(err, "reading a console session", "console_session", "")
	}
	if lim.expired(rec, now) {
		return nil, r.delete(ctx, key)
	}
	cred, err := s.keys.Open(rec.SealedCredential, consoleSessionAAD(rec.EmpresaID, key))
	if err != nil {
		s.log.Warn("billing: a console session's credential does not open; the session ends", slog.String("empresa_id", rec.EmpresaID))
		return nil, r.delete(ctx, key)
	}
	if now.Sub(rec.LastSeen) >= ConsoleSessionTouchEvery {
		err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.TouchConsoleSession(ctx, key, now) })
		switch {
		case errors.Is(err, store.ErrNotFound):
			return nil, nil // closed meanwhile
		case err != nil:
			// A page that only reads is still served (a full disk, say):
			// the use is recorded by a later request.
			s.log.Warn("billing: recording a console session's use", slog.String("empresa_id", rec.EmpresaID), slog.String("error", err.Error()))
		default:
			rec.LastSeen = now
		}
	}
	return &ConsoleSession{Credential: string(cred), EmpresaID: rec.EmpresaID, Actua: rec.Actua, CSRF: rec.CSRF,
		Created: rec.CreatedAt, LastSeen: rec.LastSeen}, nil
}

// Switch makes the session of the browser id act for empresaID ("" for
// the credential's own company); a session gone meanwhile is not found.
func (r *ConsoleSessionService) Switch(ctx context.Context, id, empresaID string) error {
	key := consoleSessionKey(id)
	err := r.s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.SwitchConsoleSession(ctx, key, empresaID) })
	return storeErr(err, "switching a console session", "console_session", "")
}

// Close ends the session of the browser id, on every process; none is no
// error.
func (r *ConsoleSessionService) Close(ctx context.Context, id string) error {
	if id == "" || len(id) > maxConsoleSessionID {
		return nil
	}
	return r.delete(ctx, consoleSessionKey(id))
}

func (r *ConsoleSessionService) delete(ctx context.Context, key string) error {
	err := r.s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.DeleteConsoleSession(ctx, key) })
	return storeErr(err, "closing a console session", "console_session", "")
}
