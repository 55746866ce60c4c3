package app

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/agentgate/agentgate/pkg/config"
	"github.com/agentgate/agentgate/pkg/connector"
	"github.com/agentgate/agentgate/pkg/mcpserver"
	"github.com/agentgate/agentgate/pkg/store/embedded"
	"github.com/agentgate/agentgate/pkg/web"
)

// TestLambdaAndServeBuildTheSameFunctions: each function's own builder (its
// Lambda main's) and the one on the shared services of `agentgate serve`
// serve the same routes, with the MCP server on and off.
func TestLambdaAndServeBuildTheSameFunctions(t *testing.T) {
	for _, mcpOn := range []string{"true", "false"} {
		cfg := mustConfig(t, testEnv(map[string]string{"MCP_SERVER_ENABLED": mcpOn}))
		st, err := embedded.Open(filepath.Join(t.TempDir(), "agentgate.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		d := mustDeps(t, cfg, st)
		for _, f := range Functions {
			own, err := f.Lambda(d.Services)
			if err != nil {
				t.Fatalf("%s: %v", f.Name, err)
			}
			shared := f.Build(d)
			if got, want := routeKeys(d.Wrap(own)), routeKeys(d.Wrap(shared)); !slices.Equal(got, want) || own.Name != f.Name || shared.Name != f.Name {
				t.Errorf("MCP %s, %s: its own builder serves %v as %q, serve's %v as %q", mcpOn, f.Name, got, own.Name, want, shared.Name)
			}
			if (own.ResourceMetadata == nil) != (shared.ResourceMetadata == nil) {
				t.Errorf("%s: the builders disagree on the protected-resource metadata", f.Name)
			}
		}
	}
}

// TestNamesThatMustAgree: what is stated twice so that a function need not
// link another's code says the same in both places.
func TestNamesThatMustAgree(t *testing.T) {
	if got, want := slices.Sorted(slices.Values(connector.BuiltinTools)), slices.Sorted(slices.Values(mcpserver.ToolNames)); !slices.Equal(got, want) {
		t.Errorf("connector.BuiltinTools %v, the MCP server's tools %v", got, want)
	}
	if config.MinConsentSecret != mcpserver.MinConsentSecret {
		t.Errorf("CONSENT_SECRET minimum: config %d, MCP server %d", config.MinConsentSecret, mcpserver.MinConsentSecret)
	}
}

// routeKeys are the method and path of each route, sorted.
func routeKeys(routes []web.Route) []string {
	keys := make([]string, len(routes))
	for i, r := range routes {
		keys[i] = r.Method + " " + r.Path
	}
	slices.Sort(keys)
	return keys
}
