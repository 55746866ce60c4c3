package main

import (
	"context"

	"github.com/agentgate/agentgate/pkg/apikey"
	"github.com/agentgate/agentgate/pkg/store"
)

func keysCreate(ctx context.Context, inv *invocation) error {
	return inv.withStore(ctx, func(st store.Store) error {
		nk := apikey.NewKey{Owner: inv.flag("owner"), Name: inv.flag("name")}
		nk.ExpiresIn, _ = inv.fs.GetDuration("expires-in")
		created, err := apikey.NewService(st, nil).Create(ctx, nk)
		if err != nil {
			return err
		}
		return printJSON(inv.stdout, created)
	})
}

func keysList(ctx context.Context, inv *invocation) error {
	return inv.withStore(ctx, func(st store.Store) error {
		svc := apikey.NewService(st, nil)
		all := []apikey.Info{}
		for cursor := ""; ; {
			page, next, err := svc.List(ctx, inv.flag("owner"), cursor, 100)
			if err != nil {
				return err
			}
			all = append(all, page...)
			if cursor = next; cursor == "" {
				break
			}
		}
		return printJSON(inv.stdout, all)
	})
}

func keysRevoke(ctx context.Context, inv *invocation) error {
	return inv.withStore(ctx, func(st store.Store) error {
		info, err := apikey.NewService(st, nil).Revoke(ctx, inv.flag("owner"), inv.rest[0])
		if err != nil {
			return err
		}
		return printJSON(inv.stdout, info)
	})
}
