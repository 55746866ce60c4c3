package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/agentgate/agentgate/pkg/agent"
	"github.com/agentgate/agentgate/pkg/app"
	"github.com/agentgate/agentgate/pkg/store"
)

func agentsImport(ctx context.Context, inv *invocation) error {
	return inv.withStore(ctx, func(st store.Store) error {
		return importAgents(ctx, app.NewRegistry(inv.cfg, st), inv.flag("owner"), inv.rest[0], inv.stdout)
	})
}

func agentsList(ctx context.Context, inv *invocation) error {
	return inv.withStore(ctx, func(st store.Store) error {
		return listAgents(ctx, app.NewRegistry(inv.cfg, st), inv.stdout)
	})
}

func agentsStatus(ctx context.Context, inv *invocation) error {
	return inv.withStore(ctx, func(st store.Store) error {
		d, err := app.NewDeps(inv.cfg, st)
		if err != nil {
			return err
		}
		status, err := d.Dispatch.Status(ctx, inv.rest[0])
		if err != nil {
			return err
		}
		return printJSON(inv.stdout, status)
	})
}

// importAgents prints a line per template file, what its import did, with
// every problem of an invalid one on a line of its own below.
func importAgents(ctx context.Context, reg *agent.Registry, owner, path string, stdout io.Writer) error {
	results, err := reg.ImportDir(ctx, owner, path)
	failed := 0
	for _, r := range results {
		var invalid *agent.ValidationError
		switch {
		case r.Err == nil:
			fmt.Fprintf(stdout, "%s: %s %s\n", r.Path, r.Result, r.Agent.Template.Name)
		case errors.As(r.Err, &invalid):
			failed++
			fmt.Fprintf(stdout, "%s: error: invalid template\n", r.Path)
			for _, p := range invalid.Problems {
				fmt.Fprintf(stdout, "  %s\n", p)
			}
		default:
			failed++
			fmt.Fprintf(stdout, "%s: error: %v\n", r.Path, r.Err)
		}
	}
	if failed > 0 {
		// Every failure is printed above; the error only sets the exit status.
		return fmt.Errorf("agents import: %d of %d templates failed", failed, len(results))
	}
	return err // the path itself, if it could not be read
}

func listAgents(ctx context.Context, reg *agent.Registry, stdout io.Writer) error {
	all := []agent.Agent{}
	for cursor := ""; ; {
		page, next, err := reg.List(ctx, cursor, 100)
		if err != nil {
			return err
		}
		all = append(all, page...)
		if cursor = next; cursor == "" {
			break
		}
	}
	return printJSON(stdout, all)
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
