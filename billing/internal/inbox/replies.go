package inbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/intercambio"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/webhook"
)

// Intercambio is what the receptor of one of the company's documents
// answered (store.DTE.Intercambio).
type Intercambio struct {
	// Recepcion is the acknowledgment (or refusal at reception), Resultado
	// the commercial decision and Recibo the receipt of goods; each nil
	// until it arrives.
	Recepcion *Answer `json:"recepcion,omitempty"`
	Resultado *Answer `json:"resultado,omitempty"`
	Recibo    *Answer `json:"recibo,omitempty"`
}

// Answer is one answer of a receptor.
type Answer struct {
	Resultado   string    `json:"resultado"`
	Codigo      int       `json:"codigo"`
	Glosa       string    `json:"glosa"`
	Motivo      string    `json:"motivo"`
	RutReceptor string    `json:"rut_receptor"`
	At          time.Time `json:"recibido_at"`
	// MensajeID is the mail it came in ("" when uploaded).
	MensajeID string `json:"mensaje_id,omitempty"`
}

// IntercambioOf reads a document's receptor answers.
func IntercambioOf(d *store.DTE) Intercambio {
	var out Intercambio
	if len(d.Intercambio) > 0 {
		_ = json.Unmarshal(d.Intercambio, &out)
	}
	return out
}

// ReplyResult is what Reply recorded.
type ReplyResult struct {
	Kind intercambio.Kind
	// Updated are the company's documents the answer changed; Unknown the
	// documents it named that the company did not emit.
	Updated []string
	Unknown []string
}

// Reply reads an answer a receptor sent about the company's documents
// (RespuestaDTE or EnvioRecibos) and records on each document what it
// says, with its event. The same answer read again changes nothing and
// publishes nothing.
func (ib *Inbox) Reply(ctx context.Context, empresaID string, data []byte, mensajeID string) (*ReplyResult, error) {
	emp, err := ib.st.GetEmpresa(ctx, empresaID)
	if err != nil {
		return nil, fault.Failed("reading the company", err)
	}
	resp, err := intercambio.Read(data, intercambio.ReadOptions{Empresa: emp.Rut})
	if err != nil {
		return nil, fault.Invalid("xml", dte.CodeInvalidFormat, "the answer cannot be read: "+err.Error())
	}
	out := &ReplyResult{Kind: resp.Kind}
	at := ib.now().UTC().Truncate(time.Second)
	for _, doc := range resp.Documentos {
		d, err := ib.answeredDocument(ctx, emp, &doc.DocRef)
		if errors.Is(err, store.ErrNotFound) {
			out.Unknown = append(out.Unknown, doc.String())
			continue
		}
		if err != nil {
			return nil, fault.Failed("reading the answered document", err)
		}
		a := &Answer{Resultado: string(doc.Outcome), Codigo: doc.Codigo, Glosa: doc.Glosa, Motivo: doc.Motivo,
			RutReceptor: resp.RutResponde, At: at, MensajeID: mensajeID}
		changed := false
		err = ib.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			changed = false
			cur, err := tx.GetDTEForUpdate(ctx, empresaID, d.ID)
			if err != nil {
				return err
			}
			ic := IntercambioOf(cur)
			var slot **Answer
			var typ webhook.EventType
			switch doc.Outcome {
			case intercambio.Recibido, intercambio.RecibidoConReparos:
				slot, typ = &ic.Recepcion, webhook.EventDTEReceptorRecibido
			case intercambio.Aceptado, intercambio.AceptadoConDiscrepancias:
				slot, typ = &ic.Resultado, webhook.EventDTEReceptorAceptado
			case intercambio.Rechazado:
				slot, typ = &ic.Resultado, webhook.EventDTEReceptorRechazado
			case intercambio.MercaderiasRecibidas:
				slot, typ = &ic.Recibo, webhook.EventDTEMercaderiasRecibidas
			default:
				return fmt.Errorf("unknown outcome %q", doc.Outcome)
			}
			if p := *slot; p != nil && p.Resultado == a.Resultado && p.Codigo == a.Codigo && p.Motivo == a.Motivo {
				return nil
			}
			*slot = a
			b, err := json.Marshal(ic)
			if err != nil {
				return err
			}
			if err := tx.SetDTEIntercambio(ctx, empresaID, cur.ID, b); err != nil {
				return err
			}
			changed = true
			return ib.cfg.Outbox.PublishReceptor(ctx, tx, cur, typ, webhook.ReceptorData{Resultado: a.Resultado,
				Codigo: a.Codigo, Glosa: a.Glosa, Motivo: a.Motivo, RutReceptor: a.RutReceptor})
		})
		if err != nil {
			return nil, fault.Failed("recording the receptor's answer", err)
		}
		if changed {
			out.Updated = append(out.Updated, d.ID)
		}
	}
	return out, nil
}
