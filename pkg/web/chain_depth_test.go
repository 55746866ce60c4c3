package web

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/apikey"
	"github.com/agentgate/agentgate/pkg/auth"
	"github.com/agentgate/agentgate/pkg/ratelimit"
	"github.com/agentgate/agentgate/pkg/store"
	"github.com/agentgate/agentgate/pkg/store/embedded"
	"github.com/agentgate/agentgate/pkg/store/storetest"
)

// barrier is a store whose every call waits until all the calls expected of
// the current request have arrived. Calls made concurrently meet there and
// go on; calls made one after another never meet (the first waits for the
// others, which wait for it), so a chain that makes them in sequence fails
// the test, naming the calls that were in flight, instead of passing slowly.
type barrier struct {
	store.Store
	t *testing.T

	mu       sync.Mutex
	want     int
	arrived  []string
	all      chan struct{}   // closed when want calls have arrived
	deadline context.Context // how long a call waits for the others
	reported bool            // the sequence was reported
}

// barrierWait is how long a call waits for the other calls of its request:
// concurrent calls meet at once, so only a sequential chain ever waits it.
const barrierWait = 3 * time.Second

// expect starts a request that should make n store calls, all together. The
// returned cancel ends it.
func (b *barrier) expect(n int) (cancel func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.want, b.arrived, b.all, b.reported = n, nil, make(chan struct{}), false
	if n == 0 {
		close(b.all)
	}
	b.deadline, cancel = context.WithTimeout(context.Background(), barrierWait)
	return cancel
}

// calls returns the calls of the current request, sorted.
func (b *barrier) calls() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Sorted(slices.Values(b.arrived))
}

func (b *barrier) wait(ctx context.Context, op string, k store.Key) {
	call := op + " " + callTarget(k)
	b.mu.Lock()
	b.arrived = append(b.arrived, call)
	n, all := len(b.arrived), b.all
	switch {
	case n == b.want:
		close(all)
	case n > b.want:
		b.t.Errorf("store call %s beyond the %d expected (%v)", call, b.want, b.arrived)
	}
	b.mu.Unlock()
	select {
	case <-all:
	case <-ctx.Done():
	case <-b.deadline.Done():
		// Gone on (every later call too, at once), so that the request
		// ends and the test with it: reported once.
		b.mu.Lock()
		defer b.mu.Unlock()
		if !b.reported {
			b.reported = true
			b.t.Errorf("store call %s waited %s in vain for the other calls of its request: %d of %d in flight together (%v); the chain makes them one after another",
				call, barrierWait, len(b.arrived), b.want, b.arrived)
		}
	}
}

// callTarget names what a call addresses without its variable parts: a
// rate-limit window by class and kind ("RATE#api:ip"), a key as "APIKEY".
func callTarget(k store.Key) string {
	parts := strings.Split(k.PK, "#")
	if parts[0] == "RATE" && len(parts) > 1 {
		return parts[0] + "#" + parts[1]
	}
	return parts[0]
}

func (b *barrier) Get(ctx context.Context, k store.Key) (store.Item, error) {
	b.wait(ctx, "Get", k)
	return b.Store.Get(ctx, k)
}

func (b *barrier) Add(ctx context.Context, k store.Key, delta int64, opts store.AddOptions) (int64, error) {
	b.wait(ctx, "Add", k)
	return b.Store.Add(ctx, k, delta, opts)
}

const depthJWTSecret = "0123456789abcdef0123456789abcdef"

// The store calls the security chain makes before a handler are all in
// flight at once: the request waits for one round trip, whatever the
// credential. An API key costs the per-IP window, the per-principal window
// and the key read, plus the key's use accounting when it is due (the first
// use on an instance, then at most once a minute); a JWT the two windows;
// a public route the per-IP window; a credential refused locally nothing.
func TestChainStoreCallsAreConcurrent(t *testing.T) {
	clock := storetest.NewClock()
	st, err := embedded.Open(filepath.Join(t.TempDir(), "agentgate.db"), embedded.WithClock(clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	key, err := apikey.NewService(st, clock.Now).Create(context.Background(), apikey.NewKey{Owner: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	verifier, err := auth.NewJWTVerifier([]byte(depthJWTSecret), auth.WithClock(clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	token, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"sub": "bob", "iat": clock.Now().Unix(), "exp": clock.Now().Add(24 * time.Hour).Unix(),
	}).SignedString([]byte(depthJWTSecret))
	if err != nil {
		t.Fatal(err)
	}

	b := &barrier{Store: st, t: t}
	rule := ratelimit.Rule{Limit: 100, Window: time.Minute}
	chain := &Chain{
		Limiter: ratelimit.New(b, clock.Now),
		Limits:  map[string]Limits{ClassAPI: {PerIP: rule, PerPrincipal: rule}},
		Authn:   &auth.Authenticator{Keys: apikey.NewService(b, clock.Now), JWT: verifier},
	}
	var subject atomic.Value
	reached := func(w http.ResponseWriter, r *http.Request) {
		p, _ := agentgate.PrincipalFrom(r.Context())
		subject.Store(p.Subject)
		WriteJSON(w, 200, "reached")
	}
	h := SecurityHeaders(NewMux(chain.Wrap([]Route{
		{Method: "GET", Path: "/private", Handler: http.HandlerFunc(reached), Class: ClassAPI},
		{Method: "GET", Path: "/public", Handler: http.HandlerFunc(reached), Class: ClassAPI, Public: true},
	})))

	var (
		ipWindow        = "Add RATE#api:ip"
		principalWindow = "Add RATE#api:principal"
		keyRead         = "Get APIKEY"
		keyUses         = "Add APIKEY"
	)
	for _, step := range []struct {
		name, path, auth string
		advance          time.Duration
		status           int
		who              string
		calls            []string
	}{
		{"API key, first use here: accounting due", "/private", key.Key, 0, 200, "alice", []string{ipWindow, principalWindow, keyRead, keyUses}},
		{"API key again within the minute", "/private", key.Key, 30 * time.Second, 200, "alice", []string{ipWindow, principalWindow, keyRead}},
		{"API key a minute after the last write", "/private", key.Key, 30 * time.Second, 200, "alice", []string{ipWindow, principalWindow, keyRead, keyUses}},
		{"JWT", "/private", token, 0, 200, "bob", []string{ipWindow, principalWindow}},
		{"public route", "/public", "", 0, 200, "", []string{ipWindow}},
		{"malformed key: 401 with no store call", "/private", "agk_nope", 0, 401, "", nil},
		{"no credentials: 401 with no store call", "/private", "", 0, 401, "", nil},
	} {
		ok := t.Run(step.name, func(t *testing.T) {
			b.t = t
			clock.Advance(step.advance)
			subject.Store("")
			defer b.expect(len(step.calls))()
			req := httptest.NewRequest("GET", step.path, nil)
			if step.auth != "" {
				req.Header.Set("Authorization", "Bearer "+step.auth)
			}
			rec := serve(t, h, req)
			if rec.Code != step.status || subject.Load() != step.who {
				t.Fatalf("status %d as %q, want %d as %q: %s", rec.Code, subject.Load(), step.status, step.who, rec.Body)
			}
			if got, want := b.calls(), slices.Sorted(slices.Values(step.calls)); !slices.Equal(got, want) {
				t.Fatalf("store calls %v, want %v", got, want)
			}
		})
		if !ok {
			break // the steps build on each other
		}
	}
}

// scripted is a Limiter and an Authenticator whose answers a test sets: it
// refuses by kind of window, and authenticates with a given error.
type scripted struct {
	refuseIP, refusePrincipal bool
	limiterErr                error
	authnErr, identifyErr     error
	limits                    atomic.Int64
}

func (s *scripted) Allow(_ context.Context, class, _ string, rule ratelimit.Rule) (ratelimit.Decision, error) {
	s.limits.Add(1)
	if s.limiterErr != nil {
		return ratelimit.Decision{}, s.limiterErr
	}
	refuse := map[string]bool{ClassAPI + ":ip": s.refuseIP, ClassAPI + ":principal": s.refusePrincipal}[class]
	return ratelimit.Decision{Allowed: !refuse, Count: rule.Limit + 1, RetryAfter: 42 * time.Second}, nil
}

func (s *scripted) Identify(*http.Request) (string, func(context.Context) (agentgate.Principal, error), error) {
	if s.identifyErr != nil {
		return "", nil, s.identifyErr
	}
	return "key:k1", func(context.Context) (agentgate.Principal, error) {
		if s.authnErr != nil {
			return agentgate.Principal{}, s.authnErr
		}
		return agentgate.Principal{Subject: "alice", Scope: agentgate.ScopeUser, KeyID: "k1"}, nil
	}, nil
}

// The steps run together, but the answer is the one they would give in
// order: the per-IP limit, then authentication, then the per-principal
// limit. A limiter whose store fails lets the request through; an
// authentication whose store fails is 503, without a challenge.
func TestChainAnswersInAFixedOrder(t *testing.T) {
	refused := agentgate.Errorf(agentgate.EUNAUTHORIZED, "invalid API key")
	storeDown := store.Unavailable(errors.New("table throttled"))
	ipRule := ratelimit.Rule{Limit: 1, Window: time.Minute}
	principalRule := ratelimit.Rule{Limit: 2, Window: time.Minute}
	for _, tc := range []struct {
		name     string
		s        *scripted
		status   int
		contains string // in the error message
		www      string // WWW-Authenticate
		limits   int64  // rate-limit checks made
	}{
		{"everything refuses: the per-IP limit answers", &scripted{refuseIP: true, refusePrincipal: true, authnErr: refused}, 429, "rate limit of 1 per", "", 2},
		{"authentication and the per-principal limit refuse: 401", &scripted{refusePrincipal: true, authnErr: refused}, 401, "invalid API key", `Bearer error="invalid_token"`, 2},
		{"the store fails authentication: 503 before the per-principal limit", &scripted{refusePrincipal: true, authnErr: storeDown}, 503, "unavailable", "", 2},
		{"only the per-principal limit refuses", &scripted{refusePrincipal: true}, 429, "rate limit of 2 per", "", 2},
		{"the limiter's store fails: through", &scripted{limiterErr: storeDown}, 200, "", "", 2},
		{"nothing refuses", &scripted{}, 200, "", "", 2},
		{"refused before any store call", &scripted{refuseIP: true, identifyErr: refused}, 401, "invalid API key", `Bearer error="invalid_token"`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.s
			chain := &Chain{Limiter: s, Authn: s, Limits: map[string]Limits{ClassAPI: {PerIP: ipRule, PerPrincipal: principalRule}}}
			h := SecurityHeaders(NewMux(chain.Wrap([]Route{{Method: "GET", Path: "/x", Class: ClassAPI,
				Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { WriteJSON(w, 200, "reached") })}})))
			req := httptest.NewRequest("GET", "/x", nil)
			req.Header.Set("Authorization", "Bearer agk_whatever")
			rec := serve(t, h, req)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			if tc.contains != "" {
				if got := readErrorBody(t, rec); !strings.Contains(got.Message, tc.contains) {
					t.Fatalf("error %+v, want it to say %q", got, tc.contains)
				}
			}
			if got := rec.Header().Get("WWW-Authenticate"); got != tc.www {
				t.Fatalf("WWW-Authenticate %q, want %q", got, tc.www)
			}
			if tc.status == 429 && rec.Header().Get("Retry-After") != "42" {
				t.Fatalf("Retry-After %q, want 42", rec.Header().Get("Retry-After"))
			}
			if got := s.limits.Load(); got != tc.limits {
				t.Fatalf("%d rate-limit checks, want %d", got, tc.limits)
			}
		})
	}
}
