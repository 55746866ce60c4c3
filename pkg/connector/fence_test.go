package connector_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/pkg/app"
	"github.com/agentgate/agentgate/pkg/app/apptest"
)

// access is how a route of any function treats a caller who is neither the
// agent's owner nor an admin.
type access int

const (
	open      access = iota // public, or any user credential: passes the fence
	owned                   // the agent's owner only: others 403 if they can see it, 404 if not
	keyToo                  // owned, and also the agent's own current connector key
	mcpRoute                // user credentials and connector keys alike (the MCP endpoint)
	adminOnly               // admins only: 403
)

// routeAccess classifies every route of every function. A route missing
// here fails the test: a new route must say who may call it.
var routeAccess = map[string]access{
	"GET /health/mcp":       open,
	"GET /health/agentcard": open,
	"GET /health/connector": open,
	"GET /health/askproxy":  open,

	"POST /mcp":   mcpRoute,
	"GET /mcp":    mcpRoute,
	"DELETE /mcp": mcpRoute,
	"GET /.well-known/oauth-protected-resource/mcp": open,
	"POST /ask/mcp":   open,
	"GET /ask/mcp":    open,
	"DELETE /ask/mcp": open,
	"POST /ask/qa":    open,

	"GET /api/agents/{name}/a2a/agent-card":                  open,
	"GET /api/agents/{name}/a2a/.well-known/agent-card.json": open,
	"GET /api/agents/{name}/.well-known/agent-card.json":     open,
	"POST /api/agents/{name}/a2a":                            open,

	"POST /api/agents":                           open,
	"GET /api/agents":                            open,
	"GET /api/agents/{name}":                     owned,
	"DELETE /api/agents/{name}":                  owned,
	"GET /api/agents/{name}/connector":           owned,
	"PUT /api/agents/{name}/connector":           owned,
	"POST /api/agents/{name}/connector/key":      owned,
	"DELETE /api/agents/{name}/connector/key":    owned,
	"GET /api/agents/{name}/connector/playbooks": keyToo,
	"POST /api/agents/{name}/chat":               keyToo,
	"GET /api/agents/{name}/mcp-exposed":         owned,
	"PUT /api/agents/{name}/mcp-exposed":         owned,
	"GET /api/settings/mcp-url":                  adminOnly,
	"PUT /api/settings/mcp-url":                  adminOnly,
	"DELETE /api/settings/mcp-url":               adminOnly,
	" /api/keys":                                 open,
	" /api/keys/{rest...}":                       open,
}

// probe is one request the fence test sends.
type probe struct {
	method, path string
	access       access
	public       bool // the route takes no credentials
}

// probes lists a request per route of every function (each method of an
// any-method route), with {name} set to agent.
func probes(t *testing.T, d app.Deps, agent string) []probe {
	t.Helper()
	var out []probe
	for _, f := range app.Functions {
		for _, rt := range f.Routes(d) {
			acc, ok := routeAccess[rt.Method+" "+rt.Path]
			if !ok {
				t.Errorf("route %q %s of %s is not classified in routeAccess", rt.Method, rt.Path, f.Name)
				continue
			}
			path := strings.ReplaceAll(rt.Path, "{name}", agent)
			path = strings.ReplaceAll(path, "{rest...}", "x")
			methods := []string{rt.Method}
			if rt.Method == "" {
				methods = []string{"GET", "POST", "PUT", "DELETE"}
			}
			for _, m := range methods {
				out = append(out, probe{method: m, path: path, access: acc, public: rt.Public})
			}
		}
	}
	// The owner's destructive calls last, for the owner pass.
	last := func(p probe) int {
		switch {
		case p.method == "DELETE" && strings.HasSuffix(p.path, "/"+agent):
			return 2
		case strings.HasSuffix(p.path, "/connector/key"):
			return 1
		}
		return 0
	}
	sorted := make([]probe, 0, len(out))
	for rank := 0; rank <= 2; rank++ {
		for _, p := range out {
			if last(p) == rank {
				sorted = append(sorted, p)
			}
		}
	}
	return sorted
}

func send(t *testing.T, base, token string, p probe) answer {
	t.Helper()
	var body any
	if p.method == "POST" || p.method == "PUT" {
		body = "{}"
	}
	return call(t, base, token, p.method, p.path, body)
}

// TestScopeFence sends a connector key, and a user who does not own the
// agent, to every route of every function: only the routes the issue
// allows them pass; every other one is refused, and with the right status.
func TestScopeFence(t *testing.T) {
	for _, backend := range apptest.Backends {
		t.Run(backend, func(t *testing.T) {
			s := apptest.New(t, backend, map[string]string{"ADMIN_SUBJECTS": "root"})
			base := s.Serve()
			alice, bob := s.Key("alice", user), s.Key("bob", user)
			want(t, "register", register(t, s, base, alice, "mine", false), http.StatusCreated)
			want(t, "register another", register(t, s, base, alice, "other", false), http.StatusCreated)
			key, _ := mint(t, base, alice, "mine")

			// A connector key reaches /mcp and its own agent's chat and
			// playbooks; everything else is 403, the same routes for
			// another agent included.
			for _, agent := range []string{"mine", "other", "sample-echo"} {
				for _, p := range probes(t, s.Deps, agent) {
					a := send(t, base, key, p)
					allowed := p.public || p.access == mcpRoute || (p.access == keyToo && agent == "mine")
					switch {
					case allowed && (a.status == http.StatusForbidden || a.status == http.StatusUnauthorized):
						t.Errorf("connector key, %s %s: %d %s; want it through", p.method, p.path, a.status, a.raw)
					case !allowed && a.status != http.StatusForbidden:
						t.Errorf("connector key, %s %s: %d %s; want 403", p.method, p.path, a.status, a.raw)
					}
				}
			}
			// It was not spent by the probes: still the current key.
			want(t, "the key after the fence", call(t, base, key, "GET", "/api/agents/mine/connector/playbooks", nil), http.StatusOK)

			// A user who does not own the agent: the open routes pass;
			// the owner's are 404 on an agent bob cannot see (alice's
			// private one) and 403 on one he can (a public card); the
			// admin's are 403.
			for _, c := range []struct {
				agent   string
				visible bool
			}{{"mine", false}, {"sample-echo", true}} {
				for _, p := range probes(t, s.Deps, c.agent) {
					a := send(t, base, bob, p)
					refusal := 0
					switch p.access {
					case owned, keyToo:
						refusal = http.StatusNotFound
						if c.visible {
							refusal = http.StatusForbidden
						}
					case adminOnly:
						refusal = http.StatusForbidden
					}
					switch {
					case refusal != 0 && a.status != refusal:
						t.Errorf("bob, %s %s: %d %s; want %d", p.method, p.path, a.status, a.raw, refusal)
					case refusal == 0 && (a.status == http.StatusForbidden || a.status == http.StatusUnauthorized):
						t.Errorf("bob, %s %s: %d %s; want it through", p.method, p.path, a.status, a.raw)
					}
				}
			}

			// And the owner passes everywhere but the admin's routes
			// (the destructive calls come last).
			for _, p := range probes(t, s.Deps, "mine") {
				a := send(t, base, alice, p)
				bad := a.status == http.StatusForbidden || a.status == http.StatusUnauthorized ||
					(a.status == http.StatusNotFound && (p.access == owned || p.access == keyToo))
				if p.access == adminOnly {
					bad = a.status != http.StatusForbidden
				}
				if bad {
					t.Errorf("alice, %s %s: %d %s", p.method, p.path, a.status, a.raw)
				}
			}
			want(t, "admin", call(t, base, s.Key("root", user), "GET", "/api/settings/mcp-url", nil), http.StatusOK)
		})
	}
}
