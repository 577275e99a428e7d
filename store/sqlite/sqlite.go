// Package sqlite stores dtekit's records in one embedded SQLite file, the
// default backend: no server to run, durable to the file.
//
// It uses modernc.org/sqlite, a translation of SQLite to pure Go, so the
// binary needs no C compiler and no shared library. The database runs in
// WAL mode with synchronous=FULL, so a transaction that Store.Write
// reported committed survives a crash of the process or of the machine.
// Writes go through a single connection whose transactions begin with
// BEGIN IMMEDIATE: they run one at a time, each holding the write lock
// from its first statement, so no write ever fails half-way for a lock.
// Because each commit waits for an fsync, concurrent Writes are gathered
// into one transaction (group commit), each in its own SAVEPOINT: a
// function that fails is rolled back alone, the others commit together,
// and each Write returns only once that shared commit is durable.
// Reads use a separate pool of read-only connections that WAL lets run
// beside the writer. Another process opening the same file waits up to the
// busy timeout for the lock. Every connection keeps the statements it runs
// prepared, River's included, so a repeated statement is parsed once.
//
// The schema is created and upgraded by embedded goose migrations at Open,
// and River's tables (background jobs, riversqlite driver) the same way.
// Jobs are stored in the same file and enqueued in the same transactions
// as the records they follow.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/pressly/goose/v3"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	sqlite "modernc.org/sqlite"

	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/internal/sqlstore"
)

//go:embed migrations/*.sql
var migrations embed.FS

// FileName is the name of the database file a server keeps in its data
// directory.
const FileName = "dtekit.db"

// Options tunes Open. The zero value is fine.
type Options struct {
	// Jobs tunes the background job runner.
	Jobs store.JobsConfig
	// Readers is the number of read connections (default 4).
	Readers int
	// BusyTimeout is how long a connection waits for a lock held by
	// another process (default 10 s).
	BusyTimeout time.Duration
}

// Open opens (creating it if needed) the SQLite database at path, applies
// the migrations, and returns the store. Close it when done.
func Open(ctx context.Context, path string, opts *Options) (store.Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Readers <= 0 {
		o.Readers = 4
	}
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = 10 * time.Second
	}
	if path == "" || strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("store/sqlite: bad database path %q (empty, or holds ? or #)", path)
	}
	created, err := prepareFile(path)
	if err != nil {
		return nil, err
	}
	writer, err := openDB(writerDSN(path, o))
	if err != nil {
		return nil, fmt.Errorf("store/sqlite: opening %s: %w", path, err)
	}
	writer.SetMaxOpenConns(1)
	writer.SetConnMaxIdleTime(0)
	writer.SetConnMaxLifetime(0)
	closeAll := func(dbs ...*sql.DB) error {
		var err error
		for _, db := range dbs {
			err = errors.Join(err, db.Close())
		}
		return err
	}
	if err := writer.PingContext(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("store/sqlite: opening %s: %w", path, err), closeAll(writer))
	}
	if !created {
		if err := quickCheck(ctx, writer, path); err != nil {
			return nil, errors.Join(err, closeAll(writer))
		}
	}
	if err := migrate(ctx, writer); err != nil {
		return nil, errors.Join(fmt.Errorf("store/sqlite: migrating %s: %w", path, err), closeAll(writer))
	}
	reader, err := openDB(readerDSN(path, o))
	if err != nil {
		return nil, errors.Join(fmt.Errorf("store/sqlite: opening %s: %w", path, err), closeAll(writer))
	}
	reader.SetMaxOpenConns(o.Readers)
	db, err := sqlstore.New(sqlstore.Config{
		Dialect: &dialect,
		Writer:  sqlstore.SQLPool(writer),
		Reader:  sqlstore.SQLPool(reader),
		River:   sqlstore.RiverDriver(riversqlite.New(writer)),
		Jobs:    o.Jobs,
		Close:   func() error { return closeAll(reader, writer) },
		Scrub:   func(ctx context.Context) error { return scrub(ctx, writer) },
		// Concurrent Writes share a commit (and its fsync), each in its
		// own savepoint.
		GroupCommit: true,
	})
	if err != nil {
		return nil, errors.Join(err, closeAll(reader, writer))
	}
	return db, nil
}

// prepareFile makes sure path is a database file Open may use: a new one
// is created empty with mode 0600 (SQLite gives its -wal and -shm files the
// same mode), and reported as created; an existing one of zero length is
// refused, since every database dtekit made holds its schema (an empty
// file is a failed copy or a truncation, not a database to start anew).
func prepareFile(path string) (created bool, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		return true, f.Close()
	}
	if !errors.Is(err, fs.ErrExist) {
		return false, fmt.Errorf("store/sqlite: creating %s: %w", path, err)
	}
	info, err := os.Stat(path)
	if err != nil {
		return false, fmt.Errorf("store/sqlite: %s: %w", path, err)
	}
	if info.Size() == 0 {
		return false, fmt.Errorf("store/sqlite: %s is empty (zero bytes): it is not a dtekit database; restore it from a backup, or remove it to start a new one", path)
	}
	return false, wholePages(path, info.Size())
}

// wholePages refuses a database file whose size is not a whole number of
// its pages while no write-ahead log could explain it: a file cut short
// in the middle of its last page (a failed copy, a full disk) passes
// SQLite's own checks when what the cut removed was unused, and then
// fails on the first read that reaches that page. The page size is the
// header's (bytes 16–17, big-endian, 1 meaning 65536); a file without
// SQLite's header is left to SQLite to refuse.
func wholePages(path string, size int64) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("store/sqlite: %s: %w", path, err)
	}
	defer f.Close()
	var hdr [100]byte
	if _, err := io.ReadFull(f, hdr[:]); err != nil || string(hdr[:16]) != "SQLite format 3\x00" {
		return nil
	}
	page := int64(binary.BigEndian.Uint16(hdr[16:18]))
	if page == 1 {
		page = 65536
	}
	if page < 512 || page&(page-1) != 0 || size%page == 0 {
		return nil
	}
	if wal, err := os.Stat(path + "-wal"); err == nil && wal.Size() > 0 {
		return nil // the log holds pages the main file has yet to receive
	}
	return fmt.Errorf("store/sqlite: %s is truncated: %d bytes is not a whole number of its %d-byte pages, and no write-ahead log explains it; restore it from a backup", path, size, page)
}

// quickCheckTimeout bounds the start-up integrity check: on a database
// too large to check in that time the check is cut short and Open goes on.
const quickCheckTimeout = 30 * time.Second

// quickCheck runs SQLite's PRAGMA quick_check on an existing database and
// refuses one it finds damaged (a truncated file, a torn page), naming the
// file, instead of serving it.
func quickCheck(ctx context.Context, db *sql.DB, path string) error {
	ctx, cancel := context.WithTimeout(ctx, quickCheckTimeout)
	defer cancel()
	rows, err := db.QueryContext(ctx, "PRAGMA quick_check(5)")
	if err != nil {
		if ctx.Err() != nil {
			return nil // too large to check in time
		}
		return fmt.Errorf("store/sqlite: %s is damaged: %w; restore it from a backup", path, err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return fmt.Errorf("store/sqlite: checking %s: %w", path, err)
		}
		if line != "ok" {
			problems = append(problems, line)
		}
	}
	if err := rows.Err(); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("store/sqlite: %s is damaged: %w; restore it from a backup", path, err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("store/sqlite: %s is damaged (%s); restore it from a backup", path, strings.Join(problems, "; "))
	}
	return nil
}

// openDB opens a pool of connections to dsn that keep their prepared
// statements (see cachingConnector).
func openDB(dsn string) (*sql.DB, error) {
	c, err := sqlite.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(cachingConnector{c}), nil
}

// writerDSN is the data source of the writer connection: immediate
// transactions, WAL, synchronous=FULL, foreign keys, busy timeout, and
// temporary files in memory. The last keeps the sub-journal of group
// commit's savepoints (see sqlstore) in memory: SQLite otherwise spills
// it to a temporary file once it passes 64 KiB, and writes every page a
// savepoint changes there (the transaction, at most maxGroup Writes,
// bounds its size). secure_delete zeroes what a write deletes or replaces
// instead of leaving it in the file's free space, so that a secret
// replaced leaves no copy behind (see scrub).
func writerDSN(path string, o Options) string {
	return "file:" + path + "?_txlock=immediate&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=temp_store(2)&_pragma=secure_delete(1)&" + commonPragmas(o)
}

// readerDSN is the data source of the read connections: query_only.
func readerDSN(path string, o Options) string {
	return "file:" + path + "?_pragma=query_only(1)&" + commonPragmas(o)
}

func commonPragmas(o Options) string {
	return fmt.Sprintf("_pragma=busy_timeout(%d)&_pragma=foreign_keys(1)", o.BusyTimeout.Milliseconds())
}

// migrate applies dtekit's migrations and River's.
func migrate(ctx context.Context, db *sql.DB) error {
	return sqlstore.Migrate(ctx, db, goose.DialectSQLite3, migrations, sqlstore.RiverDriver(riversqlite.New(db)))
}

// SQLite extended result codes the dialect recognizes.
const (
	codeConstraintForeignKey = 787
	codeBusy                 = 5
	codeFull                 = 13 // SQLITE_FULL: the disk (or max_page_count) is full
)

func sqliteCode(err error) int {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code()
	}
	return 0
}

var dialect = sqlstore.Dialect{
	Name:          "sqlite",
	TimeArg:       sqlstore.SQLiteTimeArg,
	IsForeignKey:  func(err error) bool { return sqliteCode(err) == codeConstraintForeignKey },
	IsRetryable:   func(err error) bool { return sqliteCode(err)&0xff == codeBusy },
	IsStorageFull: func(err error) bool { return sqliteCode(err)&0xff == codeFull },
}

// scrub rebuilds the database file with VACUUM, which leaves nothing of
// what earlier writes moved, replaced or deleted (secure_delete zeroes
// that from the start; a database written without it keeps copies of rows
// in pages' free space), then copies the write-ahead log into the file
// and truncates the log to zero bytes. VACUUM builds its copy in a
// temporary file, not in memory (temp_store is switched to FILE for it),
// and needs about twice the database's size on disk meanwhile. It fails
// when a reader holds an old snapshot the checkpoint cannot pass.
func scrub(ctx context.Context, writer *sql.DB) error {
	conn, err := writer.Conn(ctx)
	if err != nil {
		return fmt.Errorf("store/sqlite: scrubbing: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "PRAGMA temp_store = FILE"); err != nil {
		return fmt.Errorf("store/sqlite: scrubbing: %w", err)
	}
	_, err = conn.ExecContext(ctx, "VACUUM")
	if _, rerr := conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA temp_store = MEMORY"); err == nil {
		err = rerr
	}
	if err != nil {
		return fmt.Errorf("store/sqlite: rebuilding the database file (VACUUM): %w", err)
	}
	var busy, logPages, done int
	if err := conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logPages, &done); err != nil {
		return fmt.Errorf("store/sqlite: checkpointing the write-ahead log: %w", err)
	}
	if busy != 0 {
		return errors.New("store/sqlite: checkpointing the write-ahead log: a reader holds an older snapshot; try again once reads are done")
	}
	return nil
}
