package web

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
)

// The MCP spec (transport security) requires servers to validate Origin:
// a page in a browser can POST to any URL, and a local server is reachable
// from any page by DNS rebinding (evil.example resolving to 127.0.0.1). A
// browser always sends Origin on such requests and its own Host, so a server
// that checks both refuses them; clients that are not browsers send no
// Origin and are not affected.

// rpcOriginRefused is the JSON-RPC code of a refused Origin or Host: the
// implementation-defined server error the MCP TypeScript SDK answers with.
const rpcOriginRefused = -32000

// ParseOrigin returns origin (scheme://host[:port], as a browser sends it in
// the Origin header) in the form the chain compares: scheme and host in
// lower case, the scheme's default port dropped. Anything else, "null"
// included, is an error saying what is wrong.
func ParseOrigin(origin string) (string, error) {
	u, err := url.Parse(origin)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.Opaque != "" {
		return "", fmt.Errorf("%q is not an origin: want http(s)://host[:port]", origin)
	}
	if u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return "", fmt.Errorf("%q is not an origin: want only scheme://host[:port], without user, path, query or fragment", origin)
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if host == "" {
		return "", fmt.Errorf("%q is not an origin: the host is empty", origin)
	}
	if port == "80" && u.Scheme == "http" || port == "443" && u.Scheme == "https" {
		port = ""
	}
	hostport := host
	if strings.Contains(host, ":") {
		hostport = "[" + host + "]"
	}
	if port != "" {
		hostport = net.JoinHostPort(host, port)
	}
	return u.Scheme + "://" + hostport, nil
}

// isLoopbackHost reports whether hostport (a Host header, a listener
// address, an origin's host) names this machine: localhost or a loopback
// address, with or without a port.
func isLoopbackHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// onLoopbackListener reports whether r arrived on a loopback address of a
// net/http server. On Lambda there is no listener (and the Host is API
// Gateway's), so this is false there.
func onLoopbackListener(r *http.Request) bool {
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return ok && addr != nil && isLoopbackHost(addr.String())
}

// checkOrigin returns why r may not reach an MCP route, or "" if it may.
// Without an Origin header (a client that is not a browser) it may. On a
// loopback listener its Host must name this machine too, which is what
// defeats DNS rebinding.
func (c *Chain) checkOrigin(r *http.Request) string {
	if onLoopbackListener(r) && !isLoopbackHost(r.Host) {
		return fmt.Sprintf("host %q is not allowed: this server answers on localhost only", r.Host)
	}
	values := r.Header.Values("Origin")
	switch {
	case len(values) == 0:
		return ""
	case len(values) > 1:
		return "one Origin header is allowed, got several"
	}
	origin, err := ParseOrigin(values[0])
	if err != nil {
		return fmt.Sprintf("origin %q is not allowed", values[0])
	}
	if slices.Contains(c.AllowedOrigins, origin) {
		return ""
	}
	if c.LoopbackOrigins && strings.HasPrefix(origin, "http://") && isLoopbackHost(strings.TrimPrefix(origin, "http://")) {
		return ""
	}
	return fmt.Sprintf("origin %q is not allowed to call this MCP endpoint", values[0])
}

// refuseOrigin answers a refused Origin or Host: 403 with the JSON-RPC
// error body MCP clients read. The log says which Origin and Host came.
func refuseOrigin(w http.ResponseWriter, r *http.Request, reason string) {
	slog.InfoContext(r.Context(), "request refused: origin or host not allowed", "method", r.Method, "path", r.URL.Path,
		"origin", r.Header.Values("Origin"), "host", r.Host)
	WriteRPCError(w, http.StatusForbidden, nil, rpcOriginRefused, reason)
}
