package askproxy

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAskDocsOverMCP: the go-sdk client, at 2026-07-28 and at 2025-11-25,
// calls ask_docs on the stateless handler; a big-integer session id goes
// out and back through MCP byte-exact; a changed session is a warning; an
// upstream failure and an oversized question are tool errors that say
// which, the latter without an upstream call.
func TestAskDocsOverMCP(t *testing.T) {
	const big = "98765432109876543210"
	session := big
	var calls int
	var sent []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		body, _ := io.ReadAll(r.Body)
		sent = append(sent, string(body))
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(string(body), "fail please") {
			io.WriteString(w, `{"state":"FAILED"}`)
			return
		}
		fmt.Fprintf(w, `{"state":"SUCCEEDED","answer":"agentgate is a front door","session_id":%s,"citations":[{"title":"README","url":"https://example.com/readme"}]}`, session)
	}))
	t.Cleanup(up.Close)
	mcpSrv := httptest.NewServer(Handler(NewServer(&Client{Endpoint: up.URL}, "test")))
	t.Cleanup(mcpSrv.Close)

	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			session, calls = big, 0
			c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
			cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: mcpSrv.URL}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if got := cs.InitializeResult().ProtocolVersion; got != version {
				t.Fatalf("negotiated %s", got)
			}
			tools, err := cs.ListTools(t.Context(), nil)
			if err != nil || len(tools.Tools) != 1 || tools.Tools[0].Name != AskDocsTool {
				t.Fatalf("tools %+v, %v", tools, err)
			}
			ask := func(args map[string]any) (AskOutput, *mcp.CallToolResult) {
				t.Helper()
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: AskDocsTool, Arguments: args})
				if err != nil {
					t.Fatal(err)
				}
				var out AskOutput
				data, _ := json.Marshal(res.StructuredContent)
				json.Unmarshal(data, &out)
				return out, res
			}
			out, _ := ask(map[string]any{"question": "what is agentgate?"})
			if out.SessionID != big || out.Answer != "agentgate is a front door" || len(out.Citations) != 1 || out.Warning != "" {
				t.Fatalf("first answer %+v", out)
			}
			out, _ = ask(map[string]any{"question": "and then?", "session_id": out.SessionID})
			if last := sent[len(sent)-1]; !strings.Contains(last, `"session_id":`+big+`}`) || out.Warning != "" {
				t.Errorf("follow-up sent %s, answered %+v", last, out)
			}
			session = big + "7"
			out, res := ask(map[string]any{"question": "more?", "session_id": big})
			if out.SessionID != big+"7" || out.Warning == "" || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "earlier context") {
				t.Errorf("expired session: %+v", out)
			}
			before := calls
			_, res = ask(map[string]any{"question": strings.Repeat("q", MaxQuestionChars+1)})
			if !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "over the limit of 4000") || calls != before {
				t.Errorf("oversized question: %+v, %d upstream calls", res.Content, calls-before)
			}
			_, res = ask(map[string]any{"question": "fail please"})
			if text := res.Content[0].(*mcp.TextContent).Text; !res.IsError || !strings.Contains(text, "(state)") || strings.Contains(text, "127.0.0.1") {
				t.Errorf("upstream failure: %q", text)
			}
		})
	}
}
