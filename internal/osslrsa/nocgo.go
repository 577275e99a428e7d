//go:build openssl && !cgo

package osslrsa

// The build tag openssl links OpenSSL's libcrypto through cgo: building
// with it and CGO_ENABLED=0 stops here instead of silently signing in Go.
var _ int = "the openssl build tag needs cgo: build with CGO_ENABLED=1 and libssl-dev installed"
