package mcpserver_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/app/apptest"
	"github.com/agentgate/agentgate/pkg/mcpserver"
)

// workTool is a tool that hands work to an agent, called as the caller
// that has it.
type workTool struct {
	name      string
	connector bool // a connector key's tool; otherwise a user's
	args      map[string]any
}

// workTools are every tool that hands work to an agent; the stack's agent
// must be exposed (chat_with_sample_echo).
var workTools = []workTool{
	{"dispatch_task", false, map[string]any{"agentId": "sample-echo", "instruction": "echo consent"}},
	{"chat_with_sample_echo", false, map[string]any{"message": "echo consent"}},
	{"run_playbook", true, map[string]any{"name": "echo", "input": "consent"}},
	{"ask", true, map[string]any{"message": "echo consent"}},
}

// handed decodes any work tool's result: whether it was handed over, and
// the reason if not.
func handed(t *testing.T, cs *mcp.ClientSession, tool workTool) (bool, string, *mcp.CallToolResult) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool.name, Arguments: tool.args})
	if err != nil {
		t.Fatalf("%s: %v", tool.name, err)
	}
	var out struct {
		Dispatched bool   `json:"dispatched"`
		Reason     string `json:"reason"`
	}
	structured(t, res, &out)
	return out.Dispatched, out.Reason, res
}

// TestEveryWorkToolAsksConsent: dispatch_task, chat_with_<slug>,
// run_playbook and ask all go through the one consent gate, in both
// generations: a yes sends once, after one question; every other answer,
// and a client that cannot be asked, sends nothing, each with its reason.
func TestEveryWorkToolAsksConsent(t *testing.T) {
	cases := []struct {
		name   string
		answer consentAnswer // nil: no elicitation capability
		reason string        // "": sent
	}{
		{"yes", approve, ""},
		{"no elicitation capability", nil, "declares no elicitation capability"},
		{"decline", answer("decline", nil), "the user declined"},
		{"cancel", answer("cancel", nil), "dismissed the consent request"},
		{"accept with no", answer("accept", map[string]any{"approve": false}), "the user answered no"},
	}
	s := apptest.New(t, "embedded", nil)
	s.Expose(true)
	url := s.Serve()
	user, conn := s.Key("alice", agentgate.ScopeUser), s.ConnectorKey()
	for _, version := range generations {
		for _, tool := range workTools {
			for _, tc := range cases {
				t.Run(version+"/"+tool.name+"/"+tc.name, func(t *testing.T) {
					key := user
					if tool.connector {
						key = conn
					}
					var asked atomic.Int64
					cs := client(t, url, key, version, tc.answer, &asked)
					before := s.Sample.Received()
					ok, reason, res := handed(t, cs, tool)
					if tc.reason == "" {
						if !ok || res.IsError || asked.Load() != 1 || s.Sample.Received() != before+1 {
							t.Errorf("approved: handed %v (%s), asked %d, agent received %d", ok, reason, asked.Load(), s.Sample.Received()-before)
						}
						return
					}
					if ok || !res.IsError || !strings.Contains(reason, tc.reason) || s.Sample.Received() != before {
						t.Errorf("handed %v, isError %v, reason %q (want %q), agent received %d", ok, res.IsError, reason, tc.reason, s.Sample.Received()-before)
					}
				})
			}
		}
	}
}

// TestEveryWorkToolHonoursTheSwitch: with REQUIRE_DISPATCH_CONSENT=false,
// every work tool sends without asking, even from a client that cannot be
// asked; the switch is the same for all.
func TestEveryWorkToolHonoursTheSwitch(t *testing.T) {
	s := apptest.New(t, "embedded", map[string]string{"REQUIRE_DISPATCH_CONSENT": "false"})
	s.Expose(true)
	url := s.Serve()
	user, conn := s.Key("alice", agentgate.ScopeUser), s.ConnectorKey()
	for _, version := range generations {
		for _, tool := range workTools {
			key := user
			if tool.connector {
				key = conn
			}
			cs := client(t, url, key, version, nil, nil)
			if ok, reason, _ := handed(t, cs, tool); !ok {
				t.Errorf("%s at %s: not handed over: %s", tool.name, version, reason)
			}
		}
	}
	if got, want := s.Sample.Received(), int64(2*len(workTools)); got != want {
		t.Errorf("the agent received %d messages, want %d", got, want)
	}
}

// TestConsentStateBindsTool: a consent asked for one tool does not count
// for another, nor for another caller of the same tool, whatever the
// arguments; and a consent answered twice sends once. MRTR rounds made by
// hand, at 2026-07-28.
func TestConsentStateBindsTool(t *testing.T) {
	s := apptest.New(t, "dynamodb", nil)
	s.Expose(true)
	url := s.Serve()
	alice, bob := mrtr(t, url, s.Key("alice", agentgate.ScopeUser)), mrtr(t, url, s.Key("bob", agentgate.ScopeUser))
	conn := mrtr(t, url, s.ConnectorKey())
	owner := mrtr(t, url, s.Key("owner", agentgate.ScopeUser)) // the connector key's owner, with a user key

	askState := func(cs *mcp.ClientSession, tool string, args map[string]any) string {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil || !res.NeedsInput() || res.RequestState == "" {
			t.Fatalf("%s: want an input request, got %+v %v", tool, res, err)
		}
		return res.RequestState
	}
	yes := mcp.InputResponseMap{"consent": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}}
	answerWith := func(cs *mcp.ClientSession, tool string, args map[string]any, state string) (bool, string) {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args, RequestState: state, InputResponses: yes})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		var out mcpserver.PlaybookOutput
		structured(t, res, &out)
		return out.Dispatched, out.Reason
	}

	chatArgs := map[string]any{"message": "echo bound"}
	chatState := askState(alice, "chat_with_sample_echo", chatArgs)
	askArgs := map[string]any{"message": "echo bound"}
	askState2 := askState(conn, "ask", askArgs)
	for name, try := range map[string]func() (bool, string){
		"chat_with_ state on dispatch_task": func() (bool, string) {
			return answerWith(alice, "dispatch_task", map[string]any{"agentId": "sample-echo", "instruction": "echo bound"}, chatState)
		},
		"chat_with_ state by another user": func() (bool, string) { return answerWith(bob, "chat_with_sample_echo", chatArgs, chatState) },
		"chat_with_ state with another message": func() (bool, string) {
			return answerWith(alice, "chat_with_sample_echo", map[string]any{"message": "echo other"}, chatState)
		},
		"ask state on run_playbook": func() (bool, string) {
			return answerWith(conn, "run_playbook", map[string]any{"name": "echo", "input": "bound"}, askState2)
		},
		"ask state through the owner's user key":     func() (bool, string) { return answerWith(owner, "chat_with_sample_echo", askArgs, askState2) },
		"chat_with_ state through the connector key": func() (bool, string) { return answerWith(conn, "ask", chatArgs, chatState) },
	} {
		t.Run(name, func(t *testing.T) {
			if ok, reason := try(); ok || !strings.Contains(reason, "consent state is invalid") {
				t.Errorf("handed %v, reason %q", ok, reason)
			}
		})
	}
	if n := s.Sample.Received(); n != 0 {
		t.Fatalf("the agent received %d messages", n)
	}
	// The real answers send once each; answering again replays.
	for _, r := range []struct {
		cs    *mcp.ClientSession
		tool  string
		args  map[string]any
		state string
	}{{alice, "chat_with_sample_echo", chatArgs, chatState}, {conn, "ask", askArgs, askState2}} {
		if ok, reason := answerWith(r.cs, r.tool, r.args, r.state); !ok {
			t.Errorf("%s, the real answer: %s", r.tool, reason)
		}
		res := must(r.cs.CallTool(t.Context(), &mcp.CallToolParams{Name: r.tool, Arguments: r.args, RequestState: r.state, InputResponses: yes}))
		var again mcpserver.ChatOutput
		structured(t, res, &again)
		if !again.Dispatched || !again.Replayed {
			t.Errorf("%s, answered again: %+v", r.tool, again)
		}
	}
	if n := s.Sample.Received(); n != 2 {
		t.Errorf("the agent received %d messages, want 2", n)
	}
}

// TestConcurrentAnswersSendOnce: one consent for ask, answered yes 16
// times at once on two instances: the message reaches the agent once (the
// first yes claims the send in the consent record, the others wait for its
// result), and every answer reports the one task.
func TestConcurrentAnswersSendOnce(t *testing.T) {
	s := apptest.New(t, "dynamodb", nil)
	key := s.ConnectorKey()
	sessions := []*mcp.ClientSession{mrtr(t, s.Serve(), key), mrtr(t, s.Serve(), key)}
	args := map[string]any{"message": "echo once"}
	res := must(sessions[0].CallTool(t.Context(), &mcp.CallToolParams{Name: "ask", Arguments: args}))
	if !res.NeedsInput() {
		t.Fatalf("want an input request, got %+v", res)
	}
	yes := mcp.InputResponseMap{"consent": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}}
	const n = 16
	outs := make([]mcpserver.ChatOutput, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			r, err := sessions[i%2].CallTool(context.Background(), &mcp.CallToolParams{Name: "ask", Arguments: args, RequestState: res.RequestState, InputResponses: yes})
			if err != nil {
				t.Error(err)
				return
			}
			structured(t, r, &outs[i])
		})
	}
	wg.Wait()
	if got := s.Sample.Received(); got != 1 {
		t.Fatalf("the agent received %d messages under %d concurrent answers, want 1", got, n)
	}
	for i, out := range outs {
		if !out.Dispatched || out.TaskID != outs[0].TaskID || out.Reply != "once" {
			t.Errorf("answer %d: %+v", i, out)
		}
	}
}
