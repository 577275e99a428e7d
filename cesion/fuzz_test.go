package cesion_test

import (
	"testing"
	"time"

	"github.com/dtekit/dtekit/cesion"
	"github.com/dtekit/dtekit/internal/oracle"
)

// FuzzVerify feeds Verify AEC files of one cesión and of two (built by the
// fixture's test authorities), the SII's own samples, and their mutations,
// whole or with one structural edit (oracle.EditXML) so that the checks
// behind the parser are reached. Verify must never panic nor take long, and
// a file it accepts must have the shape it reports: 1 to 40 cesiones in
// sequence, each within the document's total.
func FuzzVerify(f *testing.F) {
	fx := fix(f)
	first := fx.ceder(f, 33, cesion.Cesion{})
	for _, data := range [][]byte{first, fx.receder(f, first)} {
		f.Add(data, uint(0), uint8(0), "")
		f.Add(data, uint(40), uint8(oracle.EditDuplicate+1), "")
		f.Add(data, uint(12), uint8(oracle.EditText+1), "999999999")
	}
	for _, sample := range oracle.SharedXML(f) {
		f.Add(sample, uint(0), uint8(0), "")
	}
	opts := fx.opts(cesion.PolicyRegistry)
	f.Fuzz(func(t *testing.T, data []byte, n uint, edit uint8, text string) {
		if edit > 0 {
			data = oracle.EditXML(data, n, edit-1, text)
		}
		start := time.Now()
		rep, err := cesion.Verify(data, opts)
		if d := time.Since(start); d > 10*time.Second {
			t.Fatalf("Verify took %v on %d bytes", d, len(data))
		}
		if err != nil {
			return
		}
		mnt, _ := rep.Documento.Totales.MntTotal.Int64()
		if len(rep.Cesiones) < 1 || len(rep.Cesiones) > cesion.MaxCesiones {
			t.Fatalf("accepted %d cesiones", len(rep.Cesiones))
		}
		for i, c := range rep.Cesiones {
			if c.Seq != i+1 || c.Monto <= 0 || c.Monto > mnt {
				t.Fatalf("accepted cesión %d: seq %d, monto %d of %d", i, c.Seq, c.Monto, mnt)
			}
		}
	})
}
