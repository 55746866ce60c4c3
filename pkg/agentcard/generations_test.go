package agentcard_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/pkg/agentcard"
	"github.com/agentgate/agentgate/pkg/app/apptest"
)

// sendV03Body is a v0.3 message/send; blocking nil leaves the
// configuration out.
func sendV03Body(messageID, text string, blocking *bool) string {
	config := ""
	if blocking != nil {
		config = fmt.Sprintf(`"configuration":{"blocking":%t},`, *blocking)
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":"v03","method":"message/send","params":{%s"message":{"kind":"message","messageId":%q,"role":"user","parts":[{"kind":"text","text":%q}]}}}`,
		config, messageID, text)
}

func getV03Body(taskID string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":"v03","method":"tasks/get","params":{"id":%q}}`, taskID)
}

func getV1Body(taskID string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":"v1","method":"GetTask","params":{"id":%q}}`, taskID)
}

// field walks out, a decoded JSON answer, along keys.
func field(out any, keys ...string) any {
	for _, k := range keys {
		m, _ := out.(map[string]any)
		out = m[k]
	}
	return out
}

// poll asks body (a get) of sample-echo's front door at base until the
// task is in state, for up to 10 s, and returns the last answer.
func poll(t *testing.T, base, auth, body, state string) map[string]any {
	t.Helper()
	var out map[string]any
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if _, out = rpc(t, base, auth, "sample-echo", body); field(out, "result", "status", "state") == state {
			break
		}
	}
	return out
}

var no, yes = new(bool), new(bool)

func init() { *yes = true }

// TestBothGenerations: the front door speaks v0.3 JSON-RPC beside v1.0,
// over the same handler: a task sent in one generation is read in the
// other, each answered in its own shapes; a messageId is one message in
// both; a send that asks to block gets the finished task.
func TestBothGenerations(t *testing.T) {
	for _, backend := range apptest.Backends {
		t.Run(backend, func(t *testing.T) {
			s := newStack(t, backend)

			// v0.3 in, v1.0 out.
			_, out := rpc(t, s.a, s.alice, "sample-echo", sendV03Body("gen-1", "slow 1", no))
			task := field(out, "result")
			id, _ := field(task, "id").(string)
			if field(task, "kind") != "task" || id == "" || field(task, "status", "state") == "completed" {
				t.Fatalf("v0.3 message/send, not blocking: %v", out)
			}
			out = poll(t, s.b, s.alice, getV1Body(id), "TASK_STATE_COMPLETED")
			if field(out, "result", "status", "state") != "TASK_STATE_COMPLETED" {
				t.Fatalf("v1.0 GetTask of a v0.3 task: %v", out)
			}
			// And v0.3 again, in v0.3's shapes.
			_, out = rpc(t, s.a, s.alice, "sample-echo", getV03Body(id))
			if field(out, "result", "kind") != "task" || field(out, "result", "status", "state") != "completed" {
				t.Errorf("v0.3 tasks/get: %v", out)
			}

			// v1.0 in, v0.3 out.
			_, out = rpc(t, s.a, s.alice, "sample-echo", sendNowBody(1, "gen-2", "reverse stressed"))
			id2, _ := field(out, "result", "task", "id").(string)
			if id2 == "" {
				t.Fatalf("v1.0 SendMessage: %v", out)
			}
			out = poll(t, s.b, s.alice, getV03Body(id2), "completed")
			if art := fmt.Sprint(field(out, "result", "artifacts")); field(out, "result", "status", "state") != "completed" || !strings.Contains(art, "desserts") {
				t.Errorf("v0.3 tasks/get of a v1.0 task: %v", out)
			}

			// One messageId, both generations: one message to the agent.
			received := s.Sample.Received()
			_, first := rpc(t, s.a, s.alice, "sample-echo", sendV03Body("gen-3", "echo once", no))
			_, again := rpc(t, s.b, s.alice, "sample-echo", sendNowBody(2, "gen-3", "echo once"))
			if a, b := field(first, "result", "id"), field(again, "result", "task", "id"); a == nil || a != b {
				t.Errorf("messageId gen-3: task %v over v0.3, %v over v1.0; want one", a, b)
			}
			if got := s.Sample.Received() - received; got != 1 {
				t.Errorf("the agent received gen-3 %d times, want once", got)
			}
			// Another caller cannot read it in either generation.
			for _, body := range []string{getV03Body(id), getV1Body(id)} {
				if _, out := rpc(t, s.a, s.bob, "sample-echo", body); field(out, "error", "code") != float64(-32001) {
					t.Errorf("bob reading alice's task: %v", out)
				}
			}

			// Blocking sends wait for the work: v0.3 by default (what
			// @a2a-js/sdk 0.3 sends) and on request; v1.0 without
			// returnImmediately.
			for name, body := range map[string]string{
				"v0.3 default":  sendV03Body("gen-4", "reverse stressed", nil),
				"v0.3 blocking": sendV03Body("gen-5", "slow 1", yes),
			} {
				_, out := rpc(t, s.a, s.alice, "sample-echo", body)
				if field(out, "result", "status", "state") != "completed" {
					t.Errorf("%s: %v, want the completed task", name, out)
				}
			}
			_, out = rpc(t, s.a, s.alice, "sample-echo", sendBody(3, "gen-6", "slow 1"))
			if field(out, "result", "task", "status", "state") != "TASK_STATE_COMPLETED" {
				t.Errorf("v1.0 blocking: %v, want the completed task", out)
			}
		})
	}
}

// TestVersionHeader: a request naming a version the front door does not
// speak is refused with VersionNotSupported; 1.0 and 0.3 pass, whatever
// the method's generation.
func TestVersionHeader(t *testing.T) {
	s := newStack(t, "embedded")
	post := func(version, body string) map[string]any {
		req, _ := http.NewRequest(http.MethodPost, s.a+agentcard.FrontDoorPath("sample-echo"), strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", s.alice)
		req.Header.Set(agentcard.VersionHeader, version)
		_, out := do(t, req)
		return out
	}
	if out := post("2.0", sendBody(1, "v-1", "echo")); field(out, "error", "code") != float64(-32009) ||
		!strings.Contains(fmt.Sprint(field(out, "error", "message")), `A2A version "2.0" is not supported`) {
		t.Errorf("A2A-Version 2.0: %v", out)
	}
	for version, body := range map[string]string{"1.0": sendNowBody(1, "v-2", "echo"), "0.3": sendV03Body("v-3", "echo", no), "1.0.0": getV1Body("none")} {
		if out := post(version, body); field(out, "error", "code") == float64(-32009) {
			t.Errorf("A2A-Version %s: %v", version, out)
		}
	}
}

// TestV03Parts: the v0.3 front door converts each kind of part both ways:
// a file's bytes, a file's URI and a data part come back in the task's
// history as they were sent; bytes that are not base64 are invalid params,
// said so. Every v0.3 answer, result or error, is application/json.
func TestV03Parts(t *testing.T) {
	s := newStack(t, "embedded")
	post := func(id, part string) (string, map[string]any) {
		body := `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"` + id + `","role":"user","parts":[` + part + `]}}}`
		req, _ := http.NewRequest(http.MethodPost, s.a+agentcard.FrontDoorPath("sample-echo"), strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", s.alice)
		resp, out := answer(t, req)
		return resp.Header.Get("Content-Type"), out
	}
	for i, part := range []string{
		`{"kind":"file","file":{"bytes":"aGVsbG8=","mimeType":"text/plain","name":"a.txt"}}`,
		`{"kind":"file","file":{"uri":"https://example.com/y.png","mimeType":"image/png"}}`,
		`{"kind":"data","data":{"a":[1,"b"]}}`,
	} {
		ct, out := post(fmt.Sprint("parts-", i), part)
		var want any
		json.Unmarshal([]byte(part), &want)
		history, _ := field(out, "result", "history").([]any)
		if ct != "application/json" || len(history) != 1 || !reflect.DeepEqual(field(history[0], "parts").([]any)[0], want) {
			t.Errorf("%s: Content-Type %q, %v", part, ct, out)
		}
	}
	ct, out := post("parts-bad", `{"kind":"file","file":{"bytes":"!!!"}}`)
	if ct != "application/json" || field(out, "error", "code") != float64(-32602) ||
		!strings.Contains(fmt.Sprint(field(out, "error", "message")), "message.parts[0]: file.bytes: not base64") {
		t.Errorf("bytes not base64: Content-Type %q, %v", ct, out)
	}
}
