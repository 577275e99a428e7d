//go:build openssl && cgo

package osslrsa

import (
	"crypto/rsa"
	"runtime"
	"sync"
	"weak"
)

// loaded holds the Key of each *rsa.PrivateKey that For has loaded, keyed
// by a weak pointer: an entry keeps neither the Go key nor, once no
// signature holds it, the Key alive. When the Go key is collected its
// entry is deleted, and the Key's own cleanup frees OpenSSL's copy.
var loaded sync.Map // weak.Pointer[rsa.PrivateKey] -> *Key

// For returns the Key of priv, loaded into OpenSSL on the first call and
// kept while priv lives. A key whose modulus or exponent changed after it
// was loaded is loaded again (and not kept).
func For(priv *rsa.PrivateKey) (*Key, error) {
	if priv == nil || priv.N == nil {
		return New(priv)
	}
	wp := weak.Make(priv)
	if v, ok := loaded.Load(wp); ok {
		if k := v.(*Key); k.pub.E == priv.E && k.pub.N.Cmp(priv.N) == 0 {
			return k, nil
		}
		return New(priv)
	}
	k, err := New(priv)
	if err != nil {
		return nil, err
	}
	if v, raced := loaded.LoadOrStore(wp, k); raced {
		k.Close()
		return v.(*Key), nil
	}
	runtime.AddCleanup(priv, func(wp weak.Pointer[rsa.PrivateKey]) { loaded.Delete(wp) }, wp)
	return k, nil
}

// cached reports how many keys For keeps (for tests).
func cached() int {
	n := 0
	loaded.Range(func(any, any) bool { n++; return true })
	return n
}
