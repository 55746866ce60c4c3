//go:build linux

// The Lambda Runtime Interface Emulator runs only on Linux.

package functions_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/app"
	"github.com/agentgate/agentgate/pkg/store/dynamo/dynalite"
	"github.com/agentgate/agentgate/pkg/web"
)

func TestMain(m *testing.M) {
	code := m.Run()
	dynalite.Stop()
	os.Exit(code)
}

const installRIE = "make deps (or: go install github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@v0.0.0-20261030222936-bef5c4ba774d)"

// TestLambdaFunctions builds every function for this machine (as make
// build-host does), runs it under the real Lambda Runtime Interface Emulator
// on a dynalite table, and invokes it with API Gateway HTTP API (payload 2.0)
// events.
func TestLambdaFunctions(t *testing.T) {
	rie := findRIE(t)
	db := dynalite.Start(t)
	bin := t.TempDir()
	for _, f := range app.Functions {
		table := db.NewTable(t)
		t.Run(f.Name, func(t *testing.T) {
			t.Parallel()
			bootstrap := buildBootstrap(t, bin, f.Dir)
			fn := startRIE(t, rie, bootstrap, lambdaEnv(db, table, f.Name, map[string]string{
				// Off (the template's default), the MCP function hides every
				// route, its health route included.
				"MCP_SERVER_ENABLED": "true",
				"CONSENT_SECRET":     "consent-secret-for-the-emulator-test-0123",
			}))

			resp, id := fn.invoke(t, http.MethodGet, web.HealthPath(f.Name))
			checkJSON(t, resp, http.StatusOK, id)
			if ms, ok := fn.initDuration(); ok {
				// The figure issue 13 asks for: `go test -v -run TestLambdaFunctions ./functions/`.
				t.Logf("INIT %.1f ms (bootstrap %s)", ms, bootstrap)
			}
			var health struct{ Status, Function string }
			if err := json.Unmarshal([]byte(resp.Body), &health); err != nil || health.Status != "ok" || health.Function != f.Name {
				t.Errorf("health body = %s, want status ok and function %q", strings.TrimSpace(resp.Body), f.Name)
			}

			resp, id = fn.invoke(t, http.MethodGet, "/no/such/route")
			checkJSON(t, resp, http.StatusNotFound, id)
			var e web.ErrorBody
			if err := json.Unmarshal([]byte(resp.Body), &e); err != nil || e.Error.Code != agentgate.ENOTFOUND {
				t.Errorf("unknown route body = %s, want a %s error", strings.TrimSpace(resp.Body), agentgate.ENOTFOUND)
			}
		})
	}
}

// buildBootstrap builds the function in dir (from the module root) for
// this machine as make build-host does, into a directory under bin, and
// returns the bootstrap's path.
func buildBootstrap(t testing.TB, bin, dir string) string {
	t.Helper()
	bootstrap := filepath.Join(bin, filepath.Base(dir), "bootstrap")
	build := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w", "-o", bootstrap, "./"+dir)
	build.Dir = ".."
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", dir, err, out)
	}
	return bootstrap
}

// lambdaEnv is a function's environment under the emulator: the table on
// db, static credentials, Lambda's own variables as template.yaml sets
// them, and extra.
func lambdaEnv(db *dynalite.Server, table, name string, extra map[string]string) map[string]string {
	env := map[string]string{
		"TABLE_NAME":                  table,
		"AWS_ENDPOINT_URL_DYNAMODB":   db.Endpoint(),
		"AWS_REGION":                  "us-east-1",
		"AWS_ACCESS_KEY_ID":           "test",
		"AWS_SECRET_ACCESS_KEY":       "test",
		"AWS_EC2_METADATA_DISABLED":   "true",
		"AWS_LAMBDA_FUNCTION_NAME":    name,
		"AWS_LAMBDA_FUNCTION_TIMEOUT": "30", // as template.yaml
	}
	maps.Copy(env, extra)
	return env
}

// findRIE returns the emulator's path: on PATH or where go install puts it.
func findRIE(t testing.TB) string {
	if p, err := exec.LookPath("aws-lambda-rie"); err == nil {
		return p
	}
	out, err := exec.Command("go", "env", "GOBIN", "GOPATH").Output()
	if err == nil {
		dirs := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(dirs) == 2 && dirs[0] == "" {
			dirs[0] = filepath.Join(dirs[1], "bin")
		}
		p := filepath.Join(dirs[0], "aws-lambda-rie")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("aws-lambda-rie not found; install it: %s", installRIE)
	}
	t.Skipf("aws-lambda-rie not found; install it: %s", installRIE)
	return ""
}

// function is one bootstrap running under its own emulator.
type function struct {
	url string     // the emulator's invoke endpoint
	log *logBuffer // the emulator's output, the function's logs among it
	// stop stops the emulator (and the function) and waits until it has
	// exited; the test's cleanup calls it too.
	stop func()
}

// logBuffer is an emulator's output, read while the emulator writes it.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// initReport matches the emulator's report of a function's INIT phase.
var initReport = regexp.MustCompile(`INIT REPORT\(durationMs: ([0-9.]+)\)`)

// initDuration is the INIT phase's duration the emulator reported, once the
// function has been invoked.
func (f function) initDuration() (float64, bool) {
	m := initReport.FindStringSubmatch(f.log.String())
	if m == nil {
		return 0, false
	}
	ms, err := strconv.ParseFloat(m[1], 64)
	return ms, err == nil
}

// startRIE runs bootstrap under the emulator with env (and PATH and HOME
// only: no AWS settings of the host leak in) and waits until it listens.
// The emulator is stopped with SIGTERM at cleanup, which makes it kill the
// runtime process before it exits; its output is logged if the test failed.
func startRIE(t testing.TB, rie, bootstrap string, env map[string]string) function {
	// Two ports: parallel emulators must not share the default runtime API
	// port 9001. Both listeners stay open until both ports are chosen.
	ports := freePorts(t, 2)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, rie,
		"--runtime-interface-emulator-address", ports[0],
		"--runtime-api-address", ports[1],
		bootstrap)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second // then SIGKILL
	// Should the test binary die without running cleanups (a -timeout
	// panic), the kernel sends the emulator the same SIGTERM (see the
	// dynalite harness's procAttr for why the starting thread outlives it).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out := &logBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	var waitErr error
	exited := make(chan struct{})
	go func() { waitErr = cmd.Wait(); close(exited) }()
	stop := sync.OnceFunc(func() {
		cancel()
		<-exited
	})
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("aws-lambda-rie output:\n%s", out.String())
		}
	})

	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", ports[0], time.Second)
		if err == nil {
			c.Close()
			break
		}
		select {
		case <-exited:
			t.Fatalf("aws-lambda-rie exited: %v", waitErr)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("aws-lambda-rie is not listening on %s: %v", ports[0], err)
		}
	}
	return function{url: "http://" + ports[0] + "/2015-03-31/functions/function/invocations", log: out, stop: stop}
}

func freePorts(t testing.TB, n int) []string {
	var addrs []string
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		addrs = append(addrs, ln.Addr().String())
	}
	return addrs
}

// invoke sends the HTTP API event API Gateway would for method and path, with
// a fresh Lambda request id (the emulator takes it from X-Amzn-RequestId, as
// Lambda assigns one per invocation), and returns the function's response and
// that id.
func (f function) invoke(t testing.TB, method, path string) (events.APIGatewayV2HTTPResponse, string) {
	t.Helper()
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	event, err := json.Marshal(events.APIGatewayV2HTTPRequest{
		Version:  "2.0",
		RouteKey: method + " " + path,
		RawPath:  path,
		Headers:  map[string]string{"accept": "application/json", "user-agent": "lambda_test"},
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RequestID: "apigw-" + id,
			Stage:     "$default",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method:    method,
				Path:      path,
				Protocol:  "HTTP/1.1",
				SourceIP:  "192.0.2.1",
				UserAgent: "lambda_test",
			},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, f.url, bytes.NewReader(event))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Amzn-RequestId", id)
	client := http.Client{Timeout: 30 * time.Second}
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("invoke %s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	var raw bytes.Buffer
	_, _ = raw.ReadFrom(res.Body)
	var resp events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(raw.Bytes(), &resp); err != nil || resp.StatusCode == 0 {
		t.Fatalf("invoke %s %s: emulator answered %s: %s (%v)", method, path, res.Status, raw.String(), err)
	}
	return resp, id
}

// checkJSON checks a response's status, that it is JSON and that it carries
// the Lambda request id as X-Request-Id.
func checkJSON(t *testing.T, resp events.APIGatewayV2HTTPResponse, status int, requestID string) {
	t.Helper()
	h := http.Header{}
	for k, v := range resp.Headers {
		h.Set(k, v)
	}
	if resp.StatusCode != status {
		t.Errorf("status = %d, want %d (body %s)", resp.StatusCode, status, strings.TrimSpace(resp.Body))
	}
	if ct := h.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	if got := h.Get("X-Request-Id"); got != requestID {
		t.Errorf("X-Request-Id = %q, want the Lambda request id %q", got, requestID)
	}
}
