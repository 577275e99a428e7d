package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/store"
)

// testTenantScoping fills company A with one record of every kind, then
// calls every read and write method with company B's id (and with an id
// of no company) and A's record ids: each must report ErrNotFound (or an
// empty listing), inside and outside transactions, and A's records must
// be unchanged afterwards.
func (h *harness) testTenantScoping(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "79000000-0")
	b := empresa(t, s, "79111111-1")

	caf := &store.CAF{EmpresaID: a.ID, TipoDTE: 33, FolioDesde: 1, FolioHasta: 10, Ambiente: "certificacion", IsActive: true}
	doc := &store.DTE{EmpresaID: a.ID, TipoDTE: 33, Folio: 1, Estado: string(dte.EstadoFirmado), XML: []byte("<DTE/>")}
	cli := &store.Cliente{EmpresaID: a.ID, Rut: "1-9", RazonSocial: "A's cliente"}
	pro := &store.Producto{EmpresaID: a.ID, Codigo: "P1", Nombre: "A's producto"}
	wh := &store.Webhook{EmpresaID: a.ID, URL: "https://a.example", Events: []string{"dte.created"}, IsActive: true}
	key := &store.APIKey{EmpresaID: a.ID, Hash: []byte("a-key")}
	idem := &store.Idempotency{EmpresaID: a.ID, Key: "a-idem", BodyHash: []byte{1}}
	ev := &store.Event{EmpresaID: a.ID, Type: "dte.created", Payload: []byte("{}")}
	env := &store.Envio{EmpresaID: a.ID, Estado: "pendiente"}
	cert := &store.Certificado{EmpresaID: a.ID, Sealed: []byte{1}, IsActive: true}
	var del *store.Delivery
	rec := &store.Recepcion{EmpresaID: a.ID, Digest: "a-digest", Origen: "upload", XML: []byte("<EnvioDTE/>")}
	var rcb *store.Recibido
	var mail *store.Correo
	msg := &store.Mensaje{EmpresaID: a.ID, MessageID: "<a@x>", Digest: "a-mail", Estado: "procesado"}
	mailbox := &store.CorreoConfig{EmpresaID: a.ID, Config: []byte("{}"), SealedIMAP: []byte{1}}
	buzon := &store.Buzon{EmpresaID: a.ID, Fallos: 3, UltimoError: "timeout"}
	maxMensajes := int64(7)
	quota := &store.InboxSettings{EmpresaID: a.ID, MaxMensajes: &maxMensajes}
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		err := errors.Join(tx.InsertCAF(ctx, caf), tx.InsertDTE(ctx, doc), tx.InsertCliente(ctx, cli),
			tx.InsertProducto(ctx, pro), tx.InsertWebhook(ctx, wh), tx.InsertAPIKey(ctx, key),
			tx.InsertIdempotency(ctx, idem), tx.InsertEvent(ctx, ev), tx.InsertEnvio(ctx, env), tx.PutCertificado(ctx, cert))
		if err != nil {
			return err
		}
		del = &store.Delivery{EmpresaID: a.ID, WebhookID: wh.ID, EventID: ev.ID}
		if err := tx.InsertDelivery(ctx, del); err != nil {
			return err
		}
		if err := errors.Join(tx.InsertRecepcion(ctx, rec), tx.InsertMensaje(ctx, msg), tx.PutCorreoConfig(ctx, mailbox),
			tx.SetDTEIntercambio(ctx, a.ID, doc.ID, []byte(`{"a":1}`))); err != nil {
			return err
		}
		rcb = &store.Recibido{EmpresaID: a.ID, RecepcionID: rec.ID, DedupeKey: "a-key", Estado: "recibido", XML: []byte("<DTE/>")}
		if err := tx.InsertRecibido(ctx, rcb); err != nil {
			return err
		}
		mail = &store.Correo{EmpresaID: a.ID, Tipo: "resultado", DTEID: doc.ID, RecibidoID: rcb.ID, Estado: "pendiente", Message: []byte("m")}
		return errors.Join(tx.SetLowStockThreshold(ctx, a.ID, 9), tx.InsertCorreo(ctx, mail),
			tx.PutBuzon(ctx, buzon), tx.PutInboxSettings(ctx, quota),
			tx.InsertDeliveryAttempt(ctx, &store.DeliveryAttempt{EmpresaID: a.ID, DeliveryID: del.ID, WebhookID: wh.ID,
				Attempt: 1, Trigger: store.TriggerScheduled, StatusCode: 500}))
	})

	for _, other := range []string{b.ID, "no-such-company"} {
		t.Run(fmt.Sprintf("as %s", other), func(t *testing.T) {
			reads := func(r store.Reader) map[string]error {
				errs := map[string]error{}
				get := func(name string, err error) { errs[name] = err }
				_, err := r.GetCertificado(ctx, other)
				get("GetCertificado", err)
				_, err = r.GetCAF(ctx, other, caf.ID)
				get("GetCAF", err)
				_, err = r.GetDTE(ctx, other, doc.ID)
				get("GetDTE", err)
				_, err = r.GetDTEByFolio(ctx, other, "certificacion", 33, 1)
				get("GetDTEByFolio", err)
				_, err = r.GetCliente(ctx, other, cli.ID)
				get("GetCliente", err)
				_, err = r.GetClienteByRut(ctx, other, cli.Rut)
				get("GetClienteByRut", err)
				_, err = r.GetProducto(ctx, other, pro.ID)
				get("GetProducto", err)
				_, err = r.GetWebhook(ctx, other, wh.ID)
				get("GetWebhook", err)
				_, err = r.GetIdempotency(ctx, other, idem.Ambiente, idem.Key)
				get("GetIdempotency", err)
				_, err = r.GetEvent(ctx, other, ev.ID)
				get("GetEvent", err)
				_, err = r.GetDelivery(ctx, other, del.ID)
				get("GetDelivery", err)
				_, err = r.GetEnvio(ctx, other, env.ID)
				get("GetEnvio", err)
				_, err = r.GetRecepcion(ctx, other, rec.ID)
				get("GetRecepcion", err)
				_, err = r.GetRecepcionByDigest(ctx, other, rec.Digest)
				get("GetRecepcionByDigest", err)
				_, err = r.GetRecibido(ctx, other, rcb.ID)
				get("GetRecibido", err)
				_, err = r.GetRecibidoByKey(ctx, other, rcb.DedupeKey)
				get("GetRecibidoByKey", err)
				_, err = r.GetCorreo(ctx, other, mail.ID)
				get("GetCorreo", err)
				_, err = r.FindMensaje(ctx, other, msg.Digest)
				get("FindMensaje", err)
				_, err = r.GetCorreoConfig(ctx, other)
				get("GetCorreoConfig", err)
				_, err = r.GetBuzon(ctx, other)
				get("GetBuzon", err)
				_, err = r.GetInboxSettings(ctx, other)
				get("GetInboxSettings", err)
				if other != b.ID {
					_, err = r.GetEmpresa(ctx, other)
					get("GetEmpresa", err)
				}
				// Listings: empty, not an error.
				empty := func(name string, n int, err error) {
					if err != nil {
						errs[name] = err
					} else if n != 0 {
						errs[name] = fmt.Errorf("%w: (listed %d of A's records)", store.ErrNotFound, n)
					} else {
						errs[name] = store.ErrNotFound
					}
				}
				cafs, err := r.ListCAFs(ctx, other, 0)
				empty("ListCAFs", len(cafs), err)
				cafPage, err := r.ListCAFPage(ctx, other, store.CAFFilter{})
				empty("ListCAFPage", lenPage(cafPage), err)
				inUse, err := r.CAFsInUse(ctx, other)
				empty("CAFsInUse", len(inUse), err)
				dtes, err := r.ListDTEs(ctx, other, store.DTEFilter{})
				empty("ListDTEs", lenPage(dtes), err)
				clis, err := r.ListClientes(ctx, other, store.CatalogFilter{})
				empty("ListClientes", lenPage(clis), err)
				pros, err := r.ListProductos(ctx, other, store.CatalogFilter{})
				empty("ListProductos", lenPage(pros), err)
				whs, err := r.ListWebhooks(ctx, other)
				empty("ListWebhooks", len(whs), err)
				keys, err := r.ListAPIKeys(ctx, other)
				empty("ListAPIKeys", len(keys), err)
				evs, err := r.ListEvents(ctx, other, store.ListFilter{})
				empty("ListEvents", lenPage(evs), err)
				dels, err := r.ListDeliveries(ctx, other, wh.ID, store.ListFilter{})
				empty("ListDeliveries", lenPage(dels), err)
				envs, err := r.ListEnvios(ctx, other, store.EnvioFilter{})
				empty("ListEnvios", lenPage(envs), err)
				recs, err := r.ListRecepciones(ctx, other, store.RecepcionFilter{})
				empty("ListRecepciones", lenPage(recs), err)
				rcbs, err := r.ListRecibidos(ctx, other, store.RecibidoFilter{RutEmisor: rcb.RutEmisor})
				empty("ListRecibidos", lenPage(rcbs), err)
				mails, err := r.ListCorreos(ctx, other, store.CorreoFilter{DTEID: doc.ID})
				empty("ListCorreos", lenPage(mails), err)
				mails, err = r.ListCorreos(ctx, other, store.CorreoFilter{RecibidoID: rcb.ID})
				empty("ListCorreos by recibido", lenPage(mails), err)
				msgs, err := r.ListMensajes(ctx, other, store.ListFilter{})
				empty("ListMensajes", lenPage(msgs), err)
				atts, err := r.ListDeliveryAttempts(ctx, other, del.ID)
				empty("ListDeliveryAttempts", len(atts), err)
				// No failures and no threshold: zero, not an error.
				if since, err := r.WebhookFailingSince(ctx, other, wh.ID); err != nil || !since.IsZero() {
					errs["WebhookFailingSince"] = fmt.Errorf("%v, %v", since, err)
				}
				if n, ok, err := r.LowStockThreshold(ctx, other); err != nil || ok || n != 0 {
					errs["LowStockThreshold"] = fmt.Errorf("%d, %v, %v", n, ok, err)
				}
				// Nothing kept: zero usage, not A's.
				if u, err := r.InboxUsage(ctx, other); err != nil || u.Recepciones != 0 || u.RecepcionBytes != 0 || u.Mensajes != 0 {
					errs["InboxUsage"] = fmt.Errorf("%+v, %v", u, err)
				}
				return errs
			}
			check := func(where string, errs map[string]error) {
				for name, err := range errs {
					if !errors.Is(err, store.ErrNotFound) {
						t.Errorf("%s %s with another company's id: %v, want not found", where, name, err)
					}
				}
			}
			check("Store.", reads(s))

			// Each write in its own transaction: on PostgreSQL a failed
			// statement would poison the rest of a shared one.
			writes := map[string]func(ctx context.Context, tx store.Tx) error{
				"reads in Tx": func(ctx context.Context, tx store.Tx) error {
					check("Tx.", reads(tx))
					return store.ErrNotFound
				},
				"PutCertificado": func(ctx context.Context, tx store.Tx) error {
					if other == b.ID {
						return store.ErrNotFound // B may own a certificate; not a cross-tenant write
					}
					return tx.PutCertificado(ctx, &store.Certificado{EmpresaID: other, Sealed: []byte{2}})
				},
				"SetCAFActive": func(ctx context.Context, tx store.Tx) error { return tx.SetCAFActive(ctx, other, caf.ID, false) },
				"TakeFolio": func(ctx context.Context, tx store.Tx) error {
					_, _, err := tx.TakeFolio(ctx, other, 33)
					if errors.Is(err, store.ErrNoFolios) || errors.Is(err, store.ErrNoCAF) {
						return store.ErrNotFound
					}
					return err
				},
				"UpdateDTE": func(ctx context.Context, tx store.Tx) error {
					u := *doc
					u.EmpresaID, u.Estado = other, string(dte.EstadoRechazado)
					return tx.UpdateDTE(ctx, &u)
				},
				"UpdateDTEIf": func(ctx context.Context, tx store.Tx) error {
					u := *doc
					u.EmpresaID, u.Estado = other, string(dte.EstadoRechazado)
					_, err := tx.UpdateDTEIf(ctx, &u, doc.Estado)
					return err
				},
				"GetDTEForUpdate": func(ctx context.Context, tx store.Tx) error {
					_, err := tx.GetDTEForUpdate(ctx, other, doc.ID)
					return err
				},
				"UpdateCliente": func(ctx context.Context, tx store.Tx) error {
					u := *cli
					u.EmpresaID, u.RazonSocial = other, "hijacked"
					return tx.UpdateCliente(ctx, &u)
				},
				"DeleteCliente": func(ctx context.Context, tx store.Tx) error { return tx.DeleteCliente(ctx, other, cli.ID) },
				"UpdateProducto": func(ctx context.Context, tx store.Tx) error {
					u := *pro
					u.EmpresaID, u.Nombre = other, "hijacked"
					return tx.UpdateProducto(ctx, &u)
				},
				"DeleteProducto": func(ctx context.Context, tx store.Tx) error { return tx.DeleteProducto(ctx, other, pro.ID) },
				"UpdateWebhook": func(ctx context.Context, tx store.Tx) error {
					u := *wh
					u.EmpresaID, u.URL = other, "https://evil.example"
					return tx.UpdateWebhook(ctx, &u)
				},
				"DeleteWebhook": func(ctx context.Context, tx store.Tx) error { return tx.DeleteWebhook(ctx, other, wh.ID) },
				"RevokeAPIKey":  func(ctx context.Context, tx store.Tx) error { return tx.RevokeAPIKey(ctx, other, key.ID, time.Now()) },
				"UpdateIdempotency": func(ctx context.Context, tx store.Tx) error {
					u := *idem
					u.EmpresaID, u.State = other, store.IdempotencyDone
					return tx.UpdateIdempotency(ctx, &u)
				},
				"InsertDelivery": func(ctx context.Context, tx store.Tx) error {
					return tx.InsertDelivery(ctx, &store.Delivery{EmpresaID: other, WebhookID: wh.ID, EventID: ev.ID})
				},
				"UpdateDelivery": func(ctx context.Context, tx store.Tx) error {
					u := *del
					u.EmpresaID, u.State = other, store.DeliveryFailed
					return tx.UpdateDelivery(ctx, &u)
				},
				"InsertDeliveryAttempt": func(ctx context.Context, tx store.Tx) error {
					return tx.InsertDeliveryAttempt(ctx, &store.DeliveryAttempt{EmpresaID: other, DeliveryID: del.ID, WebhookID: wh.ID,
						Attempt: 2, Trigger: store.TriggerManual})
				},
				"UpdateEnvio": func(ctx context.Context, tx store.Tx) error {
					u := *env
					u.EmpresaID, u.TrackID = other, "hijacked"
					return tx.UpdateEnvio(ctx, &u)
				},
				"GetEnvioForUpdate": func(ctx context.Context, tx store.Tx) error {
					_, err := tx.GetEnvioForUpdate(ctx, other, env.ID)
					return err
				},
				"InsertRecibido": func(ctx context.Context, tx store.Tx) error {
					return tx.InsertRecibido(ctx, &store.Recibido{EmpresaID: other, RecepcionID: rec.ID, DedupeKey: "b-key"})
				},
				"UpdateRecibido": func(ctx context.Context, tx store.Tx) error {
					u := *rcb
					u.EmpresaID, u.Estado = other, "hijacked"
					return tx.UpdateRecibido(ctx, &u)
				},
				"GetRecibidoForUpdate": func(ctx context.Context, tx store.Tx) error {
					_, err := tx.GetRecibidoForUpdate(ctx, other, rcb.ID)
					return err
				},
				"InsertCorreo with A's DTE": func(ctx context.Context, tx store.Tx) error {
					return tx.InsertCorreo(ctx, &store.Correo{EmpresaID: other, Tipo: "dte", DTEID: doc.ID})
				},
				"InsertCorreo with A's recibido": func(ctx context.Context, tx store.Tx) error {
					return tx.InsertCorreo(ctx, &store.Correo{EmpresaID: other, Tipo: "resultado", RecibidoID: rcb.ID})
				},
				"UpdateCorreo": func(ctx context.Context, tx store.Tx) error {
					u := *mail
					u.EmpresaID, u.Estado = other, "hijacked"
					return tx.UpdateCorreo(ctx, &u)
				},
				"SetDTEIntercambio": func(ctx context.Context, tx store.Tx) error {
					return tx.SetDTEIntercambio(ctx, other, doc.ID, []byte("hijacked"))
				},
			}
			// A purge of another company deletes none of A's files or mails
			// (they are old enough for any cut-off).
			write(t, s, func(ctx context.Context, tx store.Tx) error {
				files, mails, err := tx.PurgeInbox(ctx, other, time.Now().Add(24*time.Hour), 100)
				if err == nil && (files != 0 || mails != 0) {
					t.Errorf("PurgeInbox with another company's id deleted %d files and %d mails", files, mails)
				}
				return err
			})
			if other != b.ID {
				// B's own records: not cross-tenant writes for B.
				writes["InsertRecepcion"] = func(ctx context.Context, tx store.Tx) error {
					return tx.InsertRecepcion(ctx, &store.Recepcion{EmpresaID: other, Digest: "x"})
				}
				writes["InsertMensaje"] = func(ctx context.Context, tx store.Tx) error {
					return tx.InsertMensaje(ctx, &store.Mensaje{EmpresaID: other, Digest: "x"})
				}
				writes["PutCorreoConfig"] = func(ctx context.Context, tx store.Tx) error {
					return tx.PutCorreoConfig(ctx, &store.CorreoConfig{EmpresaID: other, Config: []byte("{}")})
				}
				writes["UpdateEmpresa"] = func(ctx context.Context, tx store.Tx) error {
					return tx.UpdateEmpresa(ctx, &store.Empresa{ID: other, Rut: "x", Ambiente: "x"})
				}
				writes["SetLowStockThreshold"] = func(ctx context.Context, tx store.Tx) error {
					return tx.SetLowStockThreshold(ctx, other, 1)
				}
				writes["PutBuzon"] = func(ctx context.Context, tx store.Tx) error {
					return tx.PutBuzon(ctx, &store.Buzon{EmpresaID: other})
				}
				writes["PutInboxSettings"] = func(ctx context.Context, tx store.Tx) error {
					return tx.PutInboxSettings(ctx, &store.InboxSettings{EmpresaID: other})
				}
			}
			for name, fn := range writes {
				if err := s.Write(ctx, fn); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("%s with another company's id: %v, want not found", name, err)
				}
			}
		})
	}

	// A's records are untouched.
	if c, _ := s.GetCAF(ctx, a.ID, caf.ID); c == nil || !c.IsActive || c.NextFolio != 1 {
		t.Errorf("A's CAF changed: %+v", c)
	}
	if d, _ := s.GetDTE(ctx, a.ID, doc.ID); d == nil || d.Estado != string(dte.EstadoFirmado) {
		t.Errorf("A's DTE changed: %+v", d)
	}
	if c, err := s.GetCliente(ctx, a.ID, cli.ID); err != nil || c.RazonSocial != cli.RazonSocial {
		t.Errorf("A's cliente changed: %+v, %v", c, err)
	}
	if p, err := s.GetProducto(ctx, a.ID, pro.ID); err != nil || p.Nombre != pro.Nombre {
		t.Errorf("A's producto changed: %+v, %v", p, err)
	}
	if w, err := s.GetWebhook(ctx, a.ID, wh.ID); err != nil || w.URL != wh.URL {
		t.Errorf("A's webhook changed: %+v, %v", w, err)
	}
	if k, err := s.FindAPIKey(ctx, key.Hash); err != nil || !k.RevokedAt.IsZero() {
		t.Errorf("A's api key changed: %+v, %v", k, err)
	}
	if i, err := s.GetIdempotency(ctx, a.ID, idem.Ambiente, idem.Key); err != nil || i.State != store.IdempotencyInProgress {
		t.Errorf("A's idempotency key changed: %+v, %v", i, err)
	}
	if d, err := s.GetDelivery(ctx, a.ID, del.ID); err != nil || d.State != store.DeliveryPending {
		t.Errorf("A's delivery changed: %+v, %v", d, err)
	}
	if e, err := s.GetEnvio(ctx, a.ID, env.ID); err != nil || e.TrackID != "" {
		t.Errorf("A's envio changed: %+v, %v", e, err)
	}
	if c, err := s.GetCertificado(ctx, a.ID); err != nil || len(c.Sealed) != 1 {
		t.Errorf("A's certificado changed: %+v, %v", c, err)
	}
	if p, _ := s.ListDeliveries(ctx, a.ID, wh.ID, store.ListFilter{}); lenPage(p) != 1 {
		t.Errorf("A's deliveries: %d, want 1", lenPage(p))
	}
	if atts, err := s.ListDeliveryAttempts(ctx, a.ID, del.ID); err != nil || len(atts) != 1 || atts[0].Attempt != 1 {
		t.Errorf("A's delivery attempts: %+v, %v; want attempt 1 alone", atts, err)
	}
	if n, ok, err := s.LowStockThreshold(ctx, a.ID); err != nil || !ok || n != 9 {
		t.Errorf("A's threshold: %d, %v, %v; want 9", n, ok, err)
	}
	if r, err := s.GetRecibido(ctx, a.ID, rcb.ID); err != nil || r.Estado != "recibido" {
		t.Errorf("A's recibido changed: %+v, %v", r, err)
	}
	if c, err := s.GetCorreo(ctx, a.ID, mail.ID); err != nil || c.Estado != "pendiente" {
		t.Errorf("A's correo changed: %+v, %v", c, err)
	}
	if c, err := s.GetCorreoConfig(ctx, a.ID); err != nil || !bytes.Equal(c.Config, mailbox.Config) {
		t.Errorf("A's mailbox settings changed: %+v, %v", c, err)
	}
	if bz, err := s.GetBuzon(ctx, a.ID); err != nil || bz.Fallos != 3 || bz.UltimoError != "timeout" {
		t.Errorf("A's mailbox state changed: %+v, %v", bz, err)
	}
	if q, err := s.GetInboxSettings(ctx, a.ID); err != nil || q.MaxMensajes == nil || *q.MaxMensajes != 7 {
		t.Errorf("A's inbox settings changed: %+v, %v", q, err)
	}
	if u, err := s.InboxUsage(ctx, a.ID); err != nil || u.Recepciones != 1 || u.Mensajes != 1 {
		t.Errorf("A's inbox usage: %+v, %v; want its one file and one mail", u, err)
	}
	if d, err := s.GetDTE(ctx, a.ID, doc.ID); err != nil || string(d.Intercambio) != `{"a":1}` {
		t.Errorf("A's DTE answer changed: %+v, %v", d, err)
	}
	for what, n := range map[string]func() (int, error){
		"recibidos": func() (int, error) {
			p, err := s.ListRecibidos(ctx, a.ID, store.RecibidoFilter{})
			return lenPage(p), err
		},
		"correos": func() (int, error) { p, err := s.ListCorreos(ctx, a.ID, store.CorreoFilter{}); return lenPage(p), err },
	} {
		if got, err := n(); err != nil || got != 1 {
			t.Errorf("A's %s: %d, %v; want 1", what, got, err)
		}
	}

	// Uniqueness rules are per company: B may reuse A's rut, codigo,
	// range, folio, idempotency key, file digest, document key and mail.
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		return errors.Join(
			tx.InsertCAF(ctx, &store.CAF{EmpresaID: b.ID, TipoDTE: 33, FolioDesde: 1, FolioHasta: 10, Ambiente: "certificacion", IsActive: true}),
			tx.InsertDTE(ctx, &store.DTE{EmpresaID: b.ID, TipoDTE: 33, Folio: 1, Estado: string(dte.EstadoFirmado)}),
			tx.InsertCliente(ctx, &store.Cliente{EmpresaID: b.ID, Rut: cli.Rut, RazonSocial: "B"}),
			tx.InsertProducto(ctx, &store.Producto{EmpresaID: b.ID, Codigo: pro.Codigo, Nombre: "B"}),
			tx.InsertIdempotency(ctx, &store.Idempotency{EmpresaID: b.ID, Key: idem.Key}),
			tx.InsertMensaje(ctx, &store.Mensaje{EmpresaID: b.ID, MessageID: msg.MessageID, Digest: msg.Digest}),
			func() error {
				recB := &store.Recepcion{EmpresaID: b.ID, Digest: rec.Digest}
				if err := tx.InsertRecepcion(ctx, recB); err != nil {
					return err
				}
				return tx.InsertRecibido(ctx, &store.Recibido{EmpresaID: b.ID, RecepcionID: recB.ID, DedupeKey: rcb.DedupeKey})
			}())
	})
}

func lenPage[T any](p *store.Page[T]) int {
	if p == nil {
		return 0
	}
	return len(p.Items)
}
