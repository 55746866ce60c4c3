//go:build linux

package functions_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/askproxy"
	"github.com/agentgate/agentgate/pkg/store/dynamo/dynalite"
)

// TestAskProxyUnderLambda: the askproxy bootstrap, with no configuration
// but its table (for the rate windows), answers docs questions from the
// docs embedded in it, on two Lambda instances behind the test gateway, to
// the go-sdk client at 2026-07-28 and 2025-11-25. A follow-up that reaches
// the other instance is answered in a new session, with the warning that
// the earlier context was lost; one that reaches the same instance keeps
// its session: the warning is there exactly when the session changed.
func TestAskProxyUnderLambda(t *testing.T) {
	rie := findRIE(t)
	db := dynalite.Start(t)
	bootstrap := buildBootstrap(t, t.TempDir(), "functions/askproxy")
	env := lambdaEnv(db, db.NewTable(t), "askproxy", nil)
	gw := newGateway(t, []*instance{
		{name: "A", fn: startRIE(t, rie, bootstrap, env)},
		{name: "B", fn: startRIE(t, rie, bootstrap, env)},
	})
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
			cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: gw.URL + askproxy.MCPPath}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			ask := func(args map[string]any) askproxy.AskOutput {
				t.Helper()
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: askproxy.AskDocsTool, Arguments: args})
				if err != nil || res.IsError {
					t.Fatalf("ask_docs: %v %+v", err, res)
				}
				var out askproxy.AskOutput
				data, _ := json.Marshal(res.StructuredContent)
				json.Unmarshal(data, &out)
				return out
			}
			first := ask(map[string]any{"question": "How do I run the tests?"})
			if len(first.Citations) == 0 || !strings.Contains(first.Answer, "make test") {
				t.Errorf("answer %+v", first)
			}
			for range 3 {
				next := ask(map[string]any{"question": "and what does it install?", "session_id": first.SessionID})
				if changed := next.SessionID != first.SessionID; changed != (next.Warning != "") {
					t.Errorf("follow-up of %s in %s with warning %q: the warning must come exactly when the session changes", first.SessionID, next.SessionID, next.Warning)
				}
			}
		})
	}
}
