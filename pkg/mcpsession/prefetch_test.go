package mcpsession

import (
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/store"
	"github.com/agentgate/agentgate/pkg/store/storetest"
)

// TestPrefetchIsOneReadCheckedAfterwards: the read Prefetch starts is the
// request's first lookup's (no second read), checked against the caller
// the chain authenticated (someone else's session is not found, prefetched
// or not); a later lookup reads anew; a request without a usable session
// id starts nothing.
func TestPrefetchIsOneReadCheckedAfterwards(t *testing.T) {
	now := storetest.Epoch
	clock := func() time.Time { return now }
	emb := openStore(t, clock)
	st := storetest.Count(emb)
	h := &Handler{Store: st, TTL: time.Hour, Now: clock}
	aliceSession(t, emb, "s1", now)

	for _, tc := range []struct {
		caller string
		want   error
	}{{"alice", nil}, {"mallory", errNoSession}} {
		r := httptest.NewRequest("POST", "/mcp", nil)
		r.Header.Set(headerSession, "s1")
		before := st.Reads()
		r = h.Prefetch(r)
		ctx := agentgate.WithPrincipal(r.Context(), agentgate.Principal{Subject: tc.caller, Scope: agentgate.ScopeUser})
		if _, _, err := h.lookup(ctx, "s1"); err != tc.want {
			t.Errorf("%s's lookup of alice's prefetched session: %v, want %v", tc.caller, err, tc.want)
		}
		if n := st.Reads() - before; n != 1 {
			t.Errorf("%s: %d reads for a prefetched lookup, want 1", tc.caller, n)
		}
		if _, _, err := h.lookup(ctx, "s1"); err != tc.want || st.Reads()-before != 2 {
			t.Errorf("%s: a second lookup: %v after %d reads, want a read of its own", tc.caller, err, st.Reads()-before)
		}
	}
	for _, sid := range []string{"", "bad id"} {
		r := httptest.NewRequest("POST", "/mcp", nil)
		r.Header.Set(headerSession, sid)
		before := st.Reads()
		if got := h.Prefetch(r); got != r || st.Reads() != before {
			t.Errorf("session id %q: a read was started", sid)
		}
	}
}

// TestPrefetchOfAResumingGET: a GET that resumes a stream starts the
// session's read only, which holds the stream, served once.
func TestPrefetchOfAResumingGET(t *testing.T) {
	clock := func() time.Time { return storetest.Epoch }
	st := storetest.Count(openStore(t, clock))
	h := &Handler{Store: st, TTL: time.Hour, Now: clock}
	for _, last := range []string{"st_0.k2", "st_1"} {
		r := httptest.NewRequest("GET", "/mcp", nil)
		r.Header.Set(headerSession, "s1")
		r.Header.Set("Last-Event-ID", last)
		before := st.Reads()
		ctx := h.Prefetch(r).Context()
		if _, err := h.read(ctx, store.SessionKey("s1")); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: read of the session: %v, want not found", last, err)
		}
		if n := st.Reads() - before; n != 1 {
			t.Errorf("%s: %d reads, want the session's only", last, n)
		}
	}
}
