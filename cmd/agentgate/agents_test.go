package main

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/pkg/agent"
)

// agentsCmd runs `agentgate agents args...` on the embedded store at data
// and returns its output and result.
func agentsCmd(t *testing.T, data string, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	args = append([]string{"agents", args[0], "--data", data}, args[1:]...)
	err := run(t.Context(), args, func(string) string { return "" }, &out, &out)
	return out.String(), err
}

func TestAgentsImportExamples(t *testing.T) {
	data := filepath.Join(t.TempDir(), "agentgate.db")
	dir := filepath.Join("..", "..", "examples", "agents")
	want := func(result string) string {
		return filepath.Join(dir, "echo.yaml") + ": " + result + " sample-echo\n" +
			filepath.Join(dir, "minimal.yaml") + ": " + result + " sample-minimal\n"
	}

	out, err := agentsCmd(t, data, "import", "--owner", "alice", dir)
	if err != nil || out != want("created") {
		t.Fatalf("first import: %v\n%s\nwant:\n%s", err, out, want("created"))
	}
	out, err = agentsCmd(t, data, "import", "--owner", "alice", dir)
	if err != nil || out != want("unchanged") {
		t.Fatalf("second import: %v\n%s\nwant:\n%s", err, out, want("unchanged"))
	}
	out, err = agentsCmd(t, data, "import", "--owner", "bob", filepath.Join(dir, "echo.yaml"))
	if err == nil || !strings.Contains(out, `echo.yaml: error: agent "sample-echo" belongs to another owner`) {
		t.Fatalf("bob's import: %v\n%s", err, out)
	}

	out, err = agentsCmd(t, data, "list")
	if err != nil {
		t.Fatal(err)
	}
	var listed []agent.Agent
	if err := json.Unmarshal([]byte(out), &listed); err != nil {
		t.Fatalf("list output is not JSON: %v\n%s", err, out)
	}
	if len(listed) != 2 || listed[0].Template.Name != "sample-echo" || listed[0].Owner != "alice" ||
		!listed[0].Template.PublicCard || listed[1].Template.Name != "sample-minimal" {
		t.Fatalf("listed %+v", listed)
	}
}

func TestAgentsImportReportsEveryProblem(t *testing.T) {
	dir := t.TempDir()
	bad := `name: Bad Name
description: A bad template.
version: one
endpoint: localhost:9090
capabilities:
  - name: Echo
    description: Echoes.
    use_cases: []
  - name: echo
    description: Echoes again.
    use_cases: [Echo]
playbooks:
  - name: slow
    description: Waits.
    input_schema: {type: object, properties: {seconds: {type: integr}}}
`
	for name, src := range map[string]string{"bad.yaml": bad, "typo.yaml": "name: typo\nendpont: x\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	example, err := os.ReadFile(filepath.Join("..", "..", "examples", "agents", "minimal.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "good.yaml"), example, 0o600); err != nil {
		t.Fatal(err)
	}

	out, err := agentsCmd(t, filepath.Join(t.TempDir(), "agentgate.db"), "import", "--owner", "alice", dir)
	if err == nil || err.Error() != "agents import: 2 of 3 templates failed" {
		t.Fatalf("import = %v, want 2 of 3 failed", err)
	}
	want := []string{
		filepath.Join(dir, "bad.yaml") + ": error: invalid template",
		"  name: must be 1 to 63 lower-case letters, digits and hyphens, starting with a letter or digit",
		"  version: must be a semantic version like 1.2.3",
		"  endpoint: must be an absolute http(s) URL",
		"  capabilities[0].use_cases: required",
		`  capabilities[1].name: slug "echo" is already used by capabilities[0]`,
		"  playbooks[0].input_schema: does not compile: at '/properties/seconds/type': enum: integr does not equal any of: [array boolean integer null number object string]",
		"  playbooks[0].input_schema: does not compile: at '/properties/seconds/type': type: integr has type \"string\", want \"array\"",
		filepath.Join(dir, "good.yaml") + ": created sample-minimal",
		filepath.Join(dir, "typo.yaml") + ": error: invalid template",
		"  line 2: field endpont not found in type agent.Template",
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("output:\n%s\nwant %d lines", out, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(lines[i], want[i]) {
			t.Errorf("line %d = %q, want %q", i+1, lines[i], want[i])
		}
	}
}

func TestAgentsUsageErrors(t *testing.T) {
	data := filepath.Join(t.TempDir(), "agentgate.db")
	for _, args := range [][]string{
		{"import", "examples"},
		{"import", "--owner", "alice"},
		{"import", "--owner", "alice", "a", "b"},
		{"import", "--owner", "alice", filepath.Join(t.TempDir(), "missing")},
		{"remove", "x"},
	} {
		if out, err := agentsCmd(t, data, args...); err == nil {
			t.Errorf("agents %q succeeded:\n%s", args, out)
		}
	}
}

// TestAgentsStatus: status of an agent nobody answers for says so, with
// the reason, and is not an error; an unknown agent is.
func TestAgentsStatus(t *testing.T) {
	data := filepath.Join(t.TempDir(), "agentgate.db")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := ln.Addr().String()
	ln.Close()
	file := filepath.Join(t.TempDir(), "down.yaml")
	tmpl := "name: down\ndescription: Nobody home.\nversion: 1.0.0\nendpoint: http://" + down + "/\ncapabilities:\n  - {name: Nothing, description: Does nothing., use_cases: [Wait.]}\n"
	if err := os.WriteFile(file, []byte(tmpl), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := agentsCmd(t, data, "import", "--owner", "alice", file); err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	out, err := agentsCmd(t, data, "status", "down")
	if err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	var st struct {
		Registered, Reachable bool
		Reason                string
		Running               int
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status output is not JSON: %v\n%s", err, out)
	}
	if !st.Registered || st.Reachable || st.Reason != "agent unreachable: connection refused" || st.Running != 0 {
		t.Errorf("status %+v", st)
	}
	if _, err := agentsCmd(t, data, "status", "nobody"); err == nil || !strings.Contains(err.Error(), `no agent "nobody"`) {
		t.Errorf("status of an unknown agent: %v", err)
	}
}
