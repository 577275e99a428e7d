//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// dataLockFile is the file in the data directory whose lock a server holds.
const dataLockFile = "dtekit.lock"

// lockDataDir takes an exclusive lock on the data directory (a flock on
// DIR/dtekit.lock, created 0600), so that a second server cannot open the
// same SQLite database beside the first and run its own job runner on it.
// The lock goes with the process, however it ends; release lets it go
// earlier.
func lockDataDir(dir string) (release func(), err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, dataLockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("locking the data directory: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("the data directory %s is in use by another dtekit serve (%s is locked); stop it first or give another --data", dir, path)
		}
		return nil, fmt.Errorf("locking the data directory %s: %w", dir, err)
	}
	return func() { f.Close() }, nil
}
