package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/pkg/store/embedded"
)

// agentgate runs the command line as main does, and returns its exit
// status and what it printed.
func agentgate(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut strings.Builder
	err := run(t.Context(), args, func(string) string { return "" }, &out, &errOut)
	code = exitCode(err, &errOut)
	return code, out.String(), errOut.String()
}

// helpCommands is every command and subcommand, as typed.
var helpCommands = []string{
	"", "serve", "ask-mcp",
	"keys", "keys create", "keys list", "keys revoke",
	"agents", "agents import", "agents list", "agents status",
}

// TestEveryCommandHasHelp: -h, --help and `help` print the command's usage
// on stdout and exit 0, whatever else the command needs.
func TestEveryCommandHasHelp(t *testing.T) {
	var all []string
	var walk func(*command)
	walk = func(c *command) {
		all = append(all, c.name)
		for _, s := range c.subs {
			walk(s)
		}
	}
	walk(root)
	if !slices.Equal(all, helpCommands) {
		t.Fatalf("the command tree has %q; this test covers %q", all, helpCommands)
	}

	for _, name := range helpCommands {
		words := strings.Fields(name)
		for _, args := range [][]string{
			append(slices.Clone(words), "--help"),
			append(slices.Clone(words), "-h"),
			append([]string{"help"}, words...),
		} {
			code, stdout, stderr := agentgate(t, args...)
			if code != 0 || stderr != "" {
				t.Errorf("agentgate %q: exit %d, stderr %q", args, code, stderr)
			}
			if want := strings.TrimSpace("agentgate " + name); !strings.Contains(stdout, "Usage") || !strings.HasPrefix(stdout, want+" - ") {
				t.Errorf("agentgate %q: usage does not start with %q:\n%s", args, want, stdout)
			}
		}
	}
	// A leaf's usage shows its own flags; a group's, its commands.
	if _, out, _ := agentgate(t, "keys", "create", "-h"); !strings.Contains(out, "--expires-in") || !strings.Contains(out, "--owner") {
		t.Errorf("keys create -h lacks its flags:\n%s", out)
	}
	if _, out, _ := agentgate(t, "agents", "--help"); !strings.Contains(out, "agentgate agents status [flags] NAME") {
		t.Errorf("agents --help lacks its commands:\n%s", out)
	}
}

// TestUsageErrors: a command line that cannot run prints the error and the
// usage of the command it was for on stderr, nothing on stdout, and exits 2.
func TestUsageErrors(t *testing.T) {
	data := filepath.Join(t.TempDir(), "agentgate.db")
	for _, c := range []struct {
		args      []string
		err, used string
	}{
		{nil, "agentgate: missing command", "agentgate - "},
		{[]string{"frobnicate"}, `agentgate: unknown command "frobnicate"`, "agentgate - "},
		{[]string{"--data", data, "keys", "list"}, "agentgate: unknown flag --data (flags go after the command)", "agentgate - "},
		{[]string{"keys"}, "agentgate keys: missing command", "agentgate keys - "},
		{[]string{"keys", "rotate"}, `agentgate keys: unknown command "rotate"`, "agentgate keys - "},
		{[]string{"agents", "remove", "x"}, `agentgate agents: unknown command "remove"`, "agentgate agents - "},
		{[]string{"keys", "list", "--data", data}, "agentgate keys list: --owner is required", "agentgate keys list - "},
		{[]string{"keys", "list", "--owner", "a", "--bogus"}, "agentgate keys list: unknown flag: --bogus", "agentgate keys list - "},
		{[]string{"keys", "revoke", "--owner", "a", "--data", data}, `agentgate keys revoke: want ID, got []`, "agentgate keys revoke - "},
		{[]string{"keys", "list", "--owner", "a", "--data", data, "extra"}, `agentgate keys list: takes no arguments, got ["extra"]`, "agentgate keys list - "},
		{[]string{"keys", "create", "--owner", "a", "--expires-in", "soon"}, `agentgate keys create: invalid argument "soon" for "--expires-in"`, "agentgate keys create - "},
		{[]string{"serve", "--port", "80"}, "agentgate serve: unknown flag: --port", "agentgate serve - "},
		{[]string{"agents", "import", "--owner", "alice", "a", "b"}, `agentgate agents import: want DIR|FILE, got ["a" "b"]`, "agentgate agents import - "},
		{[]string{"agents", "status", "--data", data}, "agentgate agents status: want NAME, got []", "agentgate agents status - "},
	} {
		code, stdout, stderr := agentgate(t, c.args...)
		if code != 2 || stdout != "" {
			t.Errorf("agentgate %q: exit %d, stdout %q; want 2 and nothing", c.args, code, stdout)
		}
		first, rest, _ := strings.Cut(stderr, "\n\n")
		if !strings.HasPrefix(first, c.err) || !strings.HasPrefix(rest, c.used) || !strings.Contains(rest, "Usage") {
			t.Errorf("agentgate %q: stderr\n%s\nwant %q, then the usage of %q", c.args, stderr, c.err, c.used)
		}
	}
	if _, err := os.Stat(data); err == nil {
		t.Error("a command line that does not parse opened the store")
	}
}

// TestFlagsAfterArguments: flags may come before or after a command's
// arguments, and "--" ends them.
func TestFlagsAfterArguments(t *testing.T) {
	data := filepath.Join(t.TempDir(), "agentgate.db")
	code, out, stderr := agentgate(t, "keys", "create", "--owner", "x", "--data", data, "--name=ci")
	if code != 0 {
		t.Fatalf("keys create: exit %d: %s", code, stderr)
	}
	var created struct{ ID, Name string }
	if err := json.Unmarshal([]byte(out), &created); err != nil || created.ID == "" || created.Name != "ci" {
		t.Fatalf("keys create printed %q (%v)", out, err)
	}

	code, out, stderr = agentgate(t, "keys", "revoke", created.ID, "--owner", "x", "--data", data)
	if code != 0 {
		t.Fatalf("keys revoke ID --owner x: exit %d: %s", code, stderr)
	}
	var revoked struct {
		ID      string
		Revoked bool
	}
	if err := json.Unmarshal([]byte(out), &revoked); err != nil || revoked.ID != created.ID || !revoked.Revoked {
		t.Fatalf("keys revoke printed %q (%v)", out, err)
	}

	// The flag after the id is the owner's: another owner's key is not found.
	if code, _, stderr := agentgate(t, "keys", "revoke", created.ID, "--owner", "y", "--data", data); code != 1 || !strings.Contains(stderr, "no API key") {
		t.Errorf("keys revoke of x's key as y: exit %d: %s", code, stderr)
	}

	// "--" ends the flags: what follows is an argument even if it looks
	// like a flag.
	dir := filepath.Join("..", "..", "examples", "agents")
	code, out, stderr = agentgate(t, "agents", "import", "--data", data, "--", "--owner")
	if code != 2 || !strings.Contains(stderr, "--owner is required") {
		t.Errorf("agents import -- --owner: exit %d, out %q, stderr %q", code, out, stderr)
	}
	code, out, stderr = agentgate(t, "agents", "import", dir, "--owner", "alice", "--data", data)
	if code != 0 || !strings.Contains(out, "created sample-echo") {
		t.Errorf("agents import DIR --owner alice: exit %d: %s%s", code, out, stderr)
	}
	code, out, stderr = agentgate(t, "agents", "status", "sample-minimal", "--data", data)
	if code != 0 || !strings.Contains(out, `"agent": "sample-minimal"`) {
		t.Errorf("agents status NAME --data: exit %d: %s%s", code, out, stderr)
	}
}

// TestStoreInUseSaysWhatToDo: while another process (agentgate serve) holds
// the embedded store, each command fails with what to do instead.
func TestStoreInUseSaysWhatToDo(t *testing.T) {
	data := filepath.Join(t.TempDir(), "agentgate.db")
	held, err := embedded.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()

	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"keys create", []string{"--owner", "alice"}, "curl -X POST -H \"Authorization: Bearer $KEY\" -H 'Content-Type: application/json'"},
		{"keys list", []string{"--owner", "alice"}, "curl -H \"Authorization: Bearer $KEY\" http://127.0.0.1:8080/api/keys"},
		{"keys revoke", []string{"k1", "--owner", "alice"}, "curl -X DELETE"},
		{"agents import", []string{"--owner", "alice", t.TempDir()}, "restart it with --agents DIR"},
		{"agents list", nil, "agentgate://agents through"},
		{"agents status", []string{"x"}, "agentgate://agents/NAME/status"},
		{"serve", []string{"--addr", "127.0.0.1:0", "--sample-agent=", "--agents="}, "a store of its own with --data PATH"},
	} {
		args := slices.Concat(strings.Fields(c.name), c.args, []string{"--data", data})
		code, stdout, stderr := agentgate(t, args...)
		if code != 1 {
			t.Errorf("agentgate %q: exit %d (stdout %q), want 1", args, code, stdout)
		}
		for _, w := range []string{
			"agentgate: " + c.name + ": ",
			"embedded store " + data + ": store file is in use by another process.\nIf `agentgate serve` is running on it: stop it",
			c.want,
		} {
			if !strings.Contains(stderr, w) {
				t.Errorf("agentgate %q: stderr lacks %q:\n%s", args, w, stderr)
			}
		}
	}
}

// TestServeWarnsOfMissingAgentsDir: an --agents directory that is not there,
// given or defaulted, is a warning that names it and the flag; serve still
// serves.
func TestServeWarnsOfMissingAgentsDir(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-dir")
	_, banner := startServe(t, nil, "--data", filepath.Join(t.TempDir(), "agentgate.db"), "--agents", missing)
	text := strings.Join(banner, "\n")
	want := "warning: no agents imported: the agent templates directory " + missing + " does not exist; " +
		"run agentgate serve from the repository root, or pass --agents DIR"
	if !strings.Contains(text, want) {
		t.Errorf("serve --agents %s printed no warning:\n%s", missing, text)
	}

	// Outside a checkout, the default (relative) directory is missing too.
	t.Chdir(t.TempDir())
	_, banner = startServe(t, nil)
	text = strings.Join(banner, "\n")
	abs, err := filepath.Abs(defaultAgentsDir)
	if err != nil {
		t.Fatal(err)
	}
	want = "warning: no agents imported: the agent templates directory " + defaultAgentsDir + " (" + abs + ") does not exist"
	if !strings.Contains(text, want) || !strings.Contains(text, "--agents DIR") {
		t.Errorf("serve outside a checkout printed no warning naming %s:\n%s", defaultAgentsDir, text)
	}
}
