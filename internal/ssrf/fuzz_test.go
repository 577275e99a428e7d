package ssrf

import (
	"net/netip"
	"strings"
	"testing"
)

// FuzzCheckURL: CheckURL never panics, and whatever it accepts without
// loopback is https with a host that is either a public address or a
// dotted name with a non-numeric last label.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{"https://hooks.example.com/x", "http://127.0.0.1:8081/", "https://[::ffff:10.0.0.1]/",
		"https://2130706433/", "https://a.b.c.d.e/?q=1", "https://user@host.example/", "HTTPS://X.Y", "https://[fe80::1%25eth0]/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := CheckURL(raw, false)
		if err != nil {
			return
		}
		if !strings.EqualFold(u.Scheme, "https") || u.User != nil || u.Hostname() == "" {
			t.Fatalf("accepted %q: %+v", raw, u)
		}
		host := u.Hostname()
		if a, err := netip.ParseAddr(host); err == nil {
			if Check(a, false) != nil {
				t.Fatalf("accepted blocked address %q", raw)
			}
			return
		}
		labels := strings.Split(strings.TrimSuffix(host, "."), ".")
		if len(labels) < 2 || strings.Trim(labels[len(labels)-1], "0123456789") == "" || strings.EqualFold(host, "localhost") {
			t.Fatalf("accepted host %q of %q", host, raw)
		}
		if _, err := CheckURL(raw, true); err != nil {
			t.Fatalf("accepted without loopback but refused with it: %q: %v", raw, err)
		}
	})
}
