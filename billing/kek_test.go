package billing

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/store"
)

// TestKEKFingerprint: the fingerprint is HMAC-SHA256 of the label
// "dtekit key-encryption key fingerprint v1" under the key, as OpenSSL
// computes it:
//
//	printf 'dtekit key-encryption key fingerprint v1' |
//	  openssl dgst -sha256 -mac HMAC -macopt hexkey:000102…1e1f
func TestKEKFingerprint(t *testing.T) {
	t.Parallel()
	kek, err := ParseKEK("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
	if err != nil {
		t.Fatal(err)
	}
	k, _ := NewKeyring(kek)
	const want = "bf0dbe4509ccb8da4f60d5c090512f5856fc67c3290d3a18dbde50e3672b69e4"
	if got := k.Fingerprint(); got != want {
		t.Errorf("Fingerprint = %s, want %s", got, want)
	}
	if got := ShortFingerprint(want); got != "bf0dbe4509ccb8da" {
		t.Errorf("ShortFingerprint = %s", got)
	}
	other, _ := NewKeyring(bytes.Repeat([]byte{1}, KEKSize))
	if other.Fingerprint() == want {
		t.Error("two keys have one fingerprint")
	}
}

// keyring returns a keyring under a key of 32 bytes b.
func keyring(t testing.TB, b byte) *Keyring {
	t.Helper()
	k, err := NewKeyring(bytes.Repeat([]byte{b}, KEKSize))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestLoadKeyFile: the key file is made (0600) only for a database that
// needs no key yet; once the database records a key, a missing file or
// another key is refused, and the file is never replaced.
func TestLoadKeyFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := openStore(ctx, "sqlite", filepath.Join(dir, "dtekit.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	path := filepath.Join(dir, "kek.key")
	k1, err := LoadKeyFile(ctx, st, path)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, %v; want 0600", info.Mode().Perm(), err)
	}
	if fp, ok, _ := st.Setting(ctx, store.SettingKEKFingerprint); !ok || fp != k1.Fingerprint() {
		t.Errorf("recorded fingerprint %q, %v; want %s", fp, ok, k1.Fingerprint())
	}
	sealed, _ := k1.Seal([]byte("x"), nil)
	k2, err := LoadKeyFile(ctx, st, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k2.Open(sealed, nil); err != nil {
		t.Errorf("the reloaded key does not open what the first sealed: %v", err)
	}
	if err := WriteKeyFile(path, bytes.Repeat([]byte{3}, KEKSize)); !errors.Is(err, fs.ErrExist) {
		t.Errorf("WriteKeyFile over an existing key file: %v, want fs.ErrExist", err)
	}
	if k3, err := ReadKeyFile(path); err != nil || k3.Fingerprint() != k1.Fingerprint() {
		t.Errorf("the key file changed: %v", err)
	}
	if names, _ := filepath.Glob(filepath.Join(dir, "kek.key.tmp*")); len(names) > 0 {
		t.Errorf("temporary key files left behind: %v", names)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKeyFile(ctx, st, path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a world-readable key file: %v", err)
	}
	os.Chmod(path, 0o600)

	// The key file lost: no new key is made for this database.
	saved, _ := os.ReadFile(path)
	os.Remove(path)
	_, err = LoadKeyFile(ctx, st, path)
	var ke *KEKError
	if !errors.Is(err, ErrKEKMissing) || !errors.As(err, &ke) || ke.Recorded != k1.Fingerprint() {
		t.Errorf("a missing key file for a database that records a key: %v", err)
	}
	if _, serr := os.Stat(path); !os.IsNotExist(serr) {
		t.Error("a key file was made for a database that records another key")
	}
	// Another key in the file: refused, naming both fingerprints.
	if err := WriteKeyFile(path, bytes.Repeat([]byte{9}, KEKSize)); err != nil {
		t.Fatal(err)
	}
	_, err = LoadKeyFile(ctx, st, path)
	if !errors.Is(err, ErrKEKMismatch) || !strings.Contains(err.Error(), ShortFingerprint(k1.Fingerprint())) ||
		!strings.Contains(err.Error(), ShortFingerprint(keyring(t, 9).Fingerprint())) {
		t.Errorf("another key in the key file: %v", err)
	}
	os.Remove(path)
	os.WriteFile(path, saved, 0o600)
	if _, err := LoadKeyFile(ctx, st, path); err != nil {
		t.Errorf("the key file restored: %v", err)
	}
}

// TestStartRefusesAnotherKEK: a Service whose key is not the one the
// database's secrets are sealed under does not start, whether the
// database records the key's fingerprint or (written by an earlier
// version) only holds secrets that the key does not open; the right key
// starts and is recorded (issue 20, point 5).
func TestStartRefusesAnotherKEK(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			// Secrets sealed by a Service that never started: the
			// database records no fingerprint, as before this version.
			f := newFixture(t, b, true)
			if _, ok, _ := f.s.st.Setting(ctx, store.SettingKEKFingerprint); ok {
				t.Fatal("a fingerprint was recorded before any start")
			}
			other := newService(t, b.name, f.dsn, Config{Keyring: keyring(t, 5)})
			err := other.Start(ctx)
			if !errors.Is(err, ErrKEKMismatch) {
				t.Fatalf("Start with another key over unrecorded secrets: %v, want ErrKEKMismatch", err)
			}
			if other.st.Jobs().Running() {
				t.Error("the job runner started with the wrong key")
			}
			if _, ok, _ := f.s.st.Setting(ctx, store.SettingKEKFingerprint); ok {
				t.Error("the wrong key's fingerprint was recorded")
			}
			// The right key starts and is recorded.
			if err := f.s.Start(ctx); err != nil {
				t.Fatal(err)
			}
			f.s.Stop(ctx)
			if fp, _, _ := f.s.st.Setting(ctx, store.SettingKEKFingerprint); fp != f.s.keys.Fingerprint() {
				t.Errorf("recorded fingerprint %q, want %s", fp, f.s.keys.Fingerprint())
			}
			// Now recorded: another key is refused at once.
			again := newService(t, b.name, f.dsn, Config{Keyring: keyring(t, 6)})
			err = again.Start(ctx)
			var ke *KEKError
			if !errors.As(err, &ke) || ke.Recorded != f.s.keys.Fingerprint() || ke.Given != again.keys.Fingerprint() {
				t.Errorf("Start with another key over a recorded one: %v", err)
			}
		})
	}
}

// rotationFixture is a database with one secret of each kind, a CAF
// stored in clear by an earlier version and a deleted webhook, sealed
// under the tests' key.
type rotationFixture struct {
	*fixture
	hook   string
	clear  map[string][]byte // the clear CAF's secrets
	legacy string            // its id
}

func newRotationFixture(t *testing.T, b backend) *rotationFixture {
	t.Helper()
	ctx := context.Background()
	f := newFixture(t, b, true)
	h, err := f.s.Webhooks.Create(ctx, f.emp.ID, api.WebhookInput{URL: "https://hooks.example.com/a", Events: []string{"dte.created"}})
	if err != nil {
		t.Fatal(err)
	}
	gone, err := f.s.Webhooks.Create(ctx, f.emp.ID, api.WebhookInput{URL: "https://hooks.example.com/gone", Events: []string{"dte.created"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.s.Webhooks.Delete(ctx, f.emp.ID, gone.ID); err != nil {
		t.Fatal(err)
	}
	file := []byte(issueCAF(t, 34, 1, 50))
	parsed, _ := caf.Parse(file)
	legacy := &store.CAF{EmpresaID: f.emp.ID, TipoDTE: 34, FolioDesde: 1, FolioHasta: 50, Ambiente: parsed.Ambiente(),
		FechaAutorizacion: parsed.FA, XML: file, IsActive: true}
	if err := f.s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertCAF(ctx, legacy) }); err != nil {
		t.Fatal(err)
	}
	// The company's mailbox passwords, SMTP and IMAP.
	mail := api.CorreoSettings{Direccion: "dte@empresa.cl",
		SMTP: &api.CorreoServidor{Host: "smtp.empresa.cl", Port: 587, Usuario: "dte", Password: "smtp-s3creto"},
		IMAP: &api.CorreoServidor{Host: "imap.empresa.cl", Port: 993, Usuario: "dte", Password: "imap-s3creto"}}
	if _, err := f.s.Mail.UpdateSettings(ctx, f.emp.ID, mail); err != nil {
		t.Fatal(err)
	}
	// A console session, its credential sealed.
	cs := &ConsoleSession{Credential: "dtk_console-credential", EmpresaID: f.emp.ID, CSRF: "t", Created: time.Now()}
	if err := f.s.ConsoleSessions.Open(ctx, rotationSessionID, cs, rotationSessionLimits); err != nil {
		t.Fatal(err)
	}
	if err := CheckKEK(ctx, f.s.st, f.s.keys); err != nil {
		t.Fatal(err)
	}
	return &rotationFixture{fixture: f, hook: h.ID, clear: cafSecrets(t, file), legacy: legacy.ID}
}

// The rotation fixture's console session.
const rotationSessionID = "rotation-browser-session"

var rotationSessionLimits = ConsoleSessionLimits{Idle: time.Hour, Lifetime: time.Hour, PerCompany: 1, Total: 1}

// checkUnder checks that the database serves with key k: a Service under
// it starts, emits a stamped and signed document, and lists the webhook
// with its secret.
func (f *rotationFixture) checkUnder(t *testing.T, b backend, k *Keyring) {
	t.Helper()
	ctx := context.Background()
	s := newService(t, b.name, f.dsn, Config{Keyring: k})
	if err := s.Start(ctx); err != nil {
		t.Fatalf("Start under the key %s: %v", ShortFingerprint(k.Fingerprint()), err)
	}
	defer s.Stop(ctx)
	emitAndVerify(t, s, f.emp.ID)
	hooks, err := s.Webhooks.List(ctx, f.emp.ID)
	if err != nil || len(hooks) != 1 || hooks[0].ID != f.hook || hooks[0].Secret == "" {
		t.Errorf("webhooks under the key %s: %+v, %v; want %s with its masked secret", ShortFingerprint(k.Fingerprint()), hooks, err, f.hook)
	}
	c, err := s.st.GetCAF(ctx, f.emp.ID, f.legacy)
	if err != nil || c.SealedKey == nil {
		t.Errorf("the CAF stored in clear: %v, sealed %v", err, c != nil && c.SealedKey != nil)
	}
	ms, err := s.mailSettings(ctx, f.emp.ID)
	if err != nil || ms == nil || ms.SMTP.Password != "smtp-s3creto" || ms.IMAP.Password != "imap-s3creto" {
		t.Errorf("the mailbox passwords under the key %s: %+v, %v", ShortFingerprint(k.Fingerprint()), ms, err)
	}
	cs, err := s.ConsoleSessions.Get(ctx, rotationSessionID, time.Now(), rotationSessionLimits)
	if err != nil || cs == nil || cs.Credential != "dtk_console-credential" {
		t.Errorf("the console session under the key %s: %+v, %v", ShortFingerprint(k.Fingerprint()), cs, err)
	}
}

// TestRotateKEK: rotation re-seals every secret (the CAF stored in clear
// included) under the new key and records it; the database then serves
// under the new key only; running it again changes nothing; a wrong old
// key changes nothing (issue 20, point 5).
func TestRotateKEK(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			f := newRotationFixture(t, b)
			old, next := f.s.keys, keyring(t, 42)
			if _, err := RotateKEK(ctx, f.s.st, keyring(t, 41), next); !errors.Is(err, ErrKEKMismatch) {
				t.Errorf("rotation from a wrong key: %v, want ErrKEKMismatch", err)
			}
			res, err := RotateKEK(ctx, f.s.st, old, next)
			if err != nil {
				t.Fatal(err)
			}
			// A certificate, two CAF keys (one sealed at upload, one in
			// clear until now), one webhook secret (the deleted
			// webhook's is erased), two mailbox passwords and a console
			// session's credential.
			if res.Resealed != 7 || res.AlreadyDone {
				t.Errorf("rotation = %+v, want 7 secrets re-sealed", res)
			}
			if found := leaks(dbCopy(t, b.name, f.dsn), f.clear); len(found) > 0 {
				t.Errorf("after the rotation, the database holds the clear CAF's %v", found)
			}
			f.checkUnder(t, b, next)
			s := newService(t, b.name, f.dsn, Config{Keyring: old})
			if err := s.Start(ctx); !errors.Is(err, ErrKEKMismatch) {
				t.Errorf("Start under the old key after rotation: %v, want ErrKEKMismatch", err)
			}
			for _, keys := range [][2]*Keyring{{old, next}, {next, next}} {
				if res, err := RotateKEK(ctx, f.s.st, keys[0], keys[1]); err != nil || !res.AlreadyDone || res.Resealed != 0 {
					t.Errorf("rotation run again: %+v, %v; want AlreadyDone", res, err)
				}
			}
		})
	}
}

// crashingStore fails, as a process killed before the commit would, the
// transaction that records a fingerprint other than the one already
// recorded: the rotation's.
type crashingStore struct{ store.Store }

var errKilled = errors.New("test: process killed before the commit")

func (c crashingStore) Write(ctx context.Context, fn func(ctx context.Context, tx store.Tx) error) error {
	return c.Store.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		before, _, _ := tx.Setting(ctx, store.SettingKEKFingerprint)
		if err := fn(ctx, tx); err != nil {
			return err
		}
		if after, _, _ := tx.Setting(ctx, store.SettingKEKFingerprint); after != before {
			return errKilled
		}
		return nil
	})
}

// TestRotateKEKResumes: a rotation killed before its commit leaves every
// secret under the old key, and the same rotation run again finishes it;
// one killed after its commit is finished already, whichever of the two
// keys the next run is given as the current one.
func TestRotateKEKResumes(t *testing.T) {
	t.Parallel()
	b := backends[0]
	ctx := context.Background()
	f := newRotationFixture(t, b)
	old, next := f.s.keys, keyring(t, 42)
	if _, err := RotateKEK(ctx, crashingStore{f.s.st}, old, next); !errors.Is(err, errKilled) {
		t.Fatalf("rotation killed before its commit: %v", err)
	}
	f.checkUnder(t, b, old)
	if res, err := RotateKEK(ctx, f.s.st, old, next); err != nil || res.Resealed != 7 {
		t.Fatalf("rotation run again: %+v, %v", res, err)
	}
	f.checkUnder(t, b, next)
	for _, cur := range []*Keyring{old, next} {
		if res, err := RotateKEK(ctx, f.s.st, cur, next); err != nil || !res.AlreadyDone {
			t.Errorf("rotation after its commit, current key %s: %+v, %v", ShortFingerprint(cur.Fingerprint()), res, err)
		}
	}
}
