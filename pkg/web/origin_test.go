package web

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/ratelimit"
)

// counting counts what the chain asks of the rate limiter and the
// authenticator, and lets everyone through as alice. The chain asks
// concurrently: the counters are atomic.
type counting struct{ limits, authns atomic.Int64 }

func (c *counting) Allow(context.Context, string, string, ratelimit.Rule) (ratelimit.Decision, error) {
	c.limits.Add(1)
	return ratelimit.Decision{Allowed: true}, nil
}

func (c *counting) Identify(*http.Request) (string, func(context.Context) (agentgate.Principal, error), error) {
	c.authns.Add(1)
	return "alice", func(context.Context) (agentgate.Principal, error) {
		return agentgate.Principal{Subject: "alice", Scope: agentgate.ScopeUser}, nil
	}, nil
}

// mcpChain serves an authenticated, rate-limited MCP route at /mcp and a
// plain one at /api, both answering 200 "reached".
func mcpChain(c *Chain) (http.Handler, *counting) {
	cnt := &counting{}
	c.Limiter, c.Authn = cnt, cnt
	c.Limits = map[string]Limits{ClassMCP: {PerIP: ratelimit.Rule{Limit: 100, Window: time.Minute}, PerPrincipal: ratelimit.Rule{Limit: 100, Window: time.Minute}}}
	reached := func(w http.ResponseWriter, r *http.Request) { WriteJSON(w, 200, "reached") }
	var routes []Route
	for _, m := range []string{"POST", "GET", "DELETE"} {
		routes = append(routes, Route{Method: m, Path: "/mcp", Handler: http.HandlerFunc(reached), Class: ClassMCP, MCP: true})
	}
	routes = append(routes, Route{Method: "POST", Path: "/api", Handler: http.HandlerFunc(reached), Class: ClassMCP})
	return SecurityHeaders(NewMux(c.Wrap(routes))), cnt
}

// onLoopback makes req look as if it arrived on a loopback listener of a
// net/http server, as `agentgate serve`'s requests do.
func onLoopback(req *http.Request) *http.Request {
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	return req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, addr))
}

type rpcError struct {
	JSONRPC string `json:"jsonrpc"`
	ID      any    `json:"id"`
	Error   struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func readRPCError(t *testing.T, rec *httptest.ResponseRecorder) rpcError {
	t.Helper()
	var e rpcError
	if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.JSONRPC != "2.0" {
		t.Fatalf("body is not a JSON-RPC error: %v: %s", err, rec.Body)
	}
	return e
}

// TestOriginIsCheckedOnMCPRoutes: an Origin the configuration does not
// allow ("null" and malformed ones included) is refused on every method of
// an MCP route with 403 and a JSON-RPC error that says so, before the rate
// limiter or the authenticator costs anything; no Origin, or an allowed
// one, goes through; a route not marked MCP is not checked.
func TestOriginIsCheckedOnMCPRoutes(t *testing.T) {
	h, cnt := mcpChain(&Chain{AllowedOrigins: []string{"https://app.example"}})
	refused := []string{"http://evil.example", "null", "", "https://app.example.evil", "http://app.example", "https://app.example:8443",
		"http://localhost:6274", "http://127.0.0.1:3000", "http://[::1]:3000", "not an origin"}
	for _, method := range []string{"POST", "GET", "DELETE"} {
		for _, origin := range refused {
			req := httptest.NewRequest(method, "/mcp", strings.NewReader(`{}`))
			req.Header.Set("Origin", origin)
			rec := serve(t, h, req)
			e := readRPCError(t, rec)
			if rec.Code != http.StatusForbidden || e.Error.Code != rpcOriginRefused || e.ID != nil ||
				!strings.Contains(e.Error.Message, "is not allowed") || !strings.Contains(e.Error.Message, `"`+origin+`"`) {
				t.Errorf("%s with Origin %q: %d %+v, want 403 saying the origin is not allowed", method, origin, rec.Code, e)
			}
			if rec.Header().Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("%s with Origin %q: the refusal lacks the security headers", method, origin)
			}
		}
	}
	if cnt.limits.Load() != 0 || cnt.authns.Load() != 0 {
		t.Errorf("refusals cost %d rate-limit and %d authentication calls, want none", cnt.limits.Load(), cnt.authns.Load())
	}

	twoOrigins := httptest.NewRequest("POST", "/mcp", nil)
	twoOrigins.Header.Add("Origin", "https://app.example")
	twoOrigins.Header.Add("Origin", "http://evil.example")
	if rec := serve(t, h, twoOrigins); rec.Code != http.StatusForbidden {
		t.Errorf("two Origin headers: %d, want 403", rec.Code)
	}

	// Allowed: no Origin (not a browser), the allowed origin however a
	// browser spells it.
	for _, origin := range []string{"", "https://app.example", "HTTPS://App.Example:443"} {
		for _, method := range []string{"POST", "GET", "DELETE"} {
			req := httptest.NewRequest(method, "/mcp", nil)
			if origin != "" {
				req.Header.Set("Origin", origin)
			}
			if rec := serve(t, h, req); rec.Code != 200 || !strings.Contains(rec.Body.String(), "reached") {
				t.Errorf("%s with Origin %q: %d %s, want the handler", method, origin, rec.Code, rec.Body)
			}
		}
	}

	req := httptest.NewRequest("POST", "/api", nil)
	req.Header.Set("Origin", "http://evil.example")
	if rec := serve(t, h, req); rec.Code != 200 {
		t.Errorf("a route not marked MCP with a foreign Origin: %d %s, want the handler", rec.Code, rec.Body)
	}
}

// TestLoopbackOriginsOnlyWhenConfigured: pages on the user's own machine
// may call the MCP routes when the chain says so (agentgate serve), over
// http on any port; https://localhost and look-alike hosts stay refused.
func TestLoopbackOriginsOnlyWhenConfigured(t *testing.T) {
	loopback := []string{"http://localhost:6274", "http://LOCALHOST", "http://127.0.0.1:3000", "http://[::1]:3000"}
	for _, allow := range []bool{false, true} {
		h, _ := mcpChain(&Chain{LoopbackOrigins: allow})
		for _, origin := range loopback {
			req := httptest.NewRequest("POST", "/mcp", nil)
			req.Header.Set("Origin", origin)
			if rec := serve(t, h, req); (rec.Code == 200) != allow {
				t.Errorf("LoopbackOrigins %v, Origin %q: %d", allow, origin, rec.Code)
			}
		}
		for _, origin := range []string{"https://localhost:6274", "http://localhost.evil.example", "http://127.0.0.1.evil.example"} {
			req := httptest.NewRequest("POST", "/mcp", nil)
			req.Header.Set("Origin", origin)
			if rec := serve(t, h, req); rec.Code != http.StatusForbidden {
				t.Errorf("LoopbackOrigins %v, Origin %q: %d, want 403", allow, origin, rec.Code)
			}
		}
	}
}

// TestHostIsCheckedOnLoopbackListeners: a request that reached a loopback
// listener under another name (DNS rebinding) is refused, even without an
// Origin; loopback names pass. Without a listener (Lambda, where the Host
// is API Gateway's), the Host is not checked.
func TestHostIsCheckedOnLoopbackListeners(t *testing.T) {
	h, cnt := mcpChain(&Chain{})
	for _, host := range []string{"evil.example", "evil.example:8080", "localhost.evil.example", "127.0.0.1.nip.io:8080", ""} {
		req := onLoopback(httptest.NewRequest("GET", "/mcp", nil))
		req.Host = host
		rec := serve(t, h, req)
		if e := readRPCError(t, rec); rec.Code != http.StatusForbidden || !strings.Contains(e.Error.Message, `host "`+host+`" is not allowed`) {
			t.Errorf("Host %q on a loopback listener: %d %+v, want 403 naming the host", host, rec.Code, e)
		}
	}
	if cnt.limits.Load() != 0 || cnt.authns.Load() != 0 {
		t.Errorf("refusals cost %d rate-limit and %d authentication calls, want none", cnt.limits.Load(), cnt.authns.Load())
	}
	for _, host := range []string{"localhost", "localhost:8080", "127.0.0.1:8080", "[::1]:8080", "[::1]"} {
		req := onLoopback(httptest.NewRequest("GET", "/mcp", nil))
		req.Host = host
		if rec := serve(t, h, req); rec.Code != 200 {
			t.Errorf("Host %q on a loopback listener: %d %s, want the handler", host, rec.Code, rec.Body)
		}
	}
	req := httptest.NewRequest("GET", "/mcp", nil)
	req.Host = "abc123.execute-api.eu-west-1.amazonaws.com"
	if rec := serve(t, h, req); rec.Code != 200 {
		t.Errorf("API Gateway's Host without a listener: %d %s, want the handler", rec.Code, rec.Body)
	}
	req = onLoopback(httptest.NewRequest("POST", "/api", nil))
	req.Host = "evil.example"
	if rec := serve(t, h, req); rec.Code != 200 {
		t.Errorf("a route not marked MCP: %d %s, want the handler", rec.Code, rec.Body)
	}
}

// TestOriginCheckComesAfterTheBodyCap: the check sits where the chain's
// order puts it, after the body cap (an oversized body is 413 whatever its
// Origin) and before the rate limit and authentication (the tests above).
func TestOriginCheckComesAfterTheBodyCap(t *testing.T) {
	h, _ := mcpChain(&Chain{MaxBody: 8})
	req := httptest.NewRequest("POST", "/mcp", strings.NewReader(`{"too":"large"}`))
	req.Header.Set("Origin", "http://evil.example")
	if rec := serve(t, h, req); rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized body with a foreign Origin: %d, want 413 from the body cap first", rec.Code)
	}
}

func TestParseOrigin(t *testing.T) {
	for in, want := range map[string]string{
		"https://app.example":        "https://app.example",
		"HTTPS://App.Example:443/":   "https://app.example",
		"http://app.example:80":      "http://app.example",
		"http://app.example:8080":    "http://app.example:8080",
		"https://app.example:80":     "https://app.example:80",
		"http://[::1]:3000":          "http://[::1]:3000",
		"http://[::1]":               "http://[::1]",
		"http://127.0.0.1:6274":      "http://127.0.0.1:6274",
		"https://xn--bcher-kva.test": "https://xn--bcher-kva.test",
	} {
		if got, err := ParseOrigin(in); err != nil || got != want {
			t.Errorf("ParseOrigin(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "null", "*", "app.example", "ftp://app.example", "https://", "https://user@app.example",
		"https://app.example/path", "https://app.example?q", "https://app.example#f", "https://app.example:99999x", "mailto:a@b"} {
		if got, err := ParseOrigin(in); err == nil || !strings.Contains(err.Error(), "is not an origin") {
			t.Errorf("ParseOrigin(%q) = %q, %v; want an error saying it is not an origin", in, got, err)
		}
	}
}
