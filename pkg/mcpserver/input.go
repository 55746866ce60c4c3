package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/mcpsession"
)

// A tool that needs the user's input asks for it the MRTR way: it returns
// input requests and a requestState, which the SDK sends a 2026-07-28
// client as an input_required result; in a session (pkg/mcpsession) the
// session layer takes them instead and sends the elicitation itself.

// askInput asks the client for the consent elicitation, carrying state to
// the call that answers it.
func askInput[Out any](ctx context.Context, params *mcp.ElicitParams, state string) (*mcp.CallToolResult, Out, error) {
	var none Out
	requests := mcp.InputRequestMap{consentKey: params}
	if err := mcpsession.RecordInput(ctx, requests, state); err != nil {
		return nil, none, err
	}
	return &mcp.CallToolResult{InputRequests: requests, RequestState: state}, none, nil
}
