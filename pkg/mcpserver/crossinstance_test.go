package mcpserver_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/app/apptest"
)

// rotatingProxy plays API Gateway in front of three Lambda instances that
// keep going cold: every request goes to the next instance, and the
// instance that served the request before it is replaced by a new one (its
// own store client, SDK servers and memory). No request is served by the
// instance that served the one before it, and no instance lives long.
type rotatingProxy struct {
	stack    *apptest.Stack
	mu       sync.Mutex
	slots    [3]http.Handler
	next     int
	prev     int
	served   atomic.Int64
	restarts atomic.Int64
}

func newRotatingProxy(s *apptest.Stack) *rotatingProxy {
	p := &rotatingProxy{stack: s, prev: -1}
	for i := range p.slots {
		p.slots[i] = s.Instance()
	}
	return p
}

func (p *rotatingProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	i := p.next
	p.next = (p.next + 1) % len(p.slots)
	if p.prev >= 0 {
		p.slots[p.prev] = p.stack.Instance() // a cold start
		p.restarts.Add(1)
	}
	p.prev = i
	h := p.slots[i]
	p.mu.Unlock()
	p.served.Add(1)
	h.ServeHTTP(w, r)
}

// TestCrossInstance: both protocol generations, with the Go client and the
// TypeScript client, complete a consented dispatch and poll it to the end
// through instances that change under every request, on one table.
func TestCrossInstance(t *testing.T) {
	for _, version := range []string{"2026-07-28", "2025-11-25", "typescript"} {
		t.Run(version, func(t *testing.T) {
			s := apptest.New(t, "dynamodb", nil)
			proxy := newRotatingProxy(s)
			srv := httptest.NewServer(proxy)
			defer srv.Close()
			key := s.Key("alice", agentgate.ScopeUser)

			if version == "typescript" {
				res := runTSClient(t, srv.URL, key, s.AgentID, "accept")
				if !res.Dispatch.Dispatched || res.Final == nil || res.Final.Status != "completed" {
					t.Fatalf("dispatch %+v, final %+v", res.Dispatch, res.Final)
				}
			} else {
				var asked atomic.Int64
				cs := client(t, srv.URL, key, version, approve, &asked)
				if _, err := cs.ListTools(t.Context(), nil); err != nil {
					t.Fatal(err)
				}
				out, res := dispatch(t, cs, map[string]any{"agentId": s.AgentID, "instruction": "reverse across"})
				if !out.Dispatched || res.IsError || asked.Load() != 1 {
					t.Fatalf("dispatch %+v (asked %d)", out, asked.Load())
				}
				if done := await(t, cs, out.TaskID); done.Status != "completed" || done.Result != "ssorca" {
					t.Fatalf("execution %+v", done)
				}
			}
			if got := s.Sample.Received(); got != 1 {
				t.Errorf("the agent received %d messages, want 1", got)
			}
			if proxy.served.Load() < 4 || proxy.restarts.Load() != proxy.served.Load()-1 {
				t.Errorf("served %d requests with %d restarts: the proxy did not rotate", proxy.served.Load(), proxy.restarts.Load())
			}
		})
	}
}
