// Command agentgate is the operator's tool: `agentgate serve` runs all four
// functions in one local process; `agentgate keys` manages API keys and
// `agentgate agents` registers agents, in the local store or a deployed
// table.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/agentgate/agentgate/pkg/app"
	"github.com/agentgate/agentgate/pkg/sampleagent"
)

// root is the command tree. Every command answers -h and --help with its
// usage on stdout, and takes its flags before or after its arguments.
var root = &command{
	about: "the serverless front door for AI agents",
	more: `The store is the local embedded file (--data, AGENTGATE_DATA) unless a
DynamoDB table (--table, TABLE_NAME) or endpoint (--dynamodb-endpoint,
AWS_ENDPOINT_URL_DYNAMODB) is given.`,
	subs: []*command{
		{
			name: "serve", synopsis: "[flags]",
			about: "run all four functions in one local process, with the example agents and the sample agent they point to",
			more: `The MCP server is on unless MCP_SERVER_ENABLED=false; agent endpoints may be
on loopback and private addresses unless AGENT_NETWORK says otherwise; a consent
secret is made per process unless CONSENT_SECRET is set. The other settings are
read from the environment as the deployed functions read them (see README.md).`,
			flags: func(fs *pflag.FlagSet) {
				fs.String("addr", "127.0.0.1:8080", "address to listen on")
				fs.String("agents", defaultAgentsDir, "directory of agent templates to import on start, owned by \""+app.LocalOwner+"\" (--agents= imports none); relative to the current directory")
				fs.String("sample-agent", "127.0.0.1:9090", "address to run the sample A2A agent on, which examples/agents/echo.yaml points to (--sample-agent= runs none)")
			},
			busy: "stop it, or give this one a store of its own with --data PATH.",
			run:  serve,
		},
		{
			name: "ask-mcp", synopsis: "[flags]",
			about: "serve the docs MCP server (ask_docs, get_agent_requirements) on stdin and stdout, for MCP clients that start a process",
			more: `Logs go to stderr; stdout carries MCP messages only. Without --endpoint (ASK_ENDPOINT)
ask_docs answers from the docs built into this binary, offline. Example:
  claude mcp add agentgate-docs -- agentgate ask-mcp`,
			storeless: true,
			flags: func(fs *pflag.FlagSet) {
				fs.String("endpoint", "", "docs Q&A endpoint to proxy (ASK_ENDPOINT); default: the built-in docs Q&A")
				fs.String("guide-url", "", "agent-compatibility guide get_agent_requirements fetches (ASK_GUIDE_URL)")
			},
			run: askMCP,
		},
		{
			name: "keys", about: "manage API keys in the local store or a deployed table",
			subs: []*command{
				{
					name: "keys create", synopsis: "--owner NAME [--name NAME] [--expires-in DURATION] [flags]",
					about:    "create an API key (its secret is printed once)",
					required: []string{"owner"},
					flags: func(fs *pflag.FlagSet) {
						ownerFlag(fs, "the key's owner (required)")
						fs.String("name", "", "a name to tell the key apart")
						fs.Duration("expires-in", 0, "lifetime, e.g. 720h (default: no expiry)")
					},
					busy: "stop it and run this command again; or create a key for the owner of a key you hold (serve's own is owner \"" + app.LocalOwner + "\") through serve's API:\n" +
						"  curl -X POST -H \"Authorization: Bearer $KEY\" -H 'Content-Type: application/json' -d '{\"name\":\"ci\"}' http://127.0.0.1:8080/api/keys",
					run: keysCreate,
				},
				{
					name: "keys list", synopsis: "--owner NAME [flags]",
					about:    "list an owner's keys",
					required: []string{"owner"},
					flags:    func(fs *pflag.FlagSet) { ownerFlag(fs, "the keys' owner (required)") },
					busy: "stop it and run this command again; or list the keys of the owner of a key you hold through serve's API:\n" +
						"  curl -H \"Authorization: Bearer $KEY\" http://127.0.0.1:8080/api/keys",
					run: keysList,
				},
				{
					name: "keys revoke", synopsis: "--owner NAME [flags] ID",
					about:    "revoke a key",
					args:     []string{"ID"},
					required: []string{"owner"},
					flags:    func(fs *pflag.FlagSet) { ownerFlag(fs, "the key's owner (required)") },
					busy: "stop it and run this command again; or revoke a key of the owner of a key you hold through serve's API:\n" +
						"  curl -X DELETE -H \"Authorization: Bearer $KEY\" http://127.0.0.1:8080/api/keys/ID",
					run: keysRevoke,
				},
			},
		},
		{
			name: "agents", about: "register agents from their templates and see how they are",
			subs: []*command{
				{
					name: "agents import", synopsis: "--owner NAME [flags] DIR|FILE",
					about:    "register or update agents from template files (idempotent)",
					args:     []string{"DIR|FILE"},
					required: []string{"owner"},
					flags:    func(fs *pflag.FlagSet) { ownerFlag(fs, "the agents' owner (required)") },
					busy: "stop it and run this command again; or restart it with --agents DIR, which imports DIR on start (owned by \"" +
						app.LocalOwner + "\").",
					run: agentsImport,
				},
				{
					name: "agents list", synopsis: "[flags]",
					about: "list the registered agents",
					busy: "stop it and run this command again; or read the MCP resource agentgate://agents through serve's MCP endpoint, " +
						"http://127.0.0.1:8080/mcp.",
					run: agentsList,
				},
				{
					name: "agents status", synopsis: "[flags] NAME",
					about: "is the agent registered, reachable, how many tasks run",
					args:  []string{"NAME"},
					busy: "stop it and run this command again; or read the MCP resource agentgate://agents/NAME/status through serve's MCP " +
						"endpoint, http://127.0.0.1:8080/mcp.",
					run: agentsStatus,
				},
			},
		},
	},
}

// ownerFlag adds --owner, which the keys and agents import commands require.
func ownerFlag(fs *pflag.FlagSet, usage string) { fs.String("owner", "", usage) }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// run runs the command line args; exitCode turns its error into an exit
// status.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return root.dispatch(ctx, &invocation{cmd: root, args: args, getenv: getenv, stdout: stdout, stderr: stderr})
}

func serve(ctx context.Context, inv *invocation) error {
	cfg := inv.cfg
	// Locally the MCP server is on unless the environment says otherwise;
	// on AWS it is off unless the stack parameter turns it on.
	if inv.getenv("MCP_SERVER_ENABLED") == "" {
		cfg.MCPEnabled = true
	}
	if cfg.ConsentSecret == "" {
		// One process signs and checks its own consent state: a secret of
		// its own will do. Set CONSENT_SECRET to keep consents across restarts.
		secret := make([]byte, 32)
		rand.Read(secret)
		cfg.ConsentSecret = hex.EncodeToString(secret)
	}
	ln, err := net.Listen("tcp", inv.flag("addr"))
	if err != nil {
		return err
	}
	defer ln.Close() // app.Serve closes it too, but not if the store fails to open
	opts := app.ServeOptions{AgentsDir: inv.flag("agents")}
	if note := checkAgentsDir(opts.AgentsDir); note != "" {
		opts.Notes = append(opts.Notes, note)
		opts.AgentsDir = ""
	}
	if sampleAddr := inv.flag("sample-agent"); sampleAddr != "" {
		stop, err := startSampleAgent(sampleAddr)
		if err != nil {
			// The local stack is still useful without it; say why it is missing.
			opts.Notes = append(opts.Notes, fmt.Sprintf("sample agent not started: %v", err))
		} else {
			defer stop()
			opts.Notes = append(opts.Notes, fmt.Sprintf("sample agent serving A2A on http://%s/", sampleAddr))
		}
	}
	return inv.storeError(app.Serve(ctx, ln, cfg, opts, inv.stdout))
}

// checkAgentsDir returns a warning if dir, the --agents directory, is not
// there: run outside a checkout, the relative default names nothing, and a
// local stack without its agents must say why rather than look empty.
func checkAgentsDir(dir string) string {
	if dir == "" {
		return ""
	}
	_, err := os.Stat(dir)
	if err == nil {
		return ""
	}
	where := dir
	if abs, aerr := filepath.Abs(dir); aerr == nil && abs != dir {
		where = fmt.Sprintf("%s (%s)", dir, abs)
	}
	reason := "does not exist"
	if !errors.Is(err, os.ErrNotExist) {
		reason = "cannot be read: " + err.Error()
	}
	return fmt.Sprintf("warning: no agents imported: the agent templates directory %s %s; "+
		"run agentgate serve from the repository root, or pass --agents DIR (--agents= imports none)", where, reason)
}

// defaultAgentsDir holds the example agents, relative to a checkout.
const defaultAgentsDir = "examples/agents"

// startSampleAgent serves the sample agent on addr until stop is called.
func startSampleAgent(addr string) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: sampleagent.New(sampleagent.Options{}).Handler(), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return func() { srv.Close() }, nil
}
