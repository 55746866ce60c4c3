package app

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/agentgate/agentgate/pkg/logging"
	"github.com/agentgate/agentgate/pkg/store"
	"github.com/agentgate/agentgate/pkg/store/dynamo"
	"github.com/agentgate/agentgate/pkg/store/dynamo/dynalite"
	"github.com/agentgate/agentgate/pkg/store/embedded"
)

// logs collects every log record of this package's test run, so that
// TestMain can check that no secret ever reached a log.
var logs lockedBuffer

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Shapes of the secrets the tests use: API keys and JWTs.
var secretShapes = regexp.MustCompile(`agk_[a-z2-7]{13}_[a-z2-7]{52}|eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*`)

func TestMain(m *testing.M) {
	slog.SetDefault(logging.New(&logs, slog.LevelDebug))
	code := m.Run()
	out := logs.String()
	if code == 0 && secretShapes.MatchString(out) {
		fmt.Fprintf(os.Stderr, "a secret reached the logs: %q\n", secretShapes.FindString(out))
		code = 1
	}
	dynalite.Stop()
	os.Exit(code)
}

// TestLogCaptureSeesRequests guards the check in TestMain: if the capture
// missed the request log, finding no secret in it would prove nothing.
func TestLogCaptureSeesRequests(t *testing.T) {
	st, _ := backends()[0].open(t)
	h := Handler(mustDeps(t, mustConfig(t, testEnv(nil)), st), Functions...)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/health/connector", nil))
	id := rec.Header().Get("X-Request-Id")
	if id == "" || !strings.Contains(logs.String(), `"request_id":"`+id+`"`) {
		t.Fatalf("the request log of %q is not in the captured logs", id)
	}
}

// backend opens two "instances" of one table: on DynamoDB two separate
// clients (as two Lambda instances have), on the embedded store the one
// process-wide handle (its file is locked to one opener).
type backend struct {
	name string
	open func(t testing.TB) (a, b store.Store)
}

func backends() []backend {
	return []backend{
		{"embedded", func(t testing.TB) (store.Store, store.Store) {
			s, err := embedded.Open(filepath.Join(t.TempDir(), "agentgate.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s, s
		}},
		{"dynamodb", func(t testing.TB) (store.Store, store.Store) {
			srv := dynalite.Start(t)
			table := srv.NewTable(t)
			open := func() store.Store {
				s, err := dynamo.Open(context.Background(), dynamo.Config{Table: table, Endpoint: srv.Endpoint(), Region: "us-east-1"})
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
			return open(), open()
		}},
	}
}

// testEnv is the configuration the chain tests run with.
func testEnv(over map[string]string) func(string) string {
	env := map[string]string{
		"A2A_JWT_SECRET":     jwtSecret,
		"MCP_SERVER_ENABLED": "true",
		"CONSENT_SECRET":     "consent-secret-0123456789-abcdefghijklmnop",
		"MAX_BODY_BYTES":     "1024",
	}
	for k, v := range over {
		env[k] = v
	}
	return func(k string) string { return env[k] }
}

const jwtSecret = "test-secret-0123456789-abcdefghijklmnop"

func mustConfig(t testing.TB, getenv func(string) string) Config {
	t.Helper()
	cfg, err := ConfigFromEnv(getenv)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func mustDeps(t testing.TB, cfg Config, st store.Store) Deps {
	t.Helper()
	d, err := NewDeps(cfg, st)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func readAll(t testing.TB, r io.Reader) string {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
