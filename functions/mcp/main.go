// Command mcp is the mcp Lambda function: the MCP server (see pkg/mcpserver).
// It only wires: package app builds the handler, package lambdahttp serves it.
package main

import (
	"github.com/agentgate/agentgate/pkg/app"
	"github.com/agentgate/agentgate/pkg/lambdahttp"
)

func main() {
	lambdahttp.Start(app.MustFunction("mcp"))
}
