package mcpsession

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/store"
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

// askTool is an SDK server with one tool, "ask", that asks for consent
// (RecordInput) and, called again with the answer, says what it was: the
// session layer's view of a consent-gated tool. runs counts the calls
// made with an answer.
type askTool struct {
	runs atomic.Int64
}

func (a *askTool) server(*http.Request) (*mcp.Server, error) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "ask", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if req.Params.RequestState == "" {
			return nil, RecordInput(ctx, mcp.InputRequestMap{ConsentKey: &mcp.ElicitParams{Mode: "form", Message: "ok?",
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"approve": map[string]any{"type": "boolean"}}}}}, "state")
		}
		a.runs.Add(1)
		answer, _ := req.Params.InputResponses[ConsentKey].(*mcp.ElicitResult)
		text := "no answer"
		if answer != nil {
			text = fmt.Sprintf("approve=%v", answer.Content["approve"])
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
	})
	return srv, nil
}

// updateHook calls before, if set, ahead of every Update: where a test
// makes requests race.
type updateHook struct {
	store.Store
	before func(ctx context.Context, key store.Key)
}

func (u *updateHook) Update(ctx context.Context, it store.Item) (store.Item, error) {
	if u.before != nil {
		u.before(ctx, it.Key)
	}
	return u.Store.Update(ctx, it)
}

// barrier holds the first n calls until all n have arrived, so that n
// requests that read the session record have all read it before any of
// them writes it; later calls pass.
func barrier(n int) func(context.Context, store.Key) {
	var mu sync.Mutex
	arrived, all := 0, make(chan struct{})
	return func(ctx context.Context, _ store.Key) {
		mu.Lock()
		if arrived == n {
			mu.Unlock()
			return
		}
		arrived++
		if arrived == n {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
		case <-ctx.Done():
		}
	}
}

// once runs f before the first call only (and not inside it: f's own
// writes pass).
func once(f func()) func(context.Context, store.Key) {
	var armed atomic.Bool
	armed.Store(true)
	return func(context.Context, store.Key) {
		if armed.Swap(false) {
			f()
		}
	}
}

var aliceCtx = agentgate.WithPrincipal(context.Background(), agentgate.Principal{Subject: "alice", Scope: agentgate.ScopeUser})

// serve makes one request of alice's to h: POST with body, or GET after
// lastEventID.
func serve(h *Handler, sid, body, lastEventID string) *httptest.ResponseRecorder {
	method := http.MethodPost
	if body == "" {
		method = http.MethodGet
	}
	req := httptest.NewRequest(method, "/mcp", strings.NewReader(body)).WithContext(aliceCtx)
	req.Header.Set("Content-Type", "application/json")
	if sid != "" {
		req.Header.Set(headerSession, sid)
	}
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// startSession initializes a session of alice's through h, as a client
// that can elicit, and returns its id.
func startSession(t *testing.T, h *Handler) string {
	t.Helper()
	rec := serve(h, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}`, "")
	sid := rec.Header().Get(headerSession)
	if rec.Code != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d %s", rec.Code, rec.Body)
	}
	if rec := serve(h, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, ""); rec.Code != http.StatusAccepted {
		t.Fatalf("initialized: %d %s", rec.Code, rec.Body)
	}
	return sid
}

var streamOf = regexp.MustCompile(`^id: ([A-Za-z0-9_-]+)_0\n`)

// callAsk calls the ask tool with JSON-RPC id and arguments, and returns
// the consent stream its answer opens ("" if none) and the answer.
func callAsk(h *Handler, sid string, id int, args string) (string, *httptest.ResponseRecorder) {
	rec := serve(h, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"ask","arguments":%s}}`, id, args), "")
	m := streamOf.FindStringSubmatch(rec.Body.String())
	if rec.Code != http.StatusOK || m == nil || !strings.Contains(rec.Body.String(), `"id":"agentgate-consent-`+m[1]+`"`) {
		return "", rec
	}
	return m[1], rec
}

// answerBody is the client's answer to stream's elicitation.
func answerBody(stream string, approve bool) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":"agentgate-consent-%s","result":{"action":"accept","content":{"approve":%v}}}`, stream, approve)
}

// stored reads the session record sid as the table has it, expired
// consents included, and its version.
func stored(t *testing.T, st store.Store, sid string) (sessionRecord, int64) {
	t.Helper()
	it, err := st.Get(context.Background(), store.SessionKey(sid))
	if err != nil {
		t.Fatal(err)
	}
	var rec sessionRecord
	if err := json.Unmarshal(it.Data, &rec); err != nil {
		t.Fatal(err)
	}
	return rec, it.Version
}
