package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/agentgate/agentgate/pkg/apikey"
	"github.com/agentgate/agentgate/pkg/app"
)

func keys(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return flag.ErrHelp
	}
	var owner, name string
	var expiresIn time.Duration
	cfg, fs, err := setup("keys "+args[0], args[1:], getenv, stderr, func(fs *flag.FlagSet, _ *app.Config) {
		fs.StringVar(&owner, "owner", "", "the key's owner (required)")
		if args[0] == "create" {
			fs.StringVar(&name, "name", "", "a name to tell the key apart")
			fs.DurationVar(&expiresIn, "expires-in", 0, "lifetime, e.g. 720h (default: no expiry)")
		}
	})
	if err != nil {
		return err
	}
	if owner == "" {
		return fmt.Errorf("keys %s: --owner is required", args[0])
	}
	st, err := app.OpenStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	svc := apikey.NewService(st, nil)
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")

	switch args[0] {
	case "create":
		nk := apikey.NewKey{Owner: owner, Name: name}
		if expiresIn > 0 {
			nk.ExpiresAt = time.Now().Add(expiresIn)
		}
		created, err := svc.Create(ctx, nk)
		if err != nil {
			return err
		}
		return enc.Encode(created)
	case "list":
		var all []apikey.Info
		for cursor := ""; ; {
			page, next, err := svc.List(ctx, owner, cursor, 100)
			if err != nil {
				return err
			}
			all = append(all, page...)
			if cursor = next; cursor == "" {
				break
			}
		}
		return enc.Encode(all)
	case "revoke":
		if fs.NArg() != 1 {
			return fmt.Errorf("keys revoke: want one key id, got %d", fs.NArg())
		}
		info, err := svc.Revoke(ctx, owner, fs.Arg(0))
		if err != nil {
			return err
		}
		return enc.Encode(info)
	}
	return fmt.Errorf("unknown keys command %q (want create, list or revoke)", args[0])
}
