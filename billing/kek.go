package billing

import (
	"context"
	"errors"
	"fmt"

	"github.com/dtekit/dtekit/billing/internal/delivery"
	"github.com/dtekit/dtekit/store"
)

// The key-encryption key of a database: every secret is sealed under one
// key, whose fingerprint the database records, so that a server given
// another key (or none, and about to make one) refuses to start instead of
// failing each emission and losing each webhook secret.

// Errors of the key-encryption key, matched with errors.Is through a
// *KEKError.
var (
	// ErrKEKMismatch: the key given is not the one the database's
	// secrets are sealed under.
	ErrKEKMismatch = errors.New("billing: wrong key-encryption key")
	// ErrKEKMissing: no key was given, and the database holds secrets
	// sealed under one.
	ErrKEKMissing = errors.New("billing: key-encryption key missing")
)

// KEKError reports a key-encryption key that cannot serve the database:
// the fingerprints say which key the database expects and which was
// given, never the keys.
type KEKError struct {
	Err      error  // ErrKEKMismatch or ErrKEKMissing
	Recorded string // fingerprint the database records; "" when it records none
	Given    string // fingerprint of the key given; "" when none was
	Detail   string // what was found
}

func (e *KEKError) Error() string {
	msg := e.Err.Error() + ": " + e.Detail
	if e.Recorded != "" {
		msg += fmt.Sprintf("; the database's secrets are sealed under the key with fingerprint %s", ShortFingerprint(e.Recorded))
	}
	if e.Given != "" {
		msg += fmt.Sprintf("; the key given has fingerprint %s", ShortFingerprint(e.Given))
	}
	return msg
}

func (e *KEKError) Unwrap() error { return e.Err }

// probeLimit bounds how many secrets of each kind CheckKEK tries to open
// on a database that records no fingerprint yet.
const probeLimit = 20

// CheckKEK makes sure that k is the key-encryption key the database of st
// seals its secrets under. When the database records a fingerprint, k's
// must be the same. When it records none (a new database, or one written
// by a version that did not record it), k must open the secrets already
// stored, if any; its fingerprint is then recorded. It fails with a
// *KEKError matching ErrKEKMismatch otherwise. Run it before anything is
// sealed or opened: Service.Start does.
func CheckKEK(ctx context.Context, st store.Store, k *Keyring) error {
	fp, ok, err := st.Setting(ctx, store.SettingKEKFingerprint)
	if err != nil {
		return fmt.Errorf("billing: reading the key-encryption key's fingerprint: %w", err)
	}
	if ok {
		if fp != k.fp {
			return &KEKError{Err: ErrKEKMismatch, Recorded: fp, Given: k.fp, Detail: "the key given is not the database's"}
		}
		return nil
	}
	opened, failed, err := probeSealed(ctx, st, k)
	if err != nil {
		return err
	}
	if failed > 0 && opened == 0 {
		return &KEKError{Err: ErrKEKMismatch, Given: k.fp,
			Detail: fmt.Sprintf("the key given opens none of the %d secrets tried in the database", failed)}
	}
	err = st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		if _, ok, err := tx.Setting(ctx, store.SettingKEKFingerprint); err != nil || ok {
			return err // recorded meanwhile: compared below
		}
		return tx.PutSetting(ctx, store.SettingKEKFingerprint, k.fp)
	})
	if err != nil {
		return fmt.Errorf("billing: recording the key-encryption key's fingerprint: %w", err)
	}
	// Another process may have recorded its key first.
	if fp, _, err = st.Setting(ctx, store.SettingKEKFingerprint); err != nil {
		return fmt.Errorf("billing: reading the key-encryption key's fingerprint: %w", err)
	}
	if fp != k.fp {
		return &KEKError{Err: ErrKEKMismatch, Recorded: fp, Given: k.fp, Detail: "another process recorded another key"}
	}
	return nil
}

// probeSealed tries to open the first secrets of each kind with k and
// counts those that open and those that do not.
func probeSealed(ctx context.Context, r store.Reader, k *Keyring) (opened, failed int, err error) {
	for _, kind := range store.SealedKinds {
		page, err := r.ListSealed(ctx, kind, "", "", probeLimit)
		if err != nil {
			return 0, 0, fmt.Errorf("billing: reading sealed secrets: %w", err)
		}
		for i := range page {
			if _, err := k.Open(page[i].Data, sealedAAD(&page[i])); err != nil {
				failed++
			} else {
				opened++
			}
		}
	}
	return opened, failed, nil
}

// KEKRequired reports whether the database of st needs the key its
// secrets are sealed under (so that a new one must not be made): it
// records a key's fingerprint (returned), or it holds a sealed secret.
func KEKRequired(ctx context.Context, st store.Reader) (fingerprint string, required bool, err error) {
	fp, ok, err := st.Setting(ctx, store.SettingKEKFingerprint)
	if err != nil {
		return "", false, fmt.Errorf("billing: reading the key-encryption key's fingerprint: %w", err)
	}
	if ok {
		return fp, true, nil
	}
	for _, kind := range store.SealedKinds {
		page, err := st.ListSealed(ctx, kind, "", "", 1)
		if err != nil {
			return "", false, fmt.Errorf("billing: reading sealed secrets: %w", err)
		}
		if len(page) > 0 {
			return "", true, nil
		}
	}
	// A CAF stored before CAF keys were sealed holds its key in clear:
	// nothing sealed yet, so any key will do.
	return "", false, nil
}

// sealedAAD is the associated data a secret was sealed with: its owner
// and purpose, as the code that sealed it named them.
func sealedAAD(s *store.Sealed) []byte {
	switch s.Kind {
	case store.SealedCertificado:
		return certAAD(s.EmpresaID)
	case store.SealedCAFKey:
		return cafKeyAAD(s.EmpresaID, s.ID)
	case store.SealedWebhook:
		return delivery.SecretAAD(s.EmpresaID, s.ID)
	case store.SealedCorreoSMTP, store.SealedCorreoIMAP:
		return correoAAD(s.Kind, s.EmpresaID)
	case store.SealedConsoleSession:
		return consoleSessionAAD(s.EmpresaID, s.ID)
	}
	return []byte("dtekit/unknown/" + s.Kind)
}

// KEKRotation reports what RotateKEK did.
type KEKRotation struct {
	// Resealed counts the secrets sealed anew under the new key.
	Resealed int
	// AlreadyDone is true when the database already recorded the new
	// key: a rotation that committed before its process stopped.
	AlreadyDone bool
}

// RotateKEK re-seals every secret of the database of st (certificates,
// CAF keys, webhook secrets) under the key next, in one transaction that
// also records next's fingerprint: the database holds either every
// secret under the old key or every one under next, whenever the process
// stops. It is safe to run again: when the database already records next
// (the transaction committed, whatever happened after), it changes nothing
// and reports AlreadyDone. Every process sharing the database must be
// stopped first, and restarted with next.
//
// old must be the key the database records (or, when it records none,
// the one its secrets open with); CAF keys stored in clear by an earlier
// version are sealed first. A secret that opens under neither key stops
// the rotation, naming it, with nothing changed.
func RotateKEK(ctx context.Context, st store.Store, old, next *Keyring) (*KEKRotation, error) {
	fp, ok, err := st.Setting(ctx, store.SettingKEKFingerprint)
	if err != nil {
		return nil, fmt.Errorf("billing: reading the key-encryption key's fingerprint: %w", err)
	}
	if ok && fp == next.fp {
		return &KEKRotation{AlreadyDone: true}, nil
	}
	if err := CheckKEK(ctx, st, old); err != nil {
		return nil, err
	}
	if _, err := sealCAFKeys(ctx, st, old); err != nil {
		return nil, err
	}
	res := &KEKRotation{}
	errDone := errors.New("already rotated")
	err = st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		res.Resealed = 0
		fp, _, err := tx.Setting(ctx, store.SettingKEKFingerprint)
		if err != nil {
			return err
		}
		if fp == next.fp {
			return errDone
		}
		if fp != old.fp {
			return &KEKError{Err: ErrKEKMismatch, Recorded: fp, Given: old.fp, Detail: "the database changed keys meanwhile"}
		}
		for _, kind := range store.SealedKinds {
			var afterE, afterID string
			for {
				page, err := tx.ListSealed(ctx, kind, afterE, afterID, store.MaxLimit)
				if err != nil {
					return err
				}
				if len(page) == 0 {
					break
				}
				for i := range page {
					if err := reseal(ctx, tx, &page[i], old, next); err != nil {
						return err
					}
					res.Resealed++
				}
				afterE, afterID = page[len(page)-1].EmpresaID, page[len(page)-1].ID
			}
		}
		return tx.PutSetting(ctx, store.SettingKEKFingerprint, next.fp)
	})
	if errors.Is(err, errDone) {
		return &KEKRotation{AlreadyDone: true}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("billing: re-sealing the secrets under the new key (nothing was changed): %w", err)
	}
	if err := scrub(ctx, st); err != nil {
		return res, err
	}
	return res, nil
}

// reseal opens one secret with old and seals it under next in tx. A
// secret next opens already is left as it is.
func reseal(ctx context.Context, tx store.Tx, s *store.Sealed, old, next *Keyring) error {
	aad := sealedAAD(s)
	plain, err := old.Open(s.Data, aad)
	if err != nil {
		if _, nerr := next.Open(s.Data, aad); nerr == nil {
			return nil
		}
		return fmt.Errorf("the %s of company %s %s opens under neither key: %w", s.Kind, s.EmpresaID, s.ID, err)
	}
	if s.Data, err = next.Seal(plain, aad); err != nil {
		return err
	}
	return tx.ReplaceSealed(ctx, s)
}

// scrub asks a store that can to drop from its files the bytes that
// writes replaced (store.Scrubber).
func scrub(ctx context.Context, st store.Store) error {
	if sc, ok := st.(store.Scrubber); ok {
		if err := sc.Scrub(ctx); err != nil {
			return fmt.Errorf("billing: scrubbing replaced secrets from the database files: %w", err)
		}
	}
	return nil
}
