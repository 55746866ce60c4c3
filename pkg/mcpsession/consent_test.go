package mcpsession

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/store"
	"github.com/agentgate/agentgate/pkg/store/storetest"
)

// steppingClock moves a second forward on every reading, so that waits
// measured with it end at once.
type steppingClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *steppingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Second)
	return c.now
}

// TestUnansweredConsentExpires: a stream whose consent is never answered
// ends, after maxKeepAlives resumptions, with a not-dispatched result; and
// an answer that arrives after that dispatches nothing.
func TestUnansweredConsentExpires(t *testing.T) {
	// One clock for the session layer and the store: the stored events'
	// expiry is stamped by the one and judged by the other.
	clock := &steppingClock{now: storetest.Epoch}
	st := openStore(t, clock.Now)
	refusal := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "Not dispatched: nothing was dispatched"}}}
	h := &Handler{Store: st, TTL: time.Hour, Now: clock.Now, Unanswered: refusal,
		Server: func(*http.Request) (*mcp.Server, error) { t.Fatal("nothing may run"); return nil, nil }}
	ctx := agentgate.WithPrincipal(t.Context(), agentgate.Principal{Subject: "alice", Scope: agentgate.ScopeUser})
	sess, _ := json.Marshal(sessionRecord{Subject: "alice", Scope: agentgate.ScopeUser, LastSeen: clock.Now()})
	if _, err := st.Create(ctx, store.Item{Key: store.SessionKey("s1"), Data: sess}); err != nil {
		t.Fatal(err)
	}
	pending, _ := json.Marshal(pendingCall{CallID: json.RawMessage(`7`), Params: json.RawMessage(`{"name":"dispatch_task"}`), RequestState: "x"})
	if _, err := st.Create(ctx, store.Item{Key: store.SessionEventKey("s1", "st", 0), Data: pending}); err != nil {
		t.Fatal(err)
	}

	get := func(last string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, "/mcp", nil).WithContext(ctx)
		req.Header.Set("Mcp-Session-Id", "s1")
		req.Header.Set("Last-Event-ID", last)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	// Before the limit: a keep-alive with a new id.
	if body := get("st_0.k3").Body.String(); !strings.HasPrefix(body, "id: st_0.k4\nretry: ") {
		t.Fatalf("keep-alive %q", body)
	}
	// At the limit: the call ends, not dispatched.
	body := get(eventID("st", 0, maxKeepAlives-1)).Body.String()
	if !strings.HasPrefix(body, "id: st_1\n") || !strings.Contains(body, `"id":7`) || !strings.Contains(body, `"isError":true`) ||
		!strings.Contains(body, "nothing was dispatched") {
		t.Fatalf("final event %q", body)
	}
	// The refusal is the stream's event 1 for every later resumption.
	if again := get("st_0").Body.String(); again != body {
		t.Errorf("resuming again: %q, want the same final event", again)
	}
	// A late answer is taken and ignored: the call is settled as unanswered.
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":"agentgate-consent-st","result":{"action":"accept","content":{"approve":true}}}`)).WithContext(ctx)
	req.Header.Set("Mcp-Session-Id", "s1")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusAccepted {
		t.Errorf("late answer: %d %s", rec.Code, rec.Body)
	}
}

// TestAnswerSettlesOnce: the first answer to a pending call is stored as
// its settlement; a second answer is accepted and changes nothing; an
// answer to a stream the session does not have is a client error.
func TestAnswerSettlesOnce(t *testing.T) {
	clock := func() time.Time { return storetest.Epoch }
	st := openStore(t, clock)
	h := &Handler{Store: st, TTL: time.Hour, Now: clock,
		Server: func(*http.Request) (*mcp.Server, error) { t.Fatal("an answer runs nothing"); return nil, nil }}
	ctx := agentgate.WithPrincipal(t.Context(), agentgate.Principal{Subject: "alice", Scope: agentgate.ScopeUser})
	sess, _ := json.Marshal(sessionRecord{Subject: "alice", Scope: agentgate.ScopeUser, LastSeen: clock()})
	if _, err := st.Create(ctx, store.Item{Key: store.SessionKey("s1"), Data: sess}); err != nil {
		t.Fatal(err)
	}
	pending, _ := json.Marshal(pendingCall{CallID: json.RawMessage(`7`), Params: json.RawMessage(`{"name":"dispatch_task"}`), RequestState: "x"})
	if _, err := st.Create(ctx, store.Item{Key: store.SessionEventKey("s1", "st", 0), Data: pending}); err != nil {
		t.Fatal(err)
	}
	answer := func(stream, approve string) int {
		body := `{"jsonrpc":"2.0","id":"agentgate-consent-` + stream + `","result":{"action":"accept","content":{"approve":` + approve + `}}}`
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body)).WithContext(ctx)
		req.Header.Set("Mcp-Session-Id", "s1")
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	if code := answer("st", "true"); code != http.StatusAccepted {
		t.Fatalf("first answer: %d", code)
	}
	if code := answer("st", "false"); code != http.StatusAccepted {
		t.Errorf("second answer: %d, want 202", code)
	}
	it, err := st.Get(ctx, answerKey("s1", "st"))
	if err != nil {
		t.Fatal(err)
	}
	var set settlement
	if err := json.Unmarshal(it.Data, &set); err != nil || !set.Answered || !strings.Contains(string(set.Result), `"approve":true`) {
		t.Errorf("settlement %s (%v), want the first answer's", it.Data, err)
	}
	if code := answer("other", "true"); code != http.StatusBadRequest {
		t.Errorf("answer to an unknown stream: %d, want 400", code)
	}
}

// TestResultOfAnEarlierRelease: a stream settled by a release that stored
// the call's result itself at event 1 is resumed with that result as it is,
// nothing run again.
func TestResultOfAnEarlierRelease(t *testing.T) {
	clock := func() time.Time { return storetest.Epoch }
	st := openStore(t, clock)
	h := &Handler{Store: st, TTL: time.Hour, Now: clock,
		Server: func(*http.Request) (*mcp.Server, error) { t.Fatal("nothing may run"); return nil, nil }}
	ctx := agentgate.WithPrincipal(t.Context(), agentgate.Principal{Subject: "alice", Scope: agentgate.ScopeUser})
	sess, _ := json.Marshal(sessionRecord{Subject: "alice", Scope: agentgate.ScopeUser, LastSeen: clock()})
	pending, _ := json.Marshal(pendingCall{CallID: json.RawMessage(`7`), Params: json.RawMessage(`{"name":"dispatch_task"}`), RequestState: "x"})
	result := `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"Dispatched"}]}}`
	for key, data := range map[store.Key]string{store.SessionKey("s1"): string(sess), store.SessionEventKey("s1", "st", 0): string(pending), answerKey("s1", "st"): result} {
		if _, err := st.Create(ctx, store.Item{Key: key, Data: []byte(data)}); err != nil {
			t.Fatal(err)
		}
	}
	req := httptest.NewRequest(http.MethodGet, "/mcp", nil).WithContext(ctx)
	req.Header.Set("Mcp-Session-Id", "s1")
	req.Header.Set("Last-Event-ID", "st_0.k2")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if want := "id: st_1\ndata: " + result + "\n\n"; rec.Body.String() != want {
		t.Errorf("resumed: %d %q, want %q", rec.Code, rec.Body, want)
	}
}
