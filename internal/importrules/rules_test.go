package importrules

// The rules of the house (docs/architecture.md, "Packages and arrows").
//
// Paths are relative to the module (github.com/dtekit/dtekit). A pattern
// is a package path; "x/..." is x and every package below it; "..." is
// every package; "*" stands for part of one path element ("*/*test").
// Only imports of dtekit packages are checked: the standard library and
// other modules are not the business of these rules.
//
// A rule whose from is not "..." places packages in the house; every
// package must be placed by at least one such rule, so a new top-level
// package fails the test until it has a place here and in the document.
// The rules whose from is "..." hold across the house.
//
// Scope: a rule governs a package's own files (code) unless it says
// codeAndTests. Tests may reach wider than the code they test (into test
// helpers, a store backend, the fake SII), but the layers below the
// service keep their tests below it too.

// testHelpers are the packages that exist for tests (and the demo): the
// …test packages beside what they help and the test helpers of internal/.
var testHelpers = []string{
	"*/*test",         // caf/caftest, signer/signertest, dte/dtetest, sii/siitest, email/emailtest, store/storetest, store/backendtest, billing/billingtest, internal/clocktest, internal/pgtest
	"internal/test*",  // internal/testpki
	"internal/oracle", // the independent tools and reference files the tests use
}

var rules = []rule{
	// ---- The ground floor ----------------------------------------------
	{
		name: "ground floor",
		why:  "internal/... is the ground floor: it imports no public dtekit package, so every package may use it without a cycle",
		from: []string{"internal/..."},
		only: []string{"internal/..."},
	},

	// ---- The document layer: leaves, the stamp, dte, pdf ----------------
	{
		name: "leaves",
		why:  "caf, signer and webhook are leaves: they import no public dtekit package",
		from: []string{"caf", "signer", "webhook"},
		only: []string{"internal/..."},
	},
	{
		name: "customs tables",
		why:  "aduana is data: the customs code tables an export DTE carries, embedded and read on the standard library alone, so it imports no dtekit package, not even the ground floor",
		from: []string{"aduana"},
		only: []string{},
	},
	{
		name: "caftest",
		why:  "caf/caftest, the test CAF authority, builds on caf alone",
		from: []string{"caf/caftest"},
		only: []string{"caf", "internal/..."},
	},
	{
		name: "signertest",
		why:  "signer/signertest, the test certificates, builds on signer alone",
		from: []string{"signer/signertest"},
		only: []string{"signer", "internal/..."},
	},
	{
		name: "stamp",
		why:  "ted signs the stamp with the CAF's key: it uses caf and nothing else public",
		from: []string{"ted"},
		only: []string{"caf", "internal/..."},
	},
	{
		name: "document",
		why:  "dte builds on the three below it: caf, ted and signer",
		from: []string{"dte"},
		only: []string{"caf", "ted", "signer", "internal/..."},
	},
	{
		name: "libros",
		why:  "libro builds, signs and reads the SII's libros and the RCOF from the company's documents: it reads them with dte and signs through dte's signed-file writer, so it uses dte, signer and nothing else public",
		from: []string{"libro"},
		only: []string{"dte", "signer", "internal/..."},
	},
	{
		name: "test credentials",
		why:  "dte/dtetest assembles the test authorities (caf/caftest, signer/signertest) into one set with a dte.Emisor",
		from: []string{"dte/dtetest"},
		only: []string{"caf", "caf/caftest", "dte", "signer", "signer/signertest", "internal/..."},
	},
	{
		name:   "printed form",
		why:    "pdf renders a parsed dte document: it uses dte, the customs tables (aduana) that name an export's codes, and its own subpackages",
		from:   []string{"pdf/..."},
		except: []string{"pdf/internal/mkimages"},
		only:   []string{"dte", "aduana", "pdf/...", "internal/..."},
	},
	{
		name: "sample images",
		why:  "pdf/internal/mkimages, the generator of the sample images, emits documents with the test credentials",
		from: []string{"pdf/internal/mkimages"},
		only: []string{"dte", "dte/dtetest", "pdf/...", "internal/..."},
	},

	{
		name: "certification kit",
		why:  "certificacion turns the SII's set of tests into documents, envelopes, libros and printed samples through the document layer (dte, libro, pdf, caf, signer) and the customs tables, and sends them to the SII through its client (sii); it speaks to no service or record",
		from: []string{"certificacion/..."},
		only: []string{"caf", "signer", "dte", "libro", "pdf", "aduana", "sii", "internal/..."},
	},
	{
		name: "intercambio",
		why:  "intercambio answers the documents other companies send and reads their answers to ours: it builds on dte (verification, envelopes) and signer, and knows neither the SII's web services, the service, its records nor HTTP",
		from: []string{"intercambio"},
		only: []string{"dte", "signer", "internal/..."},
	},
	{
		name: "cesion",
		why:  "cesion builds, reads and verifies the AEC by which a factura is ceded: the ceded DTE is read and verified with dte, every level is signed and checked with signer, and it knows neither the SII's web services, the service, its records nor HTTP",
		from: []string{"cesion"},
		only: []string{"dte", "signer", "internal/..."},
	},

	{
		name: "mail",
		why:  "email sends, reads and parses mail on the standard library and the go-smtp and go-imap libraries: it imports no dtekit package, so the service's rooms (and an integrator) can use it alone",
		from: []string{"email"},
		only: []string{},
	},
	{
		name: "mail servers",
		why:  "email/emailtest runs real SMTP and IMAP servers for tests on those libraries' server halves and hands out email's configurations to reach them: it uses email and nothing else of dtekit",
		from: []string{"email/emailtest"},
		only: []string{"email"},
	},

	// ---- The outside world: the SII and the records ---------------------
	{
		name: "sii",
		why:  "the SII client (and its fake) knows documents, libros and signatures, never the service, its records or HTTP: the fake reads uploaded libros with libro's reader and uploaded AECs with cesion's",
		from: []string{"sii/..."},
		only: []string{"caf", "ted", "signer", "dte", "libro", "cesion", "sii/...", "internal/..."},
	},
	{
		name:   "store",
		why:    "store is records and interfaces, with one package per database: it imports no dtekit package but its own and internal helpers",
		from:   []string{"store/..."},
		except: []string{"store/storetest"},
		only:   []string{"store/...", "internal/..."},
	},
	{
		name: "storetest",
		why:  "store/storetest, the conformance suite, uses store and dte's names for the states the service writes into rows (dte.Estado), nothing above",
		from: []string{"store/storetest"},
		only: []string{"store", "dte", "internal/..."},
	},

	// ---- The service ----------------------------------------------------
	{
		name: "service",
		why:  "billing is the service without HTTP: it never imports server, the binary or the examples",
		from: []string{"billing/..."},
		not:  []string{"server", "cmd/...", "examples/..."},
	},
	{
		name: "demo",
		why:  "billing/demo provisions the demo's companies through the face with the test authorities (caf/caftest, dte/dtetest): the binary uses it, so it imports no test code such as billing/billingtest, internal/pgtest or internal/oracle",
		from: []string{"billing/demo"},
		only: []string{"api", "billing", "caf", "caf/caftest", "dte", "dte/dtetest", "signer", "signer/signertest"},
	},
	{
		name: "models",
		why:  "api holds the contract's models that the face, the rooms, the server and a client of the REST API share: it builds on dte's document model alone, so it pulls in nothing that talks to a network, reads a database or renders",
		from: []string{"api"},
		only: []string{"dte", "billing/fault", "internal/..."},
	},
	{
		name: "client",
		why:  "client calls a running server over HTTP with the models of api, the codes of billing/fault and the receiving side of webhook: a program that imports it links no SQL, mail, PDF or job runner",
		from: []string{"client"},
		only: []string{"api", "billing/fault", "dte", "webhook", "internal/..."},
	},
	{
		name: "shared types",
		why:  "billing/fault holds the types the face and the rooms share (as rivertype does for River): it imports no other billing package, so all of them can import it",
		from: []string{"billing/fault"},
		not:  []string{"billing/..."},
	},
	{
		name:  "rooms",
		why:   "the subsystems under billing/internal never import the face (billing) or its fixture: the face imports them, and they get what they share from billing/fault, the seams and the packages below",
		from:  []string{"billing/internal/..."},
		not:   []string{"billing", "billing/billingtest"},
		scope: codeAndTests,
	},
	{
		name:  "seams",
		why:   "outbox and periodic are the seams the rooms share: they import no other billing/internal package, so no cycle forms between rooms",
		from:  []string{"billing/internal/outbox", "billing/internal/periodic"},
		not:   []string{"billing/internal/..."},
		scope: codeAndTests,
	},

	// ---- The faces: HTTP, the binary, the example -----------------------
	{
		name: "server",
		why:  "server maps HTTP to billing calls: it reaches the records and the SII only through billing",
		from: []string{"server"},
		not:  []string{"store/...", "sii/...", "cmd/...", "examples/..."},
	},
	{
		name: "console",
		why:  "server/console renders the web console over the billing face and the API's models: like server it reaches the records and the SII only through billing, and it never imports server (the binary hands it the API's authentication as a function)",
		from: []string{"server/console"},
		only: []string{"api", "billing", "billing/fault", "dte", "internal/..."},
	},
	{
		name: "binary",
		why:  "cmd/dtekit wires the house together: it may import any package the rules across the house allow",
		from: []string{"cmd/..."},
	},
	{
		name: "example",
		why:  "the example webhook receiver is built only on package webhook, as an integrator's would be",
		from: []string{"examples/..."},
		only: []string{"webhook"},
	},

	// ---- Across the house -----------------------------------------------
	{
		name:   "HTTP on top",
		why:    "nothing imports server but the binary",
		from:   []string{"..."},
		except: []string{"cmd/..."},
		not:    []string{"server"},
	},
	{
		name:  "programs",
		why:   "nothing imports the binary or the examples, tests included",
		from:  []string{"..."},
		not:   []string{"cmd/...", "examples/..."},
		scope: codeAndTests,
	},
	{
		name:   "backends",
		why:    "the service works against store's interfaces; only the binary and billing/billingtest choose a backend",
		from:   []string{"..."},
		except: []string{"store/...", "cmd/...", "billing/billingtest"},
		not:    []string{"store/sqlite", "store/postgres", "store/internal/..."},
	},
	{
		name:   "test helpers",
		why:    "test helpers stay out of the production API: only tests, other helpers, the binary's demo (cmd/dtekit, billing/demo) and the README's picture generator import them",
		from:   []string{"..."},
		except: append([]string{"cmd/...", "billing/demo", "pdf/internal/mkimages"}, testHelpers...),
		not:    testHelpers,
	},
	{
		name:  "below the service",
		why:   "the layers below the service keep their tests below it too: no test of theirs imports billing, server or the binary",
		from:  []string{"internal/...", "aduana", "caf/...", "signer/...", "webhook/...", "ted/...", "dte/...", "libro/...", "intercambio/...", "email/...", "pdf/...", "certificacion/...", "sii/...", "store/..."},
		not:   []string{"billing/...", "server", "cmd/..."},
		scope: codeAndTests,
	},
}

// exceptions are the arrows that break a rule today, each with the reason
// it stands: {pkg, imports, rule, why}. There are none; the last one
// (internal/testcreds, now dte/dtetest) was fixed rather than excused.
var exceptions = []exception{}
