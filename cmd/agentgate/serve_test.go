package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/pkg/app"
	"github.com/agentgate/agentgate/pkg/app/apptest"
	"github.com/agentgate/agentgate/pkg/store/dynamo/dynalite"
)

// startServe runs `agentgate serve` in-process with args, returns its base URL
// once the banner is printed, and stops it at cleanup.
func startServe(t *testing.T, env map[string]string, args ...string) (string, []string) {
	t.Helper()
	lines, done := apptest.Background(t, func(ctx context.Context, out io.Writer) error {
		return run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0", "--sample-agent="}, args...),
			func(k string) string { return env[k] }, out, io.Discard)
	})
	var banner []string
	// The banner (a header line and one per route), then what else serve
	// started, then the API key line, which is last.
	for len(banner) == 0 || !strings.HasPrefix(banner[len(banner)-1], "API key for owner") {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("serve exited early; printed %q; result %v", banner, <-done)
			}
			banner = append(banner, l)
		case <-time.After(20 * time.Second):
			t.Fatalf("serve did not finish starting; printed %q", banner)
		}
	}
	m := regexp.MustCompile(`serving on (http://127\.0\.0\.1:\d+)`).FindStringSubmatch(banner[0])
	if m == nil {
		t.Fatalf("banner %q does not say where it serves", banner[0])
	}
	return m[1], banner
}

func checkHealthRoutes(t *testing.T, base string, banner []string) {
	t.Helper()
	for _, f := range app.Functions {
		url := base + "/health/" + f.Name
		if !strings.Contains(strings.Join(banner, "\n"), url) {
			t.Errorf("banner does not list %s", url)
		}
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]string
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || body["status"] != "ok" || body["function"] != f.Name {
			t.Errorf("GET %s = %d %v (%v)", url, resp.StatusCode, body, err)
		}
	}
	resp, err := http.Get(base + "/no/such/route")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("unknown route: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}

func TestServeEmbeddedServesEveryFunction(t *testing.T) {
	data := filepath.Join(t.TempDir(), "agentgate.db")
	base, banner := startServe(t, nil, "--data", data)
	if !strings.Contains(banner[0], "embedded store "+data) {
		t.Errorf("banner %q does not name the embedded store", banner[0])
	}
	checkHealthRoutes(t, base, banner)
}

func TestServeOnDynamoDBEndpoint(t *testing.T) {
	srv := dynalite.Start(t)
	env := map[string]string{"AWS_REGION": "us-east-1"}
	base, banner := startServe(t, env, "--dynamodb-endpoint", srv.Endpoint(), "--table", "serve-test")
	if !strings.Contains(banner[0], "DynamoDB table serve-test at "+srv.Endpoint()) {
		t.Errorf("banner %q does not name the table", banner[0])
	}
	checkHealthRoutes(t, base, banner)
}

// TestServeFrontsTheSampleAgent: serve imports the agent templates it is
// given, runs the sample agent, and fronts it: with the key serve prints, a
// message through the A2A front door reaches the agent and comes back.
func TestServeFrontsTheSampleAgent(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sampleAddr := ln.Addr().String()
	ln.Close()
	tmpl, err := os.ReadFile(filepath.Join("..", "..", "examples", "agents", "echo.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	agents := t.TempDir()
	moved := strings.Replace(string(tmpl), "http://127.0.0.1:9090/", "http://"+sampleAddr+"/", 1)
	if err := os.WriteFile(filepath.Join(agents, "echo.yaml"), []byte(moved), 0o600); err != nil {
		t.Fatal(err)
	}

	base, out := startServe(t, nil, "--data", filepath.Join(t.TempDir(), "agentgate.db"), "--agents", agents, "--sample-agent", sampleAddr)
	text := strings.Join(out, "\n")
	for _, want := range []string{
		"sample agent serving A2A on http://" + sampleAddr + "/",
		"agent sample-echo (created): card at " + base + "/api/agents/sample-echo/a2a/agent-card",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("serve's output lacks %q:\n%s", want, text)
		}
	}
	key := regexp.MustCompile(`agk_[a-z2-7_]+`).FindString(out[len(out)-1])
	if key == "" {
		t.Fatalf("no key in %q", out[len(out)-1])
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"serve-1","role":"ROLE_USER","parts":[{"text":"word-count one two three"}]}}}`
	req, _ := http.NewRequest(http.MethodPost, base+"/api/agents/sample-echo/a2a", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var answer struct {
		Result struct {
			Task struct {
				ID     string `json:"id"`
				Status struct {
					State string `json:"state"`
				} `json:"status"`
			} `json:"task"`
		} `json:"result"`
		Error any `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil || resp.StatusCode != 200 || answer.Result.Task.ID == "" {
		t.Fatalf("front door: %d %+v %v", resp.StatusCode, answer, err)
	}
}

// TestServeRestartSaysHowToGetAKey: the key serve made on its first start
// is shown once; a restart says how to get another, with a command that
// works only once serve has stopped, and says so.
func TestServeRestartSaysHowToGetAKey(t *testing.T) {
	data := filepath.Join(t.TempDir(), "agentgate.db")
	var first []string
	t.Run("first start", func(t *testing.T) { _, first = startServe(t, nil, "--data", data, "--agents=") })
	_, again := startServe(t, nil, "--data", data, "--agents=")
	key := regexp.MustCompile(`agk_[a-z2-7_]+`).FindString(first[len(first)-1])
	last := again[len(again)-1]
	if key == "" || strings.Contains(last, key) {
		t.Fatalf("first start printed %q; restart %q", first[len(first)-1], last)
	}
	for _, want := range []string{"created earlier", "stop serve and run agentgate keys create --owner local", "POST /api/keys"} {
		if !strings.Contains(last, want) {
			t.Errorf("restart's key line lacks %q: %s", want, last)
		}
	}
}
