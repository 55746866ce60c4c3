package app_test

import (
	"context"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/pkg/app"
	"github.com/agentgate/agentgate/pkg/app/apptest"
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
	lines, done := apptest.Background(t, func(ctx context.Context, out io.Writer) error {
		return app.Serve(ctx, ln, cfg, app.ServeOptions{}, out)
	})
	// The key line comes last, once serve is ready.
	const prefix = "(shown once, keep it): "
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("serve ended without printing a key: %v", <-done)
			}
			if _, k, found := strings.Cut(l, prefix); found {
				return "http://" + ln.Addr().String(), k
			}
		case <-time.After(20 * time.Second):
			t.Fatal("serve did not print its API key")
		}
	}
}
