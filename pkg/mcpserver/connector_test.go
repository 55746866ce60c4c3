package mcpserver_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/app/apptest"
	"github.com/agentgate/agentgate/pkg/connector"
	"github.com/agentgate/agentgate/pkg/mcpserver"
)

// work calls a tool that hands work to an agent (ask, chat_with_<slug>,
// run_playbook) and decodes its result; a call refused before any tool ran
// (an unknown tool, a connector refused) is a failed test.
func work(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (mcpserver.PlaybookOutput, *mcp.CallToolResult) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var out mcpserver.PlaybookOutput
	structured(t, res, &out)
	return out, res
}

// TestConnectorSession: a connector key, with the Go client in both
// protocol generations and on both stores, sees its agent's connector tools
// and nothing else; lists the exposed playbooks, runs one and asks, each
// with the user's consent; its input is checked against the playbook
// before anything is asked or sent.
func TestConnectorSession(t *testing.T) {
	for _, backend := range apptest.Backends {
		for _, version := range generations {
			t.Run(backend+"/"+version, func(t *testing.T) {
				s := apptest.New(t, backend, nil)
				url := s.Serve()
				var asked atomic.Int64
				cs := client(t, url, s.ConnectorKey(), version, approve, &asked)
				seesOnlyConnectorTools(t, cs)

				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "list_playbooks", Arguments: map[string]any{}})
				if err != nil || res.IsError {
					t.Fatalf("list_playbooks: %v %v", err, res)
				}
				var listed mcpserver.ListPlaybooksOutput
				structured(t, res, &listed)
				var names []string
				for _, pb := range listed.Playbooks {
					names = append(names, pb.Name)
				}
				// echo.yaml: fail is not user_invocable; slow takes an object.
				if listed.Agent != s.AgentID || !slices.Equal(names, []string{"echo", "reverse", "word-count", "slow"}) ||
					listed.Playbooks[3].InputSchema == nil {
					t.Fatalf("playbooks %+v", listed)
				}

				out, res := work(t, cs, "run_playbook", map[string]any{"name": "reverse", "input": "stressed"})
				if !out.Dispatched || res.IsError || out.Playbook != "reverse" || out.Status != "completed" || out.Reply != "desserts" || out.TaskID == "" {
					t.Fatalf("run_playbook: %+v %v", out, res.Content)
				}
				out, res = work(t, cs, "ask", map[string]any{"message": "word-count one two three"})
				if !out.Dispatched || res.IsError || out.Reply != "3" || out.ContextID == "" {
					t.Fatalf("ask: %+v %v", out, res.Content)
				}
				// The next turn of that conversation.
				if next, _ := work(t, cs, "ask", map[string]any{"message": "echo again", "context_id": out.ContextID}); next.ContextID != out.ContextID || next.Reply != "again" {
					t.Errorf("second turn: %+v", next)
				}
				if asked.Load() != 3 || s.Sample.Received() != 3 {
					t.Fatalf("asked %d times, agent received %d; want 3 and 3", asked.Load(), s.Sample.Received())
				}

				// Input checked before the question: nothing asked, nothing sent.
				for _, tc := range []struct {
					args map[string]any
					want string
				}{
					{map[string]any{"name": "slow", "input": map[string]any{"seconds": 100}}, "at schema '/properties/seconds': maximum: 100 is greater than 20"},
					{map[string]any{"name": "slow", "input": map[string]any{"minutes": 1}}, `unexpected additional properties ["minutes"]`},
					{map[string]any{"name": "slow", "input": "1"}, `has type "string", want "object"`},
					{map[string]any{"name": "reverse", "input": map[string]any{"text": "x"}}, "takes text, not an object"},
					{map[string]any{"name": "reverse"}, "input: required"},
					{map[string]any{"name": "fail", "input": "x"}, "no such playbook"},
					{map[string]any{"name": "nope", "input": "x"}, "no such playbook"},
				} {
					out, res := work(t, cs, "run_playbook", tc.args)
					if out.Dispatched || !res.IsError || !strings.Contains(out.Reason, tc.want) {
						t.Errorf("run_playbook %v: %+v, want refused with %q", tc.args, out, tc.want)
					}
				}
				if asked.Load() != 3 || s.Sample.Received() != 3 {
					t.Errorf("refused input asked %d times and reached the agent %d times", asked.Load()-3, s.Sample.Received()-3)
				}
				// A valid object goes to the agent as JSON text, the object
				// in the metadata. (The sample agent's slow reads a number
				// from the text, so its task fails: it is the task that says so.)
				out, res = work(t, cs, "run_playbook", map[string]any{"name": "slow", "input": map[string]any{"seconds": 1}})
				if !out.Dispatched || res.IsError || out.TaskID == "" || out.Status != "failed" || !strings.Contains(out.Reply, `seconds\":1`) {
					t.Errorf("run_playbook with an object: %+v", out)
				}

				// The owner narrows the exposed playbooks: the next request sees it.
				s.Configure(connector.ConfigChange{SetPlaybooks: true, ExposedPlaybooks: []string{"reverse"}})
				structured(t, must(cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "list_playbooks", Arguments: map[string]any{}})), &listed)
				if len(listed.Playbooks) != 1 || listed.Playbooks[0].Name != "reverse" {
					t.Errorf("after narrowing: %+v", listed.Playbooks)
				}
				if out, _ := work(t, cs, "run_playbook", map[string]any{"name": "echo", "input": "x"}); out.Dispatched || !strings.Contains(out.Reason, "no such playbook") {
					t.Errorf("a playbook no longer exposed: %+v", out)
				}
			})
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// seesOnlyConnectorTools checks a connector session: list_playbooks,
// run_playbook and ask are all there is; no resource, template or prompt
// is advertised, listed or readable, and another tool is not callable.
func seesOnlyConnectorTools(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	_, names := toolNames(t, cs)
	if want := []string{"ask", "list_playbooks", "run_playbook"}; !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
	if caps := cs.InitializeResult().Capabilities; caps.Resources != nil || caps.Prompts != nil || caps.Tools == nil {
		t.Errorf("capabilities %+v: want tools only", caps)
	}
	if r, err := cs.ListResources(t.Context(), nil); err == nil && len(r.Resources) > 0 {
		t.Errorf("resources %v", r.Resources)
	}
	if r, err := cs.ListResourceTemplates(t.Context(), nil); err == nil && len(r.ResourceTemplates) > 0 {
		t.Errorf("resource templates %v", r.ResourceTemplates)
	}
	if r, err := cs.ListPrompts(t.Context(), nil); err == nil && len(r.Prompts) > 0 {
		t.Errorf("prompts %v", r.Prompts)
	}
	for _, uri := range []string{"agentgate://agents", "agentgate://agents/sample-echo/status"} {
		if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri}); err == nil {
			t.Errorf("read %s", uri)
		}
	}
	if _, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "delegate_task", Arguments: map[string]string{"agentId": "sample-echo", "goal": "x"}}); err == nil {
		t.Error("got the delegate_task prompt")
	}
	for _, tool := range append(slices.Clone(mcpserver.UserToolNames), "chat_with_sample_echo") {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"agentId": "sample-echo", "instruction": "echo", "taskId": "t1", "message": "echo"}})
		if err == nil && !res.IsError {
			t.Errorf("called %s: %+v", tool, res)
		}
	}
}

// TestConnectorStopsOnNextRequest: a connector disabled, a key no longer
// its connector's current one (regenerated, or never minted for it), an
// agent deleted: the key's very next request is refused, on an instance
// that served none of its requests before, whatever it asks (tools/list,
// tools/call), in both generations, and nothing reaches the agent. A
// re-enabled connector works again at once: nothing is cached.
func TestConnectorStopsOnNextRequest(t *testing.T) {
	for _, backend := range apptest.Backends {
		for _, version := range generations {
			t.Run(backend+"/"+version, func(t *testing.T) {
				s := apptest.New(t, backend, map[string]string{"REQUIRE_DISPATCH_CONSENT": "false"})
				proxy := newRotatingProxy(s) // a fresh instance for every request
				srv := httptest.NewServer(proxy)
				defer srv.Close()
				askOnce := func(cs *mcp.ClientSession) error {
					_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"message": "echo hi"}})
					return err
				}
				refused := func(what string, cs *mcp.ClientSession, want string) {
					t.Helper()
					before := s.Sample.Received()
					if _, err := cs.ListTools(t.Context(), nil); err == nil || !strings.Contains(err.Error(), want) {
						t.Errorf("%s: tools/list: %v, want refused with %q", what, err, want)
					}
					if err := askOnce(cs); err == nil || !strings.Contains(err.Error(), want) {
						t.Errorf("%s: ask: %v, want refused with %q", what, err, want)
					}
					if s.Sample.Received() != before {
						t.Errorf("%s: the agent was reached", what)
					}
				}

				key := s.ConnectorKey()
				cs := client(t, srv.URL, key, version, nil, nil)
				if err := askOnce(cs); err != nil {
					t.Fatal(err)
				}
				off, on := false, true
				s.Configure(connector.ConfigChange{Enabled: &off})
				refused("disabled", cs, "disabled")
				s.Configure(connector.ConfigChange{Enabled: &on})
				if err := askOnce(cs); err != nil {
					t.Fatalf("enabled again: %v", err)
				}

				// Regenerated: the new key works, the old one is refused.
				fresh := client(t, srv.URL, s.ConnectorKey(), version, nil, nil)
				if err := askOnce(fresh); err != nil {
					t.Fatalf("the regenerated key: %v", err)
				}
				refused("replaced", cs, "Unauthorized") // MintKey revokes the old key too
				// A valid key of the agent that its connector does not name
				// (what a replaced key is until its revocation lands).
				c := mcp.NewClient(&mcp.Implementation{Name: "stray", Version: "1"}, nil)
				_, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: srv.URL + mcpserver.Endpoint,
					HTTPClient: apptest.Bearer(s.Key("owner", agentgate.ScopeConnector))}, &mcp.ClientSessionOptions{ProtocolVersion: version})
				if err == nil || !strings.Contains(err.Error(), "replaced") || !strings.Contains(err.Error(), "Forbidden") {
					t.Errorf("a key its connector does not name: %v", err)
				}

				// The agent's record deleted: its connector key reaches nothing.
				if err := s.Deps.Agents.Delete(context.Background(), s.AgentID); err != nil {
					t.Fatal(err)
				}
				refused("agent deleted", fresh, "gone")
			})
		}
	}
}

// TestExposureAcrossInstances: the owner exposes the agent through the
// connector API on one instance; another instance lists chat_with_<slug>
// to a user within 5 seconds, without a restart, with the exposure in
// agentgate://agents; the tool chats (with consent) in both generations;
// hiding it drops the tool the same way.
func TestExposureAcrossInstances(t *testing.T) {
	for _, backend := range apptest.Backends {
		t.Run(backend, func(t *testing.T) {
			s := apptest.New(t, backend, nil)
			one, two := s.Serve(), s.Serve()
			const tool = "chat_with_sample_echo"
			var asked atomic.Int64
			sessions := map[string]*mcp.ClientSession{}
			for _, version := range generations {
				sessions[version] = client(t, two, s.Key("bob", agentgate.ScopeUser), version, approve, &asked)
			}
			cs := sessions[mcpserver.Version20260728]
			if _, names := toolNames(t, cs); slices.Contains(names, tool) {
				t.Fatalf("tools %v before exposure", names)
			}

			owner := s.Key("owner", agentgate.ScopeUser)
			took := toggle(t, one, owner, true, func() bool { _, names := toolNames(t, cs); return slices.Contains(names, tool) })
			t.Logf("exposed: listed on the other instance after %v", took)
			agents := must(cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "agentgate://agents"}))
			if text := agents.Contents[0].Text; !strings.Contains(text, `"exposed": true`) || !strings.Contains(text, `"tool": "`+tool+`"`) {
				t.Errorf("agentgate://agents: %s", text)
			}
			for _, version := range generations {
				out, res := work(t, sessions[version], tool, map[string]any{"message": "reverse " + version})
				if !out.Dispatched || res.IsError || out.Status != "completed" || out.Reply != reverse(version) {
					t.Errorf("%s at %s: %+v %v", tool, version, out, res.Content)
				}
			}
			if asked.Load() != 2 || s.Sample.Received() != 2 {
				t.Errorf("asked %d times, the agent received %d: want 2 and 2", asked.Load(), s.Sample.Received())
			}

			took = toggle(t, one, owner, false, func() bool { _, names := toolNames(t, cs); return !slices.Contains(names, tool) })
			t.Logf("hidden: gone from the other instance after %v", took)
			if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"message": "echo"}}); err == nil {
				t.Error("a hidden agent's tool was called")
			}
		})
	}
}

// toggle sets the stack agent's exposure through the connector API at base
// and waits, at most 5 seconds, until seen says the change is seen; it
// returns how long that took.
func toggle(t *testing.T, base, token string, exposed bool, seen func() bool) time.Duration {
	t.Helper()
	body := `{"exposed": false}`
	if exposed {
		body = `{"exposed": true}`
	}
	req, _ := http.NewRequest(http.MethodPut, base+"/api/agents/sample-echo/mcp-exposed", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := apptest.Bearer(token).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT mcp-exposed: %d", resp.StatusCode)
	}
	start := time.Now()
	for !seen() {
		if time.Since(start) > 5*time.Second {
			t.Fatalf("exposed=%v not seen on the other instance after 5 s", exposed)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return time.Since(start)
}

func reverse(s string) string {
	r := []rune(s)
	slices.Reverse(r)
	return string(r)
}

// TestExposedToolsAllowList: MCP_TOOLS governs the exposed agents' tools
// as one name, chat_with_* (mcpserver.ExposedTools): left out, no exposed
// agent's tool is listed or callable.
func TestExposedToolsAllowList(t *testing.T) {
	for _, tc := range []struct {
		tools string
		want  []string
	}{
		{"get_execution_result", []string{"get_execution_result"}},
		{"get_execution_result," + mcpserver.ExposedTools, []string{"chat_with_sample_echo", "get_execution_result"}},
	} {
		t.Run(tc.tools, func(t *testing.T) {
			s := apptest.New(t, "embedded", map[string]string{"MCP_TOOLS": tc.tools, "REQUIRE_DISPATCH_CONSENT": "false"})
			s.Expose(true)
			cs := client(t, s.Serve(), s.Key("alice", agentgate.ScopeUser), "", nil, nil)
			if _, names := toolNames(t, cs); !slices.Equal(names, tc.want) {
				t.Errorf("tools %v, want %v", names, tc.want)
			}
			_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "chat_with_sample_echo", Arguments: map[string]any{"message": "echo"}})
			if called := err == nil; called != slices.Contains(tc.want, "chat_with_sample_echo") {
				t.Errorf("chat_with_sample_echo called: %v (%v)", called, err)
			}
		})
	}
}
