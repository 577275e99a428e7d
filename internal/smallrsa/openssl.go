//go:build openssl

package smallrsa

import (
	"crypto"
	"crypto/rsa"

	"github.com/dtekit/dtekit/internal/osslrsa"
)

// In the build with the tag openssl, keys in memory sign through OpenSSL.
func init() {
	accelerated = func(priv *rsa.PrivateKey) (crypto.Signer, error) { return osslrsa.For(priv) }
	backend = osslrsa.Version()
}
