//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDataDirLock: while one server holds the data directory, a second
// one's lock is refused with a message naming the directory; once the
// first lets go, the directory can be taken again (issue 20, point 10).
func TestDataDirLock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	release, err := lockDataDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(dir); err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("data directory mode %v, %v; want 700", info.Mode().Perm(), err)
	}
	if _, err := lockDataDir(dir); err == nil || !strings.Contains(err.Error(), "in use by another dtekit serve") || !strings.Contains(err.Error(), dir) {
		t.Fatalf("second lock: %v, want a refusal naming the directory", err)
	}
	release()
	again, err := lockDataDir(dir)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	again()
}
