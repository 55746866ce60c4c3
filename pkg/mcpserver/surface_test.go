package mcpserver_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/app/apptest"
	"github.com/agentgate/agentgate/pkg/mcpserver"
)

// TestOlderSessionVersions: 2025-06-18 and 2025-03-26 clients get sessions
// too, and consent works wherever the client declares elicitation (the Go
// client declares it at 2025-03-26 as well, and the gate goes by what a
// client declares).
func TestOlderSessionVersions(t *testing.T) {
	s := apptest.New(t, "dynamodb", nil)
	url := s.Serve()
	key := s.Key("alice", agentgate.ScopeUser)
	for _, tc := range []struct {
		version    string
		dispatched bool
	}{{"2025-06-18", true}, {"2025-03-26", true}} {
		t.Run(tc.version, func(t *testing.T) {
			cs := client(t, url, key, tc.version, approve, nil)
			if got := cs.InitializeResult().ProtocolVersion; got != tc.version {
				t.Fatalf("negotiated %s", got)
			}
			if tools, err := cs.ListTools(t.Context(), nil); err != nil || len(tools.Tools) != len(mcpserver.UserToolNames) {
				t.Fatalf("tools: %v", err)
			}
			out, _ := dispatch(t, cs, map[string]any{"agentId": s.AgentID, "instruction": "echo " + tc.version})
			if out.Dispatched != tc.dispatched {
				t.Errorf("dispatched %v, want %v: %+v", out.Dispatched, tc.dispatched, out)
			}
		})
	}
	if got := s.Sample.Received(); got != 2 {
		t.Errorf("the agent received %d messages, want 2", got)
	}
}

// TestSessionAcrossInstances: initialize on one instance, call on another,
// DELETE on a third; after that, the session is gone everywhere.
func TestSessionAcrossInstances(t *testing.T) {
	s := apptest.New(t, "dynamodb", nil)
	urls := []string{s.Serve(), s.Serve(), s.Serve()}
	key := s.Key("alice", agentgate.ScopeUser)
	do := func(method, url, session, body string) *http.Response {
		req, _ := http.NewRequest(method, url+mcpserver.Endpoint, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+key)
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	init := do(http.MethodPost, urls[0], "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	sid := init.Header.Get("Mcp-Session-Id")
	if r := do(http.MethodPost, urls[1], sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); r.StatusCode != 202 {
		t.Fatalf("initialized on instance 2: %d", r.StatusCode)
	}
	if r := do(http.MethodPost, urls[1], sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); r.StatusCode != 200 {
		t.Fatalf("tools/list on instance 2: %d", r.StatusCode)
	}
	if r := do(http.MethodDelete, urls[2], sid, ""); r.StatusCode != 204 {
		t.Fatalf("DELETE on instance 3: %d", r.StatusCode)
	}
	for i, url := range urls {
		if r := do(http.MethodPost, url, sid, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`); r.StatusCode != 404 {
			t.Errorf("instance %d after DELETE: %d, want 404", i+1, r.StatusCode)
		}
	}
	if r := do(http.MethodGet, urls[0], sid, ""); r.StatusCode != 405 {
		t.Errorf("GET without Last-Event-ID: %d, want 405", r.StatusCode)
	}
}

// TestAllowLists: what is not allowed (here ask_docs and dispatch_task among
// the tools) is not registered, not listed and
// its capability not advertised.
func TestAllowLists(t *testing.T) {
	s := apptest.New(t, "embedded", map[string]string{
		"MCP_TOOLS": "get_execution_result,list_recent_executions", "MCP_RESOURCES": "none", "MCP_PROMPTS": "none",
	})
	cs := client(t, s.Serve(), s.Key("alice", agentgate.ScopeUser), "", nil, nil)
	caps := cs.InitializeResult().Capabilities
	if caps.Tools == nil || caps.Resources != nil || caps.Prompts != nil {
		t.Errorf("capabilities %+v: want tools only", caps)
	}
	if caps.Tools.ListChanged {
		t.Error("tools advertise listChanged: a Lambda cannot hold the stream a client would open for it")
	}
	_, names := toolNames(t, cs)
	if !slices.Equal(names, []string{"get_execution_result", "list_recent_executions"}) {
		t.Errorf("tools %v", names)
	}
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "dispatch_task", Arguments: map[string]any{"agentId": s.AgentID, "instruction": "echo"}}); err == nil {
		t.Error("a tool that is not allowed was called")
	}
	if s.Sample.Received() != 0 {
		t.Error("the agent was reached")
	}

	if _, err := mcpserver.New(mcpserver.Options{ConsentSecret: []byte(apptest.ConsentSecret), Tools: []string{"dispatch_task", "rm_rf"}}); err == nil || !strings.Contains(err.Error(), `unknown tool "rm_rf"`) {
		t.Errorf("an unknown tool in the allow-list: %v", err)
	}
}

// TestConsentDisabled: REQUIRE_DISPATCH_CONSENT=false dispatches without
// asking, even for a client that cannot be asked.
func TestConsentDisabled(t *testing.T) {
	s := apptest.New(t, "embedded", map[string]string{"REQUIRE_DISPATCH_CONSENT": "false"})
	cs := client(t, s.Serve(), s.Key("alice", agentgate.ScopeUser), mcpserver.Version20251125, nil, nil)
	out, _ := dispatch(t, cs, map[string]any{"agentId": s.AgentID, "instruction": "echo trusted"})
	if !out.Dispatched || s.Sample.Received() != 1 {
		t.Errorf("dispatch %+v, agent received %d", out, s.Sample.Received())
	}
}

// TestWhoSeesWhat: a caller sees its own tasks; the agent's owner sees all
// of the agent's. (A connector key sees its connector tools alone:
// TestConnectorSeesNothingElse.)
func TestWhoSeesWhat(t *testing.T) {
	s := apptest.New(t, "dynamodb", map[string]string{"REQUIRE_DISPATCH_CONSENT": "false"})
	url := s.Serve()
	alice := client(t, url, s.Key("alice", agentgate.ScopeUser), "", nil, nil)
	bob := client(t, url, s.Key("bob", agentgate.ScopeUser), "", nil, nil)
	owner := client(t, url, s.Key("owner", agentgate.ScopeUser), "", nil, nil)

	out, _ := dispatch(t, alice, map[string]any{"agentId": s.AgentID, "instruction": "echo mine", "taskId": "alice-1"})
	if !out.Dispatched {
		t.Fatalf("dispatch %+v", out)
	}
	list := func(cs *mcp.ClientSession, args map[string]any) []string {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "list_recent_executions", Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("list: %v %v", err, res)
		}
		var page mcpserver.ListExecutionsOutput
		structured(t, res, &page)
		var ids []string
		for _, e := range page.Executions {
			ids = append(ids, e.TaskID)
		}
		return ids
	}
	if got := list(alice, nil); !slices.Equal(got, []string{"alice-1"}) {
		t.Errorf("alice sees %v", got)
	}
	if got := list(bob, map[string]any{"agentId": s.AgentID}); len(got) != 0 {
		t.Errorf("bob sees %v", got)
	}
	if got := list(owner, map[string]any{"agentId": s.AgentID}); !slices.Equal(got, []string{"alice-1"}) {
		t.Errorf("the owner sees %v", got)
	}
	res, err := bob.CallTool(t.Context(), &mcp.CallToolParams{Name: "get_execution_result", Arguments: map[string]any{"taskId": "alice-1"}})
	if err != nil || !res.IsError {
		t.Errorf("bob read alice's task: %+v %v", res, err)
	}
	// An unknown agent is the same not-found answer everywhere.
	for _, tool := range []string{"list_recent_executions", "get_agent_activity_summary"} {
		res, err := bob.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"agentId": "no-such-agent"}})
		if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `no agent "no-such-agent"`) {
			t.Errorf("%s of an unknown agent: %+v %v", tool, res, err)
		}
	}
	refused, _ := dispatch(t, bob, map[string]any{"agentId": "no-such-agent", "instruction": "echo"})
	if refused.Dispatched || !strings.Contains(refused.Reason, `no agent "no-such-agent"`) {
		t.Errorf("dispatch to an unknown agent: %+v", refused)
	}
}

// TestAuditLog: each dispatch and consent answer leaves a structured audit
// record with caller, agent, taskId and outcome, and never the instruction.
func TestAuditLog(t *testing.T) {
	var buf syncBuffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewJSONHandler(&buf, nil)))
	defer slog.SetDefault(prev)

	s := apptest.New(t, "embedded", nil)
	url := s.Serve()
	key := s.Key("alice", agentgate.ScopeUser)
	const secretInstruction = "reverse the-instruction-text-must-not-be-logged"
	cs := client(t, url, key, mcpserver.Version20251125, approve, nil)
	dispatch(t, cs, map[string]any{"agentId": s.AgentID, "instruction": secretInstruction, "taskId": "audit-1"})
	declining := client(t, url, key, mcpserver.Version20260728, answer("decline", nil), nil)
	dispatch(t, declining, map[string]any{"agentId": s.AgentID, "instruction": secretInstruction, "taskId": "audit-2"})

	logs := buf.String()
	if strings.Contains(logs, "the-instruction-text-must-not-be-logged") {
		t.Fatal("the instruction text reached the logs")
	}
	events := map[string]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == "audit" {
			events[rec["event"].(string)+"/"+rec["task_id"].(string)] = rec
		}
	}
	for _, want := range []struct{ event, task, outcome string }{
		{"consent_requested", "audit-1", "pending"},
		{"consent_accepted", "audit-1", "accepted"},
		{"dispatch", "audit-1", "dispatched"},
		{"consent_requested", "audit-2", "pending"},
		{"consent_refused", "audit-2", "declined"},
	} {
		rec, ok := events[want.event+"/"+want.task]
		if !ok {
			t.Errorf("no %s audit record for %s; have %v", want.event, want.task, keys(events))
			continue
		}
		if rec["caller"] != "alice" || rec["agent"] != s.AgentID || rec["outcome"] != want.outcome ||
			rec["instruction_bytes"] != float64(len(secretInstruction)) || len(rec["instruction_sha256"].(string)) != 64 {
			t.Errorf("%s/%s: %v", want.event, want.task, rec)
		}
	}
}

func keys(m map[string]map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestTaskIDFreeAfterUnusableAgent: a dispatch refused because its agent is
// not the caller's to use leaves its taskId free (its question, recorded
// while the agent was read, is withdrawn): the same taskId then dispatches
// to the right agent.
func TestTaskIDFreeAfterUnusableAgent(t *testing.T) {
	s := apptest.New(t, "embedded", nil)
	url := s.Serve()
	key := s.Key("alice", agentgate.ScopeUser)
	for _, version := range []string{mcpserver.Version20260728, mcpserver.Version20251125} {
		cs := client(t, url, key, version, approve, nil)
		taskID := "typo-" + version
		refused, _ := dispatch(t, cs, map[string]any{"agentId": "no-such-agent", "instruction": "echo hi", "taskId": taskID})
		if refused.Dispatched || !strings.Contains(refused.Reason, `no agent "no-such-agent"`) {
			t.Fatalf("%s: dispatch to an unknown agent: %+v", version, refused)
		}
		out, res := dispatch(t, cs, map[string]any{"agentId": s.AgentID, "instruction": "echo hi", "taskId": taskID})
		if !out.Dispatched || out.Replayed {
			t.Errorf("%s: the same taskId to the right agent: %+v %v", version, out, res.Content)
		}
	}
}
