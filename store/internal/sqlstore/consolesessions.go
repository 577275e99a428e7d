package sqlstore

import (
	"context"
	"time"

	"github.com/dtekit/dtekit/store"
)

// The web console's sessions, shared by every process on the database.

const consoleSessionCols = "id, empresa_id, actua, sealed_credential, csrf, created_at, last_seen"

// expiredSession is the condition of an expired session, with the idle
// bound as $1 and the life bound as $2.
const expiredSession = "(last_seen < $1 OR created_at < $2)"

// sessionBound is the parameter of an expiry bound: a zero time expires
// nothing (NULL would make every comparison unknown).
func (r *reader) sessionBound(t time.Time) any {
	if t.IsZero() {
		t = time.Unix(0, 0)
	}
	return r.d.targ(t)
}

func (r *reader) GetConsoleSession(ctx context.Context, id string) (*store.ConsoleSession, error) {
	var s store.ConsoleSession
	err := r.q.QueryRowContext(ctx, "SELECT "+consoleSessionCols+" FROM console_sesiones WHERE id = $1", id).
		Scan(&s.ID, &s.EmpresaID, &s.Actua, &s.SealedCredential, &s.CSRF, ts(&s.CreatedAt), ts(&s.LastSeen))
	if err != nil {
		return nil, r.notFound(err, "console session", id)
	}
	s.SealedCredential = bytesOrNil(s.SealedCredential)
	return &s, nil
}

// lockConsoleSessions makes the transaction's writer of console sessions
// wait for the others' transactions to end (the dialect's lock, held until
// this one ends; none where the database has one writer).
func (t *tx) lockConsoleSessions(ctx context.Context) error {
	if t.d.LockConsoleSessions == "" {
		return nil
	}
	_, err := t.q.ExecContext(ctx, t.d.LockConsoleSessions)
	return t.errf(err, "waiting for the other console sign-ins")
}

func (t *tx) InsertConsoleSession(ctx context.Context, s *store.ConsoleSession, b store.ConsoleSessionBounds) error {
	t.stamp(nil, &s.CreatedAt)
	if s.LastSeen.IsZero() {
		s.LastSeen = s.CreatedAt
	}
	s.LastSeen = normTime(s.LastSeen)
	// Sign-ins take turns, every company's, for as long as the count and
	// the insert below take: the total is the whole database's, so a
	// company's own lock would keep only its own bound.
	if err := t.lockConsoleSessions(ctx); err != nil {
		return err
	}
	if err := t.empresaExists(ctx, s.EmpresaID); err != nil {
		return err
	}
	idle, life := t.sessionBound(b.IdleBefore), t.sessionBound(b.CreatedBefore)
	var mine int
	if err := t.q.QueryRowContext(ctx, "SELECT COUNT(*) FROM console_sesiones WHERE empresa_id = $3 AND NOT "+expiredSession,
		idle, life, s.EmpresaID).Scan(&mine); err != nil {
		return t.errf(err, "counting the console sessions of empresa %q", s.EmpresaID)
	}
	if over := mine - max(b.PerCompany, 1) + 1; over > 0 {
		// The company's oldest sessions close for the new one.
		_, err := t.q.ExecContext(ctx, `DELETE FROM console_sesiones WHERE id IN (SELECT id FROM console_sesiones
			WHERE empresa_id = $3 AND NOT `+expiredSession+` ORDER BY created_at, id LIMIT $4)`, idle, life, s.EmpresaID, over)
		if err != nil {
			return t.errf(err, "closing the oldest console sessions of empresa %q", s.EmpresaID)
		}
	}
	var all int
	if err := t.q.QueryRowContext(ctx, "SELECT COUNT(*) FROM console_sesiones WHERE NOT "+expiredSession, idle, life).Scan(&all); err != nil {
		return t.errf(err, "counting the console sessions")
	}
	if all >= b.Total {
		return store.ErrConsoleSessionsFull
	}
	res, err := t.q.ExecContext(ctx, "INSERT INTO console_sesiones ("+consoleSessionCols+") VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING",
		s.ID, s.EmpresaID, s.Actua, blob(s.SealedCredential), s.CSRF, t.d.targ(s.CreatedAt), t.d.targ(s.LastSeen))
	return t.inserted(ctx, res, err, "console session", "", s.ID, store.ConstraintPrimaryKey)
}

func (t *tx) TouchConsoleSession(ctx context.Context, id string, lastSeen time.Time) error {
	res, err := t.q.ExecContext(ctx, "UPDATE console_sesiones SET last_seen = $2 WHERE id = $1", id, t.d.targ(lastSeen))
	return t.affectedOne(res, err, "console session", id)
}

func (t *tx) SwitchConsoleSession(ctx context.Context, id, actua string) error {
	res, err := t.q.ExecContext(ctx, "UPDATE console_sesiones SET actua = $2 WHERE id = $1", id, actua)
	return t.affectedOne(res, err, "console session", id)
}

func (t *tx) DeleteConsoleSession(ctx context.Context, id string) error {
	_, err := t.q.ExecContext(ctx, "DELETE FROM console_sesiones WHERE id = $1", id)
	return t.errf(err, "deleting console session %q", id)
}

func (t *tx) PurgeConsoleSessions(ctx context.Context, idleBefore, createdBefore time.Time, limit int) (int, error) {
	if limit <= 0 {
		return 0, nil
	}
	// A sign-in purges before it inserts: taking the turn before the
	// rows, it never holds a row that the sign-in before it, seeing it
	// still live, would close while this one waits for the turn (a
	// deadlock when bounds taken a moment apart disagree on the row).
	if err := t.lockConsoleSessions(ctx); err != nil {
		return 0, err
	}
	res, err := t.q.ExecContext(ctx, "DELETE FROM console_sesiones WHERE id IN (SELECT id FROM console_sesiones WHERE "+expiredSession+" LIMIT $3)",
		t.sessionBound(idleBefore), t.sessionBound(createdBefore), limit)
	if err != nil {
		return 0, t.errf(err, "purging expired console sessions")
	}
	n, err := res.RowsAffected()
	return int(n), t.errf(err, "purging expired console sessions")
}
