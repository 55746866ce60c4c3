package app_test

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/agentgate/agentgate/pkg/mcpserver"
)

// withBearer is a loopback reverse proxy to base that adds the API key to
// every request and changes nothing else (Host and Origin included): the
// conformance suite cannot send credentials, and every MCP route of
// agentgate needs them.
func withBearer(t *testing.T, base, key string) string {
	t.Helper()
	target, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httptest.NewServer(&httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = r.In.Host
			r.Out.Header.Set("Authorization", "Bearer "+key)
		},
		FlushInterval: -1, // SSE events as they come
	})
	t.Cleanup(proxy.Close)
	return proxy.URL
}

// conformanceScenarios are the suite's server scenarios that any MCP server
// can pass: the others call the suite's own fixture tools, resources and
// prompts (test_simple_text, test://static-text, ...), which agentgate does
// not have.
var conformanceScenarios = []string{
	"server-initialize", "logging-set-level", "ping", "tools-list", "resources-list", "prompts-list",
	"server-sse-multiple-streams", "dns-rebinding-protection",
}

// check is one entry of a scenario's checks.json.
type check struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

// TestMCPConformance runs the MCP conformance suite
// (@modelcontextprotocol/conformance 0.1.16, installed by `make deps` from
// package-lock.json) against agentgate serve's /mcp, and requires each
// generic server scenario to pass, dns-rebinding-protection included. With
// CI=true a missing node or suite fails the test; elsewhere it skips it.
func TestMCPConformance(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	suite := filepath.Join(root, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	node, err := exec.LookPath("node")
	if _, serr := os.Stat(suite); err != nil || serr != nil {
		msg := "node or @modelcontextprotocol/conformance is missing; run make deps"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	base, key := startServe(t)
	endpoint := withBearer(t, base, key) + mcpserver.Endpoint

	for _, scenario := range conformanceScenarios {
		t.Run(scenario, func(t *testing.T) {
			out := t.TempDir()
			cmd := exec.CommandContext(t.Context(), node, "--import", filepath.Join(root, "pkg", "app", "testdata", "globsync.mjs"),
				suite, "server", "--url", endpoint, "--scenario", scenario, "--output-dir", out)
			cmd.Dir = out
			var output bytes.Buffer
			cmd.Stdout, cmd.Stderr = &output, &output
			runErr := cmd.Run()

			files, _ := filepath.Glob(filepath.Join(out, "server-"+scenario+"-*", "checks.json"))
			if len(files) != 1 {
				t.Fatalf("want one checks.json, found %v; exit %v\n%s", files, runErr, output.String())
			}
			data, err := os.ReadFile(files[0])
			if err != nil {
				t.Fatal(err)
			}
			var checks []check
			if err := json.Unmarshal(data, &checks); err != nil {
				t.Fatalf("checks.json: %v\n%s", err, data)
			}
			passed := 0
			for _, c := range checks {
				switch c.Status {
				case "SUCCESS":
					passed++
				case "FAILURE":
					t.Errorf("check %s failed: %s", c.ID, c.ErrorMessage)
				case "WARNING":
					t.Logf("check %s warns: %s", c.ID, c.ErrorMessage)
				}
			}
			if passed == 0 || runErr != nil {
				t.Errorf("%d checks passed, exit %v\n%s", passed, runErr, output.String())
			}
		})
	}
}
