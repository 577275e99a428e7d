package cesion_test

import (
	"testing"

	"github.com/dtekit/dtekit/cesion"
	"github.com/dtekit/dtekit/internal/oracle"
)

// FuzzVerify feeds Verify an AEC of one cesión and one of two, the SII's
// own samples, and their mutations, whole or with one structural edit
// (oracle.EditXML) so that the checks behind the parser are reached. It
// must never panic, and a file it accepts must have the shape it reports:
// 1 to 40 cesiones in sequence, each within the document's total.
func FuzzVerify(f *testing.F) {
	fx := fix(f)
	first, second := base(f)
	f.Add(first, uint(0), uint8(0), "")
	f.Add(second, uint(0), uint8(0), "")
	f.Add(second, uint(40), uint8(oracle.EditDuplicate+1), "")
	f.Add(second, uint(12), uint8(oracle.EditText+1), "999999999")
	for _, sample := range oracle.SharedXML(f) {
		f.Add(sample, uint(0), uint8(0), "")
	}
	opts := fx.opts(cesion.PolicyRegistry)
	f.Fuzz(func(t *testing.T, data []byte, n uint, edit uint8, text string) {
		if edit > 0 {
			data = oracle.EditXML(data, n, edit-1, text)
		}
		rep, err := cesion.Verify(data, opts)
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
