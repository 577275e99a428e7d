package billing

import "github.com/dtekit/dtekit/billing/internal/inbox"

// MaxRecibidoBytes bounds a file received from a supplier (an EnvioDTE)
// or an answer from a receptor (RespuestaDTE, EnvioRecibos): what
// Received.Receive and Received.ReceiveRespuesta take. The server
// refuses a larger body with 413 before reading it all.
const MaxRecibidoBytes = inbox.MaxFileBytes
