package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"text/tabwriter"
	"time"

	"github.com/agentgate/agentgate/pkg/agent"
	"github.com/agentgate/agentgate/pkg/agentcard"
	"github.com/agentgate/agentgate/pkg/apikey"
	"github.com/agentgate/agentgate/pkg/config"
	"github.com/agentgate/agentgate/pkg/web"
)

// tableEnsurer is implemented by stores that can create their table (the
// DynamoDB store, against a local endpoint).
type tableEnsurer interface {
	EnsureTable(ctx context.Context) error
}

// ServeOptions are what the local server does besides serving.
type ServeOptions struct {
	// AgentsDir, if set, holds agent templates imported on start, owned by
	// LocalOwner, so that a fresh local stack has agents to talk to.
	AgentsDir string
	// Notes are printed after the banner: what else the caller started.
	Notes []string
}

// Serve runs every function's handlers in one process on ln, on the store cfg
// selects, until ctx is done. It prints what it serves, and where, to out.
func Serve(ctx context.Context, ln net.Listener, cfg Config, opts ServeOptions, out io.Writer) error {
	// A local server may trust pages on the user's own machine, such as an
	// MCP inspector in the browser; a function on AWS never does.
	cfg.LoopbackOrigins = true
	st, err := OpenStore(ctx, cfg)
	if err != nil {
		return fmt.Errorf("opening the store: %w", err)
	}
	defer st.Close()
	if e, ok := st.(tableEnsurer); ok && cfg.DynamoEndpoint != "" {
		if err := e.EnsureTable(ctx); err != nil {
			return fmt.Errorf("creating table %q at %s: %w", cfg.TableName, cfg.DynamoEndpoint, err)
		}
	}

	d, err := NewDeps(cfg, st)
	if err != nil {
		return err
	}
	d.Ask.Announce(ctx)
	// A request ends at its deadline (REQUEST_TIMEOUT), which bounds
	// reading its body too; these bound the rest of a connection's life, a
	// little past it: a client slow to send its headers, a body read
	// outside the chain, a client slow to take its answer, an idle
	// keep-alive connection.
	timeout := cmp.Or(cfg.Timeout, web.DefaultTimeout)
	srv := &http.Server{
		Handler:           Handler(d, Functions...),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       timeout + 5*time.Second,
		WriteTimeout:      timeout + 10*time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	base := "http://" + ln.Addr().String()
	printBanner(out, base, d)
	for _, n := range opts.Notes {
		fmt.Fprintln(out, n)
	}
	if opts.AgentsDir != "" {
		if err := importAgents(ctx, d.Agents, opts.AgentsDir, base, cfg.PublicBaseURL, out); err != nil {
			return err
		}
	}
	// The key comes last: it is the line a user copies.
	if err := ensureLocalKey(ctx, d, out); err != nil {
		return err
	}

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	slog.Info("stopped")
	return nil
}

// LocalOwner owns the key `agentgate serve` makes on its first start.
const LocalOwner = "local"

// ensureLocalKey gives a new local store a ready-to-use API key, printed once:
// its secret is not stored, so later starts can only say how to make another.
func ensureLocalKey(ctx context.Context, d Deps, out io.Writer) error {
	keys, _, err := d.Keys.List(ctx, LocalOwner, "", 1)
	if err != nil {
		return fmt.Errorf("looking for a local API key: %w", err)
	}
	if len(keys) > 0 {
		// The store is this process's until it stops, so the command that
		// makes a key can only run once serve has stopped.
		fmt.Fprintf(out, "API key for owner %q: %s... (created earlier; its secret is not kept. For another, stop serve and run "+
			"agentgate keys create --owner %s, or POST /api/keys with a key you hold)\n", LocalOwner, keys[0].Prefix, LocalOwner)
		return nil
	}
	created, err := d.Keys.Create(ctx, apikey.NewKey{Owner: LocalOwner, Name: "agentgate serve"})
	if err != nil {
		return fmt.Errorf("creating a local API key: %w", err)
	}
	fmt.Fprintf(out, "API key for owner %q (shown once, keep it): %s\n", LocalOwner, created.Key)
	return nil
}

func printBanner(out io.Writer, base string, d Deps) {
	cfg := d.Config
	where := "embedded store " + cfg.DataPath
	if cfg.UsesDynamoDB() {
		where = "DynamoDB table " + cfg.TableName
		if cfg.DynamoEndpoint != "" {
			where += " at " + cfg.DynamoEndpoint
		}
	}
	mcp := "MCP server enabled"
	if !cfg.MCPEnabled {
		mcp = "MCP server disabled: MCP_SERVER_ENABLED=false"
	}
	fmt.Fprintf(out, "agentgate %s serving on %s (%s; %s)\n", config.Version, base, where, mcp)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	for _, f := range Functions {
		for i, r := range f.Routes(d) {
			name := ""
			if i == 0 {
				name = f.Name
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", name, r.APIGatewayMethod(), base+r.Path)
		}
	}
	tw.Flush()
}

// importAgents imports the templates in dir for LocalOwner and prints each
// agent's card URL. An invalid template is reported and skipped: the other
// agents still serve.
func importAgents(ctx context.Context, reg *agent.Registry, dir, base, publicBase string, out io.Writer) error {
	results, err := reg.ImportDir(ctx, LocalOwner, dir)
	if err != nil && len(results) == 0 {
		return fmt.Errorf("importing agents from %s: %w", dir, err)
	}
	for _, r := range results {
		if r.Err != nil {
			fmt.Fprintf(out, "agent template %s not imported: %v\n", r.Path, r.Err)
			continue
		}
		fmt.Fprintf(out, "agent %s (%s): card at %s%s\n", r.Agent.Template.Name, r.Result, cmp.Or(publicBase, base), agentcard.CardPath(r.Agent.Template.Name))
	}
	return nil
}
