package inbox

import (
	"context"
	"errors"

	"github.com/dtekit/dtekit/store"
)

// An answer to a supplier (acuse, resultado, recibos) is never skipped in
// silence. It goes to the address the supplier's file came from (or the
// correo_emisor given with the upload), else to the supplier's
// intercambio address on the SII's list of contribuyentes
// (store.Contribuyente). One that cannot be mailed says why on the
// answer (Accion.CorreoEstado), in a log line and in Config.Counted.

// What became of an answer's mail (Accion.CorreoEstado).
const (
	// CorreoEnCola: queued (Accion.CorreoID is the mail, whose own state
	// tells its delivery).
	CorreoEnCola = "en_cola"
	// CorreoSinDireccion: not mailed; no address is known for the
	// supplier (none came with the file, none is on the SII's list).
	CorreoSinDireccion = "sin_direccion"
	// CorreoSinRemitente: not mailed; the company has no mail settings to
	// send from.
	CorreoSinRemitente = "sin_remitente"
)

// Where an answer's address came from: with CorreoSinDireccion and
// CorreoSinRemitente, the labels of Config.Counted.
const (
	ViaRemitente      = "remitente"
	ViaContribuyentes = "contribuyentes"
)

// AnswerLabels are the labels Config.Counted receives, in order.
func AnswerLabels() []string {
	return []string{ViaRemitente, ViaContribuyentes, CorreoSinDireccion, CorreoSinRemitente}
}

// answerAddress finds where an answer to the supplier with this RUT goes:
// given (the address its file came from) when there is one, else its
// intercambio address on the SII's list of contribuyentes; "" when
// neither is known.
func (ib *Inbox) answerAddress(ctx context.Context, rut, given string) (addr, via string, err error) {
	if given != "" {
		return given, ViaRemitente, nil
	}
	if rut == "" {
		return "", "", nil
	}
	addr, err = ListedAddress(ctx, ib.st, rut)
	if err != nil || addr == "" {
		return "", "", err
	}
	return addr, ViaContribuyentes, nil
}

// ListedAddress is the intercambio address the SII's list of
// contribuyentes gives for rut, "" when the list does not name it or
// gives none: the one lookup of the answers to suppliers and of the
// mail of documents to their receptors.
func ListedAddress(ctx context.Context, r store.ContribuyentesReader, rut string) (string, error) {
	k, err := r.GetContribuyente(ctx, rut)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return k.Correo, nil
}

// queueAnswer queues m (its To and Via chosen) in tx, or tells why it
// is not mailed: the answer's state (Accion.CorreoEstado) and the label
// counted once tx commits. m.ID is "" when no mail was queued.
func (ib *Inbox) queueAnswer(ctx context.Context, tx store.Tx, m *Mail, via string) (estado, label string, err error) {
	if m.To == "" {
		m.ID = ""
		return CorreoSinDireccion, CorreoSinDireccion, nil
	}
	if ib.cfg.Outgoing == nil {
		m.ID = ""
		return CorreoSinRemitente, CorreoSinRemitente, nil
	}
	if err := ib.cfg.Outgoing.QueueAnswer(ctx, tx, m); err != nil {
		return "", "", err
	}
	if m.ID == "" {
		// The face queued nothing: the company sends no mail.
		return CorreoSinRemitente, CorreoSinRemitente, nil
	}
	return CorreoEnCola, via, nil
}

// answered logs and counts what became of an answer's mail, once the
// transaction that recorded it committed; ref names the record answered
// ("recibido_id" or "recepcion_id").
func (ib *Inbox) answered(empresaID, tipo, ref, id, estado, label string) {
	switch estado {
	case CorreoSinDireccion:
		ib.log.Warn("billing: an answer to a supplier was not mailed: no address is known for it (none came with its file, none is on the SII's list of contribuyentes)",
			"empresa_id", empresaID, ref, id, "tipo", tipo, "estado", estado)
	case CorreoSinRemitente:
		ib.log.Warn("billing: an answer to a supplier was not mailed: the company has no mail settings to send from",
			"empresa_id", empresaID, ref, id, "tipo", tipo, "estado", estado)
	}
	if ib.cfg.Counted != nil && label != "" {
		ib.cfg.Counted.Add(empresaID, label)
	}
}
