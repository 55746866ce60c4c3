package storetest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/store"
)

// Delayed wraps a store, makes every call wait a fixed latency before it
// reaches the store, and records when each call ran, so that a test can
// measure how many store round trips a request waits for one after the
// other (its depth), not only how many it makes.
//
// On Lambda a request's latency is dominated by its sequential round trips
// to DynamoDB; calls made concurrently cost one round trip between them.
// Counting calls (Counting) cannot tell the two apart, and reading the code
// to decide which calls overlap is an assertion, not a measurement. With
// every call taking at least d, two calls that the code runs concurrently
// overlap in time for certain (each is still sleeping when the other
// starts), and two it runs one after the other cannot overlap: so the depth
// is read off the schedule that actually ran. Choose d well above the
// scheduler's jitter (1-2 ms for a request, more where a test needs
// goroutines to overlap with certainty); scheduling noise can only make a
// measured depth larger, never smaller, so the least of a few measurements
// is the robust figure.
type Delayed struct {
	inner store.Store
	d     time.Duration

	mu    sync.Mutex
	calls []interval // since the last Reset
}

var _ store.Store = (*Delayed)(nil)

// interval is one call: the time it was made, the time it returned, and
// which method it was.
type interval struct {
	method     string
	start, end time.Time
}

// Delay returns s wrapped so that each of its data methods (all but Close)
// first waits d, the stand-in for the distance from Lambda to DynamoDB.
func Delay(s store.Store, d time.Duration) *Delayed {
	return &Delayed{inner: s, d: d}
}

// wait sleeps d, or returns ctx's error if ctx ends first (then the call
// never reaches the store and is not recorded: a request that gave up
// does not wait for it).
func (s *Delayed) wait(ctx context.Context) (time.Time, error) {
	start := time.Now()
	if !agentgate.Sleep(ctx, s.d) {
		return start, ctx.Err()
	}
	return start, nil
}

// record notes a call that began at start and has just returned.
func (s *Delayed) record(method string, start time.Time) {
	end := time.Now()
	s.mu.Lock()
	s.calls = append(s.calls, interval{method: method, start: start, end: end})
	s.mu.Unlock()
}

// Reset forgets the calls made so far: Calls, Depth and Summary count from
// here.
func (s *Delayed) Reset() {
	s.mu.Lock()
	s.calls = nil
	s.mu.Unlock()
}

// Calls is the number of calls that reached the store since the last Reset.
func (s *Delayed) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.calls)
}

// Depth is the critical-path depth of the calls since the last Reset: the
// length of the longest chain of calls each of which started at or after
// the previous one returned. Sequential calls add up; calls that overlap
// (made concurrently) do not add to each other. Zero calls have depth 0.
func (s *Delayed) Depth() int {
	s.mu.Lock()
	calls := slices.Clone(s.calls)
	s.mu.Unlock()
	return depth(calls)
}

// depth is the longest chain in the interval order: sorted by start, a call
// can follow only calls that started before it, so one pass computes, for
// each call, the longest chain ending with it (1 + the longest among the
// calls that had returned by the time it started).
func depth(calls []interval) int {
	slices.SortFunc(calls, func(a, b interval) int { return a.start.Compare(b.start) })
	longest := make([]int, len(calls))
	best := 0
	for i, c := range calls {
		longest[i] = 1
		for j := range i {
			if !calls[j].end.After(c.start) && longest[j]+1 > longest[i] {
				longest[i] = longest[j] + 1
			}
		}
		best = max(best, longest[i])
	}
	return best
}

// Summary describes the calls since the last Reset: "calls=N depth=D"
// followed by the count of each method called, by name, e.g.
// "calls=3 depth=2 Add=1 Get=2".
func (s *Delayed) Summary() string {
	s.mu.Lock()
	calls := slices.Clone(s.calls)
	s.mu.Unlock()
	per := map[string]int{}
	for _, c := range calls {
		per[c.method]++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "calls=%d depth=%d", len(calls), depth(calls))
	for _, m := range slices.Sorted(maps.Keys(per)) {
		fmt.Fprintf(&b, " %s=%d", m, per[m])
	}
	return b.String()
}

func (s *Delayed) Get(ctx context.Context, k store.Key) (store.Item, error) {
	start, err := s.wait(ctx)
	if err != nil {
		return store.Item{}, err
	}
	defer s.record("Get", start)
	return s.inner.Get(ctx, k)
}

func (s *Delayed) Create(ctx context.Context, it store.Item) (store.Item, error) {
	start, err := s.wait(ctx)
	if err != nil {
		return store.Item{}, err
	}
	defer s.record("Create", start)
	return s.inner.Create(ctx, it)
}

func (s *Delayed) Put(ctx context.Context, it store.Item) (store.Item, error) {
	start, err := s.wait(ctx)
	if err != nil {
		return store.Item{}, err
	}
	defer s.record("Put", start)
	return s.inner.Put(ctx, it)
}

func (s *Delayed) Update(ctx context.Context, it store.Item) (store.Item, error) {
	start, err := s.wait(ctx)
	if err != nil {
		return store.Item{}, err
	}
	defer s.record("Update", start)
	return s.inner.Update(ctx, it)
}

func (s *Delayed) Delete(ctx context.Context, k store.Key) error {
	start, err := s.wait(ctx)
	if err != nil {
		return err
	}
	defer s.record("Delete", start)
	return s.inner.Delete(ctx, k)
}

func (s *Delayed) Query(ctx context.Context, q store.Query) (store.Page, error) {
	start, err := s.wait(ctx)
	if err != nil {
		return store.Page{}, err
	}
	defer s.record("Query", start)
	return s.inner.Query(ctx, q)
}

func (s *Delayed) Add(ctx context.Context, k store.Key, delta int64, opts store.AddOptions) (int64, error) {
	start, err := s.wait(ctx)
	if err != nil {
		return 0, err
	}
	defer s.record("Add", start)
	return s.inner.Add(ctx, k, delta, opts)
}

// Close closes the wrapped store, at once.
func (s *Delayed) Close() error { return s.inner.Close() }
