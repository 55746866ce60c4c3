package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/agentgate/agentgate/pkg/agent"
	"github.com/agentgate/agentgate/pkg/app"
)

func agents(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return flag.ErrHelp
	}
	var owner string
	cfg, fs, err := setup("agents "+args[0], args[1:], getenv, stderr, func(fs *flag.FlagSet, _ *app.Config) {
		if args[0] == "import" {
			fs.StringVar(&owner, "owner", "", "the agents' owner (required)")
		}
	})
	if err != nil {
		return err
	}
	switch {
	case args[0] != "import" && args[0] != "list" && args[0] != "status":
		return fmt.Errorf("unknown agents command %q (want import, list or status)", args[0])
	case args[0] == "status" && fs.NArg() != 1:
		return fmt.Errorf("agents status: want one agent name, got %d", fs.NArg())
	case args[0] == "import" && owner == "":
		return errors.New("agents import: --owner is required")
	case args[0] == "import" && fs.NArg() != 1:
		return fmt.Errorf("agents import: want one directory or file, got %d", fs.NArg())
	}
	st, err := app.OpenStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	reg := app.NewRegistry(cfg, st)
	switch args[0] {
	case "list":
		return listAgents(ctx, reg, stdout)
	case "status":
		d, err := app.NewDeps(cfg, st)
		if err != nil {
			return err
		}
		status, err := d.Dispatch.Status(ctx, fs.Arg(0))
		if err != nil {
			return err
		}
		return printJSON(stdout, status)
	}
	return importAgents(ctx, reg, owner, fs.Arg(0), stdout)
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
