package web

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/agentgate/agentgate/pkg/agentgate"
)

// Route is one entry of a function's route table. Method "" means any
// method; Path uses net/http pattern syntax ({name}, {rest...}), which maps
// one-to-one onto API Gateway's ({name}, {proxy+}). The route tables are data
// so that the template test can check template.yaml against them.
type Route struct {
	Method  string
	Path    string
	Handler http.Handler

	// Public routes take no credentials. The zero value is authenticated:
	// a route someone forgets to mark stays closed.
	Public bool
	// Scopes that may call an authenticated route; empty means
	// agentgate.ScopeUser only, so connector keys are fenced out by default.
	Scopes []string
	// Authorize, if set, runs after authentication and the scope fence; it
	// returns an EFORBIDDEN (or ENOTFOUND, to hide existence) error to refuse.
	Authorize func(r *http.Request, p agentgate.Principal) error
	// Class names the rate-limit budget the route spends from; "" spends
	// none (health routes, which must stay cheap).
	Class string
	// MCP marks an MCP Streamable HTTP endpoint, which the MCP spec requires
	// to validate Origin: the chain refuses browser origins it does not
	// allow, and on a loopback listener a Host that is not this machine
	// (DNS rebinding), with a JSON-RPC error, which is what MCP clients read.
	MCP bool
	// Prefetch, if set, starts a read the handler will need, keyed by what
	// the request says (an MCP session's record), before the chain's own
	// store calls, so that it runs with them: the request then waits for
	// one round trip before its handler, not two. It runs before the
	// caller is authenticated, so it may only read, and the handler must
	// check what it found against the caller. It returns the request to
	// hand on, carrying what it started.
	Prefetch func(r *http.Request) *http.Request
	// JSONRPC marks an endpoint that speaks JSON-RPC (MCP routes do too):
	// a body the chain refuses for its size is answered with a JSON-RPC
	// error, as the handler answers one it reads past the cap.
	JSONRPC bool
}

// Pattern returns the route's net/http ServeMux pattern.
func (r Route) Pattern() string {
	if r.Method == "" {
		return r.Path
	}
	return r.Method + " " + r.Path
}

// APIGatewayPath returns the route's path in API Gateway syntax.
func (r Route) APIGatewayPath() string {
	parts := strings.Split(r.Path, "/")
	for i, p := range parts {
		if strings.HasPrefix(p, "{") && strings.HasSuffix(p, "...}") {
			parts[i] = "{proxy+}"
		}
	}
	return strings.Join(parts, "/")
}

// APIGatewayMethod returns the route's method in API Gateway syntax.
func (r Route) APIGatewayMethod() string {
	if r.Method == "" {
		return "ANY"
	}
	return r.Method
}

// Mux serves a route table and answers JSON for every request no route
// takes: 404 for an unknown path, 405 (with Allow) for a known path and the
// wrong method.
type Mux struct {
	mux *http.ServeMux
}

// NewMux builds a Mux from route tables. A duplicate route panics at start-up,
// as http.ServeMux does.
func NewMux(tables ...[]Route) *Mux {
	m := &Mux{mux: http.NewServeMux()}
	for _, t := range tables {
		for _, r := range t {
			m.mux.Handle(r.Pattern(), r.Handler)
		}
	}
	return m
}

func (m *Mux) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h, pattern := m.mux.Handler(r)
	if pattern != "" {
		m.mux.ServeHTTP(w, r)
		return
	}
	// No route: let ServeMux decide between 404 and 405 (and set Allow), then
	// answer in JSON instead of its plain text.
	probe := &statusProbe{header: http.Header{}}
	h.ServeHTTP(probe, r)
	if allow := probe.header.Get("Allow"); allow != "" {
		w.Header().Set("Allow", allow)
	}
	if probe.status == http.StatusMethodNotAllowed {
		WriteJSON(w, http.StatusMethodNotAllowed, ErrorBody{Error: ErrorDetail{
			Code: "method_not_allowed", Message: fmt.Sprintf("%s is not allowed on %s", r.Method, r.URL.Path)}})
		return
	}
	notFound(w, r)
}

// notFound is the answer to a request no route takes.
func notFound(w http.ResponseWriter, r *http.Request) {
	WriteError(w, r, agentgate.Errorf(agentgate.ENOTFOUND, "no route for %s %s", r.Method, r.URL.Path))
}

// statusProbe records what ServeMux's own error handler would answer.
type statusProbe struct {
	header http.Header
	status int
}

func (p *statusProbe) Header() http.Header         { return p.header }
func (p *statusProbe) Write(b []byte) (int, error) { return len(b), nil }
func (p *statusProbe) WriteHeader(s int)           { p.status = s }

// NotImplemented answers 501 for a route whose feature is not built yet. The
// route exists so that template.yaml and the code agree on the API's shape.
func NotImplemented(feature string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		WriteError(w, r, agentgate.Errorf(agentgate.ENOTIMPL, "%s is not implemented yet", feature))
	})
}

// Hidden returns routes that all answer 404, exactly as an unknown route
// does, before any other step of the chain: a disabled function does not
// reveal that it exists, nor ask for credentials.
func Hidden(routes []Route) []Route {
	out := make([]Route, len(routes))
	for i, rt := range routes {
		out[i] = Route{Method: rt.Method, Path: rt.Path, Public: true, Handler: http.HandlerFunc(notFound)}
	}
	return out
}

// BaseURL is the API's public base URL: configured, or derived from the
// request (on Lambda the adapter sets https and API Gateway's domain).
func BaseURL(r *http.Request, configured string) string {
	if configured != "" {
		return configured
	}
	if r.URL.Scheme != "" && r.URL.Host != "" {
		return r.URL.Scheme + "://" + r.URL.Host
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}
