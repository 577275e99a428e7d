package ssrf

import (
	"fmt"
	"net/netip"
)

// blockedRange is one address range a webhook must never reach.
type blockedRange struct {
	prefix netip.Prefix
	name   string
}

// blockedV4 lists the IPv4 ranges that are not public unicast: the
// special-purpose registry of IANA (RFC 6890 and its updates) plus
// multicast and the reserved class E space.
var blockedV4 = []blockedRange{
	{netip.MustParsePrefix("0.0.0.0/8"), "this network"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared address space (CGNAT)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local (cloud metadata)"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignments"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation"},
	{netip.MustParsePrefix("192.88.99.0/24"), "6to4 relay anycast"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
}

// Only global unicast IPv6 (2000::/3) may be reached at all; inside it,
// these ranges are refused too.
var (
	globalV6  = netip.MustParsePrefix("2000::/3")
	blockedV6 = []blockedRange{
		{netip.MustParsePrefix("2001::/32"), "Teredo"},
		{netip.MustParsePrefix("2001::/23"), "IETF protocol assignments"},
		{netip.MustParsePrefix("2001:db8::/32"), "documentation"},
		{netip.MustParsePrefix("3fff::/20"), "documentation"},
	}
	// Translation prefixes that embed an IPv4 address in their last 32
	// bits: the embedded address decides.
	nat64WellKnown = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local     = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour      = netip.MustParsePrefix("2002::/16")
)

// Check reports why a is not an address a webhook may reach, or nil when
// it may. Loopback (127.0.0.0/8, ::1, and their IPv4-mapped forms) passes
// only when allowLoopback is set; every other non-public range is refused
// always: private, CGNAT, link-local and cloud metadata (169.254.169.254,
// fd00:ec2::254), documentation, multicast, reserved, IPv6 outside global
// unicast (unique-local, link-local, IPv4-compatible), Teredo. IPv4-mapped
// (::ffff:a.b.c.d), NAT64 (64:ff9b::/96, 64:ff9b:1::/48) and 6to4
// (2002::/16) addresses are judged by the IPv4 address they carry.
func Check(a netip.Addr, allowLoopback bool) error {
	if !a.IsValid() {
		return &BlockedError{Addr: a, Range: "invalid address"}
	}
	if a.Zone() != "" {
		return &BlockedError{Addr: a, Range: "scoped address"}
	}
	orig := a
	a = a.Unmap()
	if a.Is6() {
		switch {
		case a == netip.IPv6Loopback():
			if allowLoopback {
				return nil
			}
			return &BlockedError{Addr: orig, Range: "loopback"}
		case nat64WellKnown.Contains(a):
			return embedded(orig, a, 12, "NAT64", allowLoopback)
		case nat64Local.Contains(a):
			return embedded(orig, a, 12, "local NAT64", allowLoopback)
		case sixToFour.Contains(a):
			return embedded(orig, a, 2, "6to4", allowLoopback)
		case !globalV6.Contains(a):
			return &BlockedError{Addr: orig, Range: v6Kind(a)}
		}
		for _, r := range blockedV6 {
			if r.prefix.Contains(a) {
				return &BlockedError{Addr: orig, Range: r.name}
			}
		}
		return nil
	}
	if allowLoopback && a.IsLoopback() {
		return nil
	}
	for _, r := range blockedV4 {
		if r.prefix.Contains(a) {
			if orig != a {
				return &BlockedError{Addr: orig, Range: "IPv4-mapped " + r.name}
			}
			return &BlockedError{Addr: orig, Range: r.name}
		}
	}
	return nil
}

// embedded judges a translated IPv6 address by the IPv4 address at byte
// offset off.
func embedded(orig, a netip.Addr, off int, kind string, allowLoopback bool) error {
	b := a.As16()
	v4 := netip.AddrFrom4([4]byte(b[off : off+4]))
	if err := Check(v4, allowLoopback); err != nil {
		return &BlockedError{Addr: orig, Range: fmt.Sprintf("%s of %s (%s)", kind, v4, err.(*BlockedError).Range)}
	}
	return nil
}

// v6Kind names the non-global IPv6 space a falls in, for messages.
func v6Kind(a netip.Addr) string {
	switch {
	case a.IsUnspecified():
		return "unspecified"
	case a.IsLinkLocalUnicast():
		return "link-local"
	case a.IsPrivate():
		return "unique-local (includes cloud metadata fd00:ec2::254)"
	case a.IsMulticast():
		return "multicast"
	case netip.MustParsePrefix("::/96").Contains(a):
		return "IPv4-compatible"
	}
	return "not global unicast"
}
