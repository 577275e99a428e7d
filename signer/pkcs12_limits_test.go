package signer

import (
	"encoding/asn1"
	"errors"
	"math/big"
	"strings"
	"testing"
)

// pfxWithMac builds a PFX whose MacData uses PBMAC1 with the given PBKDF2
// iteration count, after pad junk values inside the authSafe.
func pfxWithMac(t *testing.T, iterations int64, pad int) []byte {
	t.Helper()
	type algID struct {
		Algorithm  asn1.ObjectIdentifier
		Parameters asn1.RawValue `asn1:"optional"`
	}
	kdfParams, err := asn1.Marshal(struct {
		Salt       []byte
		Iterations *big.Int
	}{[]byte("saltsalt"), big.NewInt(iterations)})
	if err != nil {
		t.Fatal(err)
	}
	hmac, _ := asn1.Marshal(algID{Algorithm: asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 9}})
	pbmac1Params, err := asn1.Marshal(struct {
		KDF algID
		MAC asn1.RawValue
	}{algID{oidPBKDF2, asn1.RawValue{FullBytes: kdfParams}}, asn1.RawValue{FullBytes: hmac}})
	if err != nil {
		t.Fatal(err)
	}
	junk := make([]asn1.RawValue, pad)
	for i := range junk {
		junk[i] = asn1.RawValue{FullBytes: []byte{0x05, 0x00}} // NULL
	}
	authSafe, err := asn1.Marshal(junk)
	if err != nil {
		t.Fatal(err)
	}
	der, err := asn1.Marshal(struct {
		Version  int
		AuthSafe asn1.RawValue
		MacData  struct {
			Mac struct {
				Algorithm algID
				Digest    []byte
			}
			Salt       []byte
			Iterations int
		}
	}{Version: 3, AuthSafe: asn1.RawValue{FullBytes: authSafe}, MacData: struct {
		Mac struct {
			Algorithm algID
			Digest    []byte
		}
		Salt       []byte
		Iterations int
	}{Mac: struct {
		Algorithm algID
		Digest    []byte
	}{algID{oidPBMAC1, asn1.RawValue{FullBytes: pbmac1Params}}, make([]byte, 32)}, Salt: []byte("salt"), Iterations: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// A PBMAC1 MAC keeps its real iteration count in its PBKDF2 parameters;
// Load reads it there, whatever comes before it in the file.
func TestLoadChecksPBMAC1Iterations(t *testing.T) {
	for _, pad := range []int{0, 50_000} {
		_, err := Load(pfxWithMac(t, 1_000_000_000, pad), "x")
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "iteration count 1000000000") {
			t.Errorf("PBMAC1 with 10^9 iterations, %d junk values before it: %v", pad, err)
		}
	}
}

// A file padded so that the scan of its parameters cannot finish is
// refused: what was not inspected could hide an iteration count.
func TestLoadRefusesUninspectableFile(t *testing.T) {
	der := pfxWithMac(t, 2048, maxScanValues+10)
	_, err := Load(der, "x")
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "could not be fully inspected") {
		t.Fatalf("padded file: %v", err)
	}
	// Nested deeper than the scan goes.
	deep := []byte{0x05, 0x00}
	for range maxScanDepth + 4 {
		var err error
		if deep, err = asn1.Marshal([]asn1.RawValue{{FullBytes: deep}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Load(deep, "x"); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "could not be fully inspected") {
		t.Fatalf("deeply nested file: %v", err)
	}
}
