package app_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/app"
	"github.com/agentgate/agentgate/pkg/app/apptest"
	"github.com/agentgate/agentgate/pkg/mcpserver"
)

// browser is a transport that sends the key, and an Origin and a Host when
// set, on every request: what a page in a browser (or a DNS-rebinding
// attack) looks like to the server.
type browser struct{ key, origin, host string }

func (b browser) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.key != "" {
		r.Header.Set("Authorization", "Bearer "+b.key)
	}
	if b.origin != "" {
		r.Header.Set("Origin", b.origin)
	}
	if b.host != "" {
		r.Host = b.host
	}
	return http.DefaultTransport.RoundTrip(r)
}

// connect opens an MCP client session at version through b, and lists the
// tools to show the session works.
func connect(t *testing.T, base, version string, b browser) error {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "origin-test", Version: "1.0.0"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: base + mcpserver.Endpoint, HTTPClient: &http.Client{Transport: b}},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		return err
	}
	defer cs.Close()
	// A client refused at 2026-07-28 may fall back to an older version:
	// that is not the generation under test.
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		return fmt.Errorf("negotiated %s, not %s", got, version)
	}
	_, err = cs.ListTools(t.Context(), nil)
	return err
}

// refusal is an answer the origin check gave: 403 with a JSON-RPC error.
type refusal struct {
	status  int
	code    int64
	message string
}

// send makes one raw request to url through b and reads the answer as a
// JSON-RPC error.
func send(t *testing.T, method, url string, b browser, header map[string]string, body string) refusal {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Transport: b}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var e struct {
		Error struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	json.Unmarshal(data, &e)
	return refusal{resp.StatusCode, e.Error.Code, e.Error.Message}
}

const toolsList = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`

// TestForeignOriginIsRefusedOnBothGenerations: Origin http://evil.example,
// accepted before on both protocol generations, is refused with 403 and a
// JSON-RPC error on a 2026-07-28 POST and on a legacy session's POST, GET
// and DELETE, and so is Host evil.example on a legacy session (the stack
// serves on a loopback listener); neither reaches the session, which still
// works afterwards. The origins ALLOWED_ORIGINS names, and no Origin at
// all, connect on both generations; a loopback origin does not, outside
// agentgate serve.
func TestForeignOriginIsRefusedOnBothGenerations(t *testing.T) {
	s := apptest.New(t, "embedded", map[string]string{"ALLOWED_ORIGINS": "https://app.example, https://admin.example:8443"})
	base := s.Serve()
	key := s.Key("alice", agentgate.ScopeUser)
	endpoint := base + mcpserver.Endpoint
	evil := browser{key: key, origin: "http://evil.example"}
	rebound := browser{key: key, host: "evil.example"}

	isRefusal := func(what string, got refusal, says string) {
		t.Helper()
		if got.status != http.StatusForbidden || got.code != -32000 || !strings.Contains(got.message, says) {
			t.Errorf("%s: %+v, want 403 with a JSON-RPC error saying %q", what, got, says)
		}
	}
	isRefusal("2026-07-28 POST from http://evil.example",
		send(t, "POST", endpoint, evil, map[string]string{"Mcp-Protocol-Version": mcpserver.Version20260728}, toolsList),
		`origin "http://evil.example" is not allowed`)

	cs := apptest.MCPClient(t, base, key, mcpserver.Version20251125, nil)
	session := map[string]string{"Mcp-Session-Id": cs.ID(), "Mcp-Protocol-Version": mcpserver.Version20251125}
	for _, method := range []string{"POST", "GET", "DELETE"} {
		isRefusal("legacy "+method+" from http://evil.example", send(t, method, endpoint, evil, session, toolsList), `origin "http://evil.example" is not allowed`)
		isRefusal("legacy "+method+" with Host evil.example", send(t, method, endpoint, rebound, session, toolsList), `host "evil.example" is not allowed`)
	}
	if _, err := cs.ListTools(t.Context(), nil); err != nil {
		t.Errorf("the session after the refused DELETEs: %v", err)
	}

	for _, version := range []string{mcpserver.Version20260728, mcpserver.Version20251125} {
		for _, origin := range []string{"", "https://app.example", "https://admin.example:8443"} {
			if err := connect(t, base, version, browser{key: key, origin: origin}); err != nil {
				t.Errorf("%s with Origin %q: %v", version, origin, err)
			}
		}
		for _, origin := range []string{"http://evil.example", "null", "http://localhost:6274"} {
			if err := connect(t, base, version, browser{key: key, origin: origin}); err == nil {
				t.Errorf("%s with Origin %q connected", version, origin)
			}
		}
	}

	// Before credentials: a foreign page learns nothing, not even that it
	// needs a key.
	isRefusal("POST from http://evil.example without a key", send(t, "POST", endpoint, browser{origin: "http://evil.example"}, nil, toolsList), "is not allowed")
}

// TestLoopbackOriginsUnderServe: agentgate serve lets pages on the user's
// machine (an MCP inspector at http://localhost:6274) in on both
// generations, and still refuses foreign origins and a rebound Host.
func TestLoopbackOriginsUnderServe(t *testing.T) {
	base, key := startServe(t)
	for _, version := range []string{mcpserver.Version20260728, mcpserver.Version20251125} {
		for _, origin := range []string{"http://localhost:6274", "http://127.0.0.1:3000", "http://[::1]:3000", ""} {
			if err := connect(t, base, version, browser{key: key, origin: origin}); err != nil {
				t.Errorf("%s with Origin %q: %v", version, origin, err)
			}
		}
		for _, b := range []browser{{key: key, origin: "http://evil.example"}, {key: key, host: "evil.example"}, {key: key, origin: "null"}} {
			if err := connect(t, base, version, b); err == nil {
				t.Errorf("%s with Origin %q, Host %q connected", version, b.origin, b.host)
			}
		}
	}
	got := send(t, "POST", base+mcpserver.Endpoint, browser{key: key, host: "evil.example"}, nil, toolsList)
	if got.status != http.StatusForbidden || !strings.Contains(got.message, `host "evil.example" is not allowed`) {
		t.Errorf("Host evil.example under serve: %+v", got)
	}
}

// TestAskProxyMCPRouteChecksOrigin: the askproxy's /ask/mcp is an MCP
// route too: a foreign Origin is refused there before the MCP server; without
// one, a stateless tools/list is answered with both docs tools, and the
// stream and session methods a stateless server does not have are 405.
func TestAskProxyMCPRouteChecksOrigin(t *testing.T) {
	base := apptest.New(t, "embedded", nil).Serve()
	for _, method := range []string{"POST", "GET", "DELETE"} {
		if got := send(t, method, base+"/ask/mcp", browser{origin: "http://evil.example"}, nil, toolsList); got.status != http.StatusForbidden || got.code != -32000 {
			t.Errorf("%s /ask/mcp from http://evil.example: %+v, want 403 with a JSON-RPC error", method, got)
		}
		want := http.StatusMethodNotAllowed
		if method == "POST" {
			want = http.StatusOK
		}
		if got := send(t, method, base+"/ask/mcp", browser{}, nil, toolsList); got.status != want {
			t.Errorf("%s /ask/mcp without Origin: %+v, want %d", method, got, want)
		}
	}
}

// TestHostIsNotCheckedOnLambda: on Lambda there is no listener and the Host
// is API Gateway's; the MCP endpoint serves it.
func TestHostIsNotCheckedOnLambda(t *testing.T) {
	s := apptest.New(t, "embedded", nil)
	req := httptest.NewRequest("POST", "https://abc123.execute-api.eu-west-1.amazonaws.com"+mcpserver.Endpoint, strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+s.Key("alice", agentgate.ScopeUser))
	rec := httptest.NewRecorder()
	s.Instance().ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || rec.Header().Get("Mcp-Session-Id") == "" {
		t.Errorf("initialize with API Gateway's Host: %d %s", rec.Code, rec.Body)
	}
}

// TestAllowedOriginsConfig: ALLOWED_ORIGINS is read in the form the chain
// compares, and a value that is not an origin stops the function at
// start-up with an error naming the variable.
func TestAllowedOriginsConfig(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string { return map[string]string{"ALLOWED_ORIGINS": v}[k] }
	}
	cfg, err := app.ConfigFromEnv(env(" https://App.Example:443 ,,http://localhost:3000/ "))
	if want := []string{"https://app.example", "http://localhost:3000"}; err != nil || !slices.Equal(cfg.AllowedOrigins, want) {
		t.Errorf("AllowedOrigins %v, %v; want %v", cfg.AllowedOrigins, err, want)
	}
	if cfg.LoopbackOrigins {
		t.Error("LoopbackOrigins is on outside agentgate serve")
	}
	for _, bad := range []string{"null", "*", "app.example", "https://app.example/path"} {
		if _, err := app.ConfigFromEnv(env("https://ok.example," + bad)); err == nil || !strings.Contains(err.Error(), "ALLOWED_ORIGINS: ") ||
			!strings.Contains(err.Error(), "is not an origin") {
			t.Errorf("ALLOWED_ORIGINS with %q: %v", bad, err)
		}
	}
	if _, err := app.ConfigFromEnv(env("")); err != nil {
		t.Errorf("unset: %v", err)
	}
}
