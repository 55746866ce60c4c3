// Package apptest runs agentgate for tests: a sample agent registered as
// "sample-echo", and as many agentgate instances as a test wants on one
// table, each built from scratch as a cold-started Lambda instance would
// be.
package apptest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/agentgate/agentgate/pkg/agent"
	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/apikey"
	"github.com/agentgate/agentgate/pkg/app"
	"github.com/agentgate/agentgate/pkg/sampleagent"
	"github.com/agentgate/agentgate/pkg/store"
	"github.com/agentgate/agentgate/pkg/store/dynamo"
	"github.com/agentgate/agentgate/pkg/store/dynamo/dynalite"
	"github.com/agentgate/agentgate/pkg/store/embedded"
)

// Secrets of the test configuration.
const (
	JWTSecret     = "test-secret-0123456789-abcdefghijklmnop"
	ConsentSecret = "consent-secret-0123456789-abcdefghijklmnop"
)

// Backends are the stores a stack can run on.
var Backends = []string{"embedded", "dynamodb"}

// Stack is agentgate in front of a running sample agent.
type Stack struct {
	t       testing.TB
	env     map[string]string
	clock   func() time.Time
	open    func() store.Store // a new client of the one table
	Sample  *sampleagent.Agent
	AgentID string
	// Deps are the first instance's, for looking into the table.
	Deps app.Deps
}

// New starts a sample agent and registers it, owned by "owner", on a fresh
// table of backend. env overrides the test configuration.
func New(t testing.TB, backend string, env map[string]string) *Stack {
	t.Helper()
	return NewOn(t, backend, env, time.Now)
}

// NewOn is New on clock: the one clock of the stores and of every service
// of every instance.
func NewOn(t testing.TB, backend string, env map[string]string, clock func() time.Time) *Stack {
	t.Helper()
	s := &Stack{t: t, clock: clock, Sample: sampleagent.New(sampleagent.Options{}), AgentID: "sample-echo",
		env: map[string]string{
			"A2A_JWT_SECRET": JWTSecret, "CONSENT_SECRET": ConsentSecret,
			"MCP_SERVER_ENABLED": "true", "AGENT_NETWORK": "local",
			// The tests make many calls from one address and principal.
			"RATE_LIMIT_MCP_PER_IP": "off", "RATE_LIMIT_MCP_PER_PRINCIPAL": "off",
			"RATE_LIMIT_API_PER_IP": "off", "RATE_LIMIT_API_PER_PRINCIPAL": "off",
		}}
	for k, v := range env {
		s.env[k] = v
	}
	switch backend {
	case "embedded":
		st, err := embedded.Open(filepath.Join(t.TempDir(), "agentgate.db"), embedded.WithClock(clock))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		s.open = func() store.Store { return st } // the file is locked to one opener
	case "dynamodb":
		srv := dynalite.Start(t)
		table := srv.NewTable(t)
		s.open = func() store.Store {
			st, err := dynamo.Open(context.Background(), dynamo.Config{Table: table, Endpoint: srv.Endpoint(), Region: "us-east-1"}, dynamo.WithClock(clock))
			if err != nil {
				t.Fatal(err)
			}
			return st
		}
	default:
		t.Fatalf("unknown backend %q", backend)
	}
	s.Deps = s.deps(s.open())
	agentSrv := httptest.NewServer(s.Sample.Handler())
	t.Cleanup(agentSrv.Close)
	tmpl, err := agent.ParseFile(filepath.Join(root(), "examples", "agents", "echo.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tmpl.Endpoint = agentSrv.URL + "/"
	if _, _, err := s.Deps.Agents.Import(context.Background(), "owner", tmpl); err != nil {
		t.Fatal(err)
	}
	return s
}

func (s *Stack) deps(st store.Store) app.Deps {
	s.t.Helper()
	cfg, err := app.ConfigFromEnv(func(k string) string { return s.env[k] })
	if err != nil {
		s.t.Fatal(err)
	}
	cfg.Clock = s.clock
	d, err := app.NewDeps(cfg, st)
	if err != nil {
		s.t.Fatal(err)
	}
	return d
}

// Instance builds a new agentgate instance on the table: its own store
// client, services and SDK servers, sharing nothing in memory with the
// others.
func (s *Stack) Instance() http.Handler {
	return app.Handler(s.deps(s.open()), app.Functions...)
}

// Wrap builds an instance on the table seen through wrap, for tests that
// make the store fail.
func (s *Stack) Wrap(wrap func(store.Store) store.Store) http.Handler {
	return app.Handler(s.deps(wrap(s.open())), app.Functions...)
}

// Serve runs a new instance on an httptest server and returns its URL.
func (s *Stack) Serve() string {
	srv := httptest.NewServer(s.Instance())
	s.t.Cleanup(srv.Close)
	return srv.URL
}

// Key makes an API key for owner and returns it; scope connector keys act
// for the stack's agent.
func (s *Stack) Key(owner, scope string) string {
	s.t.Helper()
	nk := apikey.NewKey{Owner: owner, Scope: scope}
	if scope == agentgate.ScopeConnector {
		nk.Agent = s.AgentID
	}
	k, err := s.Deps.Keys.Create(context.Background(), nk)
	if err != nil {
		s.t.Fatal(err)
	}
	return k.Key
}

// Bearer is an http.Client that sends token on every request.
func Bearer(token string) *http.Client {
	return &http.Client{Transport: bearer{token}}
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// root is the module's root directory.
func root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}
