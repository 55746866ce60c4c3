package main

import (
	"context"
	"errors"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/askproxy"
	"github.com/agentgate/agentgate/pkg/config"
)

// askMCP serves the askproxy MCP server over stdio until the client closes
// stdin or the process is told to stop. It makes the same upstream client,
// with the same limits, as the askproxy function.
func askMCP(ctx context.Context, inv *invocation) error {
	cfg := inv.cfg.Ask
	if v := inv.flag("endpoint"); v != "" {
		cfg.Endpoint = v
	}
	if v := inv.flag("guide-url"); v != "" {
		cfg.GuideURL = v
	}
	if err := cfg.Check(); err != nil {
		return inv.cmd.fail("%v", err)
	}
	svc := askproxy.New(cfg, nil)
	svc.Announce(ctx)
	err := svc.Server(config.Version).Run(ctx, &mcp.StdioTransport{})
	if errors.Is(err, io.EOF) || ctx.Err() != nil {
		return nil // the client hung up, or we were told to stop
	}
	return err
}
