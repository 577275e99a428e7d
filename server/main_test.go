package server

import (
	"fmt"
	"os"
	"testing"
)

// testDir holds the files the package's shared fixtures create.
var testDir string

func TestMain(m *testing.M) {
	var err error
	testDir, err = os.MkdirTemp("", "dtekit-server-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(testDir)
	os.Exit(code)
}
