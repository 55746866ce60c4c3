package mcpserver_test

import (
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/app/apptest"
	"github.com/agentgate/agentgate/pkg/mcpserver"
	"github.com/agentgate/agentgate/pkg/nodetest"
)

// tsResult is what testdata/tsclient.mjs prints.
type tsResult struct {
	ProtocolVersion   string                   `json:"protocolVersion"`
	SessionID         string                   `json:"sessionId"`
	Tools             []string                 `json:"tools"`
	Resources         []string                 `json:"resources"`
	ResourceTemplates []string                 `json:"resourceTemplates"`
	Prompts           []string                 `json:"prompts"`
	AgentsResource    string                   `json:"agentsResource"`
	StatusResource    string                   `json:"statusResource"`
	PromptMessages    int                      `json:"promptMessages"`
	Elicitations      int                      `json:"elicitations"`
	Dispatch          mcpserver.DispatchOutput `json:"dispatch"`
	DispatchIsError   bool                     `json:"dispatchIsError"`
	Final             *struct {
		Status string `json:"status"`
		Result string `json:"result"`
	} `json:"final"`
}

// runTSClient runs the TypeScript SDK client (@modelcontextprotocol/sdk
// 1.32.2, installed by `make deps` from package-lock.json) against url.
func runTSClient(t *testing.T, url, token, agentID, consent string) tsResult {
	t.Helper()
	var res tsResult
	runNode(t, "tsclient.mjs", &res, "MCP_URL="+url+mcpserver.Endpoint, "MCP_TOKEN="+token, "AGENT_ID="+agentID,
		"CONSENT="+consent, "INSTRUCTION=word-count one two three four")
	return res
}

// runNode runs testdata/script with node (nodetest.RunJSON).
func runNode(t *testing.T, script string, v any, env ...string) {
	t.Helper()
	nodetest.RunJSON(t, filepath.Join("pkg", "mcpserver", "testdata", script), v, env...)
}

// TestTypeScriptClient: the official TypeScript SDK client (which speaks
// 2025-11-25, sessions) lists and reads everything, gets the prompt, and
// completes a consented dispatch, its consent answered on another request
// than the one that asked, and its result fetched by resuming the stream.
func TestTypeScriptClient(t *testing.T) {
	for _, backend := range apptest.Backends {
		t.Run(backend, func(t *testing.T) {
			s := apptest.New(t, backend, nil)
			url := s.Serve()
			res := runTSClient(t, url, s.Key("alice", agentgate.ScopeUser), s.AgentID, "accept")

			if res.ProtocolVersion != mcpserver.Version20251125 || res.SessionID == "" {
				t.Errorf("protocol %q, session %q: want a 2025-11-25 session", res.ProtocolVersion, res.SessionID)
			}
			slices.Sort(res.Tools)
			if want := []string{"ask_docs", "dispatch_task", "get_agent_activity_summary", "get_execution_result", "list_recent_executions"}; !slices.Equal(res.Tools, want) {
				t.Errorf("tools %v", res.Tools)
			}
			if !slices.Equal(res.Resources, []string{"agentgate://agents"}) || !slices.Equal(res.ResourceTemplates, []string{"agentgate://agents/{agentId}/status"}) ||
				!slices.Equal(res.Prompts, []string{"delegate_task"}) || res.PromptMessages != 1 {
				t.Errorf("resources %v, templates %v, prompts %v (%d messages)", res.Resources, res.ResourceTemplates, res.Prompts, res.PromptMessages)
			}
			if !strings.Contains(res.AgentsResource, `"agentId": "sample-echo"`) || !strings.Contains(res.StatusResource, `"reachable": true`) {
				t.Errorf("agents %s\nstatus %s", res.AgentsResource, res.StatusResource)
			}
			if res.Elicitations != 1 || !res.Dispatch.Dispatched || res.DispatchIsError {
				t.Fatalf("asked %d times; dispatch %+v", res.Elicitations, res.Dispatch)
			}
			if res.Final == nil || res.Final.Status != "completed" || res.Final.Result != "4" {
				t.Errorf("final %+v, want completed with 4 words", res.Final)
			}
			if s.Sample.Received() != 1 {
				t.Errorf("the agent received %d messages, want 1", s.Sample.Received())
			}
		})
	}
}

// TestTypeScriptClientDeclines: the TypeScript client's user says no, or
// dismisses the question: nothing reaches the agent, and the result says so.
func TestTypeScriptClientDeclines(t *testing.T) {
	s := apptest.New(t, "embedded", nil)
	url := s.Serve()
	key := s.Key("alice", agentgate.ScopeUser)
	for _, consent := range []string{"decline", "cancel"} {
		res := runTSClient(t, url, key, s.AgentID, consent)
		if res.Dispatch.Dispatched || !res.DispatchIsError || !strings.Contains(res.Dispatch.Reason, "nothing was dispatched") || res.Final != nil {
			t.Errorf("%s: dispatch %+v (isError %v)", consent, res.Dispatch, res.DispatchIsError)
		}
	}
	if s.Sample.Received() != 0 {
		t.Errorf("the agent received %d messages after refusals", s.Sample.Received())
	}
}

// tsConnectorResult is what testdata/tsconnector.mjs prints.
type tsConnectorResult struct {
	ProtocolVersion string   `json:"protocolVersion"`
	Capabilities    []string `json:"capabilities"`
	Tools           []string `json:"tools"`
	Lists           map[string]struct {
		Items int    `json:"items"`
		Error string `json:"error"`
	} `json:"lists"`
	Refused      map[string]*string        `json:"refused"`
	Playbooks    []string                  `json:"playbooks"`
	Run          *mcpserver.PlaybookOutput `json:"run"`
	RunIsError   bool                      `json:"runIsError"`
	Ask          *mcpserver.ChatOutput     `json:"ask"`
	AskIsError   bool                      `json:"askIsError"`
	BadInput     *mcpserver.PlaybookOutput `json:"badInput"`
	Elicitations int                       `json:"elicitations"`
}

// TestTypeScriptConnector: the official TypeScript SDK client (2025-11-25,
// a session in the table) with a connector key, on both stores and through
// instances that change under every request: it sees the three connector
// tools and nothing else, lists the playbooks, runs one and asks, each
// approved in one consent question, and its results pass the SDK's own
// check against the tools' output schemas.
func TestTypeScriptConnector(t *testing.T) {
	for _, where := range []string{"embedded", "dynamodb", "dynamodb/rotating"} {
		t.Run(where, func(t *testing.T) {
			s := apptest.New(t, strings.TrimSuffix(where, "/rotating"), nil)
			url := s.Serve()
			if strings.HasSuffix(where, "/rotating") {
				srv := httptest.NewServer(newRotatingProxy(s))
				t.Cleanup(srv.Close)
				url = srv.URL
			}
			var res tsConnectorResult
			runNode(t, "tsconnector.mjs", &res, "MCP_URL="+url+mcpserver.Endpoint, "MCP_TOKEN="+s.ConnectorKey())

			if res.ProtocolVersion != mcpserver.Version20251125 {
				t.Errorf("protocol %q", res.ProtocolVersion)
			}
			if want := []string{"ask", "list_playbooks", "run_playbook"}; !slices.Equal(res.Tools, want) {
				t.Errorf("tools %v, want %v", res.Tools, want)
			}
			if slices.Contains(res.Capabilities, "resources") || slices.Contains(res.Capabilities, "prompts") {
				t.Errorf("capabilities %v", res.Capabilities)
			}
			if len(res.Lists) != 3 {
				t.Errorf("lists %v", res.Lists)
			}
			for what, l := range res.Lists {
				if l.Items != 0 {
					t.Errorf("%s: %d listed", what, l.Items)
				}
			}
			for what, err := range res.Refused {
				if err == nil {
					t.Errorf("%s went through", what)
				}
			}
			if !slices.Equal(res.Playbooks, []string{"echo", "reverse", "word-count", "slow"}) {
				t.Errorf("playbooks %v", res.Playbooks)
			}
			if res.Run == nil || res.RunIsError || !res.Run.Dispatched || res.Run.Reply != "desserts" || res.Run.Status != "completed" {
				t.Errorf("run_playbook %+v (isError %v)", res.Run, res.RunIsError)
			}
			if res.Ask == nil || res.AskIsError || !res.Ask.Dispatched || res.Ask.Reply != "4" {
				t.Errorf("ask %+v (isError %v)", res.Ask, res.AskIsError)
			}
			if res.BadInput == nil || res.BadInput.Dispatched || !strings.Contains(res.BadInput.Reason, "maximum: 100 is greater than 20") {
				t.Errorf("bad input %+v", res.BadInput)
			}
			if res.Elicitations != 2 || s.Sample.Received() != 2 {
				t.Errorf("asked %d times, agent received %d: want 2 and 2", res.Elicitations, s.Sample.Received())
			}
		})
	}
}
