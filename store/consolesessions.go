package store

import (
	"context"
	"errors"
	"time"
)

// SealedConsoleSession is the kind of sealed secret of a console session:
// the credential it signed in with (ConsoleSession.SealedCredential);
// Sealed.ID is the session's ID.
const SealedConsoleSession = "console_session"

// ErrConsoleSessionsFull is returned by InsertConsoleSession when the
// database holds its bound of live sessions, none of them the company's
// to close.
var ErrConsoleSessionsFull = errors.New("store: too many console sessions")

// ConsoleSession is one browser signed in to the web console, shared by
// every process on the database. The browser keeps a random id; the store
// keeps only its SHA-256 (ID), so that the table names no session a
// browser could present, and the credential sealed by the caller, so
// that a copy of the database yields no credential either.
type ConsoleSession struct {
	// ID is the SHA-256 of the browser's id, in lowercase hexadecimal.
	ID string
	// EmpresaID is the company of the credential.
	EmpresaID string
	// Actua is the company an operator switched the session to; "" for
	// the credential's own.
	Actua string
	// SealedCredential is the credential, sealed by the caller (opaque
	// to the store).
	SealedCredential []byte
	// CSRF is the token every form of the session carries.
	CSRF      string
	CreatedAt time.Time
	// LastSeen is when the session was last used, as last recorded (the
	// caller records it at a coarse grain, not on every request).
	LastSeen time.Time
}

// ConsoleSessionBounds are what InsertConsoleSession keeps: the sessions
// of one company and of the whole database, counting only live ones (a
// session last seen before IdleBefore, or created before CreatedBefore,
// has expired).
type ConsoleSessionBounds struct {
	PerCompany, Total         int
	IdleBefore, CreatedBefore time.Time
}

// ConsoleSessionReader reads the console's sessions (the console, through
// the face); part of Reader.
type ConsoleSessionReader interface {
	// GetConsoleSession returns the session with this ID (the SHA-256 of
	// the browser's id), expired or not, or ErrNotFound. It is looked up
	// by its secret alone, as FindAPIKey is; the caller checks expiry.
	GetConsoleSession(ctx context.Context, id string) (*ConsoleSession, error)
}

// ConsoleSessionWriter writes the console's sessions; part of Tx.
type ConsoleSessionWriter interface {
	// InsertConsoleSession records a new session (zero CreatedAt and
	// LastSeen are set to now) within b: it first closes the company's
	// oldest live sessions beyond PerCompany-1, then refuses with
	// ErrConsoleSessionsFull when Total live sessions remain. Its
	// callers take turns on the whole database until their transaction
	// ends, so both bounds hold under concurrent sign-ins of one company
	// or of many (on PostgreSQL they wait for each other and for no other
	// write). A company that does not exist is ErrNotFound; a used ID
	// ConstraintPrimaryKey.
	InsertConsoleSession(ctx context.Context, s *ConsoleSession, b ConsoleSessionBounds) error
	// TouchConsoleSession sets the session's LastSeen; ErrNotFound when
	// there is no such session.
	TouchConsoleSession(ctx context.Context, id string, lastSeen time.Time) error
	// SwitchConsoleSession sets the session's Actua; ErrNotFound when
	// there is no such session.
	SwitchConsoleSession(ctx context.Context, id, actua string) error
	// DeleteConsoleSession removes the session; none is no error.
	DeleteConsoleSession(ctx context.Context, id string) error
	// PurgeConsoleSessions deletes up to limit sessions last seen before
	// idleBefore or created before createdBefore, and returns how many;
	// it takes the same turn as InsertConsoleSession.
	PurgeConsoleSessions(ctx context.Context, idleBefore, createdBefore time.Time, limit int) (int, error)
}
