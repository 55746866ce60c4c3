// Command askproxy is the askproxy Lambda function: the public ask_docs MCP server (see pkg/askproxy).
// It only wires: package app builds the handler, package lambdahttp serves it.
package main

import (
	"github.com/agentgate/agentgate/pkg/app"
	"github.com/agentgate/agentgate/pkg/lambdahttp"
)

func main() {
	lambdahttp.Start(app.MustFunction("askproxy"))
}
