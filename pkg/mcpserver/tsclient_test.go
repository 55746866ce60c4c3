package mcpserver_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/app/apptest"
	"github.com/agentgate/agentgate/pkg/mcpserver"
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
// 1.32.2, installed by `make deps` from package-lock.json) against url. With
// CI=true a missing node or SDK fails the test; elsewhere it skips it.
func runTSClient(t *testing.T, url, token, agentID, consent string) tsResult {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	if _, serr := os.Stat(filepath.Join(root, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil || serr != nil {
		msg := "node or @modelcontextprotocol/sdk is missing; run make deps"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	cmd := exec.CommandContext(t.Context(), node, filepath.Join("pkg", "mcpserver", "testdata", "tsclient.mjs"))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "MCP_URL="+url+mcpserver.Endpoint, "MCP_TOKEN="+token, "AGENT_ID="+agentID,
		"CONSENT="+consent, "INSTRUCTION=word-count one two three four")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("tsclient: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	var res tsResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("tsclient printed %q: %v\nstderr: %s", stdout.String(), err, stderr.String())
	}
	return res
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
			if want := []string{"dispatch_task", "get_agent_activity_summary", "get_execution_result", "list_recent_executions"}; !slices.Equal(res.Tools, want) {
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
