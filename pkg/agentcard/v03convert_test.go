package agentcard

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	a2av03 "github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/v2/a2a"
)

// jsonOf is v's JSON, for comparing converted values as a client sees them.
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestMessageFromV03: a v0.3 message, as a client sends it, becomes the
// v1.0 message the handler gets, part by part.
func TestMessageFromV03(t *testing.T) {
	for _, c := range []struct {
		name, v03, want string
	}{
		{"text, ids, role, metadata",
			`{"kind":"message","messageId":"m","contextId":"c","taskId":"t","role":"user","referenceTaskIds":["r"],"extensions":["e"],"metadata":{"k":1},"parts":[{"kind":"text","text":"hi","metadata":{"p":true}}]}`,
			`{"messageId":"m","contextId":"c","extensions":["e"],"metadata":{"k":1},"parts":[{"text":"hi","metadata":{"p":true}}],"referenceTaskIds":["r"],"role":"ROLE_USER","taskId":"t"}`},
		{"agent role", `{"kind":"message","messageId":"m","role":"agent","parts":[{"kind":"text","text":"x"}]}`,
			`{"messageId":"m","parts":[{"text":"x"}],"role":"ROLE_AGENT"}`},
		{"unknown role", `{"kind":"message","messageId":"m","role":"robot","parts":[{"kind":"text","text":"x"}]}`,
			`{"messageId":"m","parts":[{"text":"x"}],"role":"ROLE_UNSPECIFIED"}`},
		{"file bytes", `{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"file","file":{"bytes":"aGVsbG8=","mimeType":"text/plain","name":"a.txt"}}]}`,
			`{"messageId":"m","parts":[{"raw":"aGVsbG8=","filename":"a.txt","mediaType":"text/plain"}],"role":"ROLE_USER"}`},
		{"file uri", `{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"file","file":{"uri":"https://x/y.png","mimeType":"image/png"}}]}`,
			`{"messageId":"m","parts":[{"url":"https://x/y.png","mediaType":"image/png"}],"role":"ROLE_USER"}`},
		{"data object", `{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"data","data":{"a":[1,2]}}]}`,
			`{"messageId":"m","parts":[{"data":{"a":[1,2]}}],"role":"ROLE_USER"}`},
		{"data wrapped by a2a-go", `{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"data","data":{"value":"s"},"metadata":{"data_part_compat":true}}]}`,
			`{"messageId":"m","parts":[{"data":"s"}],"role":"ROLE_USER"}`},
		{"data wrapped, other metadata kept", `{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"data","data":{"value":[1]},"metadata":{"data_part_compat":true,"k":"v"}}]}`,
			`{"messageId":"m","parts":[{"data":[1],"metadata":{"k":"v"}}],"role":"ROLE_USER"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var m a2av03.Message
			if err := json.Unmarshal([]byte(c.v03), &m); err != nil {
				t.Fatal(err)
			}
			got, err := messageFromV03(&m)
			if err != nil {
				t.Fatal(err)
			}
			if j := jsonOf(t, got); j != c.want {
				t.Errorf("got  %s\nwant %s", j, c.want)
			}
		})
	}
}

func TestMessageFromV03Refuses(t *testing.T) {
	for name, m := range map[string]*a2av03.Message{
		"bytes not base64":     {ID: "m", Parts: a2av03.ContentParts{a2av03.FilePart{File: a2av03.FileBytes{Bytes: "!!!"}}}},
		"file without content": {ID: "m", Parts: a2av03.ContentParts{a2av03.FilePart{}}},
	} {
		if _, err := messageFromV03(m); err == nil || !strings.Contains(err.Error(), "parts[0]: file") {
			t.Errorf("%s: %v, want an error naming the part", name, err)
		}
	}
}

// TestMessageToV03: a v1.0 message (an answer, a task's history) becomes
// the v0.3 message a client reads, part by part.
func TestMessageToV03(t *testing.T) {
	for _, c := range []struct {
		name string
		v1   *a2a.Message
		want string
	}{
		{"text, ids, role, metadata",
			&a2a.Message{ID: "m", ContextID: "c", TaskID: "t", Role: a2a.MessageRoleAgent, ReferenceTasks: []a2a.TaskID{"r"},
				Extensions: []string{"e"}, Metadata: map[string]any{"k": 1}, Parts: a2a.ContentParts{{Content: a2a.Text("hi")}}},
			`{"kind":"message","messageId":"m","contextId":"c","extensions":["e"],"metadata":{"k":1},"parts":[{"kind":"text","text":"hi"}],"referenceTaskIds":["r"],"role":"agent","taskId":"t"}`},
		{"raw", &a2a.Message{ID: "m", Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{{Content: a2a.Raw("hello"), MediaType: "text/plain", Filename: "a.txt"}}},
			`{"kind":"message","messageId":"m","parts":[{"kind":"file","file":{"mimeType":"text/plain","name":"a.txt","bytes":"aGVsbG8="}}],"role":"user"}`},
		{"url", &a2a.Message{ID: "m", Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{{Content: a2a.URL("https://x/y"), MediaType: "image/png"}}},
			`{"kind":"message","messageId":"m","parts":[{"kind":"file","file":{"mimeType":"image/png","uri":"https://x/y"}}],"role":"user"}`},
		{"data object", &a2a.Message{ID: "m", Role: a2a.MessageRoleAgent, Parts: a2a.ContentParts{{Content: a2a.Data{Value: map[string]any{"a": 1}}}}},
			`{"kind":"message","messageId":"m","parts":[{"kind":"data","data":{"a":1}}],"role":"agent"}`},
		{"data not an object", &a2a.Message{ID: "m", Role: a2a.MessageRoleAgent, Parts: a2a.ContentParts{{Content: a2a.Data{Value: []any{1.0}}, Metadata: map[string]any{"k": "v"}}}},
			`{"kind":"message","messageId":"m","parts":[{"kind":"data","data":{"value":[1]},"metadata":{"data_part_compat":true,"k":"v"}}],"role":"agent"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := messageToV03(c.v1)
			if j := jsonOf(t, got); j != c.want {
				t.Errorf("got  %s\nwant %s", j, c.want)
			}
			// And back, through the JSON a client would send: the same
			// message.
			var again a2av03.Message
			if err := json.Unmarshal([]byte(jsonOf(t, got)), &again); err != nil {
				t.Fatal(err)
			}
			back, err := messageFromV03(&again)
			if err != nil {
				t.Fatal(err)
			}
			if jsonOf(t, back) != jsonOf(t, c.v1) {
				t.Errorf("round trip:\n%s\nwant\n%s", jsonOf(t, back), jsonOf(t, c.v1))
			}
		})
	}
	if messageToV03(nil) != nil {
		t.Error("a nil message converts to a message")
	}
}

// TestTaskStatesToV03: every v1.0 state has its v0.3 name; a state v0.3
// cannot name is "unknown".
func TestTaskStatesToV03(t *testing.T) {
	for v1, want := range map[a2a.TaskState]a2av03.TaskState{
		a2a.TaskStateSubmitted: "submitted", a2a.TaskStateWorking: "working", a2a.TaskStateInputRequired: "input-required",
		a2a.TaskStateAuthRequired: "auth-required", a2a.TaskStateCompleted: "completed", a2a.TaskStateCanceled: "canceled",
		a2a.TaskStateFailed: "failed", a2a.TaskStateRejected: "rejected", a2a.TaskStateUnspecified: "unknown", "TASK_STATE_NEW": "unknown",
	} {
		if got := stateToV03(v1); got != want {
			t.Errorf("%q: %q, want %q", v1, got, want)
		}
	}
}

func TestTaskToV03(t *testing.T) {
	ts := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	task := &a2a.Task{
		ID: "t", ContextID: "c", Metadata: map[string]any{"k": "v"},
		Status: a2a.TaskStatus{State: a2a.TaskStateInputRequired, Timestamp: &ts,
			Message: &a2a.Message{ID: "s", Role: a2a.MessageRoleAgent, Parts: a2a.ContentParts{a2a.NewTextPart("more?")}}},
		Artifacts: []*a2a.Artifact{{ID: "a", Name: "n", Description: "d", Parts: a2a.ContentParts{a2a.NewTextPart("out")}}},
		History:   []*a2a.Message{{ID: "h", Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart("in")}}},
	}
	want := `{"kind":"task","id":"t",` +
		`"artifacts":[{"artifactId":"a","description":"d","name":"n","parts":[{"kind":"text","text":"out"}]}],` +
		`"contextId":"c","history":[{"kind":"message","messageId":"h","parts":[{"kind":"text","text":"in"}],"role":"user"}],` +
		`"metadata":{"k":"v"},` +
		`"status":{"message":{"kind":"message","messageId":"s","parts":[{"kind":"text","text":"more?"}],"role":"agent"},"state":"input-required","timestamp":"2026-01-02T03:04:05Z"}}`
	if got := jsonOf(t, taskToV03(task)); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if taskToV03(nil) != nil {
		t.Error("a nil task converts to a task")
	}
}

// TestSendFromV03: v0.3's configuration, blocking above all, is v1.0's.
func TestSendFromV03(t *testing.T) {
	two := 2
	for _, c := range []struct {
		name, config string
		want         *a2a.SendMessageConfig
	}{
		{"no configuration", ``, nil},
		{"blocking left out", `"configuration":{"historyLength":2,"acceptedOutputModes":["text/plain"]},`,
			&a2a.SendMessageConfig{HistoryLength: &two, AcceptedOutputModes: []string{"text/plain"}}},
		{"blocking", `"configuration":{"blocking":true},`, &a2a.SendMessageConfig{}},
		{"not blocking", `"configuration":{"blocking":false},`, &a2a.SendMessageConfig{ReturnImmediately: true}},
		{"push", `"configuration":{"pushNotificationConfig":{"url":"https://x/hook","id":"p","token":"tk","authentication":{"schemes":["Bearer"],"credentials":"cr"}}},`,
			&a2a.SendMessageConfig{PushConfig: &a2a.PushConfig{TaskID: "t", URL: "https://x/hook", ID: "p", Token: "tk", Auth: &a2a.PushAuthInfo{Scheme: "Bearer", Credentials: "cr"}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var p a2av03.MessageSendParams
			raw := `{` + c.config + `"metadata":{"m":1},"message":{"kind":"message","messageId":"m","taskId":"t","role":"user","parts":[{"kind":"text","text":"x"}]}}`
			if err := json.Unmarshal([]byte(raw), &p); err != nil {
				t.Fatal(err)
			}
			req, err := sendFromV03(&p)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(req.Config, c.want) {
				t.Errorf("config %s, want %s", jsonOf(t, req.Config), jsonOf(t, c.want))
			}
			if req.Message.ID != "m" || req.Message.TaskID != "t" || req.Metadata["m"] != 1.0 {
				t.Errorf("request %s", jsonOf(t, req))
			}
		})
	}
	bad := &a2av03.MessageSendParams{Message: &a2av03.Message{Parts: a2av03.ContentParts{a2av03.FilePart{File: a2av03.FileBytes{Bytes: "%"}}}}}
	if _, err := sendFromV03(bad); err == nil || !strings.HasPrefix(err.Error(), "message.parts[0]: ") {
		t.Errorf("bad bytes: %v", err)
	}
}

func TestResultToV03(t *testing.T) {
	task, err := resultToV03(&a2a.Task{ID: "t", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}})
	if v, ok := task.(*a2av03.Task); err != nil || !ok || v.ID != "t" || v.Status.State != a2av03.TaskStateCompleted {
		t.Errorf("task: %#v, %v", task, err)
	}
	msg, err := resultToV03(&a2a.Message{ID: "m", Role: a2a.MessageRoleAgent})
	if v, ok := msg.(*a2av03.Message); err != nil || !ok || v.ID != "m" || v.Role != a2av03.MessageRoleAgent {
		t.Errorf("message: %#v, %v", msg, err)
	}
	for _, r := range []a2a.SendMessageResult{nil, (*a2a.Task)(nil), (*a2a.Message)(nil)} {
		if _, err := resultToV03(r); !errors.Is(err, a2av03.ErrInvalidAgentResponse) {
			t.Errorf("%#v: %v, want invalid agent response", r, err)
		}
	}
}

// TestErrToV03: each v1.0 error is the v0.3 error of the same code, its
// message kept; anything else is an internal error.
func TestErrToV03(t *testing.T) {
	for _, c := range []struct {
		in   error
		want error
		msg  string
	}{
		{a2a.NewError(a2a.ErrTaskNotFound, "no execution \"x\""), a2av03.ErrTaskNotFound, "no execution \"x\""},
		{a2a.NewError(a2a.ErrInvalidParams, "message.parts: required"), a2av03.ErrInvalidParams, "message.parts: required"},
		{a2a.NewError(a2a.ErrTaskNotCancelable, "done"), a2av03.ErrTaskNotCancelable, "done"},
		{a2a.NewError(a2a.ErrPushNotificationNotSupported, "no push"), a2av03.ErrPushNotificationNotSupported, "no push"},
		{a2a.NewError(a2a.ErrUnauthorized, "not yours"), a2av03.ErrUnauthorized, "not yours"},
		{a2a.NewError(a2a.ErrServerError, "agent down"), a2av03.ErrServerError, "agent down"},
		{a2a.NewError(a2a.ErrInvalidAgentResponse, "not a task"), a2av03.ErrInvalidAgentResponse, "not a task"},
		{a2a.NewError(a2a.ErrInternalError, "internal error"), a2av03.ErrInternalError, "internal error"},
		{a2a.ErrExtendedCardNotConfigured, a2av03.ErrAuthenticatedExtendedCardNotConfigured, a2a.ErrExtendedCardNotConfigured.Error()},
		{a2a.NewError(a2a.ErrVersionNotSupported, "2.0"), a2av03.ErrInternalError, "2.0"},
		{errors.New("boom"), a2av03.ErrInternalError, "boom"},
	} {
		got := errToV03(c.in)
		var e *a2av03.Error
		if !errors.Is(got, c.want) || !errors.As(got, &e) || e.Message != c.msg {
			t.Errorf("%v: %#v, want %v with message %q", c.in, got, c.want, c.msg)
		}
	}
	if errToV03(nil) != nil {
		t.Error("nil is an error")
	}
}
