//go:build !unix

package main

import "os"

// lockDataDir creates the data directory; on this platform it takes no
// lock (see datalock_unix.go).
func lockDataDir(dir string) (release func(), err error) {
	return func() {}, os.MkdirAll(dir, 0o700)
}
