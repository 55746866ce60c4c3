package agentcard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	a2acard "github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/agentgate/agentgate/pkg/agent"
	"github.com/agentgate/agentgate/pkg/agentcard"
	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/app/apptest"
	"github.com/agentgate/agentgate/pkg/execution"
)

// stack is agentgate (two instances on one table, as two Lambda
// instances) in front of a running sample agent.
type stack struct {
	*apptest.Stack
	a, b  string // the two instances' URLs
	alice string // "Bearer <alice's key>"
	bob   string // "Bearer <bob's key>"
}

func newStack(t *testing.T, backend string) *stack {
	t.Helper()
	s := apptest.New(t, backend, nil)
	return &stack{Stack: s, a: s.Serve(), b: s.Serve(),
		alice: "Bearer " + s.Key("alice", agentgate.ScopeUser), bob: "Bearer " + s.Key("bob", agentgate.ScopeUser)}
}

// rpc posts a JSON-RPC request to the front door of agent name and decodes
// the answer.
func rpc(t *testing.T, base, auth, name, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+agentcard.FrontDoorPath(name), strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", auth)
	return do(t, req)
}

// do sends req and decodes the JSON answer.
func do(t *testing.T, req *http.Request) (int, map[string]any) {
	t.Helper()
	resp, out := answer(t, req)
	return resp.StatusCode, out
}

// answer sends req and returns the response, its JSON body decoded.
func answer(t *testing.T, req *http.Request) (*http.Response, map[string]any) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("front door answered non-JSON (%d): %v", resp.StatusCode, err)
	}
	return resp, out
}

func sendBody(id any, messageID, text string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":"SendMessage","params":{"message":{"messageId":%q,"role":"ROLE_USER","parts":[{"text":%q}]}}}`,
		fmt.Sprint(id), messageID, text)
}

// sendNowBody is sendBody with returnImmediately: the answer comes once the
// agent has the message, however long its work.
func sendNowBody(id any, messageID, text string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":"SendMessage","params":{"configuration":{"returnImmediately":true},"message":{"messageId":%q,"role":"ROLE_USER","parts":[{"text":%q}]}}}`,
		fmt.Sprint(id), messageID, text)
}

// rpcErrorOf returns the JSON-RPC error's code and message, failing if the
// answer is not an error.
func rpcErrorOf(t *testing.T, out map[string]any) (int, string) {
	t.Helper()
	e, ok := out["error"].(map[string]any)
	if !ok {
		t.Fatalf("want a JSON-RPC error, got %v", out)
	}
	return int(e["code"].(float64)), e["message"].(string)
}

// TestA2AGoClientRoundTrip is a2a-go's own client, as an orchestrator would
// use it: resolve the card from its served URL (through agentcard.Parse,
// since its JSON card parser refuses the spec's securityRequirements), then SendMessage and GetTask through the front door
// to the sample agent, until the task completes.
func TestA2AGoClientRoundTrip(t *testing.T) {
	for _, backend := range apptest.Backends {
		t.Run(backend, func(t *testing.T) {
			s := newStack(t, backend)
			hc := apptest.Bearer(strings.TrimPrefix(s.alice, "Bearer "))
			// a2a-go's own card resolver, given a parser that reads the
			// spec's form (agentcard.Parse): the authenticated
			// card by path, and the public one where a2a-go looks by
			// default, under the agent's A2A URL.
			resolver := &a2acard.Resolver{Client: hc, CardParser: agentcard.Parse}
			card, err := resolver.Resolve(t.Context(), s.a, a2acard.WithPath(agentcard.CardPath("sample-echo")))
			if err != nil {
				t.Fatal(err)
			}
			public, err := (&a2acard.Resolver{CardParser: agentcard.Parse}).Resolve(t.Context(), s.a+agentcard.FrontDoorPath("sample-echo"))
			if err != nil {
				t.Fatalf("the public card at a2a-go's default path: %v", err)
			}
			if _, err := (&a2acard.Resolver{}).Resolve(t.Context(), s.a+agentcard.FrontDoorPath("sample-echo")); err == nil {
				t.Error("a2a-go's default JSON parser read the spec's card: the interop trap is gone, drop the parser")
			}
			for _, c := range []*a2a.AgentCard{card, public} {
				if got, want := c.SupportedInterfaces[0].URL, s.a+agentcard.FrontDoorPath("sample-echo"); got != want {
					t.Fatalf("card's interface %s, want the front door %s", got, want)
				}
			}
			client, err := a2aclient.NewFromCard(t.Context(), card, a2aclient.WithJSONRPCTransport(hc))
			if err != nil {
				t.Fatal(err)
			}
			msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("reverse hello agentgate"))
			answer, err := client.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: msg})
			if err != nil {
				t.Fatal(err)
			}
			task, ok := answer.(*a2a.Task)
			if !ok {
				t.Fatalf("SendMessage answered %T, want a task", answer)
			}
			deadline := time.Now().Add(10 * time.Second)
			for !task.Status.State.Terminal() && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
				if task, err = client.GetTask(t.Context(), &a2a.GetTaskRequest{ID: task.ID}); err != nil {
					t.Fatal(err)
				}
			}
			if task.Status.State != a2a.TaskStateCompleted {
				t.Fatalf("task ended %s", task.Status.State)
			}
			if got := resultText(task); got != "etagtnega olleh" {
				t.Errorf("result %q, want the reversed text", got)
			}
			// The execution record followed the task to its end.
			e, err := s.Deps.Dispatch.Executions.Get(t.Context(), execution.Ref{Origin: execution.OriginA2A, Scope: "sample-echo", ID: string(task.ID)})
			if err != nil {
				t.Fatal(err)
			}
			if e.Caller != "alice" || e.State != a2a.TaskStateCompleted || e.RemoteTaskID != string(task.ID) || e.FinishedAt.IsZero() || e.InputBytes == 0 {
				t.Errorf("execution record %+v", e)
			}
			if n, _ := s.Deps.Dispatch.Executions.Running(t.Context(), "sample-echo"); n != 0 {
				t.Errorf("running count %d after the task completed", n)
			}
		})
	}
}

// resultText is the text of a task's artifacts, or of its status message.
func resultText(task *a2a.Task) string {
	var parts []string
	for _, a := range task.Artifacts {
		for _, p := range a.Parts {
			if txt, ok := p.Content.(a2a.Text); ok {
				parts = append(parts, string(txt))
			}
		}
	}
	if len(parts) == 0 && task.Status.Message != nil {
		for _, p := range task.Status.Message.Parts {
			if txt, ok := p.Content.(a2a.Text); ok {
				parts = append(parts, string(txt))
			}
		}
	}
	return strings.Join(parts, "\n")
}

// TestRepeatedMessageIDReachesAgentOnce sends one message 16 times at once,
// alternating between two agentgate instances, then once more: the agent
// receives it once and every call answers the first result.
func TestRepeatedMessageIDReachesAgentOnce(t *testing.T) {
	for _, backend := range apptest.Backends {
		t.Run(backend, func(t *testing.T) {
			s := newStack(t, backend)
			const n = 16
			taskIDs := make([]string, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					base := s.a
					if i%2 == 1 {
						base = s.b
					}
					status, out := rpc(t, base, s.alice, "sample-echo", sendBody(i, "msg-dup-1", "echo once"))
					res, _ := out["result"].(map[string]any)
					task, _ := res["task"].(map[string]any)
					if status != 200 || task == nil {
						t.Errorf("call %d: %d %v", i, status, out)
						return
					}
					taskIDs[i], _ = task["id"].(string)
				})
			}
			wg.Wait()
			status, out := rpc(t, s.b, s.alice, "sample-echo", sendBody("late", "msg-dup-1", "echo once"))
			if status != 200 || out["result"].(map[string]any)["task"].(map[string]any)["id"] != taskIDs[0] {
				t.Errorf("a later repeat answered %d %v, want task %s", status, out, taskIDs[0])
			}
			if got := s.Sample.Received(); got != 1 {
				t.Fatalf("the agent received the message %d times, want once", got)
			}
			for i, id := range taskIDs {
				if id == "" || id != taskIDs[0] {
					t.Errorf("call %d answered task %q, want %q for all", i, id, taskIDs[0])
				}
			}

			// The same id with other content is refused, and sends nothing.
			_, out = rpc(t, s.a, s.alice, "sample-echo", sendBody(1, "msg-dup-1", "echo something else"))
			if code, msg := rpcErrorOf(t, out); code != -32602 || !strings.Contains(msg, "already used") {
				t.Errorf("reused id with other content: %d %q", code, msg)
			}
			// Ids are per caller: bob's msg-dup-1 is his own message.
			if _, out = rpc(t, s.a, s.bob, "sample-echo", sendBody(1, "msg-dup-1", "echo once")); out["result"] == nil {
				t.Errorf("bob's message with the same id: %v", out)
			}
			if got := s.Sample.Received(); got != 2 {
				t.Errorf("the agent received %d messages, want 2 (alice's once, bob's once)", got)
			}
		})
	}
}

// TestAgentDown: an agent that does not answer still has its card, its
// status says why it is unreachable, and the front door answers a JSON-RPC
// error; nothing is a 5xx.
func TestAgentDown(t *testing.T) {
	for _, backend := range apptest.Backends {
		t.Run(backend, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			down := "http://" + ln.Addr().String() + "/"
			ln.Close() // nothing listens there now
			s := newStack(t, backend)
			tmpl, err := agent.ParseFile("../../examples/agents/minimal.yaml")
			if err != nil {
				t.Fatal(err)
			}
			tmpl.Name, tmpl.Endpoint = "sample-down", down
			if _, _, err := s.Deps.Agents.Import(t.Context(), "owner", tmpl); err != nil {
				t.Fatal(err)
			}

			req, _ := http.NewRequest(http.MethodGet, s.a+agentcard.CardPath("sample-down"), nil)
			req.Header.Set("Authorization", s.alice)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("card of a down agent: %d, want 200", resp.StatusCode)
			}

			st, err := s.Deps.Dispatch.Status(t.Context(), "sample-down")
			if err != nil {
				t.Fatal(err)
			}
			if !st.Registered || st.Reachable || st.Reason != "agent unreachable: connection refused" {
				t.Errorf("status %+v, want registered, unreachable, connection refused", st)
			}

			status, out := rpc(t, s.a, s.alice, "sample-down", sendBody(1, "m-down", "echo hi"))
			if status != 200 {
				t.Errorf("front door to a down agent: HTTP %d, want 200 with a JSON-RPC error", status)
			}
			if code, msg := rpcErrorOf(t, out); code != -32000 || msg != "agent unreachable: connection refused" {
				t.Errorf("JSON-RPC error %d %q", code, msg)
			}
			// Nothing was recorded for the failed send, and its id is free again.
			list, _, err := s.Deps.Dispatch.Executions.List(t.Context(), execution.Filter{Caller: "alice"})
			if err != nil || len(list) != 0 {
				t.Errorf("executions after a failed send: %v, %v", list, err)
			}
		})
	}
}

func TestStatusOfReachableAgent(t *testing.T) {
	s := newStack(t, "embedded")
	st, err := s.Deps.Dispatch.Status(t.Context(), "sample-echo")
	if err != nil || !st.Registered || !st.Reachable || st.Reason != "" {
		t.Fatalf("status %+v, %v", st, err)
	}
	if _, err := s.Deps.Dispatch.Status(t.Context(), "nobody"); err == nil {
		t.Error("status of an unknown agent is not an error")
	}
}

// TestFrontDoorRefusals: what the front door does not serve, or not to
// this caller, is a clear JSON-RPC error or HTTP status, and reaches no
// agent.
func TestFrontDoorRefusals(t *testing.T) {
	s := newStack(t, "embedded")
	_, out := rpc(t, s.a, s.alice, "sample-echo", sendNowBody(1, "m-alice", "slow 5"))
	aliceTask := out["result"].(map[string]any)["task"].(map[string]any)["id"].(string)
	received := s.Sample.Received()

	tests := []struct {
		name, auth, agent, body string
		status, code            int
		message                 string
	}{
		{"streaming", s.alice, "sample-echo",
			`{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{}}`, 200, -32004, "streaming is not supported"},
		{"streaming, v0.3", s.alice, "sample-echo",
			`{"jsonrpc":"2.0","id":1,"method":"message/stream","params":{}}`, 200, -32004, "streaming is not supported"},
		{"resubscribing, v0.3", s.alice, "sample-echo",
			`{"jsonrpc":"2.0","id":1,"method":"tasks/resubscribe","params":{"id":"t"}}`, 200, -32004, "streaming is not supported"},
		{"list tasks", s.alice, "sample-echo", `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}`, 200, -32004, "listing tasks is not supported"},
		{"push config, v0.3", s.alice, "sample-echo",
			`{"jsonrpc":"2.0","id":1,"method":"tasks/pushNotificationConfig/set","params":{}}`, 200, -32003, "push notifications are not supported"},
		{"extended card, v0.3", s.alice, "sample-echo",
			`{"jsonrpc":"2.0","id":1,"method":"agent/getAuthenticatedExtendedCard"}`, 200, -32007, "no extended agent card"},
		{"unknown method", s.alice, "sample-echo", `{"jsonrpc":"2.0","id":1,"method":"tasks/list","params":{}}`, 200, -32601, "method not found"},
		{"no parts and a bad role", s.alice, "sample-echo",
			`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m2","role":"ROLE_AGENT","parts":[]}}}`,
			200, -32602, "message.role: must be ROLE_USER; message.parts: at least one part is required"},
		{"id with spaces", s.alice, "sample-echo", sendBody(1, "m 3", "echo"), 200, -32602, "message.messageId"},
		{"text over the cap", s.alice, "sample-echo", sendBody(1, "m4", strings.Repeat("x", 40<<10)), 200, -32602, "over the limit"},
		{"not JSON", s.alice, "sample-echo", `{"jsonrpc":`, 200, -32700, ""},
		{"another caller's task", s.bob, "sample-echo",
			fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":%q}}`, aliceTask), 200, -32001, "no execution"},
		{"continue another caller's task", s.bob, "sample-echo",
			fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m5","taskId":%q,"role":"ROLE_USER","parts":[{"text":"echo"}]}}}`, aliceTask),
			200, -32001, "no execution"},
		{"push notifications", s.alice, "sample-echo",
			`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"configuration":{"taskPushNotificationConfig":{"url":"https://example.com/hook"}},"message":{"messageId":"m6","role":"ROLE_USER","parts":[{"text":"echo"}]}}}`,
			200, -32003, "push notifications are not supported"},
		{"unknown agent", s.alice, "nobody", sendBody(1, "m7", "echo"), 404, 0, `no agent "nobody"`},
		{"no credentials", "", "sample-echo", sendBody(1, "m8", "echo"), 401, 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, out := rpc(t, s.a, tc.auth, tc.agent, tc.body)
			if status != tc.status {
				t.Fatalf("HTTP %d, want %d: %v", status, tc.status, out)
			}
			if tc.code == 0 {
				if e, _ := out["error"].(map[string]any); e == nil || !strings.Contains(fmt.Sprint(e["message"]), tc.message) {
					t.Errorf("body %v, want an error saying %q", out, tc.message)
				}
				return
			}
			code, msg := rpcErrorOf(t, out)
			if code != tc.code || !strings.Contains(msg, tc.message) {
				t.Errorf("JSON-RPC error %d %q, want %d containing %q", code, msg, tc.code, tc.message)
			}
		})
	}
	if got := s.Sample.Received(); got != received {
		t.Errorf("refused requests reached the agent: %d messages, want %d", got, received)
	}

	// Alice can cancel her slow task; the record follows.
	_, out = rpc(t, s.a, s.alice, "sample-echo", fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"CancelTask","params":{"id":%q}}`, aliceTask))
	if state := out["result"].(map[string]any)["status"].(map[string]any)["state"]; state != "TASK_STATE_CANCELED" {
		t.Errorf("cancel answered %v", out)
	}
	e, err := s.Deps.Dispatch.Executions.Get(context.Background(), execution.Ref{Origin: execution.OriginA2A, Scope: "sample-echo", ID: aliceTask})
	if err != nil || e.State != a2a.TaskStateCanceled {
		t.Errorf("record after cancel: %+v %v", e, err)
	}
}
