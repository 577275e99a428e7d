package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
)

// readInput reads a file, or standard input for "-", refusing anything
// larger than limit bytes.
func readInput(ctx context.Context, env *cmdEnv, path string, limit int) ([]byte, error) {
	r, name, err := openInput(ctx, env, path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return readLimited(r, name, limit)
}

// openInput opens a file, or standard input for "-", and returns the name
// errors give it.
func openInput(ctx context.Context, env *cmdEnv, path string) (io.ReadCloser, string, error) {
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	if path == "-" {
		if env.stdin == nil {
			return nil, "", errors.New("no standard input")
		}
		return io.NopCloser(env.stdin), "standard input", nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, "", err
	}
	return f, path, nil
}

// readLimited reads r whole, refusing more than limit bytes; name says what
// is read in errors.
func readLimited(r io.Reader, name string, limit int) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if len(data) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", name, limit)
	}
	return data, nil
}

// Size limits of the files the commands read.
const (
	maxSmallFile = 1 << 20  // emisor JSON, CAF, certificate, trusted key
	maxXMLFile   = 64 << 20 // a DTE or an envelope
)

// readFile reads a named file, refusing more than limit bytes.
func readFile(path string, limit int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readLimited(f, path, limit)
}
