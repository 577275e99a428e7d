package console

import (
	"net/http"

	"github.com/dtekit/dtekit/api"
)

// rotarSecreto gives the webhook a new generated secret and shows it on
// the page that answers the form, the only time it is shown (the old one
// keeps signing beside it for the rotation's grace).
func rotarSecreto(q *request) error {
	id, err := q.id()
	if err != nil {
		return err
	}
	w, err := q.c.b.Webhooks.RotateSecret(q.r.Context(), q.p.EmpresaID, id, api.WebhookSecretParams{})
	if err != nil {
		return err
	}
	return showWebhook(q, id, w.Secret, "Secreto nuevo generado. Cópielo ahora: no se volverá a mostrar. "+
		"El anterior sigue firmando junto al nuevo durante el período de gracia.")
}

// reenviarEntrega sends one of the webhook's deliveries again, once, now
// (in the background; its attempt joins the delivery's log).
func reenviarEntrega(q *request) error {
	id, err := q.id()
	if err != nil {
		return err
	}
	did, err := q.idOf("entrega")
	if err != nil {
		return err
	}
	if _, err := q.c.b.Webhooks.ResendDelivery(q.r.Context(), q.p.EmpresaID, did, api.DeliveryParams{WebhookID: id}); err != nil {
		return err
	}
	http.Redirect(q.w, q.r, Prefix+"webhooks/"+id+"?hecho=reenviado", http.StatusSeeOther)
	return nil
}
