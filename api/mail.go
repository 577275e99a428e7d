package api

import "time"

// Correo is a mail the service sent, or will send, for the company
// (GET /correos/{id}).
type Correo struct {
	ID          string     `json:"id"`
	Tipo        string     `json:"tipo"`
	DTEID       *string    `json:"dte_id"`
	RecibidoID  *string    `json:"recibido_id"`
	Para        string     `json:"para"`
	MessageID   string     `json:"message_id"`
	Estado      string     `json:"estado"`
	Intentos    int        `json:"intentos"`
	UltimoError *string    `json:"ultimo_error"`
	EnviadoAt   *time.Time `json:"enviado_at"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
}
