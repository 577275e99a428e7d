module github.com/dtekit/dtekit

go 1.26.0

require (
	github.com/beevik/etree v1.8.1
	github.com/boombuler/barcode v1.1.0
	github.com/go-pdf/fpdf v0.9.0
	github.com/google/go-cmp v0.7.0
	github.com/standard-webhooks/standard-webhooks/libraries v0.0.1
	golang.org/x/text v0.43.0
	software.sslmate.com/src/go-pkcs12 v0.7.4
)

require golang.org/x/crypto v0.58.0 // indirect
