package app_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/pkg/app"
)

// startServe runs agentgate as `agentgate serve` does (app.Serve on a free
// loopback port, the embedded store in a temporary directory, the MCP server
// on) until the test ends, and returns its base URL and the API key it
// printed.
func startServe(t *testing.T) (base, key string) {
	t.Helper()
	dir := t.TempDir()
	env := map[string]string{
		"AGENTGATE_DATA": filepath.Join(dir, "agentgate.db"), "MCP_SERVER_ENABLED": "true", "AGENT_NETWORK": "local",
		"CONSENT_SECRET": "consent-secret-0123456789-abcdefghijklmnop",
	}
	cfg, err := app.ConfigFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- app.Serve(ctx, ln, cfg, app.ServeOptions{}, pw)
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve returned %v after shutdown", err)
			}
		case <-time.After(15 * time.Second):
			t.Error("serve did not stop")
		}
	})
	// The key line comes last, once serve is ready; the rest of the
	// output is drained so that serve never blocks on it.
	keys := make(chan string, 1)
	go func() {
		const prefix = "(shown once, keep it): "
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if _, k, ok := strings.Cut(sc.Text(), prefix); ok {
				keys <- k
			}
		}
		close(keys)
	}()
	select {
	case k, ok := <-keys:
		if !ok {
			t.Fatalf("serve ended without printing a key: %v", <-done)
		}
		return "http://" + ln.Addr().String(), k
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not print its API key")
	}
	return "", ""
}
