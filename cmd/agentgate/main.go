// Command agentgate is the operator's tool: `agentgate serve` runs all four
// functions in one local process; `agentgate keys` manages API keys in the
// local store or a deployed table.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/agentgate/agentgate/pkg/app"
	"github.com/agentgate/agentgate/pkg/logging"
	"github.com/agentgate/agentgate/pkg/sampleagent"
)

const usage = `agentgate - the serverless front door for AI agents

Usage:
  agentgate serve [flags]                 run all four functions in one local process, with the
                                          example agents and the sample agent they point to
  agentgate keys create --owner NAME      create an API key (its secret is printed once)
  agentgate keys list --owner NAME        list an owner's keys
  agentgate keys revoke --owner NAME ID   revoke a key
  agentgate agents import|list            register agents from templates (--owner NAME DIR|FILE), list them
  agentgate agents status NAME            is the agent registered, reachable, how many tasks run

The store is the local embedded file unless a DynamoDB table (--table,
TABLE_NAME) or endpoint (--dynamodb-endpoint, AWS_ENDPOINT_URL_DYNAMODB) is
given. Run 'agentgate <command> -h' for a command's flags.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "agentgate:", err)
		}
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return flag.ErrHelp
	}
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:], getenv, stdout, stderr)
	case "keys":
		return keys(ctx, args[1:], getenv, stdout, stderr)
	case "agents":
		return agents(ctx, args[1:], getenv, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}

// storeFlags adds the flags that choose the store to fs, over cfg's values
// from the environment.
func storeFlags(fs *flag.FlagSet, cfg *app.Config) {
	fs.StringVar(&cfg.DataPath, "data", cfg.DataPath, "embedded store file (used unless a DynamoDB table or endpoint is given)")
	fs.StringVar(&cfg.DynamoEndpoint, "dynamodb-endpoint", cfg.DynamoEndpoint, "DynamoDB endpoint, e.g. a local dynalite (AWS_ENDPOINT_URL_DYNAMODB)")
	fs.StringVar(&cfg.TableName, "table", cfg.TableName, "DynamoDB table (TABLE_NAME); defaults to \"agentgate\" with --dynamodb-endpoint")
}

// setup reads the configuration and parses a command's flags.
func setup(name string, args []string, getenv func(string) string, stderr io.Writer, more func(*flag.FlagSet, *app.Config)) (app.Config, *flag.FlagSet, error) {
	cfg, err := app.ConfigFromEnv(getenv)
	if err != nil {
		return cfg, nil, err
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	storeFlags(fs, &cfg)
	if more != nil {
		more(fs, &cfg)
	}
	if err := fs.Parse(args); err != nil {
		return cfg, nil, err
	}
	if cfg.DynamoEndpoint != "" && cfg.TableName == "" {
		cfg.TableName = app.DefaultTable
	}
	// A local store or a local DynamoDB endpoint is a local run, whose
	// agents (the sample agent first) live on loopback. A deployed table
	// keeps the deployed default unless the environment says otherwise.
	if getenv("AGENT_NETWORK") == "" && (!cfg.UsesDynamoDB() || cfg.DynamoEndpoint != "") {
		cfg.AgentNetwork, _ = app.AgentNetwork("local")
	}
	slog.SetDefault(logging.New(stderr, cfg.LogLevel))
	return cfg, fs, nil
}

func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var addr, sampleAddr string
	var opts app.ServeOptions
	cfg, _, err := setup("serve", args, getenv, stderr, func(fs *flag.FlagSet, cfg *app.Config) {
		fs.StringVar(&addr, "addr", "127.0.0.1:8080", "address to listen on")
		fs.StringVar(&opts.AgentsDir, "agents", defaultAgentsDir, "directory of agent templates to import on start, owned by \"local\" (\"\" imports none)")
		fs.StringVar(&sampleAddr, "sample-agent", "127.0.0.1:9090", "address to run the sample A2A agent on, which examples/agents/echo.yaml points to (\"\" runs none)")
		// Locally the MCP server is on unless the environment says otherwise;
		// on AWS it is off unless the stack parameter turns it on.
		if getenv("MCP_SERVER_ENABLED") == "" {
			cfg.MCPEnabled = true
		}
	})
	if err != nil {
		return err
	}
	if cfg.ConsentSecret == "" {
		// One process signs and checks its own consent state: a secret of
		// its own will do. Set CONSENT_SECRET to keep consents across restarts.
		secret := make([]byte, 32)
		rand.Read(secret)
		cfg.ConsentSecret = hex.EncodeToString(secret)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	if opts.AgentsDir == defaultAgentsDir {
		if _, err := os.Stat(defaultAgentsDir); err != nil {
			opts.AgentsDir = "" // not run from a checkout: nothing to import
		}
	}
	if sampleAddr != "" {
		stop, err := startSampleAgent(sampleAddr)
		if err != nil {
			// The local stack is still useful without it; say why it is missing.
			opts.Notes = append(opts.Notes, fmt.Sprintf("sample agent not started: %v", err))
		} else {
			defer stop()
			opts.Notes = append(opts.Notes, fmt.Sprintf("sample agent serving A2A on http://%s/", sampleAddr))
		}
	}
	return app.Serve(ctx, ln, cfg, opts, stdout)
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
