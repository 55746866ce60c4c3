// Package netguard keeps agentgate's outbound calls away from addresses a
// registered agent endpoint must never reach. Anyone who can register an
// endpoint chooses where agentgate connects, so without a guard an endpoint of
// http://169.254.169.254/ (instance metadata), a loopback port (on Lambda the
// Runtime API listens on 127.0.0.1) or a VPC-internal service is a
// server-side request forgery.
//
// Checking a URL once is not enough: a host name can resolve to a public
// address when checked and to a private one when dialed (DNS rebinding), and
// an HTTP redirect can point anywhere. So there are two layers: CheckURL
// refuses bad endpoints early with a clear error (at registration), and
// Transport checks the address of every connection as it is made, redirects
// included, which is the check that cannot be raced.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// ErrBlocked matches, with errors.Is, every refusal by a Policy.
var ErrBlocked = errors.New("netguard: destination not allowed")

// BlockedError says which destination a Policy refused and why, in words an
// operator can act on. Addr is the zero Addr when the URL itself was refused
// (scheme, user info) before any address was known.
type BlockedError struct {
	Addr   netip.Addr
	Host   string
	Reason string
}

func (e *BlockedError) Error() string {
	dest := e.Host
	switch {
	case e.Addr.IsValid() && (dest == "" || dest == e.Addr.String()):
		dest = e.Addr.String()
	case e.Addr.IsValid():
		dest += " (" + e.Addr.String() + ")"
	}
	if dest == "" {
		return "destination is not allowed: " + e.Reason
	}
	return "destination " + dest + " is not allowed: " + e.Reason
}

// Is makes errors.Is(err, ErrBlocked) true for every *BlockedError.
func (e *BlockedError) Is(target error) bool { return target == ErrBlocked }

// Policy says which destinations outbound calls to agents may reach. The zero
// Policy is the strict one: public unicast addresses only.
type Policy struct {
	// AllowLoopback admits 127.0.0.0/8, ::1 and "localhost", for local runs
	// whose agents share the machine. Never set it on Lambda: the Runtime API
	// listens on loopback.
	AllowLoopback bool
	// AllowPrivate admits RFC 1918, unique local (fc00::/7) and shared
	// (100.64.0.0/10, CGNAT) addresses, for deployments whose agents live in
	// the same VPC. Link-local and metadata addresses stay refused.
	AllowPrivate bool
}

type class uint8

const (
	refused class = iota
	loopback
	private
)

type rule struct {
	prefix netip.Prefix
	class  class
	reason string
}

// rules are tried in order; the first prefix that contains the address
// decides. Metadata and other always-refused addresses inside a range a
// Policy may admit come before that range.
var rules = []rule{
	{netip.MustParsePrefix("0.0.0.0/32"), refused, "unspecified address"},
	{netip.MustParsePrefix("0.0.0.0/8"), refused, `"this network" address`},
	{netip.MustParsePrefix("255.255.255.255/32"), refused, "broadcast address"},
	{netip.MustParsePrefix("127.0.0.0/8"), loopback, "loopback address"},
	{netip.MustParsePrefix("169.254.0.0/16"), refused, "link-local address"},
	{netip.MustParsePrefix("224.0.0.0/4"), refused, "multicast address"},
	{netip.MustParsePrefix("240.0.0.0/4"), refused, "reserved address"},
	{netip.MustParsePrefix("10.0.0.0/8"), private, "private address"},
	{netip.MustParsePrefix("172.16.0.0/12"), private, "private address"},
	{netip.MustParsePrefix("192.168.0.0/16"), private, "private address"},
	{netip.MustParsePrefix("100.100.100.200/32"), refused, "cloud metadata address"},
	{netip.MustParsePrefix("100.64.0.0/10"), private, "shared (carrier-grade NAT) address"},
	{netip.MustParsePrefix("192.0.0.0/24"), refused, "reserved address"},
	{netip.MustParsePrefix("192.0.2.0/24"), refused, "documentation address"},
	{netip.MustParsePrefix("198.51.100.0/24"), refused, "documentation address"},
	{netip.MustParsePrefix("203.0.113.0/24"), refused, "documentation address"},
	{netip.MustParsePrefix("198.18.0.0/15"), refused, "benchmarking address"},

	{netip.MustParsePrefix("::/128"), refused, "unspecified address"},
	{netip.MustParsePrefix("::1/128"), loopback, "loopback address"},
	{netip.MustParsePrefix("fd00:ec2::254/128"), refused, "cloud metadata address"},
	{netip.MustParsePrefix("fe80::/10"), refused, "link-local address"},
	{netip.MustParsePrefix("ff00::/8"), refused, "multicast address"},
	{netip.MustParsePrefix("fc00::/7"), private, "unique local (private) address"},
	{netip.MustParsePrefix("2001:db8::/32"), refused, "documentation address"},
	{netip.MustParsePrefix("2001::/32"), refused, "Teredo tunnel address"},
}

var (
	globalUnicast6 = netip.MustParsePrefix("2000::/3")
	nat64          = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour      = netip.MustParsePrefix("2002::/16")
)

// CheckIP returns a *BlockedError if p refuses ip, nil if p allows it.
// IPv4-mapped IPv6 addresses are judged as the IPv4 address they carry, and so
// are NAT64 (64:ff9b::/96) and 6to4 (2002::/16) addresses, which a gateway
// would forward to that IPv4 address. IPv6 outside 2000::/3 that no rule
// admits is refused as reserved.
func (p Policy) CheckIP(ip netip.Addr) error {
	if reason := p.refusal(ip); reason != "" {
		return &BlockedError{Addr: ip, Reason: reason}
	}
	return nil
}

func (p Policy) refusal(ip netip.Addr) string {
	if !ip.IsValid() {
		return "invalid address"
	}
	ip = ip.Unmap().WithZone("")
	if ip.Is6() {
		b := ip.As16()
		switch {
		case nat64.Contains(ip):
			return p.embedded(netip.AddrFrom4([4]byte(b[12:16])), "NAT64")
		case sixToFour.Contains(ip):
			return p.embedded(netip.AddrFrom4([4]byte(b[2:6])), "6to4")
		}
	}
	for _, r := range rules {
		if !r.prefix.Contains(ip) {
			continue
		}
		if r.class == refused || r.class == loopback && !p.AllowLoopback || r.class == private && !p.AllowPrivate {
			return r.reason
		}
		return ""
	}
	if ip.Is6() && !globalUnicast6.Contains(ip) {
		return "reserved address"
	}
	return ""
}

func (p Policy) embedded(v4 netip.Addr, kind string) string {
	if reason := p.refusal(v4); reason != "" {
		return reason + " " + v4.String() + " embedded in a " + kind + " address"
	}
	return ""
}

// Resolver looks host names up. *net.Resolver satisfies it; tests pass fakes.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// CheckURL refuses an agent endpoint URL that is not plain http or https to a
// destination p allows. A host name is resolved with r (nil means
// net.DefaultResolver) and every address it resolves to must pass, since any
// of them may be dialed. "localhost" and its subdomains are loopback without
// a lookup. Refusals are *BlockedError; a failed lookup is a plain error that
// says so, as the destination is then unknown rather than refused.
//
// Passing CheckURL does not make later calls safe: dial through Transport.
func (p Policy) CheckURL(ctx context.Context, raw string, r Resolver) error {
	u, err := url.Parse(raw)
	if err != nil {
		// The parse error quotes the URL, which may carry credentials.
		return &BlockedError{Reason: "malformed URL"}
	}
	host := u.Hostname()
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return &BlockedError{Host: host, Reason: "scheme must be http or https"}
	case host == "":
		return &BlockedError{Reason: "URL has no host"}
	case u.User != nil:
		return &BlockedError{Host: host, Reason: "URL carries user info"}
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return p.checkHostIP(host, ip)
	}
	name := strings.ToLower(strings.TrimSuffix(host, "."))
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return p.checkHostIP(host, netip.AddrFrom4([4]byte{127, 0, 0, 1}))
	}
	if r == nil {
		r = net.DefaultResolver
	}
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return fmt.Errorf("netguard: resolving %s: %w", host, err)
	}
	if len(addrs) == 0 {
		return errors.New("netguard: resolving " + host + ": no addresses")
	}
	for _, ip := range addrs {
		if err := p.checkHostIP(host, ip); err != nil {
			return err
		}
	}
	return nil
}

func (p Policy) checkHostIP(host string, ip netip.Addr) error {
	err := p.CheckIP(ip)
	if b, ok := err.(*BlockedError); ok {
		b.Host = host
	}
	return err
}

// DialContext returns a dial function, for http.Transport.DialContext, that
// checks the address actually being connected to, after resolution, in the
// dialer's ControlContext hook; so a name that resolved to a public address
// when checked and to a private one now is still refused. base is copied, not
// changed; its own Control or ControlContext still runs after the check. A nil
// base means a 5s connect timeout and 30s keep-alive.
func (p Policy) DialContext(base *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	tmpl := net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	if base != nil {
		tmpl = *base
	}
	next := tmpl.ControlContext
	if next == nil && tmpl.Control != nil {
		control := tmpl.Control
		next = func(_ context.Context, network, address string, c syscall.RawConn) error {
			return control(network, address, c)
		}
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			host = addr
		}
		d := tmpl
		d.ControlContext = func(ctx context.Context, network, address string, c syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return &BlockedError{Host: host, Reason: "not an IP destination"}
			}
			if err := p.checkHostIP(host, ap.Addr()); err != nil {
				return err
			}
			if next != nil {
				return next(ctx, network, address, c)
			}
			return nil
		}
		return d.DialContext(ctx, network, addr)
	}
}

// Transport returns an http.Transport for calls to agents that dials only
// destinations p allows. It starts from http.DefaultTransport's settings but
// has no proxy: a proxy taken from the environment would make the connection
// to the proxy, not to the agent, and so bypass the dial check. There is no
// response header timeout; callers bound each call with its context.
func (p Policy) Transport() *http.Transport {
	t := &http.Transport{ForceAttemptHTTP2: true, MaxIdleConns: 100, ExpectContinueTimeout: time.Second}
	if dt, ok := http.DefaultTransport.(*http.Transport); ok {
		t = dt.Clone()
	}
	t.Proxy = nil
	t.DialContext = p.DialContext(nil)
	t.DialTLSContext = nil
	t.DialTLS = nil // an inherited TLS dialer would bypass the check
	t.TLSHandshakeTimeout = 5 * time.Second
	t.MaxIdleConnsPerHost = 16
	t.IdleConnTimeout = 90 * time.Second
	return t
}
