package apptest

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/mcpserver"
)

// Elicit answers a consent question, as a test's user.
type Elicit func(*mcp.ElicitRequest) (*mcp.ElicitResult, error)

// Approve says yes.
func Approve(*mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
}

// MCPClient connects the official Go SDK client to agentgate's MCP endpoint
// under url with token, at version ("" for the newest, 2026-07-28), and
// closes it at cleanup. With elicit set the client can be asked for
// consent (it declares elicitation), and elicit answers.
func MCPClient(tb testing.TB, url, token, version string, elicit Elicit) *mcp.ClientSession {
	tb.Helper()
	var opts mcp.ClientOptions
	if elicit != nil {
		opts.ElicitationHandler = func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return elicit(req) }
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "agentgate-test", Version: "1.0.0"}, &opts)
	var sopts *mcp.ClientSessionOptions
	if version != "" {
		sopts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := c.Connect(tb.Context(), &mcp.StreamableClientTransport{Endpoint: url + mcpserver.Endpoint, HTTPClient: Bearer(token)}, sopts)
	if err != nil {
		tb.Fatalf("connect at %q: %v", version, err)
	}
	tb.Cleanup(func() { cs.Close() }) // before the server closes: cleanups run last first
	if version != "" {
		if got := cs.InitializeResult().ProtocolVersion; got != version {
			tb.Fatalf("negotiated %s, want %s", got, version)
		}
	}
	return cs
}

// Structured decodes a tool result's structured content into v.
func Structured(tb testing.TB, res *mcp.CallToolResult, v any) {
	tb.Helper()
	data, err := json.Marshal(res.StructuredContent)
	if err != nil {
		tb.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		tb.Fatalf("structured content %s: %v", data, err)
	}
}

// ToolNames lists the tools, and their names in order.
func ToolNames(tb testing.TB, cs *mcp.ClientSession) (*mcp.ListToolsResult, []string) {
	tb.Helper()
	tools, err := cs.ListTools(tb.Context(), nil)
	if err != nil {
		tb.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return tools, names
}
