package storetest

import (
	"reflect"

	"github.com/dtekit/dtekit/store"
)

// Cover names the subtests of Run that are the conformance tests of one
// of store's per-room interfaces.
type Cover struct {
	// Interface is the interface covered (store.DTEReader, …).
	Interface reflect.Type
	// Tests are subtests of Run (their names as Run gives them, the Jobs
	// subtests without the "Jobs/" prefix). Among them, each method of
	// Interface is called at least once.
	Tests []string
}

// Coverage maps every interface store.Reader and store.Tx are composed
// of, and store.Jobs, to its conformance tests: a change to a room's
// records is checked by the subtests named here (with -run
// 'Conformance/(DTE|DTEList)$', say). Its own test fails when an
// interface of Reader or Tx is missing here, when a test named is not a
// subtest of Run, and when a method of an interface is called by none of
// its tests. TenantScoping, which calls every company-scoped method as
// another company, covers each of them besides.
var Coverage = []Cover{
	{reflect.TypeFor[store.EmpresaReader](), []string{"Empresa", "EmpresasIterator", "EmpresaByRut", "EmpresaSettings", "Certificado", "TenantScoping"}},
	{reflect.TypeFor[store.EmpresaWriter](), []string{"Empresa", "EmpresaSettings", "Certificado", "TenantScoping"}},
	{reflect.TypeFor[store.CAFReader](), []string{"CAF", "CAFPage", "CAFOverlapConcurrent", "TakeFolioConcurrent", "Ambientes", "AmbienteCAFOverlapConcurrent", "TenantScoping"}},
	{reflect.TypeFor[store.CAFWriter](), []string{"CAF", "CAFPage", "CAFOverlapConcurrent", "TakeFolioConcurrent", "Ambientes", "AmbienteCAFOverlapConcurrent", "Sealed", "TenantScoping"}},
	{reflect.TypeFor[store.DTEReader](), []string{"DTE", "DTEList", "PageBytes", "CursorConcurrentInserts", "Ambientes", "DTECedido", "TenantScoping"}},
	{reflect.TypeFor[store.DTEWriter](), []string{"DTE", "DTEList", "Ambientes", "DTEIntercambio", "TenantScoping"}},
	{reflect.TypeFor[store.CatalogReader](), []string{"Cliente", "Producto", "CatalogSearch", "CatalogSearchMigrates", "TenantScoping"}},
	{reflect.TypeFor[store.CatalogWriter](), []string{"Cliente", "Producto", "CatalogSearch", "TenantScoping"}},
	{reflect.TypeFor[store.KeyReader](), []string{"APIKey", "TenantScoping"}},
	{reflect.TypeFor[store.KeyWriter](), []string{"APIKey", "TenantScoping"}},
	{reflect.TypeFor[store.IdempotencyReader](), []string{"Idempotency", "IdempotencyConcurrent", "Ambientes", "TenantScoping"}},
	{reflect.TypeFor[store.IdempotencyWriter](), []string{"Idempotency", "IdempotencyConcurrent", "Ambientes", "TenantScoping"}},
	{reflect.TypeFor[store.EventReader](), []string{"EventDeliveryEnvio", "TenantScoping"}},
	{reflect.TypeFor[store.EventWriter](), []string{"EventDeliveryEnvio", "AttemptLog", "TenantScoping"}},
	{reflect.TypeFor[store.DeliveryReader](), []string{"Webhook", "EventDeliveryEnvio", "AttemptLog", "AttemptLogLimit", "TenantScoping"}},
	{reflect.TypeFor[store.DeliveryWriter](), []string{"Webhook", "EventDeliveryEnvio", "AttemptLog", "AttemptLogLimit", "Sealed", "TenantScoping"}},
	{reflect.TypeFor[store.EnvioReader](), []string{"EventDeliveryEnvio", "Ambientes", "TenantScoping"}},
	{reflect.TypeFor[store.EnvioWriter](), []string{"EventDeliveryEnvio", "Ambientes", "TenantScoping"}},
	{reflect.TypeFor[store.AlertReader](), []string{"LowStockThreshold", "TenantScoping"}},
	{reflect.TypeFor[store.AlertWriter](), []string{"LowStockThreshold", "TenantScoping"}},
	{reflect.TypeFor[store.InboxReader](), []string{"Recepcion", "RecepcionNumeroConcurrent", "Recibido", "RecibidoList", "RecibidosAmbiente", "InboxSettings", "InboxUsagePurge", "TenantScoping"}},
	{reflect.TypeFor[store.InboxWriter](), []string{"Recepcion", "RecepcionNumeroConcurrent", "Recibido", "RecibidoList", "RecibidosAmbiente", "InboxSettings", "InboxUsagePurge", "TenantScoping"}},
	{reflect.TypeFor[store.MailReader](), []string{"Correo", "Mensaje", "CorreoConfig", "Buzon", "TenantScoping"}},
	{reflect.TypeFor[store.MailWriter](), []string{"Correo", "Mensaje", "CorreoConfig", "Buzon", "TenantScoping"}},
	{reflect.TypeFor[store.CesionReader](), []string{"Cesion", "CesionConcurrent"}},
	{reflect.TypeFor[store.CesionWriter](), []string{"Cesion", "CesionConcurrent"}},
	{reflect.TypeFor[store.ConsoleSessionReader](), []string{"ConsoleSession", "ConsoleSessionConcurrent", "Sealed"}},
	{reflect.TypeFor[store.ConsoleSessionWriter](), []string{"ConsoleSession", "ConsoleSessionConcurrent", "Sealed"}},
	{reflect.TypeFor[store.AdminReader](), []string{"Sealed"}},
	{reflect.TypeFor[store.AdminWriter](), []string{"Sealed"}},
	{reflect.TypeFor[store.ContribuyentesReader](), []string{"Contribuyentes"}},
	{reflect.TypeFor[store.ContribuyentesWriter](), []string{"Contribuyentes"}},
	{reflect.TypeFor[store.JobWriter](), []string{"Transactional", "RetrySchedule", "Unique", "QueueDeclare", "Snooze", "CompleteInTx", "Rescue", "Rollback", "Nested"}},
	{reflect.TypeFor[store.Jobs](), []string{"Transactional", "RetrySchedule", "Discard", "Unique", "Periodic", "Registration", "QueueDeclare", "QueueIsolation", "QueueDepth", "Snooze", "Running", "CompleteInTx", "Rescue"}},
}
