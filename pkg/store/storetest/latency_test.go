package storetest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgate/agentgate/pkg/store"
	"github.com/agentgate/agentgate/pkg/store/storetest"
	"github.com/agentgate/agentgate/pkg/store/teststores"
)

// overlap is the latency of the tests that need goroutines to overlap: far
// above the time a started goroutine takes to be scheduled, even under the
// race detector, so that calls started together are all still waiting when
// the last of them starts.
const overlap = 20 * time.Millisecond

func delayed(t *testing.T, d time.Duration) (*storetest.Delayed, *storetest.Counting) {
	t.Helper()
	inner := storetest.Count(teststores.Embedded(t, storetest.NewClock()))
	return storetest.Delay(inner, d), inner
}

func key(i int) store.Key { return store.Key{PK: fmt.Sprint("P#", i), SK: "S"} }

// concurrently makes n calls at once: each in its own goroutine, all
// released together, and waits for them.
func concurrently(t *testing.T, n int, call func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	release := make(chan struct{})
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			<-release
			errs <- call(i)
		})
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestDelayedSequentialDepthIsCalls(t *testing.T) {
	s, _ := delayed(t, time.Millisecond)
	ctx := t.Context()
	if _, err := s.Put(ctx, store.Item{Key: key(1), Kind: "t"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, key(1)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(ctx, key(2), 1, store.AddOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Query(ctx, store.Query{PK: "P#1"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, key(1)); err != nil {
		t.Fatal(err)
	}
	it, err := s.Create(ctx, store.Item{Key: key(3), Kind: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, it); err != nil {
		t.Fatal(err)
	}
	if s.Calls() != 7 || s.Depth() != 7 {
		t.Fatalf("7 sequential calls: %s", s.Summary())
	}
	want := "calls=7 depth=7 Add=1 Create=1 Delete=1 Get=1 Put=1 Query=1 Update=1"
	if got := s.Summary(); got != want {
		t.Fatalf("Summary() = %q, want %q", got, want)
	}
}

func TestDelayedConcurrentCallsAreOneDeep(t *testing.T) {
	s, _ := delayed(t, overlap)
	const n = 8
	concurrently(t, n, func(i int) error {
		_, err := s.Get(t.Context(), key(i))
		if errors.Is(err, store.ErrNotFound) {
			err = nil
		}
		return err
	})
	if s.Calls() != n || s.Depth() != 1 {
		t.Fatalf("%d concurrent calls: %s, want depth 1", n, s.Summary())
	}
}

func TestDelayedMixedDepth(t *testing.T) {
	s, _ := delayed(t, overlap)
	ctx := t.Context()
	for i := range 2 {
		if _, err := s.Put(ctx, store.Item{Key: key(i), Kind: "t"}); err != nil {
			t.Fatal(err)
		}
	}
	concurrently(t, 3, func(i int) error {
		_, err := s.Get(ctx, key(i%2))
		return err
	})
	if _, err := s.Add(ctx, key(9), 1, store.AddOptions{}); err != nil {
		t.Fatal(err)
	}
	if s.Calls() != 6 || s.Depth() != 4 {
		t.Fatalf("2 sequential, 3 concurrent, 1: %s, want calls=6 depth=4", s.Summary())
	}
	if got := s.Summary(); !strings.HasPrefix(got, "calls=6 depth=4 Add=1 Get=3 Put=2") {
		t.Fatalf("Summary() = %q", got)
	}
}

func TestDelayedReset(t *testing.T) {
	s, _ := delayed(t, time.Millisecond)
	for i := range 3 {
		if _, err := s.Add(t.Context(), key(i), 1, store.AddOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if s.Calls() != 3 || s.Depth() != 3 {
		t.Fatalf("before Reset: %s", s.Summary())
	}
	s.Reset()
	if s.Calls() != 0 || s.Depth() != 0 || s.Summary() != "calls=0 depth=0" {
		t.Fatalf("after Reset: %s", s.Summary())
	}
	if _, err := s.Get(t.Context(), key(0)); err != nil {
		t.Fatal(err)
	}
	if s.Calls() != 1 || s.Depth() != 1 {
		t.Fatalf("one call after Reset: %s", s.Summary())
	}
}

// A call whose context ends during the delay returns the context's error
// at once and never reaches the store.
func TestDelayedHonoursContext(t *testing.T) {
	s, inner := delayed(t, time.Hour)
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(overlap, cancel)
	start := time.Now()
	_, err := s.Put(ctx, store.Item{Key: key(1), Kind: "t"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Put under a canceled context: %v, want %v", err, context.Canceled)
	}
	if took := time.Since(start); took > time.Minute {
		t.Fatalf("Put returned after %v, not when its context ended", took)
	}
	dctx, dcancel := context.WithTimeout(t.Context(), overlap)
	defer dcancel()
	if _, err := s.Get(dctx, key(1)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Get past its deadline: %v, want %v", err, context.DeadlineExceeded)
	}
	if inner.Reads() != 0 || inner.Writes() != 0 {
		t.Fatalf("the inner store saw %d reads and %d writes, want none", inner.Reads(), inner.Writes())
	}
	if s.Calls() != 0 || s.Depth() != 0 {
		t.Fatalf("abandoned calls were recorded: %s", s.Summary())
	}
}
