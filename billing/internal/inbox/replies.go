package inbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/intercambio"
	"github.com/dtekit/dtekit/internal/chile"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/webhook"
)

// Kinds of received file (store.Recepcion.Tipo).
const (
	// TipoEnvio is an EnvioDTE from a supplier (Intake).
	TipoEnvio = "envio"
	// TipoRespuesta is an answer a customer sent about the company's own
	// documents, a RespuestaDTE or an EnvioRecibos (Reply).
	TipoRespuesta = "respuesta"
)

// What an answer did to each document it names (ReplyDocumento.Efecto).
const (
	// EfectoAplicada: recorded on the document, with its event.
	EfectoAplicada = "aplicada"
	// EfectoRepetida: the same answer was recorded before; nothing changed.
	EfectoRepetida = "repetida"
	// EfectoHistorial: another answer of the same kind came first and
	// stands, as in the SII's registry; this one is kept in the
	// document's history, never applied.
	EfectoHistorial = "historial"
	// EfectoRechazada: refused (Motivo says why): the answer does not
	// come from the document's receptor or does not describe the
	// document, or its signer is refused.
	EfectoRechazada = "rechazada"
	// EfectoDesconocida: the company emitted no document of that type and
	// folio.
	EfectoDesconocida = "desconocida"
)

// MaxHistorial bounds the later answers kept on a document: the latest
// ones.
const MaxHistorial = 20

// Intercambio is what the receptor of one of the company's documents
// answered (store.DTE.Intercambio).
type Intercambio struct {
	// Recepcion is the acknowledgment (or refusal at reception), Resultado
	// the commercial decision and Recibo the receipt of goods; each nil
	// until it arrives. The first of each kind stands.
	Recepcion *Answer `json:"recepcion,omitempty"`
	Resultado *Answer `json:"resultado,omitempty"`
	Recibo    *Answer `json:"recibo,omitempty"`
	// Historial holds the later answers that differ from the one that
	// stands (Answer.Tipo says which), oldest first, at most MaxHistorial.
	Historial []Answer `json:"historial,omitempty"`
}

// Answer is one answer of a receptor.
type Answer struct {
	// Tipo is the kind of answer: "recepcion", "resultado" or "recibo".
	Tipo        string `json:"tipo,omitempty"`
	Resultado   string `json:"resultado"`
	Codigo      int    `json:"codigo"`
	Glosa       string `json:"glosa"`
	Motivo      string `json:"motivo"`
	RutReceptor string `json:"rut_receptor"`
	// RutFirmante is the RUT of the certificate that signed it (a
	// receipt's own signature for a Recibo), "" when it names none.
	RutFirmante string    `json:"rut_firmante,omitempty"`
	At          time.Time `json:"recibido_at"`
	// MensajeID is the mail it came in ("" when uploaded); RecepcionID
	// the record of the file that carried it.
	MensajeID   string `json:"mensaje_id,omitempty"`
	RecepcionID string `json:"recepcion_id,omitempty"`
}

// same reports whether two answers say the same thing.
func (a *Answer) same(b *Answer) bool {
	return a.Resultado == b.Resultado && a.Codigo == b.Codigo && a.Motivo == b.Motivo
}

// IntercambioOf reads a document's receptor answers.
func IntercambioOf(d *store.DTE) Intercambio {
	var out Intercambio
	if len(d.Intercambio) > 0 {
		_ = json.Unmarshal(d.Intercambio, &out)
	}
	return out
}

// ReplyReport is the report of a received answer (the Report of its
// store.Recepcion): who answered and signed, and what it did to each
// document it names.
type ReplyReport struct {
	Kind        intercambio.Kind `json:"kind"`
	RutResponde string           `json:"rut_responde"`
	RutFirmante string           `json:"rut_firmante"`
	Firmante    *dte.Signer      `json:"firmante"`
	// Motivo says why the whole answer was refused ("" when it was not).
	Motivo     string           `json:"motivo,omitempty"`
	Documentos []ReplyDocumento `json:"documentos"`
	Avisos     []string         `json:"avisos,omitempty"`
}

// ReplyDocumento is what an answer said of one document and what it did.
type ReplyDocumento struct {
	intercambio.DocRef
	Resultado string `json:"resultado"`
	// DTEID is the company's document it names ("" when unknown).
	DTEID  string `json:"dte_id,omitempty"`
	Efecto string `json:"efecto"`
	Motivo string `json:"motivo,omitempty"`
}

// ReplyResult is what Reply recorded.
type ReplyResult struct {
	Kind intercambio.Kind
	// Recepcion is the record of the answer's file; Duplicate is true
	// when the same file was received before (nothing was done again).
	Recepcion *store.Recepcion
	Report    ReplyReport
	Duplicate bool
	// Updated are the company's documents the answer changed; Unknown the
	// documents it named that the company did not emit.
	Updated []string
	Unknown []string
}

// mismatch says how an answer's view of a document differs from the
// document, "" when it matches: the answer must come from the document's
// receptor (RutResponde and RUTRecep) and name its date and total.
func mismatch(resp *intercambio.Respuesta, ref intercambio.DocRef, d *store.DTE) string {
	receptor := chile.CanonRUT(d.RutReceptor)
	var bad []string
	if resp.RutResponde != receptor {
		bad = append(bad, fmt.Sprintf("RutResponde %s is not the document's receptor %s", resp.RutResponde, receptor))
	}
	if chile.CanonRUT(ref.RUTRecep) != receptor {
		bad = append(bad, fmt.Sprintf("RUTRecep %s is not the document's receptor %s", ref.RUTRecep, receptor))
	}
	if ref.FchEmis != d.FechaEmision {
		bad = append(bad, fmt.Sprintf("FchEmis %s is not the document's date %s", ref.FchEmis, d.FechaEmision))
	}
	if ref.MntTotal != d.MontoTotal {
		bad = append(bad, fmt.Sprintf("MntTotal %d is not the document's total %d", ref.MntTotal, d.MontoTotal))
	}
	return strings.Join(bad, "; ")
}

// slotOf names the answer of an outcome: its kind and event.
func slotOf(ic *Intercambio, o intercambio.Outcome) (**Answer, string, webhook.EventType, error) {
	switch o {
	case intercambio.Recibido, intercambio.RecibidoConReparos:
		return &ic.Recepcion, "recepcion", webhook.EventDTEReceptorRecibido, nil
	case intercambio.Aceptado, intercambio.AceptadoConDiscrepancias:
		return &ic.Resultado, "resultado", webhook.EventDTEReceptorAceptado, nil
	case intercambio.Rechazado:
		return &ic.Resultado, "resultado", webhook.EventDTEReceptorRechazado, nil
	case intercambio.MercaderiasRecibidas:
		return &ic.Recibo, "recibo", webhook.EventDTEMercaderiasRecibidas, nil
	}
	return nil, "", "", fmt.Errorf("unknown outcome %q", o)
}

// Reply reads an answer a receptor sent about the company's documents
// (RespuestaDTE or EnvioRecibos) and records it, as it arrived, with its
// report (a store.Recepcion of TipoRespuesta). It changes a document only
// when the answer comes from the document's receptor and describes it:
// RutResponde and RUTRecep its receptor, and its type, folio, date and
// total; its signers must pass the company's signer policy (Config.Verify:
// AuthorizedSigners keyed by the receptor's RUT, ValidAtSigning). The
// first answer of each kind stands, as in the SII's registry: a later,
// different one is kept in the document's history and never applied.
// Only an applied answer publishes its event; a refused one is visible
// on its record, with the reason. The same file read again changes
// nothing and publishes nothing.
//
// A file that is not such an answer, or whose signatures do not verify,
// or that is addressed to another company, is refused with an error and
// not recorded.
func (ib *Inbox) Reply(ctx context.Context, empresaID string, data []byte, src Source) (*ReplyResult, error) {
	if len(data) > MaxFileBytes {
		return nil, fault.Invalid("xml", dte.CodeTooLarge, fmt.Sprintf("the file is %d bytes, more than the %d an answer may have", len(data), MaxFileBytes))
	}
	emp, err := ib.st.GetEmpresa(ctx, empresaID)
	if err != nil {
		return nil, fault.Failed("reading the company", err)
	}
	// A file received before is answered from its record, without
	// verifying its signatures again.
	sum := digest(data)
	if r, err := ib.st.GetRecepcionByDigest(ctx, empresaID, sum); err == nil {
		return existingReply(r)
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, fault.Failed("reading received files", err)
	}
	if err := ib.checkQuota(ctx, ib.st, empresaID, 0); err != nil {
		return nil, err
	}
	resp, err := intercambio.Read(data, intercambio.ReadOptions{Empresa: emp.Rut})
	if err != nil {
		return nil, fault.Invalid("xml", dte.CodeInvalidFormat, "the answer cannot be read: "+err.Error())
	}
	policy, err := ib.cfg.Tenants.VerifyOptions(ctx, empresaID)
	if err != nil {
		return nil, err
	}
	rep := ReplyReport{Kind: resp.Kind, RutResponde: resp.RutResponde, Firmante: resp.Firmante, Avisos: resp.Avisos,
		Documentos: make([]ReplyDocumento, len(resp.Documentos))}
	if resp.Firmante != nil {
		rep.RutFirmante = resp.Firmante.RUT
	}
	if err := resp.CheckSigners(policy); err != nil {
		rep.Motivo = strings.TrimPrefix(err.Error(), "intercambio: ")
	}
	// Each document: found, and matched, before the transaction (which
	// reads each again under its lock).
	ids := make([]string, len(resp.Documentos))
	for i, doc := range resp.Documentos {
		rd := &rep.Documentos[i]
		rd.DocRef, rd.Resultado = doc.DocRef, string(doc.Outcome)
		d, err := ib.answeredDocument(ctx, emp, &doc.DocRef)
		switch {
		case errors.Is(err, store.ErrNotFound):
			rd.Efecto, rd.Motivo = EfectoDesconocida, "the company emitted no such document"
			continue
		case err != nil:
			return nil, fault.Failed("reading the answered document", err)
		}
		ids[i], rd.DTEID = d.ID, d.ID
		if why := mismatch(resp, doc.DocRef, d); why != "" {
			rd.Efecto, rd.Motivo = EfectoRechazada, why
		} else if rep.Motivo != "" {
			rd.Efecto, rd.Motivo = EfectoRechazada, rep.Motivo
		}
	}
	at := ib.now().UTC().Truncate(time.Second)
	r := &store.Recepcion{ID: newID(), EmpresaID: empresaID, Digest: sum, Tipo: TipoRespuesta, Origen: src.Origen,
		MensajeID: src.MensajeID, Remitente: src.Remitente, Size: int64(len(data)), CreatedAt: at}
	out := &ReplyResult{Kind: resp.Kind, Recepcion: r}
	err = ib.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		out.Updated, out.Duplicate = nil, false
		report := rep
		report.Documentos = append([]ReplyDocumento(nil), rep.Documentos...)
		var events []func() error
		// The file belongs to the environment of the documents it
		// answers when they are all of one; else to the company's.
		answered := map[string]bool{}
		for i, doc := range resp.Documentos {
			rd := &report.Documentos[i]
			if rd.Efecto != "" {
				continue
			}
			a := &Answer{Resultado: string(doc.Outcome), Codigo: doc.Codigo, Glosa: doc.Glosa, Motivo: doc.Motivo,
				RutReceptor: resp.RutResponde, RutFirmante: rep.RutFirmante, At: at, MensajeID: src.MensajeID, RecepcionID: r.ID}
			if doc.Firmante != nil {
				a.RutFirmante = doc.Firmante.RUT
			}
			cur, err := tx.GetDTEForUpdate(ctx, empresaID, ids[i])
			if err != nil {
				return err
			}
			answered[cur.Ambiente] = true
			ic := IntercambioOf(cur)
			slot, kind, typ, err := slotOf(&ic, doc.Outcome)
			if err != nil {
				return err
			}
			a.Tipo = kind
			switch p := *slot; {
			case p == nil:
				*slot, rd.Efecto = a, EfectoAplicada
			case p.same(a) || inHistory(ic.Historial, a):
				rd.Efecto = EfectoRepetida
				continue
			default:
				rd.Efecto = EfectoHistorial
				ic.Historial = append(ic.Historial, *a)
				if n := len(ic.Historial); n > MaxHistorial {
					ic.Historial = ic.Historial[n-MaxHistorial:]
				}
			}
			b, err := json.Marshal(ic)
			if err != nil {
				return err
			}
			if err := tx.SetDTEIntercambio(ctx, empresaID, cur.ID, b); err != nil {
				return err
			}
			if rd.Efecto == EfectoAplicada {
				out.Updated = append(out.Updated, cur.ID)
				events = append(events, func() error {
					return ib.cfg.Outbox.PublishReceptor(ctx, tx, cur, typ, webhook.ReceptorData{Resultado: a.Resultado,
						Codigo: a.Codigo, Glosa: a.Glosa, Motivo: a.Motivo, RutReceptor: a.RutReceptor})
				})
			}
		}
		// The documents' environment when they share one; "" lets the
		// store take the company's.
		r.Ambiente = ""
		if len(answered) == 1 {
			for amb := range answered {
				r.Ambiente = amb
			}
		}
		r.Estado = RecepcionConforme
		for _, d := range report.Documentos {
			if d.Efecto == EfectoRechazada || d.Efecto == EfectoDesconocida {
				r.Estado = RecepcionRechazada
			}
		}
		if report.Motivo != "" || len(report.Documentos) == 0 {
			r.Estado = RecepcionRechazada
		}
		// An answer that touched none of the company's documents did
		// nothing: it keeps only what shows what it was.
		r.Descartado = true
		for _, d := range report.Documentos {
			if d.Efecto == EfectoAplicada || d.Efecto == EfectoRepetida || d.Efecto == EfectoHistorial {
				r.Descartado = false
			}
		}
		r.XML = kept(data, r.Descartado)
		b, err := json.Marshal(report)
		if err != nil {
			return err
		}
		r.Report = b
		if err := tx.InsertRecepcion(ctx, r); err != nil {
			if store.ConflictOn(err) == store.ConstraintRecepcion {
				// The same file, recorded meanwhile: it did its work then.
				out.Duplicate = true
				return errDuplicate
			}
			return err
		}
		if err := ib.checkInserted(ctx, tx, r); err != nil {
			return err
		}
		out.Report = report
		for _, publish := range events {
			if err := publish(); err != nil {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, errDuplicate) {
		prev, err := ib.st.GetRecepcionByDigest(ctx, empresaID, sum)
		if err != nil {
			return nil, fault.Failed("reading received files", err)
		}
		return existingReply(prev)
	}
	if IsLimit(err) {
		return nil, err
	}
	if err != nil {
		return nil, fault.Failed("recording the receptor's answer", err)
	}
	for _, d := range out.Report.Documentos {
		if d.Efecto == EfectoDesconocida {
			out.Unknown = append(out.Unknown, d.DocRef.String())
		}
	}
	ib.log.Info("billing: received an answer", "empresa_id", empresaID, "recepcion_id", r.ID, "kind", string(resp.Kind),
		"estado", r.Estado, "documentos", len(resp.Documentos), "aplicadas", len(out.Updated), "origen", src.Origen)
	return out, nil
}

// errDuplicate rolls back the recording of an answer whose file was
// recorded meanwhile.
var errDuplicate = errors.New("the file was recorded meanwhile")

// inHistory reports whether the history holds an answer that says what a
// says, signed by the same signer.
func inHistory(h []Answer, a *Answer) bool {
	for i := range h {
		if h[i].Tipo == a.Tipo && h[i].RutFirmante == a.RutFirmante && h[i].same(a) {
			return true
		}
	}
	return false
}

// existingReply is Reply's answer for a file received before.
func existingReply(r *store.Recepcion) (*ReplyResult, error) {
	out := &ReplyResult{Recepcion: r, Duplicate: true}
	if r.Tipo != TipoRespuesta {
		return nil, fault.Invalid("xml", dte.CodeInvalidFormat, "this file was received before as "+r.Tipo+", not as an answer")
	}
	if err := json.Unmarshal(r.Report, &out.Report); err != nil {
		return nil, fault.Failed("reading the report of file "+r.ID, err)
	}
	out.Kind = out.Report.Kind
	return out, nil
}
