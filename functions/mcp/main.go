// Command mcp is the mcp Lambda function (see pkg/mcpserver). It only wires: it
// hands package mcpserver's builder to core.Main, so that its binary links its own
// function's code and the core every function shares, nothing more.
package main

import (
	"github.com/agentgate/agentgate/pkg/core"
	"github.com/agentgate/agentgate/pkg/mcpserver"
)

func main() {
	core.Main("mcp", mcpserver.BuildFunction)
}
