package dedup_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/dedup"
	"github.com/agentgate/agentgate/pkg/store"
	"github.com/agentgate/agentgate/pkg/store/dynamo/dynalite"
	"github.com/agentgate/agentgate/pkg/store/storetest"
	"github.com/agentgate/agentgate/pkg/store/teststores"
)

func TestMain(m *testing.M) {
	code := m.Run()
	dynalite.Stop()
	os.Exit(code)
}

var key = dedup.Key{Scope: "test", Caller: "alice", ID: "m-1"}

// counter is an operation that counts its runs and answers its run number.
type counter struct{ runs atomic.Int64 }

func (c *counter) op(context.Context) (json.RawMessage, error) {
	n := c.runs.Add(1)
	return json.RawMessage(fmt.Sprintf(`{"run":%d}`, n)), nil
}

func TestRepeatReplaysFirstResult(t *testing.T) {
	teststores.ForEach(t, func(t *testing.T, st store.Store, clock *storetest.Clock) {
		d := dedup.New(st, dedup.WithClock(clock.Now))
		var c counter
		first, replayed, err := d.Do(t.Context(), key, "digest-a", c.op)
		if err != nil || replayed {
			t.Fatalf("first call: replayed=%v err=%v", replayed, err)
		}
		again, replayed, err := d.Do(t.Context(), key, "digest-a", c.op)
		if err != nil || !replayed {
			t.Fatalf("second call: replayed=%v err=%v", replayed, err)
		}
		if string(again) != string(first) || string(first) != `{"run":1}` {
			t.Errorf("results %s then %s, want the first run's twice", first, again)
		}
		if n := c.runs.Load(); n != 1 {
			t.Errorf("ran %d times, want 1", n)
		}
	})
}

func TestSameIDOtherContentIsConflict(t *testing.T) {
	teststores.ForEach(t, func(t *testing.T, st store.Store, clock *storetest.Clock) {
		d := dedup.New(st, dedup.WithClock(clock.Now))
		var c counter
		if _, _, err := d.Do(t.Context(), key, "digest-a", c.op); err != nil {
			t.Fatal(err)
		}
		_, _, err := d.Do(t.Context(), key, "digest-b", c.op)
		if agentgate.ErrorCode(err) != agentgate.ECONFLICT {
			t.Fatalf("err = %v, want conflict", err)
		}
		if c.runs.Load() != 1 {
			t.Errorf("the conflicting call ran the operation")
		}
	})
}

func TestKeysAreIndependent(t *testing.T) {
	teststores.ForEach(t, func(t *testing.T, st store.Store, clock *storetest.Clock) {
		d := dedup.New(st, dedup.WithClock(clock.Now))
		var c counter
		for _, k := range []dedup.Key{key, {Scope: "test", Caller: "bob", ID: "m-1"}, {Scope: "other", Caller: "alice", ID: "m-1"}} {
			if _, replayed, err := d.Do(t.Context(), k, "d", c.op); err != nil || replayed {
				t.Fatalf("%+v: replayed=%v err=%v", k, replayed, err)
			}
		}
		if n := c.runs.Load(); n != 3 {
			t.Errorf("ran %d times for 3 distinct keys", n)
		}
	})
}

func TestFailureReleasesTheClaim(t *testing.T) {
	teststores.ForEach(t, func(t *testing.T, st store.Store, clock *storetest.Clock) {
		d := dedup.New(st, dedup.WithClock(clock.Now))
		boom := errors.New("agent unreachable")
		_, _, err := d.Do(t.Context(), key, "d", func(context.Context) (json.RawMessage, error) { return nil, boom })
		if !errors.Is(err, boom) {
			t.Fatalf("err = %v, want the operation's", err)
		}
		var c counter
		if _, replayed, err := d.Do(t.Context(), key, "d", c.op); err != nil || replayed || c.runs.Load() != 1 {
			t.Fatalf("retry after a failure: replayed=%v err=%v runs=%d, want a fresh run", replayed, err, c.runs.Load())
		}
	})
}

func TestResultExpiresAfterTTL(t *testing.T) {
	teststores.ForEach(t, func(t *testing.T, st store.Store, clock *storetest.Clock) {
		d := dedup.New(st, dedup.WithClock(clock.Now), dedup.WithTTL(time.Hour))
		var c counter
		for range 2 {
			if _, _, err := d.Do(t.Context(), key, "d", c.op); err != nil {
				t.Fatal(err)
			}
		}
		clock.Advance(time.Hour + time.Second)
		if _, replayed, err := d.Do(t.Context(), key, "d", c.op); err != nil || replayed {
			t.Fatalf("after the TTL: replayed=%v err=%v, want a fresh run", replayed, err)
		}
		if n := c.runs.Load(); n != 2 {
			t.Errorf("ran %d times, want 2 (once per TTL)", n)
		}
	})
}

// TestConcurrentDuplicatesRunOnce races 16 calls with one key, each on its
// own Deduper (as separate Lambda instances would be): one runs, and all
// get its result.
func TestConcurrentDuplicatesRunOnce(t *testing.T) {
	teststores.ForEach(t, func(t *testing.T, st store.Store, clock *storetest.Clock) {
		var c counter
		slow := func(ctx context.Context) (json.RawMessage, error) {
			time.Sleep(50 * time.Millisecond) // hold the claim while the others arrive
			return c.op(ctx)
		}
		const n = 16
		results := make([]string, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				d := dedup.New(st, dedup.WithClock(clock.Now))
				res, _, err := d.Do(t.Context(), key, "d", slow)
				if err != nil {
					t.Error(err)
				}
				results[i] = string(res)
			})
		}
		wg.Wait()
		if runs := c.runs.Load(); runs != 1 {
			t.Fatalf("the operation ran %d times under %d concurrent calls, want once", runs, n)
		}
		for i, r := range results {
			if r != `{"run":1}` {
				t.Errorf("call %d got %q, want the one run's result", i, r)
			}
		}
	})
}

// TestDeadClaimIsTakenOver: a winner that never completes (its instance
// died) holds its key only until the lease runs out.
func TestDeadClaimIsTakenOver(t *testing.T) {
	teststores.ForEach(t, func(t *testing.T, st store.Store, clock *storetest.Clock) {
		d := dedup.New(st, dedup.WithClock(clock.Now), dedup.WithLease(10*time.Second))
		started := make(chan struct{})
		ctx, cancel := context.WithCancel(t.Context())
		dead := make(chan struct{})
		go func() {
			defer close(dead)
			// A winner that is stuck until its instance goes away.
			d.Do(ctx, key, "d", func(ctx context.Context) (json.RawMessage, error) {
				close(started)
				<-ctx.Done()
				select {} // never returns: the instance froze
			})
		}()
		<-started

		// While the lease runs, a duplicate waits and gives up with its context.
		short, stop := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer stop()
		var c counter
		if _, _, err := d.Do(short, key, "d", c.op); agentgate.ErrorCode(err) != agentgate.ETIMEOUT {
			t.Fatalf("during the lease: err = %v, want timeout", err)
		}
		if c.runs.Load() != 0 {
			t.Fatal("a duplicate ran while the first claim was live")
		}

		clock.Advance(11 * time.Second)
		res, replayed, err := d.Do(t.Context(), key, "d", c.op)
		if err != nil || replayed || string(res) != `{"run":1}` {
			t.Fatalf("after the lease: %s replayed=%v err=%v, want a takeover run", res, replayed, err)
		}
		cancel()
	})
}

func TestStoreFailureIsUnavailable(t *testing.T) {
	clock := storetest.NewClock()
	st := teststores.Embedded(t, clock)
	st.Close() // every call now fails
	var c counter
	_, _, err := dedup.New(st).Do(t.Context(), key, "d", c.op)
	if !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("err = %v, want the store's unavailable", err)
	}
	if c.runs.Load() != 0 {
		t.Error("the operation ran without a claim")
	}
}

func TestDigest(t *testing.T) {
	a, _ := dedup.Digest(map[string]any{"b": 1, "a": "x"})
	b, _ := dedup.Digest(map[string]any{"a": "x", "b": 1})
	c, _ := dedup.Digest(map[string]any{"a": "y", "b": 1})
	if a != b || a == c || len(a) != 64 {
		t.Errorf("digests %s %s %s: want equal for equal maps, different otherwise", a, b, c)
	}
}

func TestLookup(t *testing.T) {
	teststores.ForEach(t, func(t *testing.T, st store.Store, clock *storetest.Clock) {
		d := dedup.New(st, dedup.WithClock(clock.Now))
		if _, found, err := d.Lookup(t.Context(), key, "d"); found || err != nil {
			t.Fatalf("before: found=%v err=%v", found, err)
		}
		var c counter
		if _, _, err := d.Do(t.Context(), key, "d", c.op); err != nil {
			t.Fatal(err)
		}
		res, found, err := d.Lookup(t.Context(), key, "d")
		if !found || err != nil || string(res) != `{"run":1}` {
			t.Fatalf("after: %s found=%v err=%v", res, found, err)
		}
		if _, _, err := d.Lookup(t.Context(), key, "other"); agentgate.ErrorCode(err) != agentgate.ECONFLICT {
			t.Errorf("other digest: %v", err)
		}
	})
}
