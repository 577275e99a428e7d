package sqlite_test

import (
	"testing"

	"github.com/dtekit/dtekit/store/backendtest"
)

// newDB is the conformance suite's Backend.NewDB: a copy, under the test's
// temporary directory, of a database migrated once per run
// (backendtest.SQLitePath). The conformance suite opens a new database in
// nearly every test, and migrating an empty file takes about 2 s under
// -race: half of the suite's time. Open runs the migrations on the copy
// all the same, finding nothing to do, as on every restart of a server.
// What migrating an empty file does is still checked by the tests that
// open one of their own (TestOpenRefusesDamagedFiles, the TestMigrate*
// tests, Example).
func newDB(t *testing.T) string {
	t.Helper()
	return backendtest.SQLitePath(t)
}
