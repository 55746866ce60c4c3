package netguard_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentgate/agentgate/pkg/netguard"
)

var (
	strict   = netguard.Policy{}
	loopOnly = netguard.Policy{AllowLoopback: true}
	privOnly = netguard.Policy{AllowPrivate: true}
	both     = netguard.Policy{AllowLoopback: true, AllowPrivate: true}
)

func TestCheckIP(t *testing.T) {
	tests := []struct {
		addr string
		// allowed under strict, loopOnly, privOnly, both
		strict, loop, priv, both bool
		reason                   string // refusal reason under strict, if refused
	}{
		{"169.254.169.254", false, false, false, false, "link-local address"},
		{"169.254.170.2", false, false, false, false, "link-local address"},
		{"fd00:ec2::254", false, false, false, false, "cloud metadata address"},
		{"100.100.100.200", false, false, false, false, "cloud metadata address"},
		{"::ffff:169.254.169.254", false, false, false, false, "link-local address"},
		{"::ffff:127.0.0.1", false, true, false, true, "loopback address"},
		{"::ffff:10.0.0.1", false, false, true, true, "private address"},
		{"10.0.0.1", false, false, true, true, "private address"},
		{"172.16.0.1", false, false, true, true, "private address"},
		{"172.31.255.255", false, false, true, true, "private address"},
		{"172.32.0.1", true, true, true, true, ""},
		{"192.168.1.1", false, false, true, true, "private address"},
		{"100.64.0.1", false, false, true, true, "shared (carrier-grade NAT) address"},
		{"100.128.0.1", true, true, true, true, ""},
		{"0.0.0.0", false, false, false, false, "unspecified address"},
		{"0.1.2.3", false, false, false, false, `"this network" address`},
		{"::", false, false, false, false, "unspecified address"},
		{"127.0.0.1", false, true, false, true, "loopback address"},
		{"127.1.2.3", false, true, false, true, "loopback address"},
		{"::1", false, true, false, true, "loopback address"},
		{"8.8.8.8", true, true, true, true, ""},
		{"2001:4860:4860::8888", true, true, true, true, ""},
		{"224.0.0.1", false, false, false, false, "multicast address"},
		{"ff02::1", false, false, false, false, "multicast address"},
		{"255.255.255.255", false, false, false, false, "broadcast address"},
		{"240.0.0.1", false, false, false, false, "reserved address"},
		{"192.0.0.8", false, false, false, false, "reserved address"},
		{"192.0.2.1", false, false, false, false, "documentation address"},
		{"203.0.113.7", false, false, false, false, "documentation address"},
		{"198.18.0.1", false, false, false, false, "benchmarking address"},
		{"fe80::1", false, false, false, false, "link-local address"},
		{"fe80::1%eth0", false, false, false, false, "link-local address"},
		{"fd12:3456::1", false, false, true, true, "unique local (private) address"},
		{"fec0::1", false, false, false, false, "reserved address"},
		{"::127.0.0.1", false, false, false, false, "reserved address"},
		{"2001:db8::1", false, false, false, false, "documentation address"},
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", false, false, false, false, "Teredo tunnel address"},
		{"64:ff9b::a9fe:a9fe", false, false, false, false, "link-local address 169.254.169.254 embedded in a NAT64 address"},
		{"64:ff9b::7f00:1", false, true, false, true, "loopback address 127.0.0.1 embedded in a NAT64 address"},
		{"64:ff9b::808:808", true, true, true, true, ""},
		{"64:ff9b:1::a9fe:a9fe", false, false, false, false, "reserved address"},
		{"2002:a9fe:a9fe::1", false, false, false, false, "link-local address 169.254.169.254 embedded in a 6to4 address"},
		{"2002:a00:1::1", false, false, true, true, "private address 10.0.0.1 embedded in a 6to4 address"},
		{"2002:808:808::1", true, true, true, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			ip := netip.MustParseAddr(tt.addr)
			for _, pc := range []struct {
				name string
				p    netguard.Policy
				want bool
			}{{"strict", strict, tt.strict}, {"loopback", loopOnly, tt.loop}, {"private", privOnly, tt.priv}, {"both", both, tt.both}} {
				err := pc.p.CheckIP(ip)
				if got := err == nil; got != pc.want {
					t.Errorf("%s: CheckIP(%s) = %v, want allowed=%v", pc.name, tt.addr, err, pc.want)
				}
				if err != nil && !errors.Is(err, netguard.ErrBlocked) {
					t.Errorf("%s: CheckIP(%s) error %v does not match ErrBlocked", pc.name, tt.addr, err)
				}
			}
			err := strict.CheckIP(ip)
			if tt.strict {
				return
			}
			var be *netguard.BlockedError
			if !errors.As(err, &be) {
				t.Fatalf("strict: CheckIP(%s) = %T %v, want *BlockedError", tt.addr, err, err)
			}
			if be.Reason != tt.reason || be.Addr != ip {
				t.Errorf("strict: CheckIP(%s) = {Addr %s, Reason %q}, want {%s, %q}", tt.addr, be.Addr, be.Reason, ip, tt.reason)
			}
		})
	}
}

func TestCheckIPInvalid(t *testing.T) {
	if err := both.CheckIP(netip.Addr{}); !errors.Is(err, netguard.ErrBlocked) {
		t.Fatalf("CheckIP(zero Addr) = %v, want ErrBlocked", err)
	}
}

func TestBlockedErrorMessage(t *testing.T) {
	tests := []struct {
		err  *netguard.BlockedError
		want string
	}{
		{&netguard.BlockedError{Addr: netip.MustParseAddr("169.254.169.254"), Reason: "link-local address"},
			"destination 169.254.169.254 is not allowed: link-local address"},
		{&netguard.BlockedError{Addr: netip.MustParseAddr("10.0.0.5"), Host: "agent.internal", Reason: "private address"},
			"destination agent.internal (10.0.0.5) is not allowed: private address"},
		{&netguard.BlockedError{Addr: netip.MustParseAddr("10.0.0.5"), Host: "10.0.0.5", Reason: "private address"},
			"destination 10.0.0.5 is not allowed: private address"},
		{&netguard.BlockedError{Host: "agent.example", Reason: "scheme must be http or https"},
			"destination agent.example is not allowed: scheme must be http or https"},
		{&netguard.BlockedError{Reason: "URL has no host"}, "destination is not allowed: URL has no host"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

// fakeResolver answers from a map and counts lookups; unknown names fail.
type fakeResolver struct {
	addrs map[string][]string
	calls atomic.Int32
}

func (f *fakeResolver) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	f.calls.Add(1)
	if network != "ip" {
		return nil, errors.New("unexpected network " + network)
	}
	ss, ok := f.addrs[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out, nil
}

func TestCheckURL(t *testing.T) {
	const (
		ok      = "ok"
		blocked = "blocked"
		failed  = "failed" // an error that is not a refusal
	)
	tests := []struct {
		name    string
		p       netguard.Policy
		url     string
		want    string
		msg     string // substring of the error message
		lookups int32
	}{
		{"public name", strict, "https://agent.example.com/a2a", ok, "", 1},
		{"public name with port", strict, "http://agent.example.com:8443/a2a", ok, "", 1},
		{"public and private mix", strict, "https://mixed.example.com/a2a", blocked, "destination mixed.example.com (10.0.0.5) is not allowed: private address", 1},
		{"public and private mix, private allowed", privOnly, "https://mixed.example.com/a2a", ok, "", 1},
		{"name to metadata", both, "http://rebind.example/", blocked, "rebind.example (169.254.169.254) is not allowed: link-local address", 1},
		{"name to mapped metadata", both, "http://mapped.example/", blocked, "link-local address", 1},
		{"name to IPv6 metadata", both, "http://imds6.example/", blocked, "cloud metadata address", 1},
		{"metadata literal", both, "http://169.254.169.254/latest/meta-data/", blocked, "destination 169.254.169.254 is not allowed: link-local address", 0},
		{"mapped metadata literal", both, "http://[::ffff:169.254.169.254]/", blocked, "link-local address", 0},
		{"IPv6 metadata literal", both, "http://[fd00:ec2::254]/latest/meta-data/", blocked, "cloud metadata address", 0},
		{"Lambda Runtime API", strict, "http://127.0.0.1:9001/2018-06-01/runtime/invocation/next", blocked, "loopback address", 0},
		{"private literal", strict, "http://10.0.0.1/", blocked, "private address", 0},
		{"private literal, private allowed", privOnly, "http://10.0.0.1/", ok, "", 0},
		{"public IPv6 literal", strict, "https://[2001:4860:4860::8888]:443/", ok, "", 0},
		{"link-local with zone", both, "http://[fe80::1%25eth0]/", blocked, "link-local address", 0},
		{"localhost", strict, "http://localhost:8080/", blocked, "destination localhost (127.0.0.1) is not allowed: loopback address", 0},
		{"localhost, upper case, trailing dot", strict, "http://LOCALHOST.:8080/", blocked, "loopback address", 0},
		{"localhost subdomain", strict, "http://agent.localhost/", blocked, "loopback address", 0},
		{"localhost, loopback allowed", loopOnly, "http://localhost:8080/", ok, "", 0},
		{"loopback literal, loopback allowed", loopOnly, "http://[::1]:8080/", ok, "", 0},
		{"ftp", both, "ftp://agent.example.com/", blocked, "scheme must be http or https", 0},
		{"file", both, "file:///etc/passwd", blocked, "scheme must be http or https", 0},
		{"no scheme", both, "agent.example.com/a2a", blocked, "scheme must be http or https", 0},
		{"no host", both, "http:///a2a", blocked, "URL has no host", 0},
		{"opaque", both, "http:agent.example.com", blocked, "URL has no host", 0},
		{"user info", both, "https://user:s3cret@agent.example.com/", blocked, "URL carries user info", 0},
		{"malformed", both, "http://[::1/", blocked, "malformed URL", 0},
		{"unknown name", strict, "https://nxdomain.example/", failed, "netguard: resolving nxdomain.example: ", 1},
		{"no addresses", strict, "https://empty.example/", failed, "netguard: resolving empty.example: no addresses", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &fakeResolver{addrs: map[string][]string{
				"agent.example.com": {"8.8.8.8", "2001:4860:4860::8888"},
				"mixed.example.com": {"8.8.8.8", "10.0.0.5"},
				"rebind.example":    {"169.254.169.254"},
				"mapped.example":    {"::ffff:169.254.169.254"},
				"imds6.example":     {"2001:4860:4860::8888", "fd00:ec2::254"},
				"empty.example":     {},
			}}
			err := tt.p.CheckURL(context.Background(), tt.url, r)
			switch tt.want {
			case ok:
				if err != nil {
					t.Fatalf("CheckURL(%q) = %v, want nil", tt.url, err)
				}
			case blocked:
				if !errors.Is(err, netguard.ErrBlocked) {
					t.Fatalf("CheckURL(%q) = %v, want ErrBlocked", tt.url, err)
				}
			case failed:
				if err == nil || errors.Is(err, netguard.ErrBlocked) {
					t.Fatalf("CheckURL(%q) = %v, want an error that is not ErrBlocked", tt.url, err)
				}
			}
			if err != nil && !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("CheckURL(%q) error %q does not contain %q", tt.url, err, tt.msg)
			}
			if err != nil && strings.Contains(err.Error(), "s3cret") {
				t.Errorf("CheckURL(%q) error %q leaks the password", tt.url, err)
			}
			var dnsErr *net.DNSError
			if tt.name == "unknown name" && !errors.As(err, &dnsErr) {
				t.Errorf("CheckURL(%q) error %v does not wrap the resolver's *net.DNSError", tt.url, err)
			}
			if got := r.calls.Load(); got != tt.lookups {
				t.Errorf("CheckURL(%q) made %d lookups, want %d", tt.url, got, tt.lookups)
			}
		})
	}
}

func TestCheckURLNilResolver(t *testing.T) {
	// Literal addresses and localhost need no resolver, so this never touches DNS.
	if err := strict.CheckURL(context.Background(), "http://169.254.169.254/", nil); !errors.Is(err, netguard.ErrBlocked) {
		t.Fatalf("CheckURL with nil resolver = %v, want ErrBlocked", err)
	}
	if err := loopOnly.CheckURL(context.Background(), "http://localhost/", nil); err != nil {
		t.Fatalf("CheckURL(localhost) with loopback allowed = %v, want nil", err)
	}
}

func TestTransportRefusesLoopback(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "hello")
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)

	for _, target := range []string{srv.URL, "http://localhost:" + u.Port()} {
		client := &http.Client{Transport: strict.Transport(), Timeout: 5 * time.Second}
		resp, err := client.Get(target)
		if err == nil {
			resp.Body.Close()
			t.Fatalf("GET %s through the strict transport succeeded", target)
		}
		if !errors.Is(err, netguard.ErrBlocked) {
			t.Fatalf("GET %s = %v, want ErrBlocked", target, err)
		}
		var be *netguard.BlockedError
		if !errors.As(err, &be) || be.Reason != "loopback address" || !be.Addr.IsLoopback() || be.Host != u.Hostname() && be.Host != "localhost" {
			t.Fatalf("GET %s = %v, want a loopback *BlockedError naming the host", target, err)
		}
	}
}

func TestTransportReachesLoopbackWhenAllowed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "hello")
	}))
	t.Cleanup(srv.Close)

	client := &http.Client{Transport: loopOnly.Transport(), Timeout: 5 * time.Second}
	resp, err := client.Get(srv.URL)
	if err != nil {
		t.Fatalf("GET %s with loopback allowed = %v", srv.URL, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(body) != "hello" {
		t.Fatalf("GET %s = %d %q, want 200 hello", srv.URL, resp.StatusCode, body)
	}
}

func TestTransportSettings(t *testing.T) {
	tr := strict.Transport()
	if tr.Proxy != nil {
		t.Error("Proxy is set; a proxy would bypass the dial check")
	}
	if tr.DialContext == nil || tr.DialTLSContext != nil {
		t.Error("DialContext must be the guarded dialer and DialTLSContext unset")
	}
	if tr.TLSHandshakeTimeout != 5*time.Second || tr.ResponseHeaderTimeout != 0 ||
		tr.MaxIdleConnsPerHost != 16 || tr.IdleConnTimeout != 90*time.Second {
		t.Errorf("timeouts = TLS %v, header %v, idle/host %d, idle %v",
			tr.TLSHandshakeTimeout, tr.ResponseHeaderTimeout, tr.MaxIdleConnsPerHost, tr.IdleConnTimeout)
	}
	if tr == http.DefaultTransport {
		t.Error("Transport returned http.DefaultTransport itself")
	}
}

func TestDialContextKeepsBaseControl(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()

	var calls atomic.Int32
	base := &net.Dialer{Timeout: time.Second, Control: func(string, string, syscall.RawConn) error {
		calls.Add(1)
		return nil
	}}
	ctx := context.Background()

	if _, err := strict.DialContext(base)(ctx, "tcp", ln.Addr().String()); !errors.Is(err, netguard.ErrBlocked) {
		t.Fatalf("strict dial = %v, want ErrBlocked", err)
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("base Control ran %d times for a refused address, want 0", n)
	}

	c, err := loopOnly.DialContext(base)(ctx, "tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("dial with loopback allowed = %v", err)
	}
	c.Close()
	if n := calls.Load(); n != 1 {
		t.Fatalf("base Control ran %d times, want 1", n)
	}
	if base.ControlContext != nil {
		t.Fatal("DialContext changed the base dialer")
	}
}

func TestDialContextNilBase(t *testing.T) {
	_, err := strict.DialContext(nil)(context.Background(), "tcp", "169.254.169.254:80")
	var be *netguard.BlockedError
	if !errors.As(err, &be) || be.Reason != "link-local address" || be.Host != "169.254.169.254" {
		t.Fatalf("dial metadata = %v, want a link-local *BlockedError", err)
	}
}
