package agentcard_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/pkg/agentcard"
	"github.com/agentgate/agentgate/pkg/web"
)

// door posts body to the front door of agent name on base, with
// Content-Type ct ("" for none), and returns the status, the raw answer
// and its JSON-RPC error (code 0 if none).
func door(t *testing.T, base, auth, name, ct string, body io.Reader) (status int, raw string, code int, message string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+agentcard.FrontDoorPath(name), body)
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	req.Header.Set("Authorization", auth)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var answer struct {
		Error *struct {
			Code    any    `json:"code"` // a number in JSON-RPC errors, a string in agentgate's JSON ones
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &answer); err != nil {
		t.Fatalf("front door answered non-JSON (%d): %q", resp.StatusCode, data)
	}
	if answer.Error != nil {
		n, _ := answer.Error.Code.(float64)
		code, message = int(n), answer.Error.Message
	}
	return resp.StatusCode, string(data), code, message
}

// goInternals are the marks of Go's own words in a message.
var goInternals = []string{"Go struct", "Go value", "unmarshal", "a2a.", "float64", "interface {}", "store:", "jsonrpc."}

func noGoInternals(t *testing.T, where, message string) {
	t.Helper()
	if i := slices.IndexFunc(goInternals, func(m string) bool { return strings.Contains(message, m) }); i >= 0 {
		t.Errorf("%s: %q shows Go internals (%q)", where, message, goInternals[i])
	}
}

// TestFrontDoorBodyRules: a chunked body over 1 MiB was a 500 (it is the
// 413 a declared one gets); a form body (curl -d) was read as JSON-RPC (it
// is 415, as at every JSON endpoint); a body without Content-Type is read
// as JSON.
func TestFrontDoorBodyRules(t *testing.T) {
	s := newStack(t, "embedded")
	big := sendBody(1, "m-big", strings.Repeat("x", 1<<20))
	status, raw, code, msg := door(t, s.a, s.alice, s.AgentID, "application/json", io.MultiReader(strings.NewReader(big)))
	if status != http.StatusRequestEntityTooLarge || code != web.RPCInvalidRequest || !strings.Contains(msg, "over the 1048576-byte limit") {
		t.Errorf("chunked oversize: %d %s", status, raw)
	}
	status, raw, code, msg = door(t, s.a, s.alice, s.AgentID, "application/json", strings.NewReader(big))
	if status != http.StatusRequestEntityTooLarge || code != web.RPCInvalidRequest || !strings.Contains(msg, "over the 1048576-byte limit") {
		t.Errorf("declared oversize: %d %s", status, raw)
	}
	status, raw, code, msg = door(t, s.a, s.alice, s.AgentID, "application/x-www-form-urlencoded", strings.NewReader(sendBody(2, "m-form", "echo")))
	if status != http.StatusUnsupportedMediaType || code != web.RPCInvalidRequest ||
		msg != `Content-Type must be application/json, not "application/x-www-form-urlencoded"` {
		t.Errorf("form body: %d %s", status, raw)
	}
	if status, raw, _, _ := door(t, s.a, s.alice, s.AgentID, "", strings.NewReader(sendBody(3, "m-bare", "echo"))); status != 200 || !strings.Contains(raw, `"result"`) {
		t.Errorf("no Content-Type: %d %s, want read as JSON", status, raw)
	}
	if got := s.Sample.Received(); got != 1 {
		t.Errorf("the agent received %d messages, want 1 (the one without Content-Type)", got)
	}
}

// TestFrontDoorIDs: a2asrv reads ids as float64, so 9007199254740993 came
// back as 9007199254740992; an id it cannot hold exactly is refused,
// naming no id, and one it can comes back as sent.
func TestFrontDoorIDs(t *testing.T) {
	s := newStack(t, "embedded")
	get := func(id string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"GetTask","params":{"id":"no-such-task"}}`, id)
	}
	for _, id := range []string{"9223372036854775808", "9007199254740993", "1e3"} {
		status, raw, code, msg := door(t, s.a, s.alice, s.AgentID, "application/json", strings.NewReader(get(id)))
		if status != 200 || code != web.RPCInvalidRequest || !strings.Contains(raw, `"id":null`) || !strings.Contains(msg, `"id"`) {
			t.Errorf("id %s: %d %s, want an invalid request naming no id", id, status, raw)
		}
		noGoInternals(t, "id "+id, msg)
	}
	for _, id := range []string{"9007199254740991", `"t-1"`} {
		if _, raw, code, _ := door(t, s.a, s.alice, s.AgentID, "application/json", strings.NewReader(get(id))); code == 0 || !strings.Contains(raw, `"id":`+id) {
			t.Errorf("id %s: %s, want the task-not-found error with the id sent", id, raw)
		}
	}
}

// TestFrontDoorSaysWhatIsWrong: what a2asrv answered with Go's own words
// (a params type mismatch, missing params, a batch) is a JSON-RPC error in
// agentgate's words; an agent name no agent can have is 404 without a
// table read ("store: key too long").
func TestFrontDoorSaysWhatIsWrong(t *testing.T) {
	s := newStack(t, "embedded")
	for _, tc := range []struct {
		body, message string
		code          int
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":"hello"}}`, "params.message: want object, got JSON string", web.RPCInvalidParams},
		{`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":7}}`, "params.id: want string, got JSON number", web.RPCInvalidParams},
		{`{"jsonrpc":"2.0","id":1,"method":"CancelTask"}`, "params: required", web.RPCInvalidParams},
		{`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":["t-1"]}`, `"params" must be a JSON object`, web.RPCInvalidParams},
		{`[{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t-1"}}]`, "batches are not supported", web.RPCInvalidRequest},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, "takes requests, not responses", web.RPCInvalidRequest},
		{`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t-1"}`, "not valid JSON", web.RPCParseError},
	} {
		status, raw, code, msg := door(t, s.a, s.alice, s.AgentID, "application/json", strings.NewReader(tc.body))
		if status != 200 || code != tc.code || !strings.Contains(msg, tc.message) {
			t.Errorf("%s: %d %s, want JSON-RPC %d saying %q", tc.body, status, raw, tc.code, tc.message)
		}
		noGoInternals(t, tc.body, msg)
	}
	long := strings.Repeat("a", 3000)
	status, raw, _, _ := door(t, s.a, s.alice, long, "application/json", strings.NewReader(sendBody(1, "m-long", "echo")))
	if status != http.StatusNotFound || !strings.Contains(raw, "no agent by that name") {
		t.Errorf("a 3000-byte agent name: %d %s", status, raw)
	}
	noGoInternals(t, "long name", raw)
	if got := s.Sample.Received(); got != 0 {
		t.Errorf("refused requests reached the agent: %d messages", got)
	}
}
