// Package storetest is the contract every store.Store implementation passes:
// the DynamoDB store against dynalite and the embedded store run the same
// tests and the same benchmarks, so code above the store can rely on one set
// of semantics (TTL as absence, conditional writes, typed errors, paging).
package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/store"
)

// Factory returns a new, empty store whose notion of "now" is clock. It
// registers its own cleanup with tb.
type Factory func(tb testing.TB, clock func() time.Time) store.Store

// Clock is a manual clock, safe for concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// Epoch is where every test clock starts: a whole second, decades away from
// any day the tests run on, so that a component still reading the wall clock
// while the store or another component reads the test clock fails at once
// rather than on the day the calendar passes a date written in a test.
var Epoch = time.Date(2001, 9, 9, 1, 46, 40, 0, time.UTC)

// NewClock returns a clock set to Epoch.
func NewClock() *Clock { return &Clock{now: Epoch} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

// Advance moves the clock forward.
func (c *Clock) Advance(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// Run runs the contract suite against stores made by f.
func Run(t *testing.T, f Factory) {
	tests := []struct {
		name string
		fn   func(*testing.T, store.Store, *Clock)
	}{
		{"GetMissing", testGetMissing},
		{"CreateRoundTrip", testCreateRoundTrip},
		{"CreateExisting", testCreateExisting},
		{"CreateRace32", testCreateRace},
		{"PutUpserts", testPut},
		{"UpdateCompareAndSet", testUpdate},
		{"UpdateRace", testUpdateRace},
		{"UpdateNoLostWrites", testUpdateNoLostWrites},
		{"TTLIsAbsence", testTTL},
		{"TTLRoundsUp", testTTLRoundsUp},
		{"Delete", testDelete},
		{"QueryPrimary", testQueryPrimary},
		{"QueryPaging", testQueryPaging},
		{"QueryIndexes", testQueryIndexes},
		{"QueryRejectsBadInput", testQueryBadInput},
		{"AddCounts", testAdd},
		{"AddConcurrent", testAddConcurrent},
		{"AddExpiredRestarts", testAddExpired},
		{"AddMustExist", testAddMustExist},
		{"AddKeepsPermanentItemsPermanent", testAddPermanent},
		{"PutOverExpiredStartsAfresh", testPutExpired},
		{"RejectsBadItems", testBadItems},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clock := NewClock()
			s := f(t, clock.Now)
			tc.fn(t, s, clock)
		})
	}
}

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func key(pk string) store.Key { return store.Key{PK: pk, SK: "S"} }

func mustCreate(t testing.TB, s store.Store, it store.Item) store.Item {
	t.Helper()
	got, err := s.Create(ctx(t), it)
	if err != nil {
		t.Fatalf("Create(%v): %v", it.Key, err)
	}
	return got
}

func mustGet(t testing.TB, s store.Store, k store.Key) store.Item {
	t.Helper()
	got, err := s.Get(ctx(t), k)
	if err != nil {
		t.Fatalf("Get(%v): %v", k, err)
	}
	return got
}

func wantErr(t testing.TB, op string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: got error %v, want %v", op, err, want)
	}
}

func testGetMissing(t *testing.T, s store.Store, _ *Clock) {
	_, err := s.Get(ctx(t), key("missing"))
	wantErr(t, "Get(missing)", err, store.ErrNotFound)
	if agentgate.ErrorCode(err) != agentgate.ENOTFOUND {
		t.Fatalf("code = %q, want %q", agentgate.ErrorCode(err), agentgate.ENOTFOUND)
	}
	if errors.Is(err, store.ErrUnavailable) {
		t.Fatal("not-found must not look like a store failure")
	}
}

func testCreateRoundTrip(t *testing.T, s store.Store, c *Clock) {
	in := store.Item{
		Key:       store.Key{PK: "P#1", SK: "S#1"},
		Kind:      "thing",
		Data:      []byte(`{"a":1,"b":"ü"}`),
		Index1:    store.IndexKey{PK: "I1", SK: "x"},
		Index2:    store.IndexKey{PK: "I2", SK: "y"},
		ExpiresAt: c.Now().Add(time.Hour),
	}
	created := mustCreate(t, s, in)
	if created.Version != 1 {
		t.Fatalf("created version = %d, want 1", created.Version)
	}
	got := mustGet(t, s, in.Key)
	if got.Key != in.Key || got.Kind != in.Kind || string(got.Data) != string(in.Data) ||
		got.Index1 != in.Index1 || got.Index2 != in.Index2 || got.Version != 1 {
		t.Fatalf("Get = %+v, want %+v with version 1", got, in)
	}
	if !got.ExpiresAt.Equal(in.ExpiresAt) {
		t.Fatalf("ExpiresAt = %v, want %v", got.ExpiresAt, in.ExpiresAt)
	}
	if got.Count != 0 || !got.CountedAt.IsZero() {
		t.Fatalf("fresh item has count %d at %v", got.Count, got.CountedAt)
	}
}

func testCreateExisting(t *testing.T, s store.Store, _ *Clock) {
	mustCreate(t, s, store.Item{Key: key("dup"), Data: []byte(`"first"`)})
	_, err := s.Create(ctx(t), store.Item{Key: key("dup"), Data: []byte(`"second"`)})
	wantErr(t, "second Create", err, store.ErrConflict)
	if agentgate.ErrorCode(err) != agentgate.ECONFLICT {
		t.Fatalf("code = %q", agentgate.ErrorCode(err))
	}
	if got := mustGet(t, s, key("dup")); string(got.Data) != `"first"` {
		t.Fatalf("losing Create overwrote the item: %s", got.Data)
	}
}

func testCreateRace(t *testing.T, s store.Store, _ *Clock) {
	const n = 32
	var wg sync.WaitGroup
	var wins atomic.Int32
	winner := make(chan int, n)
	errs := make(chan error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			_, err := s.Create(ctx(t), store.Item{Key: key("race"), Data: fmt.Appendf(nil, "%d", i)})
			switch {
			case err == nil:
				wins.Add(1)
				winner <- i
			case errors.Is(err, store.ErrConflict):
			default:
				errs <- err
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("Create failed instead of losing the race: %v", err)
	}
	if w := wins.Load(); w != 1 {
		t.Fatalf("%d goroutines won the create-if-absent race, want exactly 1", w)
	}
	if got, want := string(mustGet(t, s, key("race")).Data), fmt.Sprint(<-winner); got != want {
		t.Fatalf("stored data %q is not the winner's %q", got, want)
	}
}

func testPut(t *testing.T, s store.Store, _ *Clock) {
	p1, err := s.Put(ctx(t), store.Item{Key: key("put"), Data: []byte(`1`), Index1: store.IndexKey{PK: "A", SK: "1"}})
	if err != nil || p1.Version != 1 {
		t.Fatalf("first Put = v%d, %v; want v1", p1.Version, err)
	}
	if _, err := s.Add(ctx(t), key("put"), 5, store.AddOptions{}); err != nil {
		t.Fatal(err)
	}
	p2, err := s.Put(ctx(t), store.Item{Key: key("put"), Data: []byte(`2`)})
	if err != nil || p2.Version != 2 {
		t.Fatalf("second Put = v%d, %v; want v2", p2.Version, err)
	}
	got := mustGet(t, s, key("put"))
	if string(got.Data) != "2" || got.Version != 2 || got.Count != 5 {
		t.Fatalf("after Put: data %s v%d count %d; want 2 v2 count 5 (Put keeps the counter)", got.Data, got.Version, got.Count)
	}
	if !got.Index1.IsZero() {
		t.Fatalf("Put without an index key must drop the old one, got %+v", got.Index1)
	}
}

func testUpdate(t *testing.T, s store.Store, _ *Clock) {
	it := mustCreate(t, s, store.Item{Key: key("cas"), Data: []byte(`1`)})
	it.Data = []byte(`2`)
	up, err := s.Update(ctx(t), it)
	if err != nil || up.Version != 2 {
		t.Fatalf("Update = v%d, %v; want v2", up.Version, err)
	}
	stale := it // still carries version 1
	stale.Data = []byte(`"stale"`)
	_, err = s.Update(ctx(t), stale)
	wantErr(t, "stale Update", err, store.ErrConflict)
	if got := mustGet(t, s, key("cas")); string(got.Data) != "2" || got.Version != 2 {
		t.Fatalf("stale Update changed the item: %s v%d", got.Data, got.Version)
	}
	_, err = s.Update(ctx(t), store.Item{Key: key("nope"), Version: 1, Data: []byte(`1`)})
	wantErr(t, "Update(missing)", err, store.ErrNotFound)
	if _, err := s.Get(ctx(t), key("nope")); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Update of a missing item created it: %v", err)
	}
}

func testUpdateRace(t *testing.T, s store.Store, _ *Clock) {
	base := mustCreate(t, s, store.Item{Key: key("state"), Data: []byte(`"pending"`)})
	const n = 16
	var wg sync.WaitGroup
	var wins, conflicts atomic.Int32
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			it := base
			it.Data = fmt.Appendf(nil, `"done-%d"`, i)
			_, err := s.Update(ctx(t), it)
			switch {
			case err == nil:
				wins.Add(1)
			case errors.Is(err, store.ErrConflict):
				conflicts.Add(1)
			default:
				t.Errorf("Update: %v", err)
			}
		})
	}
	close(start)
	wg.Wait()
	if wins.Load() != 1 || conflicts.Load() != n-1 {
		t.Fatalf("state transition race: %d wins, %d conflicts; want 1 and %d", wins.Load(), conflicts.Load(), n-1)
	}
}

func testUpdateNoLostWrites(t *testing.T, s store.Store, _ *Clock) {
	mustCreate(t, s, store.Item{Key: key("ctr"), Data: []byte(`0`)})
	const workers, each = 8, 5
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range each {
				for {
					it, err := s.Get(ctx(t), key("ctr"))
					if err != nil {
						t.Errorf("Get: %v", err)
						return
					}
					var v int
					fmt.Sscan(string(it.Data), &v)
					it.Data = fmt.Appendf(nil, "%d", v+1)
					if _, err = s.Update(ctx(t), it); err == nil {
						break
					} else if !errors.Is(err, store.ErrConflict) {
						t.Errorf("Update: %v", err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	got := mustGet(t, s, key("ctr"))
	if string(got.Data) != fmt.Sprint(workers*each) || got.Version != workers*each+1 {
		t.Fatalf("read-modify-write loop ended at %s (v%d), want %d (v%d)", got.Data, got.Version, workers*each, workers*each+1)
	}
}

func testTTL(t *testing.T, s store.Store, c *Clock) {
	exp := c.Now().Add(10 * time.Second)
	it := mustCreate(t, s, store.Item{Key: key("ttl"), Data: []byte(`1`), ExpiresAt: exp, Index1: store.IndexKey{PK: "TTL", SK: "a"}})
	mustCreate(t, s, store.Item{Key: key("keep"), Data: []byte(`1`), Index1: store.IndexKey{PK: "TTL", SK: "b"}})
	c.Advance(9 * time.Second)
	mustGet(t, s, key("ttl"))

	c.Advance(time.Second) // now == ExpiresAt: gone
	_, err := s.Get(ctx(t), key("ttl"))
	wantErr(t, "Get(expired)", err, store.ErrNotFound)
	page, err := s.Query(ctx(t), store.Query{Index: store.Index1, PK: "TTL"})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 1 || page.Items[0].Key != key("keep") {
		t.Fatalf("Query returned expired items: %+v", page.Items)
	}
	it.Data = []byte(`2`)
	_, err = s.Update(ctx(t), it)
	wantErr(t, "Update(expired)", err, store.ErrNotFound)

	// An expired item does not block create-if-absent, and its replacement
	// starts afresh.
	re, err := s.Create(ctx(t), store.Item{Key: key("ttl"), Data: []byte(`"new"`)})
	if err != nil {
		t.Fatalf("Create over an expired item: %v", err)
	}
	if re.Version != 1 {
		t.Fatalf("replacement version = %d, want 1", re.Version)
	}
	got := mustGet(t, s, key("ttl"))
	if string(got.Data) != `"new"` || !got.ExpiresAt.IsZero() || !got.Index1.IsZero() {
		t.Fatalf("replacement kept the expired item's fields: %+v", got)
	}
}

func testTTLRoundsUp(t *testing.T, s store.Store, c *Clock) {
	exp := c.Now().Add(1500 * time.Millisecond)
	mustCreate(t, s, store.Item{Key: key("frac"), Data: []byte(`1`), ExpiresAt: exp})
	if got := mustGet(t, s, key("frac")); !got.ExpiresAt.Equal(c.Now().Add(2 * time.Second)) {
		t.Fatalf("ExpiresAt = %v, want it rounded up to %v", got.ExpiresAt, c.Now().Add(2*time.Second))
	}
	c.Advance(1600 * time.Millisecond) // past the requested instant, before the stored second
	mustGet(t, s, key("frac"))
}

func testDelete(t *testing.T, s store.Store, _ *Clock) {
	mustCreate(t, s, store.Item{Key: key("del"), Data: []byte(`1`)})
	if err := s.Delete(ctx(t), key("del")); err != nil {
		t.Fatal(err)
	}
	_, err := s.Get(ctx(t), key("del"))
	wantErr(t, "Get(deleted)", err, store.ErrNotFound)
	if err := s.Delete(ctx(t), key("del")); err != nil {
		t.Fatalf("deleting an absent item: %v", err)
	}
	mustCreate(t, s, store.Item{Key: key("del"), Data: []byte(`2`)})
}

func seed(t *testing.T, s store.Store, pk string, sks ...string) {
	for _, sk := range sks {
		mustCreate(t, s, store.Item{Key: store.Key{PK: pk, SK: sk}, Data: []byte(`"` + sk + `"`)})
	}
}

func sortKeys(items []store.Item) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.SK)
	}
	return out
}

func testQueryPrimary(t *testing.T, s store.Store, _ *Clock) {
	seed(t, s, "Q", "EVENT#a#2", "EVENT#a#1", "EVENT#b#1", "META")
	seed(t, s, "OTHER", "EVENT#a#9")
	page, err := s.Query(ctx(t), store.Query{PK: "Q", SKPrefix: "EVENT#a#"})
	if err != nil {
		t.Fatal(err)
	}
	if got := sortKeys(page.Items); !slices.Equal(got, []string{"EVENT#a#1", "EVENT#a#2"}) || page.Next != "" {
		t.Fatalf("prefix query = %v (next %q)", got, page.Next)
	}
	page, err = s.Query(ctx(t), store.Query{PK: "Q", Descending: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := sortKeys(page.Items); !slices.Equal(got, []string{"META", "EVENT#b#1", "EVENT#a#2", "EVENT#a#1"}) {
		t.Fatalf("descending query = %v", got)
	}
	page, err = s.Query(ctx(t), store.Query{PK: "EMPTY"})
	if err != nil || len(page.Items) != 0 || page.Next != "" {
		t.Fatalf("empty partition: %+v, %v", page, err)
	}
}

func collect(t *testing.T, s store.Store, q store.Query) []string {
	t.Helper()
	var all []string
	for range 100 {
		page, err := s.Query(ctx(t), q)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Items) > q.Limit {
			t.Fatalf("page of %d items, limit %d", len(page.Items), q.Limit)
		}
		all = append(all, sortKeys(page.Items)...)
		if page.Next == "" {
			return all
		}
		q.Cursor = page.Next
	}
	t.Fatal("paging did not end")
	return nil
}

func testQueryPaging(t *testing.T, s store.Store, c *Clock) {
	var sks []string
	for i := range 7 {
		sks = append(sks, fmt.Sprintf("K%02d", i))
	}
	seed(t, s, "PG", sks...)
	// An expired item in the middle must be skipped without ending the walk.
	mustCreate(t, s, store.Item{Key: store.Key{PK: "PG", SK: "K03x"}, Data: []byte(`1`), ExpiresAt: c.Now().Add(time.Second)})
	c.Advance(2 * time.Second)

	if got := collect(t, s, store.Query{PK: "PG", Limit: 2}); !slices.Equal(got, sks) {
		t.Fatalf("paged ascending = %v, want %v", got, sks)
	}
	rev := slices.Clone(sks)
	slices.Reverse(rev)
	if got := collect(t, s, store.Query{PK: "PG", Limit: 3, Descending: true}); !slices.Equal(got, rev) {
		t.Fatalf("paged descending = %v, want %v", got, rev)
	}
}

func testQueryIndexes(t *testing.T, s store.Store, _ *Clock) {
	mk := func(pk, i1, i2 string) store.Item {
		it := store.Item{Key: store.Key{PK: pk, SK: "E"}, Data: []byte(`1`)}
		if i1 != "" {
			it.Index1 = store.IndexKey{PK: "CALLER#x", SK: i1}
		}
		if i2 != "" {
			it.Index2 = store.IndexKey{PK: "AGENT#y", SK: i2}
		}
		return it
	}
	mustCreate(t, s, mk("E1", "2", "b"))
	mustCreate(t, s, mk("E2", "1", ""))
	mustCreate(t, s, mk("E3", "", "a"))
	mustCreate(t, s, mk("E4", "", ""))

	pks := func(q store.Query) []string {
		page, err := s.Query(ctx(t), q)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, it := range page.Items {
			out = append(out, it.PK)
		}
		return out
	}
	if got := pks(store.Query{Index: store.Index1, PK: "CALLER#x"}); !slices.Equal(got, []string{"E2", "E1"}) {
		t.Fatalf("index 1 = %v", got)
	}
	if got := pks(store.Query{Index: store.Index2, PK: "AGENT#y"}); !slices.Equal(got, []string{"E3", "E1"}) {
		t.Fatalf("index 2 = %v", got)
	}
	// Moving an item in an index, and taking it out, through Update.
	e1 := mustGet(t, s, store.Key{PK: "E1", SK: "E"})
	e1.Index1 = store.IndexKey{PK: "CALLER#x", SK: "0"}
	e1.Index2 = store.IndexKey{}
	if _, err := s.Update(ctx(t), e1); err != nil {
		t.Fatal(err)
	}
	if got := pks(store.Query{Index: store.Index1, PK: "CALLER#x"}); !slices.Equal(got, []string{"E1", "E2"}) {
		t.Fatalf("index 1 after update = %v", got)
	}
	if got := pks(store.Query{Index: store.Index2, PK: "AGENT#y"}); !slices.Equal(got, []string{"E3"}) {
		t.Fatalf("index 2 after update = %v", got)
	}
	// Paging through an index.
	page, err := s.Query(ctx(t), store.Query{Index: store.Index1, PK: "CALLER#x", Limit: 1})
	if err != nil || len(page.Items) != 1 || page.Next == "" {
		t.Fatalf("first index page: %+v, %v", page, err)
	}
	page, err = s.Query(ctx(t), store.Query{Index: store.Index1, PK: "CALLER#x", Limit: 1, Cursor: page.Next})
	if err != nil || len(page.Items) != 1 || page.Items[0].PK != "E2" {
		t.Fatalf("second index page: %+v, %v", page, err)
	}
}

func testQueryBadInput(t *testing.T, s store.Store, _ *Clock) {
	for name, q := range map[string]store.Query{
		"no partition":  {},
		"huge limit":    {PK: "Q", Limit: store.MaxLimit + 1},
		"forged cursor": {PK: "Q", Cursor: "not-a-cursor!"},
		"bad index":     {PK: "Q", Index: 7},
	} {
		_, err := s.Query(ctx(t), q)
		if agentgate.ErrorCode(err) != agentgate.EINVALID {
			t.Errorf("%s: got %v, want an %q error", name, err, agentgate.EINVALID)
		}
	}
}

func testAdd(t *testing.T, s store.Store, c *Clock) {
	n, err := s.Add(ctx(t), key("rate"), 1, store.AddOptions{ExpiresAt: c.Now().Add(time.Minute)})
	if err != nil || n != 1 {
		t.Fatalf("first Add = %d, %v; want 1", n, err)
	}
	created := mustGet(t, s, key("rate"))
	if created.Version != 1 {
		t.Fatalf("an item Add creates has version %d, want 1", created.Version)
	}
	c.Advance(1500 * time.Millisecond) // CountedAt keeps milliseconds
	n, err = s.Add(ctx(t), key("rate"), 2, store.AddOptions{ExpiresAt: c.Now().Add(time.Hour)})
	if err != nil || n != 3 {
		t.Fatalf("second Add = %d, %v; want 3", n, err)
	}
	got := mustGet(t, s, key("rate"))
	if got.Count != 3 || !got.CountedAt.Equal(c.Now()) {
		t.Fatalf("count %d at %v, want 3 at %v", got.Count, got.CountedAt, c.Now())
	}
	if got.Version != 1 {
		t.Fatalf("Add changed the version to %d", got.Version)
	}
	if want := c.Now().Add(-1500 * time.Millisecond).Add(time.Minute); !got.ExpiresAt.Equal(want) {
		t.Fatalf("Add moved an existing item's expiry to %v, want %v", got.ExpiresAt, want)
	}
	// Update leaves the counter alone.
	got.Data = []byte(`"meta"`)
	if _, err := s.Update(ctx(t), got); err != nil {
		t.Fatal(err)
	}
	if again := mustGet(t, s, key("rate")); again.Count != 3 {
		t.Fatalf("Update reset the counter to %d", again.Count)
	}
}

func testAddConcurrent(t *testing.T, s store.Store, _ *Clock) {
	const n = 32
	var wg sync.WaitGroup
	seen := make([]int64, n)
	for i := range n {
		wg.Go(func() {
			v, err := s.Add(ctx(t), key("hits"), 1, store.AddOptions{})
			if err != nil {
				t.Errorf("Add: %v", err)
			}
			seen[i] = v
		})
	}
	wg.Wait()
	slices.Sort(seen)
	for i, v := range seen {
		if v != int64(i+1) {
			t.Fatalf("concurrent Add results %v: want each of 1..%d exactly once", seen, n)
		}
	}
}

func testAddExpired(t *testing.T, s store.Store, c *Clock) {
	if _, err := s.Add(ctx(t), key("win"), 7, store.AddOptions{ExpiresAt: c.Now().Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	c.Advance(time.Second)
	n, err := s.Add(ctx(t), key("win"), 1, store.AddOptions{ExpiresAt: c.Now().Add(time.Minute)})
	if err != nil || n != 1 {
		t.Fatalf("Add on an expired counter = %d, %v; want a fresh count of 1", n, err)
	}
	if got := mustGet(t, s, key("win")); !got.ExpiresAt.Equal(c.Now().Add(time.Minute)) {
		t.Fatalf("restarted counter expires at %v", got.ExpiresAt)
	}
}

func testAddMustExist(t *testing.T, s store.Store, c *Clock) {
	_, err := s.Add(ctx(t), key("absent"), 1, store.AddOptions{MustExist: true})
	wantErr(t, "Add(MustExist) on a missing item", err, store.ErrNotFound)
	if _, err := s.Get(ctx(t), key("absent")); !errors.Is(err, store.ErrNotFound) {
		t.Fatal("Add with MustExist created the item")
	}
	mustCreate(t, s, store.Item{Key: key("apikey"), Data: []byte(`{"k":1}`), ExpiresAt: c.Now().Add(time.Minute)})
	n, err := s.Add(ctx(t), key("apikey"), 1, store.AddOptions{MustExist: true})
	if err != nil || n != 1 {
		t.Fatalf("Add(MustExist) = %d, %v", n, err)
	}
	got := mustGet(t, s, key("apikey"))
	if string(got.Data) != `{"k":1}` || got.Version != 1 {
		t.Fatalf("Add changed the record itself: %s v%d", got.Data, got.Version)
	}
	c.Advance(time.Minute)
	_, err = s.Add(ctx(t), key("apikey"), 1, store.AddOptions{MustExist: true})
	wantErr(t, "Add(MustExist) on an expired item", err, store.ErrNotFound)
}

func testBadItems(t *testing.T, s store.Store, _ *Clock) {
	bad := []store.Item{
		{Key: store.Key{PK: "", SK: "x"}},
		{Key: store.Key{PK: "x", SK: ""}},
		{Key: key("ix"), Index1: store.IndexKey{PK: "only-pk"}},
	}
	for _, it := range bad {
		if _, err := s.Create(ctx(t), it); agentgate.ErrorCode(err) != agentgate.EINVALID {
			t.Errorf("Create(%+v) = %v, want %q", it, err, agentgate.EINVALID)
		}
	}
	if _, err := s.Get(ctx(t), store.Key{}); agentgate.ErrorCode(err) != agentgate.EINVALID {
		t.Errorf("Get(empty key) = %v", err)
	}
}

func testAddPermanent(t *testing.T, s store.Store, c *Clock) {
	mustCreate(t, s, store.Item{Key: key("perm"), Data: []byte(`1`)})
	if _, err := s.Add(ctx(t), key("perm"), 1, store.AddOptions{ExpiresAt: c.Now().Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	c.Advance(time.Hour)
	if got := mustGet(t, s, key("perm")); !got.ExpiresAt.IsZero() || got.Count != 1 {
		t.Fatalf("Add gave a permanent item an expiry: %+v", got)
	}
}

func testPutExpired(t *testing.T, s store.Store, c *Clock) {
	mustCreate(t, s, store.Item{Key: key("old"), Data: []byte(`1`), ExpiresAt: c.Now().Add(time.Second), Index1: store.IndexKey{PK: "OLD", SK: "1"}})
	if _, err := s.Add(ctx(t), key("old"), 9, store.AddOptions{}); err != nil {
		t.Fatal(err)
	}
	c.Advance(time.Second)
	got, err := s.Put(ctx(t), store.Item{Key: key("old"), Data: []byte(`2`)})
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 1 || got.Count != 0 {
		t.Fatalf("Put over an expired item = v%d count %d, want a fresh v1 count 0", got.Version, got.Count)
	}
	if again := mustGet(t, s, key("old")); again.Version != 1 || again.Count != 0 || !again.Index1.IsZero() || !again.ExpiresAt.IsZero() {
		t.Fatalf("stored after Put over expired: %+v", again)
	}
}
