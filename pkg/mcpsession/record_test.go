package mcpsession

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/store"
	"github.com/agentgate/agentgate/pkg/store/embedded"
	"github.com/agentgate/agentgate/pkg/store/storetest"
)

// TestExpiredSessionIs404: a session past its TTL is gone (404), even
// where the table has not deleted it yet; a request within the TTL slides
// it.
func TestExpiredSessionIs404(t *testing.T) {
	now := storetest.Epoch
	clock := func() time.Time { return now }
	st := openStore(t, clock)
	h := &Handler{Store: st, TTL: time.Hour, Now: clock}
	ctx := agentgate.WithPrincipal(t.Context(), agentgate.Principal{Subject: "alice", Scope: agentgate.ScopeUser})
	aliceSession(t, st, "s1", now)
	now = now.Add(50 * time.Minute) // past a quarter of the TTL: the next request slides it
	got, version, err := h.lookup(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if err := h.save(ctx, "s1", got, version); err != nil {
		t.Fatal(err)
	}
	now = now.Add(50 * time.Minute) // 100 minutes after creation, 50 after the slide
	if _, _, err := h.lookup(ctx, "s1"); err != nil {
		t.Fatalf("a session used 50 minutes ago: %v", err)
	}
	now = now.Add(61 * time.Minute)
	if _, _, err := h.lookup(ctx, "s1"); err != errNoSession {
		t.Fatalf("a session idle past its TTL: %v, want errNoSession", err)
	}
}

// openStore is an embedded store on clock, closed when the test ends.
func openStore(t *testing.T, clock func() time.Time) *embedded.Store {
	t.Helper()
	st, err := embedded.Open(filepath.Join(t.TempDir(), "db"), embedded.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// aliceSession stores alice's session sid, started and last seen at now,
// for an hour.
func aliceSession(t *testing.T, st store.Store, sid string, now time.Time) {
	t.Helper()
	data, _ := json.Marshal(sessionRecord{Subject: "alice", Scope: agentgate.ScopeUser, CreatedAt: now, LastSeen: now})
	if _, err := st.Create(t.Context(), store.Item{Key: store.SessionKey(sid), Data: data, ExpiresAt: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
}
