package billing

// The face is grouped by resource, the way the REST API is: each resource
// is a service value on Service whose methods take a context, the id of the
// company (tenant) and, where they need them, the resource's id and one
// params struct of package api. A list takes the resource's list options
// (which embed api.ListParams) and returns an *api.Page.

// DocumentService emits, lists, renders and mails the company's own
// documents (/dte).
type DocumentService struct{ s *Service }

// EnvelopeService builds the envelopes of held documents and follows their
// submission to the SII (/envios).
type EnvelopeService struct{ s *Service }

// ReceivedService receives suppliers' documents and customers' answers,
// lists them and decides them in the SII's registry (/recibidos,
// /recepciones, /respuestas).
type ReceivedService struct{ s *Service }

// CatalogService keeps the company's clientes and productos.
type CatalogService struct{ s *Service }

// CAFService registers and lists the company's CAFs (/caf).
type CAFService struct{ s *Service }

// CompanyService creates the companies and keeps each one's data and
// settings: its certificate, logo, alerts and the move to production
// (/empresa).
type CompanyService struct{ s *Service }

// MailService keeps each company's mail settings, the mails sent and the
// messages read from its mailbox (/correos, /empresa/correo).
type MailService struct{ s *Service }

// WebhookService keeps the company's webhooks and their deliveries
// (/webhooks).
type WebhookService struct{ s *Service }

// KeyService issues, lists, revokes and authenticates API keys.
type KeyService struct{ s *Service }

// resources sets the service values of s.
func (s *Service) resources() {
	s.Documents = &DocumentService{s}
	s.Envelopes = &EnvelopeService{s}
	s.Received = &ReceivedService{s}
	s.Catalog = &CatalogService{s}
	s.CAFs = &CAFService{s}
	s.Company = &CompanyService{s}
	s.Mail = &MailService{s}
	s.Webhooks = &WebhookService{s}
	s.Keys = &KeyService{s}
	s.Cesiones = &CesionService{s}
	s.ConsoleSessions = &ConsoleSessionService{s}
}
