package sii

import (
	"bytes"
	"os"
	"testing"

	"github.com/dtekit/dtekit/internal/oracle"
)

// TestBoletaCodeTableIsTheSharedOne compares the embedded code table, byte
// for byte, with the project's shared copy: an update of the shared data
// fails here until data/ follows it.
func TestBoletaCodeTableIsTheSharedOne(t *testing.T) {
	shared, err := os.ReadFile(oracle.SharedFile(t, "sii", "boleta-api-codes.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(shared, boletaCodesCSV) {
		t.Error("sii/data/boleta-api-codes.csv differs from ../shared/sii/boleta-api-codes.csv; copy the shared file")
	}
	codes, err := boletaCodes()
	if err != nil || len(codes) < 12 {
		t.Fatalf("the table read %d rows, %v", len(codes), err)
	}
}
