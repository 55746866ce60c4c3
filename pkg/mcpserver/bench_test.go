package mcpserver_test

// BenchmarkMCP measures the MCP endpoint end to end (the official Go SDK
// client -> httptest server -> security chain -> MCP server -> store), on
// both stores and both protocol generations, and reports per operation the
// store calls (reads/op: Get and Query; writes/op: Create, Put, Update,
// Delete and Add) and the HTTP requests (http/op) it took.
//
// The stack is apptest's, whose rate limits are off (RATE_LIMIT_*=off): in
// a deployment every HTTP request also costs its two rate windows, one
// store.Add each (pkg/ratelimit). The calls are reported, not written down
// here: hand counts went stale each time the request path changed. The
// depth and calls of each request kind, with the rate limits on, are
// asserted by pkg/app's TestStoreDepth, and docs/architecture.md says what
// each call is for.
//
// run-playbook (a connector key's run_playbook) and chat-with (a user's
// chat_with_<slug> to the exposed agent) are consented turns that wait for
// the agent's answer (the sample agent's reverse, done at once). A
// connector key's every request also reads its agent and its connector
// configuration (AGENT#<name>/AGENT and /CONNECTOR: is the key still the
// connector's current one, the connector enabled?), concurrently with the
// session's read on a legacy session; a user's request reads the exposure
// set only when the instance's copy is older than 2 s (about 0.02 R/op
// here). What the agent's first answer says is a race: when it says
// "working" rather than "completed", the call follows the task (GetTask)
// and records its end, 1 R + 3 W more (the execution read and updated, the
// running count up and down); the figures are averages over both paths.
//
// The timings include the sample agent's HTTP round trip for dispatches
// and, for dynamodb, dynalite's (a local Node process: neither DynamoDB's
// latency nor its cost).

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/app/apptest"
	"github.com/agentgate/agentgate/pkg/logging"
	"github.com/agentgate/agentgate/pkg/mcpserver"
	"github.com/agentgate/agentgate/pkg/store"
	"github.com/agentgate/agentgate/pkg/store/storetest"
)

func BenchmarkMCP(b *testing.B) {
	// Log as deployed (JSON at info: the request log and the audit lines
	// are part of the cost), but to nowhere.
	prev := slog.Default()
	slog.SetDefault(logging.New(io.Discard, slog.LevelInfo))
	b.Cleanup(func() { slog.SetDefault(prev) })

	versions := []string{mcpserver.Version20260728, mcpserver.Version20251125}
	cases := []struct {
		name string
		// op is one operation; i numbers it, from 0 for the warm-up.
		op func(b *testing.B, cs *mcp.ClientSession, s *apptest.Stack, i int)
	}{
		{"tools-list", benchListTools},
		{"tools-call", benchCallTool},
		{"dispatch", benchDispatch},
		{"run-playbook", benchRunPlaybook},
		{"chat-with", benchChatWith},
	}
	for _, backend := range apptest.Backends {
		b.Run(backend, func(b *testing.B) {
			for _, tc := range cases {
				for _, version := range versions {
					b.Run(tc.name+"/"+version, func(b *testing.B) {
						benchOp(b, backend, version, tc.op)
					})
				}
			}
		})
	}
}

// benchOp builds a stack on backend, connects a client at version, runs op
// once to warm up, then b.N times, and reports the store calls and HTTP
// requests per op.
func benchOp(b *testing.B, backend, version string, op func(*testing.B, *mcp.ClientSession, *apptest.Stack, int)) {
	s := apptest.New(b, backend, nil)
	var counted *storetest.Counting
	h := s.Wrap(func(st store.Store) store.Store {
		counted = storetest.Count(st)
		return counted
	})
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		h.ServeHTTP(w, r)
	}))
	b.Cleanup(srv.Close)
	var key string
	switch {
	case strings.HasPrefix(b.Name(), "BenchmarkMCP/"+backend+"/run-playbook/"):
		key = s.ConnectorKey()
	case strings.HasPrefix(b.Name(), "BenchmarkMCP/"+backend+"/chat-with/"):
		s.Expose(true)
		key = s.Key("alice", agentgate.ScopeUser)
	default:
		key = s.Key("alice", agentgate.ScopeUser)
	}
	cs := benchClient(b, srv.URL, key, version)

	op(b, cs, s, 0) // warm-up: the SDK's schema caches, kept-alive connections
	reads, writes, reqs := counted.Reads(), counted.Writes(), requests.Load()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		op(b, cs, s, i)
	}
	n := float64(b.N)
	b.ReportMetric(float64(counted.Reads()-reads)/n, "reads/op")
	b.ReportMetric(float64(counted.Writes()-writes)/n, "writes/op")
	b.ReportMetric(float64(requests.Load()-reqs)/n, "http/op")
}

// benchClient is the official Go SDK client at version, with token,
// approving every consent.
func benchClient(b *testing.B, url, token, version string) *mcp.ClientSession {
	b.Helper()
	return apptest.MCPClient(b, url, token, version, apptest.Approve)
}

func benchListTools(b *testing.B, cs *mcp.ClientSession, _ *apptest.Stack, _ int) {
	res, err := cs.ListTools(b.Context(), nil)
	if err != nil {
		b.Fatal(err)
	}
	if len(res.Tools) != len(mcpserver.UserToolNames) {
		b.Fatalf("%d tools, want %d", len(res.Tools), len(mcpserver.UserToolNames))
	}
}

// benchCallTool is the non-dispatch call: get_agent_activity_summary with
// no arguments (one Query of the caller's executions).
func benchCallTool(b *testing.B, cs *mcp.ClientSession, _ *apptest.Stack, _ int) {
	res, err := cs.CallTool(b.Context(), &mcp.CallToolParams{Name: "get_agent_activity_summary", Arguments: map[string]any{}})
	if err != nil {
		b.Fatal(err)
	}
	if res.IsError {
		b.Fatalf("get_agent_activity_summary: %v", res.Content)
	}
}

// benchDispatch is a full consented dispatch_task under a new taskId, so
// that each one reaches the sample agent. The task is the sample agent's
// "slow 1": like a real agent's, it is still running when dispatch_task
// returns (the dispatch does not wait for the work), so that every op takes
// the same path (the execution is recorded as running, which costs the
// agent's running count one write). A task the agent finishes at once
// ("reverse ...") would make that write depend on whether the agent's
// first answer already says completed, a race.
func benchDispatch(b *testing.B, cs *mcp.ClientSession, s *apptest.Stack, i int) {
	taskID := fmt.Sprintf("bench-%d", i)
	res, err := cs.CallTool(b.Context(), &mcp.CallToolParams{Name: "dispatch_task",
		Arguments: map[string]any{"agentId": s.AgentID, "instruction": "slow 1", "taskId": taskID}})
	if err != nil {
		b.Fatalf("dispatch_task: %v", err)
	}
	data, err := json.Marshal(res.StructuredContent)
	if err != nil {
		b.Fatal(err)
	}
	var out mcpserver.DispatchOutput
	if err := json.Unmarshal(data, &out); err != nil {
		b.Fatalf("structured content %s: %v", data, err)
	}
	if res.IsError || !out.Dispatched || out.TaskID != taskID || out.Replayed || (out.Status != "submitted" && out.Status != "working") {
		b.Fatalf("dispatch %s: %+v %v", taskID, out, res.Content)
	}
	if got := s.Sample.Received(); got != int64(i)+1 {
		b.Fatalf("the agent received %d tasks after dispatch %d, want %d", got, i, i+1)
	}
}

// benchRunPlaybook is a consented run_playbook of a connector key: the
// sample agent's reverse, which it finishes at once, so that the call
// returns its result.
func benchRunPlaybook(b *testing.B, cs *mcp.ClientSession, s *apptest.Stack, i int) {
	benchTurn(b, cs, s, i, "run_playbook", map[string]any{"name": "reverse", "input": fmt.Sprintf("bench %d", i)})
}

// benchChatWith is a consented chat_with_<slug> call of a user, to the
// exposed sample agent.
func benchChatWith(b *testing.B, cs *mcp.ClientSession, s *apptest.Stack, i int) {
	benchTurn(b, cs, s, i, "chat_with_sample_echo", map[string]any{"message": fmt.Sprintf("reverse bench %d", i)})
}

func benchTurn(b *testing.B, cs *mcp.ClientSession, s *apptest.Stack, i int, tool string, args map[string]any) {
	res, err := cs.CallTool(b.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		b.Fatalf("%s: %v", tool, err)
	}
	data, err := json.Marshal(res.StructuredContent)
	if err != nil {
		b.Fatal(err)
	}
	var out mcpserver.PlaybookOutput
	if err := json.Unmarshal(data, &out); err != nil {
		b.Fatalf("structured content %s: %v", data, err)
	}
	if want := reverse(fmt.Sprintf("bench %d", i)); res.IsError || !out.Dispatched || out.Status != "completed" || out.Reply != want {
		b.Fatalf("%s %d: %+v %v", tool, i, out, res.Content)
	}
	if got := s.Sample.Received(); got != int64(i)+1 {
		b.Fatalf("the agent received %d messages after call %d, want %d", got, i, i+1)
	}
}
