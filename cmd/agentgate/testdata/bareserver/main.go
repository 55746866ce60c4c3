// Command bareserver is the baseline of BenchmarkServeColdStart: a bare
// go-sdk MCP server, stateless, with one tool of the shape of agentgate's
// list_recent_executions, listening on the address in its first argument.
// It is what an MCP server on go-sdk costs to start with nothing else.
package main

import (
	"context"
	"log"
	"net/http"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type input struct {
	Limit int `json:"limit,omitempty"`
}

type output struct {
	Executions []string `json:"executions"`
}

func main() {
	srv := mcp.NewServer(&mcp.Implementation{Name: "bare", Version: "1.0.0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "list_recent_executions", Description: "Lists recent tasks."},
		func(context.Context, *mcp.CallToolRequest, input) (*mcp.CallToolResult, output, error) {
			return nil, output{Executions: []string{}}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	log.Fatal(http.ListenAndServe(os.Args[1], h))
}
