package mcpserver_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/app/apptest"
	"github.com/agentgate/agentgate/pkg/mcpserver"
)

// ownerAPI calls the owners' HTTP API of one instance as one caller.
type ownerAPI struct {
	t     *testing.T
	base  string
	token string
}

func (o ownerAPI) call(method, path, contentType, body string) (int, map[string]any) {
	o.t.Helper()
	req, _ := http.NewRequest(method, o.base+path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Authorization", "Bearer "+o.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		o.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out map[string]any
	json.Unmarshal(data, &out)
	return resp.StatusCode, out
}

// TestOwnerFlowOverHTTP is the owners' half end to end, over HTTP only, on
// both stores and two instances: alice registers an agent (the sample
// agent under a name of her own), configures its connector and mints its
// key; the go-sdk client (both protocol generations) and the TypeScript
// SDK client use the key to list and run a playbook and to ask; she
// exposes it as a chat_with_ tool; regenerating refuses the old key on the
// other instance at once, revoking refuses the new one; deleting the agent
// removes its card, front door, connector and tool on every instance.
func TestOwnerFlowOverHTTP(t *testing.T) {
	for _, backend := range apptest.Backends {
		t.Run(backend, func(t *testing.T) {
			s := apptest.New(t, backend, nil)
			a, b := s.Serve(), s.Serve()
			aliceKey := s.Key("alice", agentgate.ScopeUser)
			alice, aliceB := ownerAPI{t, a, aliceKey}, ownerAPI{t, b, aliceKey}

			// Register: the example template, renamed, at the sample agent.
			sample, err := s.Deps.Agents.Get(t.Context(), s.AgentID)
			if err != nil {
				t.Fatal(err)
			}
			tmpl, err := os.ReadFile(filepath.Join("..", "..", "examples", "agents", "echo.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			yaml := strings.Replace(strings.Replace(string(tmpl), "name: sample-echo", "name: flow-echo", 1),
				"endpoint: http://127.0.0.1:9090/", "endpoint: "+sample.Template.Endpoint, 1)
			if status, out := alice.call("POST", "/api/agents", "application/yaml", yaml); status != 201 {
				t.Fatalf("register: %d %v", status, out)
			}
			if status, out := alice.call("PUT", "/api/agents/flow-echo/connector", "application/json", `{"exposed_playbooks":["reverse","word-count","slow"]}`); status != 200 {
				t.Fatalf("configure: %d %v", status, out)
			}
			status, minted := alice.call("POST", "/api/agents/flow-echo/connector/key", "application/json", "")
			key, _ := minted["key"].(string)
			if status != 201 || key == "" {
				t.Fatalf("mint: %d %v", status, minted)
			}

			// The go-sdk client, both generations, on the other instance.
			for _, version := range []string{mcpserver.Version20260728, mcpserver.Version20251125} {
				cs := client(t, b, key, version, approve, nil)
				if _, names := toolNames(t, cs); !slices.Equal(names, []string{"ask", "list_playbooks", "run_playbook"}) {
					t.Fatalf("%s: tools %v", version, names)
				}
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "list_playbooks", Arguments: map[string]any{}})
				var listed mcpserver.ListPlaybooksOutput
				if err == nil {
					structured(t, res, &listed)
				}
				var names []string
				for _, p := range listed.Playbooks {
					names = append(names, p.Name)
				}
				if !slices.Equal(names, []string{"reverse", "word-count", "slow"}) {
					t.Errorf("%s: playbooks %v (%v)", version, names, err)
				}
				var run mcpserver.PlaybookOutput
				res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "run_playbook", Arguments: map[string]any{"name": "reverse", "input": "stressed"}})
				if err == nil {
					structured(t, res, &run)
				}
				if run.Reply != "desserts" || run.Status != "completed" {
					t.Errorf("%s: run_playbook %+v (%v)", version, run, err)
				}
				var asked mcpserver.ChatOutput
				res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"message": "echo over mcp"}})
				if err == nil {
					structured(t, res, &asked)
				}
				if asked.Reply != "over mcp" {
					t.Errorf("%s: ask %+v (%v)", version, asked, err)
				}
			}
			// The TypeScript SDK client.
			var ts tsConnectorResult
			runNode(t, "tsconnector.mjs", &ts, "MCP_URL="+a+mcpserver.Endpoint, "MCP_TOKEN="+key)
			if ts.Run == nil || ts.Run.Reply != "desserts" || ts.Ask == nil || ts.Ask.Reply != "4" {
				t.Errorf("TypeScript client: run %+v, ask %+v", ts.Run, ts.Ask)
			}

			// Exposed, it is every user's chat_with_ tool.
			if status, out := alice.call("PUT", "/api/agents/flow-echo/mcp-exposed", "application/json", `{"exposed":true}`); status != 200 || out["tool"] == nil {
				t.Fatalf("expose: %d %v", status, out)
			}
			_, exposed := alice.call("GET", "/api/agents/flow-echo/mcp-exposed", "", "")
			toolName, _ := exposed["tool"].(string)
			if !strings.HasPrefix(toolName, "chat_with_") {
				t.Fatalf("exposure %v: no chat_with_ tool", exposed)
			}
			bob := s.Key("bob", agentgate.ScopeUser)
			if !eventually(func() bool {
				_, names := toolNames(t, client(t, b, bob, mcpserver.Version20260728, nil, nil))
				return slices.Contains(names, toolName)
			}) {
				t.Fatalf("%s never listed for bob", toolName)
			}

			// Regenerate on one instance: the old key is refused on the other.
			_, again := alice.call("POST", "/api/agents/flow-echo/connector/key", "application/json", "")
			newKey, _ := again["key"].(string)
			if status, _ := (ownerAPI{t, b, key}).call("GET", "/api/agents/flow-echo/connector/playbooks", "", ""); status != 401 {
				t.Errorf("the regenerated key on the other instance: %d, want 401", status)
			}
			if status, _ := (ownerAPI{t, b, newKey}).call("GET", "/api/agents/flow-echo/connector/playbooks", "", ""); status != 200 {
				t.Errorf("the new key: %d", status)
			}
			// Revoke.
			if status, _ := aliceB.call("DELETE", "/api/agents/flow-echo/connector/key", "", ""); status != 200 && status != 204 {
				t.Errorf("revoke: %d", status)
			}
			if status, _ := (ownerAPI{t, a, newKey}).call("GET", "/api/agents/flow-echo/connector/playbooks", "", ""); status != 401 {
				t.Errorf("the revoked key: %d, want 401", status)
			}

			// Delete on one instance: gone on the other.
			if status, out := alice.call("DELETE", "/api/agents/flow-echo", "", ""); status != 200 && status != 204 {
				t.Fatalf("delete: %d %v", status, out)
			}
			for _, path := range []string{"/api/agents/flow-echo/a2a/agent-card", "/api/agents/flow-echo/connector", "/api/agents/flow-echo"} {
				if status, _ := aliceB.call("GET", path, "", ""); status != 404 {
					t.Errorf("GET %s after delete: %d, want 404", path, status)
				}
			}
			if status, _ := aliceB.call("POST", "/api/agents/flow-echo/a2a", "application/json",
				`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"echo"}]}}}`); status != 404 {
				t.Errorf("front door after delete: %d, want 404", status)
			}
			if !eventually(func() bool {
				_, names := toolNames(t, client(t, b, bob, mcpserver.Version20260728, nil, nil))
				return !slices.Contains(names, toolName)
			}) {
				t.Errorf("%s still listed after delete", toolName)
			}
		})
	}
}

// eventually reports whether cond holds within 5 s.
func eventually(cond func() bool) bool {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return false
}
