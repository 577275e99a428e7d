package inbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/internal/periodic"
	"github.com/dtekit/dtekit/intercambio"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/webhook"
)

// acuseKind names the job that acknowledges a received file.
const acuseKind = "inbox.acuse"

// acuseArgs acknowledges one received file.
type acuseArgs struct {
	EmpresaID   string `json:"empresa_id"`
	RecepcionID string `json:"recepcion_id"`
}

// Kind names the job.
func (acuseArgs) Kind() string { return acuseKind }

// JobOpts: the acknowledgment waits in the maintenance queue; one per
// file.
func (acuseArgs) JobOpts() store.JobOpts {
	return store.JobOpts{Queue: periodic.Queue, MaxAttempts: 10, UniqueByArgs: true}
}

// acuse builds the acknowledgment of a received file (RespuestaDTE with
// RecepcionEnvio), queues it by mail to the sender and notes it on each
// document of the file. Run twice, it queues one mail (its id is the
// file's) and notes nothing new.
func (ib *Inbox) acuse(ctx context.Context, a acuseArgs) error {
	rec, row, err := ib.reception(ctx, a.EmpresaID, a.RecepcionID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	cert, err := ib.cfg.Tenants.SigningCert(ctx, a.EmpresaID)
	if err != nil {
		return err
	}
	at := ib.now().Truncate(time.Second)
	xml, err := rec.Acuse(cert, intercambio.AnswerOptions{IdRespuesta: max(1, min(row.Numero, intercambio.MaxCodigo)), At: at})
	if err != nil {
		// A file too damaged to name its emitter cannot be answered.
		ib.log.Warn("billing: a received file cannot be acknowledged", "empresa_id", a.EmpresaID, "recepcion_id", a.RecepcionID, "error", err.Error())
		return nil
	}
	// Read before the transaction: the emitter's address on the SII's
	// list, for a file that came without one.
	var listed, listedVia string
	if row.Remitente == "" {
		if listed, listedVia, err = ib.answerAddress(ctx, rec.RutEmisor, ""); err != nil {
			return err
		}
	}
	mail := &Mail{ID: mailID("acuse", row.ID), EmpresaID: a.EmpresaID, Tipo: "acuse",
		Subject: "Acuse de recibo: " + rec.NmbEnvio, Filename: fmt.Sprintf("RecepcionEnvio_%d.xml", row.Numero), XML: xml,
		Text: "Adjuntamos el acuse de recibo del envío " + rec.NmbEnvio + ": " + rec.Glosa}
	var estado, label string
	noted := false
	err = ib.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		mail.ID, mail.To, noted = mailID("acuse", row.ID), row.Remitente, false
		via := ViaRemitente
		var ids []string
		for i := range rec.Documentos {
			d := &rec.Documentos[i]
			key := keyIn(docAmbiente(d, row.Ambiente), docKey(d, row.Digest, i))
			r, err := tx.GetRecibidoByKey(ctx, a.EmpresaID, key)
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			ids = append(ids, r.ID)
			if mail.To == "" {
				mail.To = r.CorreoEmisor
			}
		}
		if mail.To == "" {
			mail.To, via = listed, listedVia
		}
		if len(ids) > 0 {
			mail.RecibidoID = ids[0]
		}
		if estado, label, err = ib.queueAnswer(ctx, tx, mail, via); err != nil {
			return err
		}
		for _, id := range ids {
			r, err := tx.GetRecibidoForUpdate(ctx, a.EmpresaID, id)
			if err != nil {
				return err
			}
			resp := RespuestasOf(r)
			if resp.Acuse != nil {
				continue
			}
			resp.Acuse = &Accion{Accion: "acuse", At: at, Motivo: rec.Glosa, CorreoID: mail.ID, CorreoEstado: estado, CorreoPara: mail.To}
			if r.Respuesta, err = json.Marshal(resp); err != nil {
				return err
			}
			r.UpdatedAt = time.Time{}
			if err := tx.UpdateRecibido(ctx, r); err != nil {
				return err
			}
			noted = true
		}
		return tx.CompleteJob(ctx)
	})
	if err != nil {
		return err
	}
	// Reported once: the run that noted the acknowledgment (a file with
	// no document to note it on is reported each time it is asked).
	if noted || len(rec.Documentos) == 0 {
		ib.answered(a.EmpresaID, "acuse", "recepcion_id", a.RecepcionID, estado, label)
	}
	return nil
}

// refreshArgs names the periodic refresh of the registry's view.
type refreshArgs struct{}

// Kind names the job.
func (refreshArgs) Kind() string { return "inbox.refresh" }

// refresh asks the registry, for every company, about its received
// documents, and warns of the windows about to close.
func (ib *Inbox) refresh(ctx context.Context) error {
	return periodic.EachEmpresa(ctx, ib.st, func(e *store.Empresa) error {
		if err := ib.Refresh(ctx, e.ID); err != nil {
			ib.log.Warn("billing: refreshing received documents failed", "empresa_id", e.ID, "error", err.Error())
		}
		return nil
	})
}

// Refresh asks the registry about the company's received documents that
// may still change there (when the SII received each, which starts its
// window, and the events on it), then warns, once each, of the windows
// that close within Lead.
//
// The warnings follow what is known even when a registry did not answer
// (one environment's registry down holds up no warning of the other's
// documents); its error is returned after them.
func (ib *Inbox) Refresh(ctx context.Context, empresaID string) error {
	var asked error
	if ib.cfg.Registry != nil {
		asked = ib.askRegistry(ctx, empresaID)
	}
	if err := ib.warn(ctx, empresaID); err != nil {
		return errors.Join(asked, err)
	}
	return asked
}

// UnknownWindowAfter is how long after a document is received the
// refresh keeps asking the registry for its reception date once the
// company has decided on it: the SII receives documents within days of
// their emission, and a pending one is asked about until decided.
const UnknownWindowAfter = 30 * 24 * time.Hour

// askRegistry refreshes the registry's view of every received document
// whose window is still open (or not yet known): the pending ones, which
// need their deadline and the "por vencer" warning, and the decided ones,
// on which the registry may still record events (a receipt of goods, an
// acceptance or claim made in the SII's portal). It walks every page, oldest
// documents included, one environment at a time, each asked of its own
// environment's registry: a document received in certificación is
// followed there after the company moved, and a registry that does not
// answer holds up only its own environment's documents.
func (ib *Inbox) askRegistry(ctx context.Context, empresaID string) error {
	emp, err := ib.st.GetEmpresa(ctx, empresaID)
	if err != nil {
		return err
	}
	var errs []error
	for _, amb := range ambientesFrom(emp.Ambiente) {
		if err := ib.askRegistryIn(ctx, empresaID, amb, amb == emp.Ambiente); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", amb, err))
		}
	}
	return errors.Join(errs...)
}

// ambientesFrom lists both environments, current first.
func ambientesFrom(current string) []string {
	out := []string{current}
	for _, a := range ambientes {
		if a != current {
			out = append(out, a)
		}
	}
	return out
}

// askRegistryIn refreshes the documents of one environment. Those of the
// environment the company no longer works in (certificación, after the
// move) are asked about while their window is known and open, or for
// UnknownWindowAfter from their reception, pending or not: the
// certification registry may never know a test document.
func (ib *Inbox) askRegistryIn(ctx context.Context, empresaID, amb string, current bool) error {
	var cli *sii.Client
	now := ib.now()
	// A document the registry settles in one pass is listed again in the
	// next: asked once.
	seen := map[string]bool{}
	for _, estado := range []string{Pendiente, Aceptado, Reclamado} {
		cursor := ""
		for {
			page, err := ib.st.ListRecibidos(ctx, empresaID, store.RecibidoFilter{Ambiente: amb, Estado: estado, PlazoDesde: now,
				Cursor: cursor, Limit: store.MaxLimit})
			if err != nil {
				return err
			}
			for i := range page.Items {
				r := &page.Items[i]
				if seen[r.ID] || (r.TipoDTE != 33 && r.TipoDTE != 34 && r.TipoDTE != 43) {
					continue
				}
				seen[r.ID] = true
				if (r.Estado != Pendiente || !current) && r.PlazoVence.IsZero() && now.Sub(r.CreatedAt) > UnknownWindowAfter {
					continue
				}
				if cli == nil {
					if cli, err = ib.cfg.Registry.Client(ctx, empresaID, amb); err != nil {
						return err
					}
				}
				if err := ib.askOne(ctx, cli, r); err != nil {
					return err
				}
			}
			if page.NextCursor == "" {
				break
			}
			cursor = page.NextCursor
		}
	}
	return nil
}

// askOne asks the registry about one document and records its answer.
func (ib *Inbox) askOne(ctx context.Context, cli *sii.Client, r *store.Recibido) error {
	doc := sii.RCVDocument{RutEmisor: r.RutEmisor, Tipo: r.TipoDTE, Folio: r.Folio}
	var when *sii.RCVReception
	var err error
	if r.FechaRecepcionSII.IsZero() {
		if when, err = cli.RCVReceptionDate(ctx, doc); err != nil {
			return err
		}
	}
	hist, err := cli.RCVEvents(ctx, doc)
	if err != nil {
		return err
	}
	return ib.noteRegistry(ctx, r, when, hist)
}

// noteRegistry records what the registry said of one document: its
// reception date and window, and its events (an acceptance or claim made
// elsewhere, in the SII's portal, settles the document here too).
func (ib *Inbox) noteRegistry(ctx context.Context, r *store.Recibido, when *sii.RCVReception, hist *sii.RCVHistory) error {
	st := api.RecibidoRCV{Codigo: hist.Code, Glosa: hist.Desc, ConsultaAt: ib.now().UTC().Truncate(time.Second), Eventos: []api.RecibidoRCVEvento{}}
	decided := ""
	for _, ev := range hist.Events {
		e := api.RecibidoRCVEvento{Accion: string(ev.Action), Glosa: ev.Desc, RutResponsable: ev.RutResponsable, FechaTexto: ev.AtText}
		if !ev.At.IsZero() {
			t := ev.At.UTC()
			e.Fecha = &t
		}
		st.Eventos = append(st.Eventos, e)
		switch {
		case ev.Action == sii.RCVAccept || ev.Action == sii.RCVReceipt:
			decided = Aceptado
		case ev.Action.Claim():
			decided = Reclamado
		}
	}
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return ib.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		cur, err := tx.GetRecibidoForUpdate(ctx, r.EmpresaID, r.ID)
		if err != nil {
			return err
		}
		cur.RCV = b
		if when != nil && when.Received && cur.FechaRecepcionSII.IsZero() {
			cur.FechaRecepcionSII, cur.PlazoVence = when.At.UTC(), when.WindowEnds().UTC()
		}
		if decided != "" && cur.Estado == Pendiente {
			cur.Estado = decided
		}
		cur.UpdatedAt = time.Time{}
		return tx.UpdateRecibido(ctx, cur)
	})
}

// warn publishes recibido.plazo_por_vencer for each pending document whose
// window closes within Lead, once; the event names the document's
// environment (a window known from the certification registry is that
// registry's, never the production one's).
func (ib *Inbox) warn(ctx context.Context, empresaID string) error {
	until := ib.now().Add(Lead)
	for {
		page, err := ib.st.ListRecibidos(ctx, empresaID, store.RecibidoFilter{Estado: Pendiente, PlazoHasta: until, SinAviso: true, Limit: 100})
		if err != nil {
			return err
		}
		if len(page.Items) == 0 {
			return nil
		}
		for i := range page.Items {
			id := page.Items[i].ID
			err := ib.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
				cur, err := tx.GetRecibidoForUpdate(ctx, empresaID, id)
				if err != nil {
					return err
				}
				if !cur.PlazoAvisadoAt.IsZero() || cur.Estado != Pendiente {
					return nil
				}
				cur.PlazoAvisadoAt, cur.UpdatedAt = ib.now().UTC(), time.Time{}
				if err := tx.UpdateRecibido(ctx, cur); err != nil {
					return err
				}
				_, err = ib.cfg.Outbox.Publish(ctx, tx, empresaID, webhook.EventRecibidoPlazoPorVencer, EventData(cur))
				return err
			})
			if err != nil {
				return err
			}
		}
		if page.NextCursor == "" {
			return nil
		}
	}
}
