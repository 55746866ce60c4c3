package web

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/ratelimit"
)

// DefaultMaxBody caps request bodies unless configured otherwise.
const DefaultMaxBody = 1 << 20

// Authenticator establishes a request's principal (package auth), in two
// steps so that the chain knows whom to count before the store has answered.
type Authenticator interface {
	// Identify checks, with no store call, what can be checked of r's
	// credential, and returns the subject its per-principal rate limit
	// counts (an API key's id, a JWT's verified sub) and the rest of the
	// check (for an API key, the key read). An error is the refusal.
	Identify(r *http.Request) (subject string, authenticate func(context.Context) (agentgate.Principal, error), err error)
}

// Limiter counts a request against a rule (package ratelimit).
type Limiter interface {
	Allow(ctx context.Context, class, subject string, rule ratelimit.Rule) (ratelimit.Decision, error)
}

// Rate-limit classes: each route spends from one (Route.Class).
const (
	ClassMCP    = "mcp"    // the MCP endpoint
	ClassAPI    = "api"    // authenticated owner and A2A APIs
	ClassPublic = "public" // unauthenticated: public cards, ask_docs
)

// Limits is the rate-limit budget of a route class.
type Limits struct {
	PerIP        ratelimit.Rule
	PerPrincipal ratelimit.Rule
}

// Chain is the security chain every route of every function runs behind.
// With SecurityHeaders, which wraps the whole mux so that its 404 and 405
// answers carry the headers too, the order is: security headers, recovery,
// body cap, request deadline (which bounds everything after it, the store
// calls of the rate limit and authentication included), on MCP routes the
// Origin and Host check (origin.go; before anything that costs a store
// call), rate limit by client IP, authentication, rate limit by principal,
// authorization (scope fence, then the route's own hook), the handler.
//
// That is the order of the answers, not of the work: on Lambda a request's
// latency is its sequential store round trips, so the three steps that cost
// one (the two rate-limit windows and the key read) run concurrently, and
// the request waits for one round trip before its handler (admit).
type Chain struct {
	MaxBody int64             // 0: DefaultMaxBody
	Timeout time.Duration     // 0: DefaultTimeout
	Limiter Limiter           // nil: no rate limiting
	Limits  map[string]Limits // by Route.Class
	Authn   Authenticator     // nil: authenticated routes refuse everyone
	// ResourceMetadata returns the RFC 9728 protected-resource metadata URL
	// that a 401's challenge points to; nil or "": none.
	ResourceMetadata func(r *http.Request) string
	// AllowedOrigins are the browser origins, as ParseOrigin returns them,
	// that may call the MCP routes; a request without Origin always may.
	AllowedOrigins []string
	// LoopbackOrigins also allows http origins on this machine (localhost,
	// 127.0.0.1, [::1], any port): set by `agentgate serve`, whose local
	// tools (an MCP inspector in the browser) are such pages. Never on AWS,
	// where a loopback origin is any visitor's own machine.
	LoopbackOrigins bool
}

// Wrap returns the routes with their handlers behind the chain.
func (c *Chain) Wrap(routes []Route) []Route {
	out := make([]Route, len(routes))
	for i, rt := range routes {
		rt.Handler = c.handler(rt)
		out[i] = rt
	}
	return out
}

func (c *Chain) handler(rt Route) http.Handler {
	maxBody := cmp.Or(c.MaxBody, DefaultMaxBody)
	timeout := cmp.Or(c.Timeout, DefaultTimeout)
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rt.MCP {
			if reason := c.checkOrigin(r); reason != "" {
				refuseOrigin(w, r, reason)
				return
			}
		}
		if rt.Public {
			if l := c.limit(r.Context(), rt.Class, "ip", ClientIP(r), perIP); l != nil {
				l.write(w, r)
				return
			}
			rt.Handler.ServeHTTP(w, r)
			return
		}
		if rt.Prefetch != nil {
			r = rt.Prefetch(r)
		}
		p, ok := c.admit(w, r, rt.Class)
		if !ok {
			return
		}
		r = r.WithContext(agentgate.WithPrincipal(r.Context(), p))
		if err := authorize(rt, r, p); err != nil {
			WriteError(w, r, err)
			return
		}
		rt.Handler.ServeHTTP(w, r)
	})
	return recoverPanics(capBody(maxBody, rt.MCP || rt.JSONRPC, withDeadline(timeout, inner)))
}

func perIP(l Limits) ratelimit.Rule        { return l.PerIP }
func perPrincipal(l Limits) ratelimit.Rule { return l.PerPrincipal }

// admit runs the security steps of an authenticated route that cost a store
// call (the per-IP window, authentication and the per-principal window)
// concurrently, waits for all three, then answers as if they had run in
// order: per-IP refusal (429), then authentication's (401, or 503 when the
// store failed), then per-principal refusal (429). Which refusal answers
// never depends on which store call returned first; only the wait changed:
// one round trip instead of three or four.
//
// That needs the principal's rate-limit subject before the store says who
// it is: Authn.Identify gives it locally (an API key's id, a JWT's verified
// sub), so the per-principal budget is per key rather than per owner. A
// credential refused by Identify is a 401 at once, with no store call, not
// even the per-IP window's: it costs nothing to count.
//
// It writes the refusal and returns false when the request may not go on.
func (c *Chain) admit(w http.ResponseWriter, r *http.Request, class string) (agentgate.Principal, bool) {
	if c.Authn == nil {
		c.unauthorized(w, r, agentgate.Errorf(agentgate.EUNAUTHORIZED, "authentication is not configured on this deployment"))
		return agentgate.Principal{}, false
	}
	subject, authenticate, err := c.Authn.Identify(r)
	if err != nil {
		c.unauthorized(w, r, err)
		return agentgate.Principal{}, false
	}
	ctx := r.Context()
	var ipLimit, principalLimit *limited
	byIP := func() { ipLimit = c.limit(ctx, class, "ip", ClientIP(r), perIP) }
	byPrincipal := func() { principalLimit = c.limit(ctx, class, "principal", subject, perPrincipal) }
	var wg sync.WaitGroup
	if m, ok := c.Limiter.(interface{ InMemory() bool }); ok && m.InMemory() {
		// No round trip to overlap: goroutines would cost more than the counts.
		byIP()
		byPrincipal()
	} else {
		wg.Go(byIP)
		wg.Go(byPrincipal)
	}
	p, err := authenticate(ctx)
	wg.Wait()
	switch {
	case ipLimit != nil:
		ipLimit.write(w, r)
	case err != nil:
		c.unauthorized(w, r, err)
	case principalLimit != nil:
		principalLimit.write(w, r)
	default:
		return p, true
	}
	return agentgate.Principal{}, false
}

// unauthorized writes authentication's error: a refusal with its challenge,
// anything else (a store failure: 503) as it is.
func (c *Chain) unauthorized(w http.ResponseWriter, r *http.Request, err error) {
	if agentgate.ErrorCode(err) == agentgate.EUNAUTHORIZED {
		w.Header().Set("WWW-Authenticate", c.challenge(r))
	}
	WriteError(w, r, err)
}

// challenge builds the RFC 6750 WWW-Authenticate value of a 401: with
// error="invalid_token" when a token was presented and refused, and with the
// RFC 9728 resource_metadata URL (how MCP clients find out where to get a
// token) when the function has one.
func (c *Chain) challenge(r *http.Request) string {
	var params []string
	if c.ResourceMetadata != nil {
		if u := c.ResourceMetadata(r); u != "" {
			params = append(params, fmt.Sprintf("resource_metadata=%q", u))
		}
	}
	if r.Header.Get("Authorization") != "" {
		params = append(params, `error="invalid_token"`)
	}
	if len(params) == 0 {
		return "Bearer"
	}
	return "Bearer " + strings.Join(params, ", ")
}

// limited is a rate-limit refusal, to be written once the chain has decided
// which of its refusals is the answer.
type limited struct {
	rule       ratelimit.Rule
	retryAfter time.Duration
}

func (l *limited) write(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Retry-After", strconv.Itoa(int(l.retryAfter.Seconds())))
	WriteError(w, r, agentgate.Errorf(agentgate.ERATELIMITED, "rate limit of %d per %s exceeded; retry in %s", l.rule.Limit, l.rule.Window, l.retryAfter))
}

// limit counts the request against one rate-limit rule (the one pick takes
// from the class's Limits) and returns the refusal when the budget is spent,
// nil otherwise. A store failure lets the request through: rate limiting
// protects capacity, it is not access control, and the routes that need the
// store fail on their own with a 503.
func (c *Chain) limit(ctx context.Context, class, kind, subject string, pick func(Limits) ratelimit.Rule) *limited {
	if c.Limiter == nil || class == "" || subject == "" {
		return nil
	}
	limits, ok := c.Limits[class]
	rule := pick(limits)
	if !ok || rule.Off() {
		return nil
	}
	d, err := c.Limiter.Allow(ctx, class+":"+kind, subject, rule)
	if err != nil {
		slog.WarnContext(ctx, "rate limit not checked: store failed", "class", class, "kind", kind, "err", err)
		return nil
	}
	if d.Allowed {
		return nil
	}
	return &limited{rule: rule, retryAfter: d.RetryAfter}
}

// authorize is the scope fence, then the route's own check.
func authorize(rt Route, r *http.Request, p agentgate.Principal) error {
	scopes := rt.Scopes
	if len(scopes) == 0 {
		scopes = []string{agentgate.ScopeUser}
	}
	if !slices.Contains(scopes, p.Scope) {
		return agentgate.Errorf(agentgate.EFORBIDDEN, "a %s credential cannot call %s %s", p.Scope, r.Method, r.URL.Path)
	}
	if rt.Authorize != nil {
		return rt.Authorize(r, p)
	}
	return nil
}

// ClientIP is the address the request came from: API Gateway's
// requestContext.http.sourceIp on Lambda (the adapter puts it in RemoteAddr),
// the TCP peer locally. Never a header: X-Forwarded-For is the client's to
// forge.
func ClientIP(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// SecurityHeaders sets the response headers every answer carries. The API
// serves JSON, never pages: nothing may frame it, sniff it or load from it.
func SecurityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Strict-Transport-Security", "max-age=63072000; includeSubDomains")
		h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
		next.ServeHTTP(w, r)
	})
}

// recoverPanics turns a handler panic into a logged 500 instead of a dropped
// connection (locally) or a Lambda error (on AWS).
func recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				WriteError(w, r, fmt.Errorf("panic: %v", p))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// capBody refuses bodies over max: at once when Content-Length says so, or
// when a handler reads past it (ReadBody and DecodeJSON map that to 413
// too). rpc answers the refusal as a JSON-RPC error.
func capBody(max int64, rpc bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > max {
			if rpc {
				WriteRPCFailure(w, r, nil, tooLarge(max))
			} else {
				WriteError(w, r, tooLarge(max))
			}
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, max)
		next.ServeHTTP(w, r)
	})
}

func tooLarge(max int64) error {
	return agentgate.Errorf(agentgate.ETOOLARGE, "request body is over the %d-byte limit", max)
}
