package askproxy

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/config"

	"github.com/agentgate/agentgate/pkg/nodetest"
	"github.com/agentgate/agentgate/pkg/store/storetest"
)

// epoch is the test clock's time: far from any day the suite runs.
var epoch = storetest.Epoch

// builtin serves askproxy with its default, built-in upstream.
func builtin(t *testing.T) string {
	t.Helper()
	svc := New(config.Ask{}, func() time.Time { return epoch })
	srv := httptest.NewServer(Handler(svc.Server("test")))
	t.Cleanup(srv.Close)
	return srv.URL
}

// bigSession checks that id is what the built-in Q&A hands out: an integer
// above 2^53, which only a float-free path keeps whole.
func bigSession(t *testing.T, id string) {
	t.Helper()
	n, err := strconv.ParseUint(id, 10, 64)
	if err != nil || n <= 1<<53 {
		t.Errorf("session id %q: want an integer above 2^53", id)
	}
}

// TestBuiltinAnswersOverMCP: with no configuration, the go-sdk client at
// 2026-07-28 and 2025-11-25 gets both tools, and ask_docs answers a question
// about agentgate from its own docs, with citations and a session id above
// 2^53 that a follow-up keeps; an unknown session is a new one, with the
// warning.
func TestBuiltinAnswersOverMCP(t *testing.T) {
	url := builtin(t)
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
			cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			tools, err := cs.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range tools.Tools {
				names = append(names, tool.Name)
			}
			if slices.Sort(names); !slices.Equal(names, []string{AskDocsTool, RequirementsTool}) {
				t.Fatalf("tools %v", names)
			}
			ask := func(args map[string]any) AskOutput {
				t.Helper()
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: AskDocsTool, Arguments: args})
				if err != nil || res.IsError {
					t.Fatalf("ask_docs %v: %v %+v", args, err, res)
				}
				var out AskOutput
				data, _ := json.Marshal(res.StructuredContent)
				if err := json.Unmarshal(data, &out); err != nil {
					t.Fatal(err)
				}
				return out
			}
			first := ask(map[string]any{"question": "How do I run the tests?"})
			bigSession(t, first.SessionID)
			if len(first.Citations) == 0 || !strings.HasPrefix(first.Citations[0].URL, "README.md#") || !strings.Contains(first.Answer, "make test") {
				t.Errorf("first answer %+v", first)
			}
			next := ask(map[string]any{"question": "and what does it need installed?", "session_id": first.SessionID})
			if next.SessionID != first.SessionID || next.Warning != "" {
				t.Errorf("follow-up in %q (%q), want the same session, no warning", next.SessionID, next.Warning)
			}
			lost := ask(map[string]any{"question": "What is AGENT_NETWORK?", "session_id": "12345"})
			if lost.SessionID == "12345" || lost.Warning == "" {
				t.Errorf("unknown session: %+v, want a new one with the warning", lost)
			}
			bigSession(t, lost.SessionID)
		})
	}
}

// tsAsk is what testdata/tsask.mjs prints.
type tsAsk struct {
	ServerName string   `json:"serverName"`
	Tools      []string `json:"tools"`
	First      struct {
		IsError    bool      `json:"isError"`
		Text       string    `json:"text"`
		Structured AskOutput `json:"structured"`
	} `json:"first"`
	FollowUp struct {
		IsError    bool      `json:"isError"`
		Structured AskOutput `json:"structured"`
	} `json:"followUp"`
}

// runTSAsk runs testdata/tsask.mjs, the TypeScript SDK client, with env
// (MCP_URL, or MCP_COMMAND and MCP_ARGS), asking a question about the tests
// and a follow-up, and checks what it got from the built-in Q&A.
func runTSAsk(t *testing.T, env ...string) {
	t.Helper()
	var res tsAsk
	nodetest.RunJSON(t, filepath.Join("pkg", "askproxy", "testdata", "tsask.mjs"), &res,
		append(env, "QUESTION=How do I run the tests?", "FOLLOW_UP=and what does that install?")...)
	if res.ServerName != "agentgate-docs" || !slices.Equal(res.Tools, []string{AskDocsTool, RequirementsTool}) {
		t.Errorf("server %q, tools %v", res.ServerName, res.Tools)
	}
	first := res.First.Structured
	if res.First.IsError || !strings.Contains(res.First.Text, "make test") || len(first.Citations) == 0 {
		t.Errorf("first answer: %+v", res.First)
	}
	bigSession(t, first.SessionID)
	if res.FollowUp.IsError || res.FollowUp.Structured.SessionID != first.SessionID || res.FollowUp.Structured.Warning != "" {
		t.Errorf("follow-up %+v, want the session %s kept", res.FollowUp, first.SessionID)
	}
}

// TestTypeScriptClientAsks: the MCP TypeScript SDK client calls ask_docs
// over Streamable HTTP; its session id, a JavaScript number's
// unrepresentable integer, comes back byte-exact in the follow-up.
func TestTypeScriptClientAsks(t *testing.T) {
	runTSAsk(t, "MCP_URL="+builtin(t))
}

// TestBadRequestsAreAnsweredClearly: /ask/mcp refuses what it cannot read
// as agentgate's main MCP endpoint does, with an HTTP status and a JSON-RPC
// error in agentgate's words, never the SDK's Go-typed ones; an argument
// the tool's schema refuses is a tool error that names it.
func TestBadRequestsAreAnsweredClearly(t *testing.T) {
	url := builtin(t)
	for _, tc := range []struct {
		name, contentType, body string
		status                  int
		code                    int
		says                    string
	}{
		{"not JSON", "application/json", `{bad`, 400, -32700, "not valid JSON"},
		{"not JSON-RPC", "application/json", `{"hello":1}`, 400, -32600, ""},
		{"arguments not an object", "application/json", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask_docs","arguments":[]}}`, 400, -32602, "params.arguments must be a JSON object"},
		{"params of the wrong shape", "application/json", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}`, 400, -32602, "params"},
		{"not declared JSON", "text/plain", `{}`, 415, -32600, "Content-Type must be application/json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", tc.contentType)
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var answer struct {
				Error struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			data, _ := io.ReadAll(resp.Body)
			if err := json.Unmarshal(data, &answer); err != nil || resp.StatusCode != tc.status || answer.Error.Code != tc.code ||
				!strings.Contains(answer.Error.Message, tc.says) || strings.Contains(answer.Error.Message, "Go struct") {
				t.Errorf("%d %s, want %d with JSON-RPC error %d saying %q", resp.StatusCode, data, tc.status, tc.code, tc.says)
			}
		})
	}

	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for args, says := range map[string]string{`{}`: `missing properties: ["question"]`, `{"question":5}`: "question", `{"question":"  "}`: "question: required"} {
		var m map[string]any
		json.Unmarshal([]byte(args), &m)
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: AskDocsTool, Arguments: m})
		if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, says) {
			t.Errorf("arguments %s: %v %+v, want a tool error saying %q", args, err, res, says)
		}
	}
}
