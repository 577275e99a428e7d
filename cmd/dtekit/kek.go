package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/dtekit/dtekit/billing"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/sqlite"
)

// The key-encryption key: where serve and the admin commands find it, and
// "dtekit admin kek rotate".

// kekNewSuffix names, beside DIR/kek.key, the file that holds the new key
// of a rotation until the rotation is finished.
const kekNewSuffix = ".new"

// errPostgresKEK refuses PostgreSQL without DTEKIT_KEK.
var errPostgresKEK = errors.New("PostgreSQL needs the key-encryption key in DTEKIT_KEK (64 hex digits; the same for every instance)")

// openKeyring returns the key-encryption key of the database st:
// DTEKIT_KEK when set, else (SQLite) the key file DIR/kek.key, which is
// made only for a new database. A key that is not the one the database's
// secrets are sealed under, or a key file lost, is refused with what to
// do (kekAdvice).
func openKeyring(ctx context.Context, env *cmdEnv, st store.Store, dataDir, dbURL string) (*billing.Keyring, error) {
	if v := env.getenv("DTEKIT_KEK"); v != "" {
		kr, err := envKeyring(v)
		if err != nil {
			return nil, err
		}
		if err := billing.CheckKEK(ctx, st, kr); err != nil {
			return nil, kekAdvice(err, "DTEKIT_KEK", dataDir, dbURL)
		}
		return kr, nil
	}
	if dbURL != "" {
		return nil, errPostgresKEK
	}
	path := filepath.Join(dataDir, kekFileName)
	kr, err := billing.LoadKeyFile(ctx, st, path)
	if err != nil {
		return nil, kekAdvice(err, path, dataDir, dbURL)
	}
	return kr, nil
}

// envKeyring reads DTEKIT_KEK's value.
func envKeyring(v string) (*billing.Keyring, error) {
	kek, err := billing.ParseKEK(v)
	if err != nil {
		return nil, fmt.Errorf("DTEKIT_KEK: %w", err)
	}
	return billing.NewKeyring(kek)
}

// kekAdvice adds to a refused key-encryption key what the operator should
// do; source names where the key came from. Other errors pass unchanged.
func kekAdvice(err error, source, dataDir, dbURL string) error {
	var ke *billing.KEKError
	if !errors.As(err, &ke) {
		return err
	}
	if dbURL == "" && ke.Recorded != "" {
		pending := filepath.Join(dataDir, kekFileName+kekNewSuffix)
		if kr, rerr := billing.ReadKeyFile(pending); rerr == nil && kr.Fingerprint() == ke.Recorded {
			return fmt.Errorf("%w.\nA key rotation stopped after re-sealing the secrets under the key in %s: run \"dtekit admin kek rotate --data %s\" to finish it", err, pending, dataDir)
		}
	}
	return fmt.Errorf("%w.\nStart with the key this database's secrets were sealed under (%s; after \"dtekit admin kek rotate\", the new key): restore it from the backup taken with the database. "+
		"A new key cannot open the stored certificates, CAF keys and webhook secrets (see \"Backups\" in the README)", err, source)
}

const kekUsage = `usage: dtekit admin kek rotate [--data DIR | --database-url URL] [--new-key-file FILE]

Re-seals every secret of the database (certificates, CAF keys, webhook
secrets) under a new key-encryption key, in one transaction that also records
the new key's fingerprint. Stop every server of the database first, and start
them with the new key afterwards.

With SQLite and no DTEKIT_KEK, the current key is DIR/kek.key: the new key is
generated into DIR/kek.key.new and, once the transaction has committed,
replaces DIR/kek.key.

With DTEKIT_KEK (always with PostgreSQL), DTEKIT_KEK is the current key and
--new-key-file names the new one (generated there, mode 0600, when the file
does not exist); then set DTEKIT_KEK to that file's content on every server.

If the command stops half-way, run it again with the same arguments: before
the commit nothing changed; after it, the run finds the new key recorded and
only finishes (DTEKIT_KEK may then already be the new key). Back up the
database and the new key together afterwards: backups taken before the
rotation need the previous key.
`

// adminKEKRotate is "dtekit admin kek rotate".
func adminKEKRotate(ctx context.Context, env *cmdEnv, args []string) int {
	fs := newFlagSet(env, "admin kek rotate")
	var db adminDB
	db.define(env, fs)
	var newKeyFile string
	fs.StringVar(&newKeyFile, "new-key-file", "", "file of the new key (with DTEKIT_KEK); generated there when missing")
	pos, code, ok := parseFlags(env, fs, kekUsage, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return usageError(env, "admin", "unexpected arguments %q", pos)
	}
	envKEK := env.getenv("DTEKIT_KEK")
	if envKEK == "" && db.dbURL != "" {
		return usageError(env, "admin", "with PostgreSQL, give the current key in DTEKIT_KEK and the new one with --new-key-file")
	}
	if envKEK != "" && newKeyFile == "" {
		return usageError(env, "admin", "with DTEKIT_KEK, name the new key's file with --new-key-file")
	}
	if envKEK == "" && newKeyFile != "" {
		return usageError(env, "admin", "--new-key-file goes with DTEKIT_KEK; without it the new key is made in %s", filepath.Join(db.data, kekFileName+kekNewSuffix))
	}
	if err := kekRotate(ctx, env, db, envKEK, newKeyFile); err != nil {
		fmt.Fprintf(env.stderr, "dtekit admin kek rotate: %s\n", errLine(err))
		return exitFail
	}
	return exitOK
}

// kekRotate runs the rotation: the current key from envKEK or DIR/kek.key,
// the new one from newKeyFile or DIR/kek.key.new (made when missing).
func kekRotate(ctx context.Context, env *cmdEnv, db adminDB, envKEK, newKeyFile string) error {
	if db.dbURL == "" {
		if _, err := os.Stat(filepath.Join(db.data, sqlite.FileName)); err != nil {
			return fmt.Errorf("--data %s: %w", db.data, err)
		}
		// No server may run on the database meanwhile.
		release, err := lockDataDir(db.data)
		if err != nil {
			return err
		}
		defer release()
	}
	var cur *billing.Keyring
	var err error
	keyFile := filepath.Join(db.data, kekFileName)
	if envKEK != "" {
		cur, err = envKeyring(envKEK)
	} else {
		newKeyFile = keyFile + kekNewSuffix
		cur, err = billing.ReadKeyFile(keyFile)
	}
	if err != nil {
		return err
	}
	next, err := readOrMakeKeyFile(newKeyFile)
	if err != nil {
		return err
	}
	logger, _ := newLogger(env, "warn")
	st, _, err := openStore(ctx, env, db.data, db.dbURL, logger)
	if err != nil {
		return err
	}
	defer st.Close()
	res, err := billing.RotateKEK(ctx, st, cur, next)
	if err != nil {
		source := "DTEKIT_KEK"
		if envKEK == "" {
			source = keyFile
		}
		return kekAdvice(err, source, db.data, db.dbURL)
	}
	if res.AlreadyDone {
		fmt.Fprintf(env.stdout, "the database's secrets are already sealed under the key with fingerprint %s (a rotation committed before)\n", billing.ShortFingerprint(next.Fingerprint()))
	} else {
		fmt.Fprintf(env.stdout, "re-sealed %d secrets under the key with fingerprint %s\n", res.Resealed, billing.ShortFingerprint(next.Fingerprint()))
	}
	if envKEK == "" {
		// The new key replaces the old in one rename; the old is gone.
		if err := billing.ReplaceKeyFile(newKeyFile, keyFile); err != nil {
			return fmt.Errorf("%w (run the command again to finish)", err)
		}
		fmt.Fprintf(env.stdout, "%s now holds the new key.\n", keyFile)
	} else {
		fmt.Fprintf(env.stdout, "set DTEKIT_KEK to the content of %s on every server, then start them.\n", newKeyFile)
	}
	fmt.Fprintln(env.stdout, "Back up the database and the new key together now: backups taken before need the previous key.")
	return nil
}

// readOrMakeKeyFile reads the key in path, or generates one there when
// the file does not exist (a rotation run again reuses it).
func readOrMakeKeyFile(path string) (*billing.Keyring, error) {
	kr, err := billing.ReadKeyFile(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return kr, err
	}
	kek, err := billing.NewKEK()
	if err != nil {
		return nil, err
	}
	if err := billing.WriteKeyFile(path, kek); err != nil {
		return nil, err
	}
	return billing.NewKeyring(kek)
}
