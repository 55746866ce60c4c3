package embedded

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentgate/agentgate/pkg/store"
	"github.com/agentgate/agentgate/pkg/store/storetest"
)

// TestRateWindowsLiveInMemory: a rate-limit window counts as on disk (from
// zero, atomically, starting over once expired, MustExist honoured) but
// writes nothing to the file; other counters still do.
func TestRateWindowsLiveInMemory(t *testing.T) {
	now := storetest.Epoch
	s, err := Open(filepath.Join(t.TempDir(), "agentgate.db"), WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	window := store.RateKey("mcp:ip", "192.0.2.1", now.Unix())
	writes := func() int64 { st := s.db.Stats(); return st.TxStats.GetWrite() }

	before := writes()
	if _, err := s.Add(ctx, window, 1, store.AddOptions{MustExist: true}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("MustExist on an absent window: %v", err)
	}
	for i := int64(1); i <= 3; i++ {
		n, err := s.Add(ctx, window, 1, store.AddOptions{ExpiresAt: now.Add(time.Minute)})
		if err != nil || n != i {
			t.Fatalf("add %d: %d, %v", i, n, err)
		}
	}
	if it, err := s.Get(ctx, window); err != nil || it.Count != 3 || !it.CountedAt.Equal(now) {
		t.Errorf("get: %+v, %v", it, err)
	}
	if w := writes() - before; w != 0 {
		t.Errorf("%d writes to the file for a rate window, want none", w)
	}

	now = now.Add(time.Minute)
	if n, err := s.Add(ctx, window, 1, store.AddOptions{ExpiresAt: now.Add(time.Minute)}); err != nil || n != 1 {
		t.Errorf("after the window: %d, %v; want a fresh count", n, err)
	}
	if err := s.Delete(ctx, window); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, window); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleted window: %v", err)
	}

	other := store.Key{PK: "COUNTER#x", SK: "C"}
	if _, err := s.Add(ctx, other, 1, store.AddOptions{}); err != nil {
		t.Fatal(err)
	}
	if writes() == before {
		t.Error("a counter that is not a rate window was not written to the file")
	}
}

// TestSweepDropsExpiredWindows: windows of past subjects do not pile up.
func TestSweepDropsExpiredWindows(t *testing.T) {
	now := storetest.Epoch
	var v volatile
	for i := range 3000 {
		key := store.RateKey("api:ip", "subject", int64(i))
		if _, err := v.add(key, 1, store.AddOptions{ExpiresAt: now.Add(time.Second)}, now); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Second) // each window has ended when the next opens
	}
	if n := len(v.items); n > 2048 {
		t.Errorf("%d windows kept, most of them expired", n)
	}
}

// BenchmarkAdd: a rate window counted in memory against a counter
// committed (and synced) to the file.
//
//	go test -run '^$' -bench Add -benchmem ./pkg/store/embedded/
func BenchmarkAdd(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "agentgate.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for name, key := range map[string]store.Key{
		"rate-window": store.RateKey("mcp:ip", "192.0.2.1", 0),
		"counter":     {PK: "COUNTER#x", SK: "C"},
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Add(b.Context(), key, 1, store.AddOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
