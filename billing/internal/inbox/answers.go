package inbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/intercambio"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/store"
)

// Respuestas is what the company did about a received document
// (store.Recibido.Respuesta).
type Respuestas struct {
	// Acuse is the acknowledgment of the file that carried it.
	Acuse *Accion `json:"acuse,omitempty"`
	// Decision is the acceptance (ACD) or the claim (RCD, RFP, RFT).
	Decision *Accion `json:"decision,omitempty"`
	// Recibo is the receipt of goods or services (ERM).
	Recibo *Accion `json:"recibo,omitempty"`
}

// Accion is one answer: what, when, why, what the registry said and the
// mail that carried the XML answer.
type Accion struct {
	Accion    string    `json:"accion"`
	Motivo    string    `json:"motivo,omitempty"`
	At        time.Time `json:"at"`
	RCVCodigo *int      `json:"rcv_codigo,omitempty"`
	RCVGlosa  string    `json:"rcv_glosa,omitempty"`
	CorreoID  string    `json:"correo_id,omitempty"`
	// CorreoEstado is what became of the XML answer's mail (CorreoEnCola,
	// CorreoSinDireccion, CorreoSinRemitente; "" for answers recorded
	// before it was kept) and CorreoPara where it went.
	CorreoEstado string `json:"correo_estado,omitempty"`
	CorreoPara   string `json:"correo_para,omitempty"`
}

// RespuestasOf reads a record's answers.
func RespuestasOf(r *store.Recibido) Respuestas {
	var out Respuestas
	if len(r.Respuesta) > 0 {
		_ = json.Unmarshal(r.Respuesta, &out)
	}
	return out
}

// RCVOf reads what the registry reported of a received document, nil
// when never asked. store.Recibido.RCV keeps it in the API's own form
// (noteRegistry writes an api.RecibidoRCV), so a change to that type's
// JSON names needs a migration of the column.
func RCVOf(r *store.Recibido) *api.RecibidoRCV {
	if len(r.RCV) == 0 {
		return nil
	}
	var out api.RecibidoRCV
	if json.Unmarshal(r.RCV, &out) != nil {
		return nil
	}
	out.ConsultaAt = out.ConsultaAt.UTC()
	if out.Eventos == nil {
		out.Eventos = []api.RecibidoRCVEvento{}
	}
	return &out
}

// Decision is the company's decision on a received document.
type Decision struct {
	// Accion is sii.RCVAccept, RCVClaimContent, RCVClaimPartial,
	// RCVClaimTotal or RCVReceipt.
	Accion sii.RCVAction
	// Motivo is the reason (required for a claim).
	Motivo string
	// Recinto is where goods were received (receipt; default the
	// company's address).
	Recinto string
}

// MaxMotivo bounds a reason (ResultadoDTE's EstadoDTEGlosa is 256).
const MaxMotivo = 256

// Decide registers d on the received document id: in the SII's registry
// first (an action the registry refuses changes nothing here), then in
// the record, with the XML answer mailed to the emitter.
func (ib *Inbox) Decide(ctx context.Context, empresaID, id string, d Decision) (*store.Recibido, error) {
	r, err := ib.st.GetRecibido(ctx, empresaID, id)
	if err != nil {
		return nil, storeErr(err, "recibido", id)
	}
	if err := ib.allowed(r, d); err != nil {
		return nil, err
	}
	if ib.cfg.Registry == nil {
		return nil, &fault.Error{Kind: fault.KindUnavailable, Code: fault.Unavailable, Message: "this server does not speak to the SII's registry (RCV); no decision can be registered"}
	}
	// The registry of the document's own environment: a document
	// received in certificación is decided there after the move too.
	cli, err := ib.cfg.Registry.Client(ctx, empresaID, r.Ambiente)
	if err != nil {
		return nil, err
	}
	ans, err := cli.RegisterRCV(ctx, sii.RCVDocument{RutEmisor: r.RutEmisor, Tipo: r.TipoDTE, Folio: r.Folio}, d.Accion)
	if err != nil {
		return nil, &fault.Error{Kind: fault.KindUnavailable, Code: fault.Unavailable, Message: "the SII's registry (RCV) did not answer; try again later", Err: err}
	}
	if ans.Outcome != sii.RCVRecorded && ans.Outcome != sii.RCVAlreadyRecorded {
		return nil, fault.Clash(fault.InvalidState, fmt.Sprintf("the SII's registry refused %s on this document: %d %s", d.Accion, ans.Code, ans.Desc))
	}
	at := ib.now().Truncate(time.Second)
	acc := &Accion{Accion: string(d.Accion), Motivo: d.Motivo, At: at, RCVCodigo: &ans.Code, RCVGlosa: ans.Desc}
	mail, err := ib.answerMail(ctx, r, d, at)
	if err != nil {
		ib.log.Warn("billing: the XML answer to a received document could not be built; the registry has the decision", "empresa_id", empresaID, "recibido_id", id, "error", err.Error())
		mail = nil
	}
	// Read before the transaction: the supplier's address when its file
	// brought none.
	to, via, err := ib.answerAddress(ctx, r.RutEmisor, r.CorreoEmisor)
	if err != nil {
		return nil, fault.Failed("reading the SII's list of contribuyentes", err)
	}
	var out *store.Recibido
	var label string
	err = ib.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		cur, err := tx.GetRecibidoForUpdate(ctx, empresaID, id)
		if err != nil {
			return err
		}
		resp := RespuestasOf(cur)
		acc.CorreoID, acc.CorreoEstado, acc.CorreoPara, label = "", "", "", ""
		if mail != nil {
			mail.To = to
			if cur.CorreoEmisor != "" {
				mail.To, via = cur.CorreoEmisor, ViaRemitente
			}
			if acc.CorreoEstado, label, err = ib.queueAnswer(ctx, tx, mail, via); err != nil {
				return err
			}
			acc.CorreoID, acc.CorreoPara = mail.ID, mail.To
		}
		if d.Accion == sii.RCVReceipt {
			resp.Recibo = acc
			if cur.Estado == Pendiente {
				// A receipt of goods accepts the document too (Ley 19.983).
				cur.Estado = Aceptado
			}
		} else {
			resp.Decision = acc
			cur.Estado = Aceptado
			if d.Accion.Claim() {
				cur.Estado = Reclamado
			}
		}
		b, err := json.Marshal(resp)
		if err != nil {
			return err
		}
		cur.Respuesta, cur.UpdatedAt = b, time.Time{}
		if err := tx.UpdateRecibido(ctx, cur); err != nil {
			return err
		}
		out = cur
		return nil
	})
	if err != nil {
		return nil, fault.Failed("recording the decision", err)
	}
	if mail != nil {
		ib.answered(empresaID, mail.Tipo, "recibido_id", id, acc.CorreoEstado, label)
	}
	out.XML = nil
	return out, nil
}

// allowed checks a decision against the document's state and window.
func (ib *Inbox) allowed(r *store.Recibido, d Decision) error {
	switch d.Accion {
	case sii.RCVAccept, sii.RCVClaimContent, sii.RCVClaimPartial, sii.RCVClaimTotal, sii.RCVReceipt:
	default:
		return fault.Invalid("accion", dte.CodeInvalidValue, fmt.Sprintf("unknown action %q", d.Accion))
	}
	if d.Accion.Claim() && len([]rune(d.Motivo)) == 0 {
		return fault.Invalid("motivo", dte.CodeRequired, "a claim states its reason")
	}
	if len([]rune(d.Motivo)) > MaxMotivo {
		return fault.Invalid("motivo", dte.CodeTooLong, fmt.Sprintf("the reason has %d characters, more than %d", len([]rune(d.Motivo)), MaxMotivo))
	}
	state := func(msg string) error {
		return fault.Clash(fault.InvalidState, msg)
	}
	switch {
	case r.Estado == Rechazado:
		return state("the document failed verification when it was received; it cannot be accepted or claimed")
	case r.TipoDTE != 33 && r.TipoDTE != 34 && r.TipoDTE != 43:
		return state(fmt.Sprintf("the SII's registry takes decisions on types 33, 34 and 43 only, not %d", r.TipoDTE))
	case d.Accion == sii.RCVReceipt && RespuestasOf(r).Recibo != nil:
		return state("the receipt of goods was already registered")
	case d.Accion == sii.RCVReceipt && r.Estado == Reclamado:
		return state("the document was claimed; no receipt of goods can follow")
	case d.Accion == sii.RCVAccept && r.Estado == Aceptado && RespuestasOf(r).Decision == nil:
		// After a receipt of goods, as the registry allows it.
	case d.Accion != sii.RCVReceipt && r.Estado != Pendiente:
		return state(fmt.Sprintf("the document is %s already", r.Estado))
	}
	if !r.PlazoVence.IsZero() && ib.now().After(r.PlazoVence) {
		return state(fmt.Sprintf("the legal window closed at %s", r.PlazoVence.UTC().Format(time.RFC3339)))
	}
	return nil
}

// reception reads a stored file again, as it was received: the same
// Recepcion Intake saw, with the company's number for it.
func (ib *Inbox) reception(ctx context.Context, empresaID, recepcionID string) (*intercambio.Recepcion, *store.Recepcion, error) {
	rec, err := ib.st.GetRecepcion(ctx, empresaID, recepcionID)
	if err != nil {
		return nil, nil, err
	}
	emp, err := ib.st.GetEmpresa(ctx, empresaID)
	if err != nil {
		return nil, nil, err
	}
	if rec.Descartado {
		// Only the file's first bytes were kept: its reception is read
		// back from its report, which holds everything an acuse says.
		var r intercambio.Recepcion
		if err := json.Unmarshal(rec.Report, &r); err != nil {
			return nil, nil, fmt.Errorf("reading the report of file %s: %w", rec.ID, err)
		}
		r.NmbEnvio, r.CodEnvio, r.FchRecep = intercambio.DefaultNmbEnvio, max(1, min(rec.Numero, intercambio.MaxCodigo)), rec.CreatedAt
		return &r, rec, nil
	}
	vo, err := ib.cfg.Tenants.VerifyOptions(ctx, empresaID)
	if err != nil {
		return nil, nil, err
	}
	r, err := intercambio.Receive(rec.XML, intercambio.Options{Empresa: emp.Rut, Verify: vo, CodEnvio: max(1, min(rec.Numero, intercambio.MaxCodigo)), At: rec.CreatedAt})
	return r, rec, err
}

// answerMail builds the XML answer of a decision and its mail (without
// its recipient), or nil when the document cannot be answered in XML.
func (ib *Inbox) answerMail(ctx context.Context, r *store.Recibido, d Decision, at time.Time) (*Mail, error) {
	rec, _, err := ib.reception(ctx, r.EmpresaID, r.RecepcionID)
	if err != nil {
		return nil, err
	}
	one := *rec
	one.Documentos = nil
	for _, doc := range rec.Documentos {
		if doc.Tipo == dte.TipoDTE(r.TipoDTE) && doc.Folio == r.Folio && doc.RUTEmisor == r.RutEmisor {
			one.Documentos = append(one.Documentos, doc)
		}
	}
	if len(one.Documentos) == 0 {
		return nil, errors.New("the document is not in its file any more")
	}
	cert, err := ib.cfg.Tenants.SigningCert(ctx, r.EmpresaID)
	if err != nil {
		return nil, err
	}
	opts := intercambio.AnswerOptions{IdRespuesta: max(1, min(rec.CodEnvio, intercambio.MaxCodigo)), At: at}
	m := &Mail{EmpresaID: r.EmpresaID, RecibidoID: r.ID}
	doc := fmt.Sprintf("%d folio %d", r.TipoDTE, r.Folio)
	if d.Accion == sii.RCVReceipt {
		emp, err := ib.st.GetEmpresa(ctx, r.EmpresaID)
		if err != nil {
			return nil, err
		}
		recinto := d.Recinto
		if recinto == "" {
			recinto = emp.Direccion
		}
		xml, _, err := one.Recibos(cert, opts, truncate(recinto, 80))
		if err != nil {
			return nil, err
		}
		m.ID, m.Tipo, m.XML, m.Filename = mailID("recibos", r.ID), "recibos", xml, fmt.Sprintf("EnvioRecibos_%s_%d_%d.xml", r.RutEmisor, r.TipoDTE, r.Folio)
		m.Subject = "Recibo de mercaderías o servicios: DTE " + doc
		m.Text = "Adjuntamos el recibo de mercaderías o servicios (Ley 19.983) del DTE " + doc + "."
		return m, nil
	}
	dec := intercambio.Decision{Estado: intercambio.DTEAceptadoOK}
	if d.Accion.Claim() {
		dec = intercambio.Decision{Estado: intercambio.DTERechazado, Motivo: d.Motivo}
	}
	xml, _, err := one.Resultado(cert, opts, intercambio.Todos(dec))
	if err != nil {
		return nil, err
	}
	m.ID, m.Tipo, m.XML, m.Filename = mailID("resultado", r.ID), "resultado", xml, fmt.Sprintf("ResultadoDTE_%s_%d_%d.xml", r.RutEmisor, r.TipoDTE, r.Folio)
	m.Subject = "Resultado comercial: DTE " + doc
	if d.Accion.Claim() {
		m.Text = "El DTE " + doc + " fue reclamado: " + d.Motivo
	} else {
		m.Text = "El DTE " + doc + " fue aceptado."
	}
	return m, nil
}

// storeErr maps a store error on record kind/id to a fault.
func storeErr(err error, kind, id string) error {
	if errors.Is(err, store.ErrNotFound) {
		return fault.Missing(kind, id)
	}
	return fault.Failed("reading "+kind+" "+id, err)
}
