package mcpserver

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/mcpschema"
)

// addTool registers a typed tool with single-type schemas (mcpschema).
func addTool[In, Out any](srv *mcp.Server, t *mcp.Tool, h mcp.ToolHandlerFor[In, Out]) {
	mcpschema.AddTool(srv, t, h)
}
