package sqlite

import (
	"container/list"
	"context"
	"database/sql/driver"
	"errors"
	"reflect"
)

// Every statement modernc.org/sqlite runs outside a prepared statement is
// parsed and planned anew, then thrown away. The store's transactions
// repeat the same few dozen statements, and so do River's (its job insert
// is a long INSERT whose parse costs as much as running it), so the
// connections the store opens keep their prepared statements, keyed by
// query text, and run a repeated query on the statement prepared the first
// time. The cache sits below database/sql, in the connection itself, so it
// serves every caller of the connection alike: the store, River (through
// the *sql.Tx the store hands it) and the migrations.

// maxConnStmts bounds how many prepared statements one connection keeps;
// the least recently used one is closed to make room.
const maxConnStmts = 128

// cachingConnector opens connections that keep their prepared statements.
type cachingConnector struct {
	driver.Connector
}

// Connect opens a connection of the wrapped connector and wraps it.
func (c cachingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	dc, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return newCachingConn(dc)
}

// driverConn is what every modernc.org/sqlite connection implements and
// cachingConn forwards, so that database/sql keeps using the context
// forms (see sqlite.NewConnector).
type driverConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// driverStmt is what every modernc.org/sqlite statement implements.
type driverStmt interface {
	driver.Stmt
	driver.StmtExecContext
	driver.StmtQueryContext
}

func newCachingConn(dc driver.Conn) (driver.Conn, error) {
	c, ok := dc.(driverConn)
	if !ok {
		return nil, errors.Join(errors.New("store/sqlite: the driver's connection lacks the context methods"), dc.Close())
	}
	return &cachingConn{driverConn: c, stmts: map[string]*list.Element{}, lru: list.New()}, nil
}

// cachingConn is a connection that runs ExecContext and QueryContext on
// prepared statements it keeps. database/sql never uses a connection from
// two goroutines at once (closing a Rows included), so it needs no lock.
type cachingConn struct {
	driverConn
	stmts map[string]*list.Element // query text → element of lru holding a *connStmt
	lru   *list.List               // most recently used first
}

// connStmt is one kept statement. While a Rows of it is open (rows non
// nil), the statement is busy: running the same query text again meanwhile
// (a query inside a loop over another's rows) gets a statement of its own.
type connStmt struct {
	query string
	stmt  driverStmt
	rows  *stmtRows
}

var _ driverConn = (*cachingConn)(nil)

// Unwrap returns the driver's own connection (sqlite.Limit and the like
// look through it).
func (c *cachingConn) Unwrap() driver.Conn { return c.driverConn }

// stmt returns the kept statement of query, preparing and keeping it the
// first time; nil, nil when that statement is busy or every kept one is.
func (c *cachingConn) stmt(ctx context.Context, query string) (*connStmt, error) {
	if e, ok := c.stmts[query]; ok {
		cs := e.Value.(*connStmt)
		if cs.rows != nil {
			return nil, nil
		}
		c.lru.MoveToFront(e)
		return cs, nil
	}
	if c.lru.Len() >= maxConnStmts && !c.evict() {
		return nil, nil
	}
	ds, err := c.driverConn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	st, ok := ds.(driverStmt)
	if !ok {
		return nil, errors.Join(errors.New("store/sqlite: the driver's statement lacks the context methods"), ds.Close())
	}
	cs := &connStmt{query: query, stmt: st}
	c.stmts[query] = c.lru.PushFront(cs)
	return cs, nil
}

// evict closes the least recently used statement that is not busy; it
// reports false when every kept statement is busy.
func (c *cachingConn) evict() bool {
	for e := c.lru.Back(); e != nil; e = e.Prev() {
		cs := e.Value.(*connStmt)
		if cs.rows != nil {
			continue
		}
		c.lru.Remove(e)
		delete(c.stmts, cs.query)
		cs.stmt.Close() // a failure to finalize leaves nothing to undo
		return true
	}
	return false
}

// ExecContext runs query on its kept statement.
func (c *cachingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	cs, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if cs == nil {
		return c.driverConn.ExecContext(ctx, query, args)
	}
	// The driver resets the statement (and unbinds its arguments) after
	// running it, whatever the outcome.
	return cs.stmt.ExecContext(ctx, args)
}

// QueryContext runs query on its kept statement, busy until the returned
// rows are closed.
func (c *cachingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	cs, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if cs == nil {
		return c.driverConn.QueryContext(ctx, query, args)
	}
	// On failure the driver resets the statement itself; on success the
	// rows reset it when closed.
	r, err := cs.stmt.QueryContext(ctx, args)
	if err != nil {
		return nil, err
	}
	cs.rows = &stmtRows{Rows: r, cs: cs}
	return cs.rows, nil
}

// Close closes the kept statements (and a Rows still open on one, which
// database/sql does not leave behind), then the connection.
func (c *cachingConn) Close() error {
	var err error
	for e := c.lru.Front(); e != nil; e = e.Next() {
		cs := e.Value.(*connStmt)
		if cs.rows != nil {
			err = errors.Join(err, cs.rows.Close())
		}
		err = errors.Join(err, cs.stmt.Close())
	}
	c.lru.Init()
	clear(c.stmts)
	return errors.Join(err, c.driverConn.Close())
}

// stmtRows is the Rows of a kept statement: closing it frees the
// statement. It forwards the column type methods of the driver's Rows.
type stmtRows struct {
	driver.Rows
	cs *connStmt
}

func (r *stmtRows) Close() error {
	if r.cs == nil {
		return nil
	}
	err := r.Rows.Close()
	r.cs.rows, r.cs = nil, nil
	return err
}

func (r *stmtRows) ColumnTypeDatabaseTypeName(i int) string {
	if t, ok := r.Rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
		return t.ColumnTypeDatabaseTypeName(i)
	}
	return ""
}

func (r *stmtRows) ColumnTypeLength(i int) (int64, bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypeLength); ok {
		return t.ColumnTypeLength(i)
	}
	return 0, false
}

func (r *stmtRows) ColumnTypeNullable(i int) (nullable, ok bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypeNullable); ok {
		return t.ColumnTypeNullable(i)
	}
	return false, false
}

func (r *stmtRows) ColumnTypePrecisionScale(i int) (precision, scale int64, ok bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypePrecisionScale); ok {
		return t.ColumnTypePrecisionScale(i)
	}
	return 0, 0, false
}

func (r *stmtRows) ColumnTypeScanType(i int) reflect.Type {
	if t, ok := r.Rows.(driver.RowsColumnTypeScanType); ok {
		return t.ColumnTypeScanType(i)
	}
	return reflect.TypeFor[any]()
}
