package mcpserver_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/app/apptest"
	"github.com/agentgate/agentgate/pkg/mcpserver"
	"github.com/agentgate/agentgate/pkg/store"
)

var generations = []string{mcpserver.Version20260728, mcpserver.Version20251125}

// refused checks a dispatch that must not have happened: isError, not
// dispatched, the reason, and an agent that received nothing.
func refused(t *testing.T, s *apptest.Stack, out mcpserver.DispatchOutput, res *mcp.CallToolResult, reason string) {
	t.Helper()
	if out.Dispatched || !res.IsError || !strings.Contains(out.Reason, reason) {
		t.Errorf("dispatch %+v (isError %v), want refused with %q", out, res.IsError, reason)
	}
	if n := s.Sample.Received(); n != 0 {
		t.Errorf("the agent received %d messages; nothing may reach it", n)
	}
}

func answer(action string, content map[string]any) consentAnswer {
	return func(*mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: action, Content: content}, nil
	}
}

// TestConsentFailsClosed: every answer but an explicit yes, and a client
// that cannot be asked, leaves the agent untouched, in both generations,
// each with its own reason.
func TestConsentFailsClosed(t *testing.T) {
	cases := []struct {
		name   string
		answer consentAnswer // nil: no elicitation capability
		reason string
	}{
		{"no elicitation capability", nil, "declares no elicitation capability"},
		{"decline", answer("decline", nil), "the user declined"},
		{"cancel", answer("cancel", nil), "dismissed the consent request"},
		{"accept with no", answer("accept", map[string]any{"approve": false}), "the user answered no"},
	}
	for _, version := range generations {
		t.Run(version, func(t *testing.T) {
			s := apptest.New(t, "embedded", nil)
			url := s.Serve()
			key := s.Key("alice", agentgate.ScopeUser)
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					cs := client(t, url, key, version, tc.answer, nil)
					out, res := dispatch(t, cs, map[string]any{"agentId": s.AgentID, "instruction": "echo never"})
					refused(t, s, out, res, tc.reason)
				})
			}
		})
	}
}

// TestMalformedConsentAnswer: an answer that is not a yes in the schema
// asked for is a refusal. The Go client checks answers against the schema
// itself: at 2026-07-28 it will not send one (so the round is made by hand
// here), on a legacy session it answers the elicitation with an error.
func TestMalformedConsentAnswer(t *testing.T) {
	s := apptest.New(t, "embedded", nil)
	url := s.Serve()
	key := s.Key("alice", agentgate.ScopeUser)
	args := map[string]any{"agentId": s.AgentID, "instruction": "echo malformed"}
	for name, tc := range map[string]struct {
		answer mcp.InputResponse
		reason string
	}{
		"approve as a string": {&mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": "yes"}}, "no yes/no approve field"},
		"no approve":          {&mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, "no yes/no approve field"},
		"unknown action":      {&mcp.ElicitResult{Action: "maybe"}, `action "maybe"`},
		"not an elicitation":  {&mcp.ListRootsResult{}, "not an elicitation result"},
	} {
		t.Run("2026-07-28/"+name, func(t *testing.T) {
			cs := mrtr(t, url, key)
			state := ask(t, cs, args)
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "dispatch_task", Arguments: args, RequestState: state,
				InputResponses: mcp.InputResponseMap{"consent": tc.answer}})
			if err != nil {
				t.Fatal(err)
			}
			var out mcpserver.DispatchOutput
			structured(t, res, &out)
			refused(t, s, out, res, tc.reason)
		})
	}
	t.Run("2025-11-25", func(t *testing.T) {
		cs := client(t, url, key, mcpserver.Version20251125, answer("accept", map[string]any{"approve": "yes"}), nil)
		out, res := dispatch(t, cs, args)
		refused(t, s, out, res, "not an elicitation result")
	})
}

// mrtr is a 2026-07-28 client that does the MRTR round by hand, so a test
// can alter what it sends back.
func mrtr(t *testing.T, url, token string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "mrtr-test", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return approve(r) },
		MultiRoundTrip:     &mcp.MultiRoundTripOptions{Disabled: true},
	})
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url + mcpserver.Endpoint, HTTPClient: apptest.Bearer(token)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// ask makes the first call of an MRTR round and returns its requestState.
func ask(t *testing.T, cs *mcp.ClientSession, args map[string]any) string {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "dispatch_task", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	if !res.NeedsInput() || res.RequestState == "" {
		t.Fatalf("want an input request, got %+v", res)
	}
	if _, ok := res.InputRequests["consent"].(*mcp.ElicitParams); !ok {
		t.Fatalf("input requests %+v: want an elicitation under \"consent\"", res.InputRequests)
	}
	return res.RequestState
}

// retry answers an MRTR round with yes, the given state and args.
func retry(t *testing.T, cs *mcp.ClientSession, args map[string]any, state string) (mcpserver.DispatchOutput, *mcp.CallToolResult) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "dispatch_task", Arguments: args, RequestState: state,
		InputResponses: mcp.InputResponseMap{"consent": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}}})
	if err != nil {
		t.Fatal(err)
	}
	var out mcpserver.DispatchOutput
	structured(t, res, &out)
	return out, res
}

// TestRequestStateIsBound: a requestState counts only unaltered, for its
// caller and the arguments it was issued for, and once: a replay after
// success gets the stored result and dispatches nothing. (For its tool
// only, and not through a connector key: TestConsentStateBindsTool.)
func TestRequestStateIsBound(t *testing.T) {
	s := apptest.New(t, "dynamodb", nil)
	url := s.Serve()
	alice := mrtr(t, url, s.Key("alice", agentgate.ScopeUser))
	bob := mrtr(t, url, s.Key("bob", agentgate.ScopeUser))
	args := map[string]any{"agentId": s.AgentID, "instruction": "echo bound", "taskId": "bound-1"}
	state := ask(t, alice, args)

	tampered := []byte(state)
	tampered[len(tampered)/2] ^= 1
	other := map[string]any{"agentId": s.AgentID, "instruction": "echo something else", "taskId": "bound-1"}
	otherTask := map[string]any{"agentId": s.AgentID, "instruction": "echo bound", "taskId": "bound-2"}
	for name, try := range map[string]func() (mcpserver.DispatchOutput, *mcp.CallToolResult){
		"tampered":                func() (mcpserver.DispatchOutput, *mcp.CallToolResult) { return retry(t, alice, args, string(tampered)) },
		"forged":                  func() (mcpserver.DispatchOutput, *mcp.CallToolResult) { return retry(t, alice, args, "agc1.e30.AAAA") },
		"other arguments":         func() (mcpserver.DispatchOutput, *mcp.CallToolResult) { return retry(t, alice, other, state) },
		"other taskId":            func() (mcpserver.DispatchOutput, *mcp.CallToolResult) { return retry(t, alice, otherTask, state) },
		"another principal":       func() (mcpserver.DispatchOutput, *mcp.CallToolResult) { return retry(t, bob, args, state) },
		"an answer without state": func() (mcpserver.DispatchOutput, *mcp.CallToolResult) { return retry(t, alice, args, "") },
	} {
		t.Run(name, func(t *testing.T) {
			out, res := try()
			refused(t, s, out, res, "consent state is invalid")
		})
	}

	// The real answer, from any instance, dispatches once.
	other2 := mrtr(t, s.Serve(), s.Key("alice", agentgate.ScopeUser))
	out, res := retry(t, other2, args, state)
	if !out.Dispatched || res.IsError || s.Sample.Received() != 1 {
		t.Fatalf("the real answer: %+v; agent received %d", out, s.Sample.Received())
	}
	// Replayed: the stored result, nothing sent.
	again, _ := retry(t, alice, args, state)
	if !again.Dispatched || !again.Replayed || again.TaskID != out.TaskID || s.Sample.Received() != 1 {
		t.Errorf("replay: %+v; agent received %d", again, s.Sample.Received())
	}
	// The same taskId and arguments later: the first result, no new consent.
	if res, err := alice.CallTool(t.Context(), &mcp.CallToolParams{Name: "dispatch_task", Arguments: args}); err != nil || res.NeedsInput() {
		t.Errorf("repeat of a dispatched taskId asked again: %+v %v", res, err)
	}
	// The same taskId with other arguments: refused, says why.
	res2, err := alice.CallTool(t.Context(), &mcp.CallToolParams{Name: "dispatch_task", Arguments: other})
	if err != nil || !res2.IsError || !strings.Contains(fmt.Sprint(res2.Content[0].(*mcp.TextContent).Text), "already used for a different request") {
		t.Errorf("taskId reused with other arguments: %+v %v", res2, err)
	}
	if s.Sample.Received() != 1 {
		t.Errorf("agent received %d messages, want 1", s.Sample.Received())
	}
}

// TestSessionBelongsToItsPrincipal: another principal presenting a
// session id gets 404, as for a session that does not exist.
func TestSessionBelongsToItsPrincipal(t *testing.T) {
	s := apptest.New(t, "dynamodb", nil)
	url := s.Serve()
	alice, bob := s.Key("alice", agentgate.ScopeUser), s.Key("bob", agentgate.ScopeUser)
	post := func(token, session, body string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, url+mcpserver.Endpoint, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", mcpserver.Version20251125)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	init := post(alice, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	sid := init.Header.Get("Mcp-Session-Id")
	if init.StatusCode != 200 || len(sid) < 20 {
		t.Fatalf("initialize: %d, session %q", init.StatusCode, sid)
	}
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	if r := post(alice, sid, list); r.StatusCode != 200 {
		t.Fatalf("alice in her session: %d", r.StatusCode)
	}
	if r := post(bob, sid, list); r.StatusCode != 404 {
		t.Errorf("bob in alice's session: %d, want 404", r.StatusCode)
	}
	if r := post(alice, "no-such-session", list); r.StatusCode != 404 {
		t.Errorf("unknown session: %d, want 404", r.StatusCode)
	}
}

// failing is a store whose items under prefix fail with ErrUnavailable
// while failing is set.
type failing struct {
	store.Store
	prefix string
	mu     sync.Mutex
	on     bool
}

func (f *failing) set(on bool) { f.mu.Lock(); f.on = on; f.mu.Unlock() }

func (f *failing) fails(k store.Key) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.on && strings.HasPrefix(k.PK, f.prefix)
}

var errDown = store.Unavailable(errors.New("injected failure"))

func (f *failing) Get(ctx context.Context, k store.Key) (store.Item, error) {
	if f.fails(k) {
		return store.Item{}, errDown
	}
	return f.Store.Get(ctx, k)
}

func (f *failing) Create(ctx context.Context, it store.Item) (store.Item, error) {
	if f.fails(it.Key) {
		return store.Item{}, errDown
	}
	return f.Store.Create(ctx, it)
}

func (f *failing) Update(ctx context.Context, it store.Item) (store.Item, error) {
	if f.fails(it.Key) {
		return store.Item{}, errDown
	}
	return f.Store.Update(ctx, it)
}

func (f *failing) Put(ctx context.Context, it store.Item) (store.Item, error) {
	if f.fails(it.Key) {
		return store.Item{}, errDown
	}
	return f.Store.Put(ctx, it)
}

// TestStoreDownDuringConsent: if the table fails while a consent is asked
// or answered, nothing is dispatched, in both generations, and a store
// failure is never a 404 that would end a session.
func TestStoreDownDuringConsent(t *testing.T) {
	for _, version := range generations {
		t.Run(version, func(t *testing.T) {
			s := apptest.New(t, "dynamodb", nil)
			// A task's consent, in its execution record (2026-07-28), and
			// session events (legacy) live under these prefixes.
			prefix := "EXEC#"
			if version != mcpserver.Version20260728 {
				prefix = "SESSION#"
			}
			f := &failing{prefix: prefix}
			srv := httptest.NewServer(s.Wrap(func(st store.Store) store.Store { f.Store = st; return f }))
			defer srv.Close()
			cs := client(t, srv.URL, s.Key("alice", agentgate.ScopeUser), version, func(*mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				f.set(true) // the table goes down between asking and answering
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
			}, nil)
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "dispatch_task", Arguments: map[string]any{"agentId": s.AgentID, "instruction": "echo down"}})
			if err == nil && !res.IsError {
				t.Fatalf("dispatch with the table down succeeded: %+v", res)
			}
			if s.Sample.Received() != 0 {
				t.Errorf("the agent received %d messages", s.Sample.Received())
			}
			// And while the table is down, a session request is 503, not 404.
			if version != mcpserver.Version20260728 {
				_, err := cs.ListTools(t.Context(), nil)
				if err == nil || strings.Contains(err.Error(), "session not found") {
					t.Errorf("tools/list with the table down: %v; want a 503, not a lost session", err)
				}
			}
		})
	}
}

// TestConcurrentDispatchOneTaskID: 32 concurrent dispatch_task calls with
// one taskId, each consented: one A2A message reaches the agent, and all
// report the same task.
func TestConcurrentDispatchOneTaskID(t *testing.T) {
	for _, version := range generations {
		t.Run(version, func(t *testing.T) {
			s := apptest.New(t, "dynamodb", nil)
			key := s.Key("alice", agentgate.ScopeUser)
			urls := []string{s.Serve(), s.Serve()} // two instances
			sessions := []*mcp.ClientSession{client(t, urls[0], key, version, approve, nil), client(t, urls[1], key, version, approve, nil)}
			const n = 32
			outs := make([]mcpserver.DispatchOutput, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					res, err := sessions[i%2].CallTool(context.Background(), &mcp.CallToolParams{Name: "dispatch_task",
						Arguments: map[string]any{"agentId": s.AgentID, "instruction": "echo once", "taskId": "one-task"}})
					if err != nil {
						t.Error(err)
						return
					}
					structured(t, res, &outs[i])
				})
			}
			wg.Wait()
			if got := s.Sample.Received(); got != 1 {
				t.Fatalf("the agent received %d messages under %d concurrent calls, want 1", got, n)
			}
			for i, out := range outs {
				if !out.Dispatched || out.TaskID != "one-task" {
					t.Errorf("call %d: %+v", i, out)
				}
			}
		})
	}
}
