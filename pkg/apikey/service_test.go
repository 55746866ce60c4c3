package apikey

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/store"
	"github.com/agentgate/agentgate/pkg/store/embedded"
	"github.com/agentgate/agentgate/pkg/store/storetest"
)

type fixture struct {
	st    *embedded.Store
	clock *storetest.Clock
	svc   *Service
}

// newFixture returns a Service on a fresh embedded store, both on one
// manual clock.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	clock := storetest.NewClock()
	st, err := embedded.Open(filepath.Join(t.TempDir(), "agentgate.db"), embedded.WithClock(clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &fixture{st: st, clock: clock, svc: NewService(st, clock.Now)}
}

func (f *fixture) create(t *testing.T, nk NewKey) Created {
	t.Helper()
	c, err := f.svc.Create(context.Background(), nk)
	if err != nil {
		t.Fatalf("Create(%+v): %v", nk, err)
	}
	return c
}

func (f *fixture) list(t *testing.T, owner string) []Info {
	t.Helper()
	infos, next, err := f.svc.List(context.Background(), owner, "", store.MaxLimit)
	if err != nil {
		t.Fatalf("List(%q): %v", owner, err)
	}
	if next != "" {
		t.Fatalf("List(%q): unexpected next page", owner)
	}
	return infos
}

func (f *fixture) info(t *testing.T, owner, id string) Info {
	t.Helper()
	for _, in := range f.list(t, owner) {
		if in.ID == id {
			return in
		}
	}
	t.Fatalf("key %s not in %s's list", id, owner)
	return Info{}
}

// wantRefusal checks err is EUNAUTHORIZED with exactly message msg and
// does not repeat the key.
func wantRefusal(t *testing.T, err error, key, msg string) {
	t.Helper()
	if code := agentgate.ErrorCode(err); code != agentgate.EUNAUTHORIZED {
		t.Fatalf("code = %q (%v), want %q", code, err, agentgate.EUNAUTHORIZED)
	}
	if got := agentgate.ErrorMessage(err); got != msg {
		t.Fatalf("message = %q, want %q", got, msg)
	}
	if key != "" && strings.Contains(err.Error(), key) {
		t.Fatalf("error %q repeats the key", err)
	}
}

func TestCreateDefaults(t *testing.T) {
	f := newFixture(t)
	c := f.create(t, NewKey{Owner: "alice", Name: "laptop"})
	id, ok := KeyID(c.Key)
	if !ok || id != c.ID {
		t.Fatalf("Created.Key %q does not parse to Created.ID %q", c.Key, c.ID)
	}
	want := Info{ID: c.ID, Prefix: "agk_" + c.ID, Name: "laptop", Scope: agentgate.ScopeUser, CreatedAt: f.clock.Now()}
	if !infoEqual(c.Info, want) {
		t.Fatalf("Created.Info = %+v, want %+v", c.Info, want)
	}
	if !strings.HasPrefix(c.Key, c.Prefix+"_") {
		t.Fatalf("key %q does not start with its display prefix %q", c.Key, c.Prefix)
	}
	// Listing shows the same key, without its secret.
	if got := f.list(t, "alice"); len(got) != 1 || !infoEqual(got[0], c.Info) {
		t.Fatalf("List = %+v, want [%+v]", got, c.Info)
	}
	// A second key is a different key.
	c2 := f.create(t, NewKey{Owner: "alice"})
	if c2.Key == c.Key || c2.ID == c.ID {
		t.Fatal("two Creates returned the same key")
	}
}

func TestCreateTruncatesCreatedAt(t *testing.T) {
	f := newFixture(t)
	f.clock.Advance(1234567 * time.Nanosecond)
	c := f.create(t, NewKey{Owner: "alice"})
	if want := f.clock.Now().Truncate(time.Millisecond); !c.CreatedAt.Equal(want) {
		t.Fatalf("CreatedAt = %v, want %v", c.CreatedAt, want)
	}
	if got := f.info(t, "alice", c.ID); !got.CreatedAt.Equal(c.CreatedAt) {
		t.Fatalf("listed CreatedAt %v != created %v", got.CreatedAt, c.CreatedAt)
	}
}

func TestCreateValidation(t *testing.T) {
	f := newFixture(t)
	now := f.clock.Now()
	tests := []struct {
		name  string
		nk    NewKey
		field string
	}{
		{"missing owner", NewKey{Name: "x"}, "owner"},
		{"long name", NewKey{Owner: "alice", Name: strings.Repeat("n", MaxNameLen+1)}, "name"},
		{"unknown scope", NewKey{Owner: "alice", Scope: "admin"}, "scope"},
		{"connector without agent", NewKey{Owner: "alice", Scope: agentgate.ScopeConnector}, "agent"},
		{"user with agent", NewKey{Owner: "alice", Agent: "weather"}, "agent"},
		{"explicit user with agent", NewKey{Owner: "alice", Scope: agentgate.ScopeUser, Agent: "weather"}, "agent"},
		{"past expiry", NewKey{Owner: "alice", ExpiresAt: now.Add(-time.Second)}, "expiresAt"},
		{"expiry now", NewKey{Owner: "alice", ExpiresAt: now}, "expiresAt"},
		{"negative lifetime", NewKey{Owner: "alice", ExpiresIn: -time.Second}, "expiresIn"},
		{"expiry and lifetime", NewKey{Owner: "alice", ExpiresAt: now.Add(time.Hour), ExpiresIn: time.Hour}, "expiresIn"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := f.svc.Create(context.Background(), tc.nk)
			if code := agentgate.ErrorCode(err); code != agentgate.EINVALID {
				t.Fatalf("code = %q (%v), want %q", code, err, agentgate.EINVALID)
			}
			if msg := agentgate.ErrorMessage(err); !strings.HasPrefix(msg, tc.field+":") {
				t.Fatalf("message %q does not name the field %q", msg, tc.field)
			}
			if c.Key != "" || c.ID != "" {
				t.Fatalf("a refused Create returned a key: %+v", c)
			}
		})
	}
	if got := f.list(t, "alice"); len(got) != 0 {
		t.Fatalf("refused Creates stored %d keys", len(got))
	}
	// The limits themselves are allowed.
	f.create(t, NewKey{Owner: "alice", Name: strings.Repeat("n", MaxNameLen)})
	f.create(t, NewKey{Owner: "alice", ExpiresAt: now.Add(time.Millisecond)})
	// A lifetime counts from the service's clock.
	if c := f.create(t, NewKey{Owner: "alice", ExpiresIn: time.Hour}); c.ExpiresAt == nil || !c.ExpiresAt.Equal(now.Add(time.Hour)) {
		t.Fatalf("expiresIn 1h: expiresAt %v, want %v", c.ExpiresAt, now.Add(time.Hour))
	}
}

// The table holds the key's hash and never the key or its secret.
func TestStoredRecordHoldsOnlyTheHash(t *testing.T) {
	f := newFixture(t)
	for _, nk := range []NewKey{{Owner: "alice", Name: "n"}, {Owner: "alice", Scope: agentgate.ScopeConnector, Agent: "weather"}} {
		c := f.create(t, nk)
		it, err := f.st.Get(context.Background(), store.APIKeyKey(c.ID))
		if err != nil {
			t.Fatal(err)
		}
		raw := fmt.Sprintf("%+v %s", it, it.Data) // every field of the item, data as text
		secret := c.Key[len(Prefix)+idLen+1:]
		for what, s := range map[string]string{"key": c.Key, "secret": secret, "half the secret": secret[:26], "other half": secret[26:]} {
			if strings.Contains(raw, s) {
				t.Fatalf("stored item contains the %s: %s", what, raw)
			}
		}
		var rec map[string]any
		if err := json.Unmarshal(it.Data, &rec); err != nil {
			t.Fatal(err)
		}
		if rec["hash"] != hash(c.Key) {
			t.Fatalf("stored hash = %v, want SHA-256 hex %s", rec["hash"], hash(c.Key))
		}
		wantScope := nk.Scope
		if wantScope == "" {
			wantScope = agentgate.ScopeUser
		}
		if rec["id"] != c.ID || rec["owner"] != "alice" || rec["scope"] != wantScope || rec["agent"] != nil && rec["agent"] != nk.Agent {
			t.Fatalf("stored record = %v", rec)
		}
		if it.Index1.PK != store.OwnerPartition("alice") {
			t.Fatalf("owner index = %+v", it.Index1)
		}
	}
}

func TestAuthenticate(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	user := f.create(t, NewKey{Owner: "alice"})
	conn := f.create(t, NewKey{Owner: "bob", Scope: agentgate.ScopeConnector, Agent: "weather"})

	p, err := f.svc.Authenticate(ctx, user.Key)
	if err != nil {
		t.Fatal(err)
	}
	want := agentgate.Principal{Subject: "alice", Method: agentgate.AuthAPIKey, Scope: agentgate.ScopeUser, KeyID: user.ID}
	if p != want {
		t.Fatalf("principal = %+v, want %+v", p, want)
	}
	p, err = f.svc.Authenticate(ctx, conn.Key)
	if err != nil {
		t.Fatal(err)
	}
	want = agentgate.Principal{Subject: "bob", Method: agentgate.AuthAPIKey, Scope: agentgate.ScopeConnector, KeyID: conn.ID, Agent: "weather"}
	if p != want {
		t.Fatalf("principal = %+v, want %+v", p, want)
	}

	other, _ := generate()
	wrongSecret := user.Key[:len(Prefix)+idLen+1] + other[len(Prefix)+idLen+1:]
	unknown, _ := generate()
	refused := map[string]string{
		"wrong secret, right id": wrongSecret,
		"unknown id":             unknown,
		"malformed":              "agk_nope",
		"truncated":              user.Key[:len(user.Key)-1],
		"upper-case":             strings.ToUpper(user.Key),
		"empty":                  "",
		"JWT-looking":            "a.b.c",
	}
	for name, k := range refused {
		t.Run(name, func(t *testing.T) {
			p, err := f.svc.Authenticate(ctx, k)
			wantRefusal(t, err, k, "invalid API key")
			if p != (agentgate.Principal{}) {
				t.Fatalf("refusal returned %+v", p)
			}
		})
	}
	// Only the two successes above were counted.
	if got := f.info(t, "alice", user.ID).UseCount; got != 1 {
		t.Fatalf("UseCount = %d after one success and refusals, want 1", got)
	}
}

func TestAuthenticateRevokedAndExpired(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	revoked := f.create(t, NewKey{Owner: "alice"})
	expiring := f.create(t, NewKey{Owner: "alice", ExpiresAt: f.clock.Now().Add(time.Hour)})
	if _, err := f.svc.Revoke(ctx, "alice", revoked.ID); err != nil {
		t.Fatal(err)
	}
	_, err := f.svc.Authenticate(ctx, revoked.Key)
	wantRefusal(t, err, revoked.Key, "API key revoked")

	// Holding the id of a revoked key without its secret learns nothing.
	other, _ := generate()
	_, err = f.svc.Authenticate(ctx, revoked.Key[:len(Prefix)+idLen+1]+other[len(Prefix)+idLen+1:])
	wantRefusal(t, err, "", "invalid API key")

	f.clock.Advance(time.Hour - time.Millisecond)
	if _, err := f.svc.Authenticate(ctx, expiring.Key); err != nil {
		t.Fatalf("a millisecond before expiry: %v", err)
	}
	if in := f.info(t, "alice", expiring.ID); in.Expired {
		t.Fatal("listed as expired before its expiry")
	}
	f.clock.Advance(time.Millisecond)
	_, err = f.svc.Authenticate(ctx, expiring.Key)
	wantRefusal(t, err, expiring.Key, "API key expired")
	in := f.info(t, "alice", expiring.ID)
	if !in.Expired || in.ExpiresAt == nil || !in.ExpiresAt.Equal(f.clock.Now()) {
		t.Fatalf("listed as %+v, want expired at %v", in, f.clock.Now())
	}
	if in.UseCount != 1 {
		t.Fatalf("UseCount = %d, want 1 (a refusal is not a use, unless it carries the minute's write)", in.UseCount)
	}
}

// A store failure is EUNAVAILABLE, never a refusal: the caller did nothing
// wrong and should retry, not be told its key is bad.
func TestAuthenticateStoreFailure(t *testing.T) {
	f := newFixture(t)
	c := f.create(t, NewKey{Owner: "alice"})
	if err := f.st.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := f.svc.Authenticate(context.Background(), c.Key)
	if code := agentgate.ErrorCode(err); code != agentgate.EUNAVAILABLE {
		t.Fatalf("code = %q (%v), want %q", code, err, agentgate.EUNAVAILABLE)
	}
	// A malformed key is refused without touching the store.
	_, err = f.svc.Authenticate(context.Background(), "agk_nope")
	wantRefusal(t, err, "", "invalid API key")
}

func TestUseCounting(t *testing.T) {
	f := newFixture(t)
	c := f.create(t, NewKey{Owner: "alice"})
	for range 3 {
		f.clock.Advance(90 * time.Second)
		if _, err := f.svc.Authenticate(context.Background(), c.Key); err != nil {
			t.Fatal(err)
		}
	}
	in := f.info(t, "alice", c.ID)
	if in.UseCount != 3 {
		t.Fatalf("UseCount = %d, want 3", in.UseCount)
	}
	if in.LastUsedAt == nil || !in.LastUsedAt.Equal(f.clock.Now()) {
		t.Fatalf("LastUsedAt = %v, want %v", in.LastUsedAt, f.clock.Now())
	}
	if !in.CreatedAt.Equal(f.clock.Now().Add(-270 * time.Second)) {
		t.Fatalf("counting moved CreatedAt to %v", in.CreatedAt)
	}
	// Counting does not disturb the record: the key still works, and can be
	// revoked (its compare-and-set is not confused by the counter).
	rev, err := f.svc.Revoke(context.Background(), "alice", c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rev.UseCount != 3 || rev.LastUsedAt == nil || !rev.LastUsedAt.Equal(f.clock.Now()) {
		t.Fatalf("Revoke returned %+v, want UseCount 3 and LastUsedAt %v", rev, f.clock.Now())
	}
	if got := f.info(t, "alice", c.ID); got.UseCount != 3 || !got.Revoked {
		t.Fatalf("after revoking: %+v, want UseCount 3 and revoked", got)
	}
}

func TestConcurrentAuthenticate(t *testing.T) {
	f := newFixture(t)
	c := f.create(t, NewKey{Owner: "alice"})
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan error, n)
	start := make(chan struct{})
	for range n {
		wg.Go(func() {
			<-start
			p, err := f.svc.Authenticate(context.Background(), c.Key)
			if err == nil && p.KeyID != c.ID {
				err = fmt.Errorf("principal %+v", p)
			}
			errs <- err
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// One of them wrote (its own use: the first on this instance); the
	// others wait, all of them, for the next write, a minute on.
	if got := f.info(t, "alice", c.ID).UseCount; got != 1 {
		t.Fatalf("UseCount = %d after %d concurrent first uses, want 1 (one write)", got, n)
	}
	f.clock.Advance(UseWriteInterval)
	if _, err := f.svc.Authenticate(context.Background(), c.Key); err != nil {
		t.Fatal(err)
	}
	if got := f.info(t, "alice", c.ID).UseCount; got != n+1 {
		t.Fatalf("UseCount = %d after %d uses, want all of them", got, n+1)
	}
}

// adds records the Add calls made through it.
type adds struct {
	store.Store
	mu     sync.Mutex
	deltas []int64
}

func (a *adds) Add(ctx context.Context, k store.Key, delta int64, opts store.AddOptions) (int64, error) {
	a.mu.Lock()
	a.deltas = append(a.deltas, delta)
	a.mu.Unlock()
	return a.Store.Add(ctx, k, delta, opts)
}

// take returns the deltas added since the last take.
func (a *adds) take() []int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	d := a.deltas
	a.deltas = nil
	return d
}

// Uses are written in batches: the first use on an instance at once, then at
// most one Add a minute per key, carrying every use since the last one.
func TestUseAccountingIsBatched(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	rec := &adds{Store: f.st}
	svc := NewService(rec, f.clock.Now)
	c := f.create(t, NewKey{Owner: "alice"})
	use := func(n int) {
		t.Helper()
		for range n {
			if _, err := svc.Authenticate(ctx, c.Key); err != nil {
				t.Fatal(err)
			}
		}
	}
	check := func(step string, wantDeltas []int64, wantCount int64, wantLast time.Time) {
		t.Helper()
		if got := rec.take(); !slices.Equal(got, wantDeltas) {
			t.Fatalf("%s: Add deltas %v, want %v", step, got, wantDeltas)
		}
		in := f.info(t, "alice", c.ID)
		if in.UseCount != wantCount || in.LastUsedAt == nil || !in.LastUsedAt.Equal(wantLast) {
			t.Fatalf("%s: listed useCount %d, lastUsedAt %v; want %d, %v", step, in.UseCount, in.LastUsedAt, wantCount, wantLast)
		}
	}

	first := f.clock.Now()
	use(1)
	check("first use", []int64{1}, 1, first)

	// Five more within the minute: no write; the listing is behind.
	f.clock.Advance(10 * time.Second)
	use(5)
	f.clock.Advance(UseWriteInterval - 10*time.Second - time.Millisecond)
	use(1)
	check("within the minute", nil, 1, first)

	// A minute after the last write, the next use writes the six waiting and
	// itself in one Add.
	f.clock.Advance(time.Millisecond)
	due := f.clock.Now()
	use(1)
	check("a minute on", []int64{7}, 8, due)

	// And again a minute after that one.
	f.clock.Advance(30 * time.Second)
	use(3)
	check("half a minute on", nil, 8, due)
	f.clock.Advance(30 * time.Second)
	use(1)
	check("another minute on", []int64{4}, 12, f.clock.Now())
}

// A write that fails keeps its uses for the next one, and does not turn the
// key away.
func TestUseAccountingSurvivesAFailedWrite(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	c := f.create(t, NewKey{Owner: "alice"})
	failing := &failingAdds{Store: f.st}
	svc := NewService(failing, f.clock.Now)

	failing.fail.Store(true)
	for range 3 {
		if _, err := svc.Authenticate(ctx, c.Key); err != nil {
			t.Fatalf("a failed use write refused the key: %v", err)
		}
	}
	failing.fail.Store(false)
	f.clock.Advance(UseWriteInterval)
	if _, err := svc.Authenticate(ctx, c.Key); err != nil {
		t.Fatal(err)
	}
	if got := f.info(t, "alice", c.ID).UseCount; got != 4 {
		t.Fatalf("UseCount = %d, want the 3 uses of the failed write and this one", got)
	}
}

// failingAdds fails every Add while fail is set.
type failingAdds struct {
	store.Store
	fail atomic.Bool
}

func (s *failingAdds) Add(ctx context.Context, k store.Key, delta int64, opts store.AddOptions) (int64, error) {
	if s.fail.Load() {
		return 0, store.Unavailable(errors.New("throttled"))
	}
	return s.Store.Add(ctx, k, delta, opts)
}

// Made-up ids are refused without ever creating an item or an entry in the
// accounting, however many arrive.
func TestUnknownKeysAreNotAccounted(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for range 3 {
		unknown, id := generate()
		_, err := f.svc.Authenticate(ctx, unknown)
		wantRefusal(t, err, unknown, "invalid API key")
		if _, err := f.st.Get(ctx, store.APIKeyKey(id)); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("an unknown key's use created its item: %v", err)
		}
	}
	f.svc.uses.mu.Lock()
	defer f.svc.uses.mu.Unlock()
	if n := len(f.svc.uses.byKey); n != 0 {
		t.Fatalf("%d unknown ids kept in the accounting", n)
	}
}

// Concurrent revocations of one key, racing with its use, all succeed (the
// losers of the compare-and-set look again and find it revoked) and leave
// one revocation time.
func TestConcurrentRevoke(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	c := f.create(t, NewKey{Owner: "alice"})
	const n = 8
	var wg sync.WaitGroup
	infos := make([]Info, n)
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			infos[i], errs[i] = f.svc.Revoke(ctx, "alice", c.ID)
		})
		wg.Go(func() {
			<-start
			// Either outcome is fine while the revocations race; a store
			// error is not.
			if _, err := f.svc.Authenticate(ctx, c.Key); err != nil && agentgate.ErrorMessage(err) != "API key revoked" {
				t.Errorf("Authenticate during revocation: %v", err)
			}
		})
	}
	close(start)
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("revoke %d: %v", i, errs[i])
		}
		if !infos[i].Revoked || infos[i].RevokedAt == nil || !infos[i].RevokedAt.Equal(f.clock.Now()) {
			t.Fatalf("revoke %d returned %+v", i, infos[i])
		}
	}
	_, err := f.svc.Authenticate(ctx, c.Key)
	wantRefusal(t, err, c.Key, "API key revoked")
}

func TestListOwnKeysNewestFirst(t *testing.T) {
	f := newFixture(t)
	// Creation times deliberately mix whole seconds and fractions of one,
	// and owners whose names prefix one another or hold the separator.
	steps := []time.Duration{0, 500 * time.Millisecond, 500 * time.Millisecond, 10 * time.Millisecond, time.Second, 90 * time.Millisecond, time.Hour}
	var want []string // alice's ids, newest first
	for i, d := range steps {
		f.clock.Advance(d)
		c := f.create(t, NewKey{Owner: "alice", Name: fmt.Sprint("k", i)})
		want = append([]string{c.ID}, want...)
		f.create(t, NewKey{Owner: "alice#2"})
		f.create(t, NewKey{Owner: "ali"})
	}
	f.create(t, NewKey{Owner: "bob", Scope: agentgate.ScopeConnector, Agent: "alice"})

	got := f.list(t, "alice")
	if ids := idsOf(got); !slices.Equal(ids, want) {
		t.Fatalf("List(alice) = %v (names %v), want %v newest first", ids, namesOf(got), want)
	}
	for i := 1; i < len(got); i++ {
		if got[i].CreatedAt.After(got[i-1].CreatedAt) {
			t.Fatalf("key %d (%v) is newer than key %d (%v)", i, got[i].CreatedAt, i-1, got[i-1].CreatedAt)
		}
	}
	if n := len(f.list(t, "alice#2")); n != len(steps) {
		t.Fatalf("List(alice#2) has %d keys, want %d", n, len(steps))
	}
	if n := len(f.list(t, "bob")); n != 1 {
		t.Fatalf("List(bob) has %d keys, want 1", n)
	}
	if n := len(f.list(t, "nobody")); n != 0 {
		t.Fatalf("List(nobody) has %d keys", n)
	}

	// Paging: limit and cursor walk the same list without gaps or repeats.
	for _, limit := range []int{1, 2, 3, len(want), len(want) + 1} {
		var paged []string
		cursor := ""
		for pages := 0; ; pages++ {
			if pages > len(want)+1 {
				t.Fatalf("limit %d: paging does not end", limit)
			}
			infos, next, err := f.svc.List(context.Background(), "alice", cursor, limit)
			if err != nil {
				t.Fatalf("limit %d: %v", limit, err)
			}
			if len(infos) > limit {
				t.Fatalf("limit %d: page of %d", limit, len(infos))
			}
			paged = append(paged, idsOf(infos)...)
			if next == "" {
				break
			}
			cursor = next
		}
		if !slices.Equal(paged, want) {
			t.Fatalf("limit %d: paged %v, want %v", limit, paged, want)
		}
	}

	_, _, err := f.svc.List(context.Background(), "alice", "", store.MaxLimit+1)
	if agentgate.ErrorCode(err) != agentgate.EINVALID {
		t.Fatalf("limit over MaxLimit: %v, want EINVALID", err)
	}
	_, _, err = f.svc.List(context.Background(), "alice", "not-a-cursor", 2)
	if agentgate.ErrorCode(err) != agentgate.EINVALID {
		t.Fatalf("bad cursor: %v, want EINVALID", err)
	}
	// A cursor from another owner's listing does not page into this one.
	_, next, err := f.svc.List(context.Background(), "alice#2", "", 1)
	if err != nil || next == "" {
		t.Fatalf("List(alice#2, limit 1): next %q, %v", next, err)
	}
	if infos, _, err := f.svc.List(context.Background(), "alice", next, 10); err == nil {
		t.Fatalf("alice listed with alice#2's cursor: %v", idsOf(infos))
	}
}

// Nothing List returns carries a key, a secret or a hash.
func TestListNeverExposesSecrets(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var secrets []string
	for i := range 3 {
		nk := NewKey{Owner: "alice", Name: fmt.Sprint("key ", i)}
		if i == 2 {
			nk.Scope, nk.Agent = agentgate.ScopeConnector, "weather"
		}
		c := f.create(t, nk)
		if _, err := f.svc.Authenticate(ctx, c.Key); err != nil {
			t.Fatal(err)
		}
		secrets = append(secrets, c.Key, c.Key[len(Prefix)+idLen+1:], hash(c.Key))
	}
	if _, err := f.svc.Revoke(ctx, "alice", f.list(t, "alice")[0].ID); err != nil {
		t.Fatal(err)
	}
	infos := f.list(t, "alice")
	data, err := json.Marshal(infos)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data) + fmt.Sprintf("%+v", infos)
	for _, s := range secrets {
		if strings.Contains(text, s) {
			t.Fatalf("listing exposes %q: %s", s, data)
		}
	}
	for _, field := range []string{`"hash"`, `"key"`, `"secret"`} {
		if strings.Contains(string(data), field) {
			t.Fatalf("listing JSON has a %s field: %s", field, data)
		}
	}
}

func TestConnectorKeyListed(t *testing.T) {
	f := newFixture(t)
	c := f.create(t, NewKey{Owner: "alice", Name: "claude", Scope: agentgate.ScopeConnector, Agent: "weather"})
	if c.Scope != agentgate.ScopeConnector || c.Agent != "weather" {
		t.Fatalf("Created = %+v", c.Info)
	}
	in := f.info(t, "alice", c.ID)
	if in.Scope != agentgate.ScopeConnector || in.Agent != "weather" || in.Name != "claude" {
		t.Fatalf("listed as %+v, want scope connector for agent weather", in)
	}
	// It is also reachable from its agent's connector-key partition.
	page, err := f.st.Query(context.Background(), store.Query{Index: store.Index2, PK: store.ConnectorPartition("weather")})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 1 || page.Items[0].Key != store.APIKeyKey(c.ID) {
		t.Fatalf("connector partition of weather holds %+v", page.Items)
	}
	// A user key is in no connector partition.
	f.create(t, NewKey{Owner: "alice"})
	if page, _ := f.st.Query(context.Background(), store.Query{Index: store.Index2, PK: store.ConnectorPartition("")}); len(page.Items) != 0 {
		t.Fatalf("a user key landed in a connector partition: %+v", page.Items)
	}
}

func TestRevoke(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	c := f.create(t, NewKey{Owner: "alice"})

	// Another owner cannot revoke it, nor learn that it exists.
	_, err := f.svc.Revoke(ctx, "mallory", c.ID)
	if code := agentgate.ErrorCode(err); code != agentgate.ENOTFOUND {
		t.Fatalf("revoke by another owner: code %q (%v), want %q", code, err, agentgate.ENOTFOUND)
	}
	_, errUnknown := f.svc.Revoke(ctx, "mallory", "aaaaaaaaaaaaa")
	if agentgate.ErrorCode(errUnknown) != agentgate.ENOTFOUND {
		t.Fatalf("revoke of an unknown id: %v, want ENOTFOUND", errUnknown)
	}
	if strings.Replace(agentgate.ErrorMessage(err), c.ID, "ID", 1) != strings.Replace(agentgate.ErrorMessage(errUnknown), "aaaaaaaaaaaaa", "ID", 1) {
		t.Fatalf("another owner's key (%q) is told apart from a missing one (%q)", agentgate.ErrorMessage(err), agentgate.ErrorMessage(errUnknown))
	}
	if _, err := f.svc.Authenticate(ctx, c.Key); err != nil {
		t.Fatalf("key refused after a foreign revoke attempt: %v", err)
	}

	f.clock.Advance(time.Minute)
	revokedAt := f.clock.Now()
	in, err := f.svc.Revoke(ctx, "alice", c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !in.Revoked || in.RevokedAt == nil || !in.RevokedAt.Equal(revokedAt) || in.ID != c.ID {
		t.Fatalf("Revoke = %+v, want revoked at %v", in, revokedAt)
	}

	// Idempotent: again later is no error and keeps the first time.
	f.clock.Advance(time.Minute)
	again, err := f.svc.Revoke(ctx, "alice", c.ID)
	if err != nil {
		t.Fatalf("second revoke: %v", err)
	}
	if !again.Revoked || again.RevokedAt == nil || !again.RevokedAt.Equal(revokedAt) {
		t.Fatalf("second revoke = %+v, want the first revocation time %v", again, revokedAt)
	}
	listed := f.info(t, "alice", c.ID)
	if !listed.Revoked || !listed.RevokedAt.Equal(revokedAt) || listed.UseCount != 1 {
		t.Fatalf("listed as %+v", listed)
	}
	_, err = f.svc.Authenticate(ctx, c.Key)
	wantRefusal(t, err, c.Key, "API key revoked")
	// Still another owner's: revoking a revoked key of alice's is ENOTFOUND for mallory.
	if _, err := f.svc.Revoke(ctx, "mallory", c.ID); agentgate.ErrorCode(err) != agentgate.ENOTFOUND {
		t.Fatalf("mallory revoking alice's revoked key: %v", err)
	}
}

// The cross-instance promise: nothing caches a key, so a key revoked through
// one Service is refused by every other on its very next use, even within the
// minute in which that Service batches the key's uses (the read is never
// batched, only the accounting).
func TestRevokeIsSeenByAnotherInstance(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	other := NewService(f.st, f.clock.Now)
	a := f.create(t, NewKey{Owner: "alice"})
	b := f.create(t, NewKey{Owner: "alice"})

	for _, svc := range []*Service{f.svc, other} {
		for _, k := range []string{a.Key, b.Key} {
			if _, err := svc.Authenticate(ctx, k); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := f.svc.Revoke(ctx, "alice", a.ID); err != nil {
		t.Fatal(err)
	}
	_, err := other.Authenticate(ctx, a.Key)
	wantRefusal(t, err, a.Key, "API key revoked")

	if _, err := other.Revoke(ctx, "alice", b.ID); err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.Authenticate(ctx, b.Key)
	wantRefusal(t, err, b.Key, "API key revoked")
}

func idsOf(infos []Info) []string {
	ids := make([]string, len(infos))
	for i, in := range infos {
		ids[i] = in.ID
	}
	return ids
}

func namesOf(infos []Info) []string {
	names := make([]string, len(infos))
	for i, in := range infos {
		names[i] = in.Name
	}
	return names
}

// infoEqual compares Infos, times by instant.
func infoEqual(a, b Info) bool {
	eqT := func(x, y *time.Time) bool { return x == nil && y == nil || x != nil && y != nil && x.Equal(*y) }
	return a.ID == b.ID && a.Prefix == b.Prefix && a.Name == b.Name && a.Scope == b.Scope && a.Agent == b.Agent &&
		a.CreatedAt.Equal(b.CreatedAt) && eqT(a.LastUsedAt, b.LastUsedAt) && a.UseCount == b.UseCount &&
		eqT(a.ExpiresAt, b.ExpiresAt) && eqT(a.RevokedAt, b.RevokedAt) && a.Revoked == b.Revoked && a.Expired == b.Expired
}
