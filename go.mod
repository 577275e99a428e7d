module github.com/dtekit/dtekit

go 1.26.0

require (
	github.com/beevik/etree v1.8.1 // indirect
	github.com/boombuler/barcode v1.1.0 // indirect
	github.com/go-pdf/fpdf v0.9.0 // indirect
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/jonboulle/clockwork v0.5.0 // indirect
	github.com/russellhaering/goxmldsig v1.6.1 // indirect
	github.com/standard-webhooks/standard-webhooks/libraries v0.0.1 // indirect
	golang.org/x/crypto v0.11.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	software.sslmate.com/src/go-pkcs12 v0.7.4 // indirect
)
