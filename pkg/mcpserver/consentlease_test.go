package mcpserver_test

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/app/apptest"
	"github.com/agentgate/agentgate/pkg/mcpserver"
	"github.com/agentgate/agentgate/pkg/store"
	"github.com/agentgate/agentgate/pkg/store/storetest"
)

// unsettling is a store that, while on, fails to settle consent records:
// the request that sent dies, as far as the table knows, holding the
// accepted consent's claim.
type unsettling struct {
	store.Store
	on atomic.Bool
}

func (u *unsettling) Update(ctx context.Context, it store.Item) (store.Item, error) {
	if u.on.Load() && strings.HasPrefix(it.PK, "CONSENT#") && bytes.Contains(it.Data, []byte(`"state":"settled"`)) {
		return store.Item{}, errDown
	}
	return u.Store.Update(ctx, it)
}

// TestConsentClaimLease: an accepted consent is the turn's once-only claim.
// While its sender's lease runs, a replay of the answer waits rather than
// sends; once a sender that died has let it run out, the replay takes the
// claim over and sends.
func TestConsentClaimLease(t *testing.T) {
	clock := storetest.NewClock()
	s := apptest.NewOn(t, "embedded", nil, clock.Now)
	u := &unsettling{}
	srv := httptest.NewServer(s.Wrap(func(st store.Store) store.Store { u.Store = st; return u }))
	t.Cleanup(srv.Close)
	cs := mrtr(t, srv.URL, s.ConnectorKey())
	args := map[string]any{"message": "echo leased"}
	res := must(cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask", Arguments: args}))
	if !res.NeedsInput() {
		t.Fatalf("want an input request, got %+v", res)
	}
	yes := mcp.InputResponseMap{"consent": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}}
	answer := func() mcpserver.ChatOutput {
		var out mcpserver.ChatOutput
		structured(t, must(cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask", Arguments: args, RequestState: res.RequestState, InputResponses: yes})), &out)
		return out
	}

	u.on.Store(true)
	if out := answer(); !out.Dispatched || s.Sample.Received() != 1 {
		t.Fatalf("the yes: %+v; agent received %d", out, s.Sample.Received())
	}
	u.on.Store(false)

	replayed := make(chan mcpserver.ChatOutput, 1)
	go func() { replayed <- answer() }()
	select {
	case out := <-replayed:
		t.Fatalf("a replay during the lease answered %+v; it must wait for the sender", out)
	case <-time.After(300 * time.Millisecond):
	}
	if got := s.Sample.Received(); got != 1 {
		t.Fatalf("during the lease the agent received %d messages, want 1", got)
	}
	clock.Advance(time.Minute)
	if out := <-replayed; !out.Dispatched || out.Replayed || s.Sample.Received() != 2 {
		t.Errorf("after the lease: %+v; agent received %d, want the claim taken over and sent", out, s.Sample.Received())
	}
	if out := answer(); !out.Dispatched || !out.Replayed || s.Sample.Received() != 2 {
		t.Errorf("settled: %+v; agent received %d, want the result replayed", out, s.Sample.Received())
	}
}
