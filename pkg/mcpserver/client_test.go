package mcpserver_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/app/apptest"
	"github.com/agentgate/agentgate/pkg/mcpserver"
	"github.com/agentgate/agentgate/pkg/store/dynamo/dynalite"
)

func TestMain(m *testing.M) {
	code := m.Run()
	dynalite.Stop()
	os.Exit(code)
}

// consentAnswer is what a test's user answers to a consent question.
type consentAnswer = apptest.Elicit

var approve = apptest.Approve

// client connects the official Go SDK client (apptest.MCPClient); asked,
// if set, counts the consent questions.
func client(t *testing.T, url, token, version string, answer consentAnswer, asked *atomic.Int64) *mcp.ClientSession {
	t.Helper()
	if answer != nil && asked != nil {
		inner := answer
		answer = func(req *mcp.ElicitRequest) (*mcp.ElicitResult, error) { asked.Add(1); return inner(req) }
	}
	return apptest.MCPClient(t, url, token, version, answer)
}

var structured = apptest.Structured

// dispatch calls dispatch_task and decodes its result.
func dispatch(t *testing.T, cs *mcp.ClientSession, args map[string]any) (mcpserver.DispatchOutput, *mcp.CallToolResult) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "dispatch_task", Arguments: args})
	if err != nil {
		t.Fatalf("dispatch_task: %v", err)
	}
	var out mcpserver.DispatchOutput
	structured(t, res, &out)
	return out, res
}

// await polls get_execution_result until the task is done.
func await(t *testing.T, cs *mcp.ClientSession, taskID string) mcpserver.ExecutionResultOutput {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "get_execution_result", Arguments: map[string]any{"taskId": taskID}})
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError {
			t.Fatalf("get_execution_result: %v", res.Content)
		}
		var out mcpserver.ExecutionResultOutput
		structured(t, res, &out)
		if out.Done || time.Now().After(deadline) {
			return out
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestGoClientSession drives the whole surface with the official Go
// client, at 2026-07-28 (stateless, MRTR consent) and at 2025-11-25
// (session in the table, consent as an elicitation on the tools/call
// stream, resumed with GET), on both stores: list and read everything, get
// the prompt, dispatch with consent and poll to completion.
func TestGoClientSession(t *testing.T) {
	for _, backend := range apptest.Backends {
		for _, version := range []string{mcpserver.Version20260728, mcpserver.Version20251125} {
			t.Run(backend+"/"+version, func(t *testing.T) {
				s := apptest.New(t, backend, nil)
				url := s.Serve()
				var asked atomic.Int64
				cs := client(t, url, s.Key("alice", agentgate.ScopeUser), version, approve, &asked)
				if got := cs.InitializeResult().ProtocolVersion; got != version {
					t.Fatalf("negotiated %s, want %s", got, version)
				}

				tools, names := toolNames(t, cs)
				if want := []string{"ask_docs", "dispatch_task", "get_agent_activity_summary", "get_execution_result", "list_recent_executions"}; !slices.Equal(names, want) {
					t.Errorf("tools %v, want %v", names, want)
				}
				for _, tool := range tools.Tools {
					if tool.Name == "dispatch_task" && (tool.Annotations == nil || tool.Annotations.DestructiveHint == nil || !*tool.Annotations.DestructiveHint ||
						tool.Annotations.OpenWorldHint == nil || !*tool.Annotations.OpenWorldHint) {
						t.Errorf("dispatch_task annotations %+v: want destructive and open-world", tool.Annotations)
					}
				}
				resources, err := cs.ListResources(t.Context(), nil)
				if err != nil || len(resources.Resources) != 1 || resources.Resources[0].URI != "agentgate://agents" {
					t.Fatalf("resources %+v, %v", resources, err)
				}
				templates, err := cs.ListResourceTemplates(t.Context(), nil)
				if err != nil || len(templates.ResourceTemplates) != 1 || templates.ResourceTemplates[0].URITemplate != "agentgate://agents/{agentId}/status" {
					t.Fatalf("templates %+v, %v", templates, err)
				}
				prompts, err := cs.ListPrompts(t.Context(), nil)
				if err != nil || len(prompts.Prompts) != 1 || prompts.Prompts[0].Name != "delegate_task" {
					t.Fatalf("prompts %+v, %v", prompts, err)
				}

				agents, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "agentgate://agents"})
				if err != nil {
					t.Fatal(err)
				}
				var listed []mcpserver.AgentView
				if err := json.Unmarshal([]byte(agents.Contents[0].Text), &listed); err != nil || len(listed) != 1 ||
					listed[0].AgentID != s.AgentID || !listed[0].Status.Reachable {
					t.Fatalf("agents %s (%v)", agents.Contents[0].Text, err)
				}
				status, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "agentgate://agents/" + s.AgentID + "/status"})
				if err != nil || !strings.Contains(status.Contents[0].Text, `"reachable": true`) {
					t.Fatalf("status %+v, %v", status, err)
				}
				if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "agentgate://agents/nobody/status"}); err == nil {
					t.Error("the status of an unknown agent was read")
				}
				prompt, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "delegate_task", Arguments: map[string]string{"agentId": s.AgentID, "goal": "count my words"}})
				if err != nil || len(prompt.Messages) != 1 || !strings.Contains(prompt.Messages[0].Content.(*mcp.TextContent).Text, "dispatch_task") {
					t.Fatalf("prompt %+v, %v", prompt, err)
				}

				out, res := dispatch(t, cs, map[string]any{"agentId": s.AgentID, "instruction": "reverse stressed"})
				if !out.Dispatched || out.TaskID == "" || res.IsError {
					t.Fatalf("dispatch: %+v %v", out, res.Content)
				}
				if asked.Load() != 1 || s.Sample.Received() != 1 {
					t.Errorf("asked %d times, agent received %d; want 1 and 1", asked.Load(), s.Sample.Received())
				}
				done := await(t, cs, out.TaskID)
				if done.Status != "completed" || done.Result != "desserts" {
					t.Errorf("execution %+v, want completed with the reversed text", done)
				}
			})
		}
	}
}

var toolNames = apptest.ToolNames
