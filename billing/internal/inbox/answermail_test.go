package inbox

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/store"
)

// TestAnswerMailNeverSilent, on both backends: an answer to a supplier
// goes to the address its file came from, else to the supplier's
// intercambio address on the SII's list of contribuyentes; with neither
// (a supplier off the list, or on it without an address) it is recorded
// sin_direccion, and when the company sends no mail (no mail room, or no
// sender settings) sin_remitente. Every answer is counted under its
// label once reported, and each one not mailed leaves a warning in the
// log naming the record and the state.
func TestAnswerMailNeverSilent(t *testing.T) {
	t.Parallel()
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			counted, outgoing := &fakeCounter{}, &fakeOutgoing{}
			rm := newRoom(t, be.open(t), fixtureAnswers(t).creds, Config{Counted: counted, Outgoing: outgoing})
			var logs bytes.Buffer
			rm.ib.log = slog.New(slog.NewTextHandler(&logs, nil))
			const listed, blank, unknown = "76543210-3", "11111111-1", "22222222-2"
			err := rm.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
				l, err := tx.BeginContribuyentes(ctx, "test.csv")
				if err != nil {
					return err
				}
				if _, err := tx.AddContribuyentes(ctx, l.ID, []store.Contribuyente{{Rut: listed, RazonSocial: "Listada", Correo: "dte@listada.cl"},
					{Rut: blank, RazonSocial: "Sin casilla"}}); err != nil {
					return err
				}
				_, err = tx.CompleteContribuyentes(ctx, l.ID)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}

			for _, tc := range []struct {
				name, rut, given    string
				noSender, noRoom    bool
				estado, para, label string
			}{
				{"the file's address", listed, "ventas@proveedor.cl", false, false, CorreoEnCola, "ventas@proveedor.cl", ViaRemitente},
				{"the SII's list", listed, "", false, false, CorreoEnCola, "dte@listada.cl", ViaContribuyentes},
				{"on the list without an address", blank, "", false, false, CorreoSinDireccion, "", CorreoSinDireccion},
				{"off the list", unknown, "", false, false, CorreoSinDireccion, "", CorreoSinDireccion},
				{"no sender settings", listed, "", true, false, CorreoSinRemitente, "dte@listada.cl", CorreoSinRemitente},
				{"no mail room", listed, "", false, true, CorreoSinRemitente, "dte@listada.cl", CorreoSinRemitente},
			} {
				to, via, err := rm.ib.answerAddress(ctx, tc.rut, tc.given)
				if err != nil {
					t.Fatal(err)
				}
				outgoing.noSender = tc.noSender
				if tc.noRoom {
					rm.ib.cfg.Outgoing = nil
				}
				m := &Mail{ID: mailID("resultado", tc.name), EmpresaID: rm.empresa, Tipo: "resultado", To: to}
				var estado, label string
				err = rm.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
					var err error
					estado, label, err = rm.ib.queueAnswer(ctx, tx, m, via)
					return err
				})
				rm.ib.cfg.Outgoing = outgoing
				if err != nil {
					t.Fatal(err)
				}
				rm.ib.answered(rm.empresa, m.Tipo, "recibido_id", tc.name, estado, label)
				if estado != tc.estado || m.To != tc.para || label != tc.label || (m.ID == "") != (estado != CorreoEnCola) {
					t.Errorf("%s: estado %q to %q label %q mail %q; want %q to %q label %q", tc.name, estado, m.To, label, m.ID, tc.estado, tc.para, tc.label)
				}
				if logged := strings.Contains(logs.String(), "recibido_id=\""+tc.name+"\""); logged != (estado != CorreoEnCola) {
					t.Errorf("%s: logged %v; the log:\n%s", tc.name, logged, logs.String())
				}
			}
			sent := outgoing.sent
			if len(sent) != 2 || sent[0].To != "ventas@proveedor.cl" || sent[1].To != "dte@listada.cl" {
				t.Errorf("mails queued: %+v", sent)
			}
			want := map[string]int{ViaRemitente: 1, ViaContribuyentes: 1, CorreoSinDireccion: 2, CorreoSinRemitente: 2}
			for _, l := range AnswerLabels() {
				if n := counted.count(l); n != want[l] {
					t.Errorf("counted %s %d times, want %d", l, n, want[l])
				}
			}
		})
	}
}
