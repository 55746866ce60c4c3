// Package nodetest runs the tests' Node peers: the MCP TypeScript SDK
// client and the other npm packages that `make deps` installs from
// package-lock.json into the module root's node_modules. It is for tests
// only.
package nodetest

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Root is the module root: the nearest directory above the test's own
// (the package directory) that holds go.mod.
func Root(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("nodetest: no go.mod above the test's directory")
		}
		dir = parent
	}
}

// Node returns the node binary, after checking that the npm packages pkgs
// are installed. With CI=true a missing one fails the test; elsewhere it
// skips it, with what to run.
func Node(t testing.TB, pkgs ...string) string {
	t.Helper()
	node, err := exec.LookPath("node")
	missing := "node"
	if err == nil {
		missing = ""
		for _, p := range pkgs {
			if _, err := os.Stat(filepath.Join(Root(t), "node_modules", p, "package.json")); err != nil {
				missing = p
				break
			}
		}
	}
	if missing != "" {
		msg := missing + " is missing; run make deps"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return node
}

// RunJSON runs script (a path from the module root) with node, from the
// module root, with env added to the test's environment, and decodes the
// JSON it prints into v. The MCP TypeScript SDK must be installed.
func RunJSON(t testing.TB, script string, v any, env ...string) {
	t.Helper()
	node := Node(t, "@modelcontextprotocol/sdk")
	cmd := exec.CommandContext(t.Context(), node, script)
	cmd.Dir = Root(t)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\nstdout: %s\nstderr: %s", script, err, stdout.String(), stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), v); err != nil {
		t.Fatalf("%s printed %q: %v\nstderr: %s", script, stdout.String(), err, stderr.String())
	}
}
