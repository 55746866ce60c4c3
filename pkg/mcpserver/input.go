package mcpserver

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A tool that needs the user's input asks for it the MRTR way: it returns
// input requests and a requestState. For a 2026-07-28 client the SDK sends
// that as an input_required result. For a legacy session the SDK would
// instead block on an elicitation/create round trip inside this request,
// which cannot survive a cold start; so the session layer puts an
// inputRecorder in the context, the tool records its input request there
// and ends the call with errInputRecorded, and the session layer sends the
// elicitation itself, on the tools/call stream, and ends the stream.

// inputRecorder receives a legacy session's input request.
type inputRecorder struct {
	mu       sync.Mutex
	requests mcp.InputRequestMap
	state    string
}

func (r *inputRecorder) record(requests mcp.InputRequestMap, state string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests, r.state = requests, state
}

// recorded returns what was recorded, if anything.
func (r *inputRecorder) recorded() (mcp.InputRequestMap, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests, r.state
}

type recorderKey struct{}

// errInputRecorded ends a legacy tool call whose input request was
// recorded. It is a *jsonrpc.Error so that the SDK passes it through
// rather than wrapping it into a tool result; the session layer replaces
// it, so no client sees it.
var errInputRecorded = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "agentgate: input request recorded"}

// askInput asks the client for the consent elicitation, carrying state to
// the call that answers it.
func askInput[Out any](ctx context.Context, params *mcp.ElicitParams, state string) (*mcp.CallToolResult, Out, error) {
	var none Out
	requests := mcp.InputRequestMap{consentKey: params}
	if rec, ok := ctx.Value(recorderKey{}).(*inputRecorder); ok {
		rec.record(requests, state)
		return nil, none, errInputRecorded
	}
	return &mcp.CallToolResult{InputRequests: requests, RequestState: state}, none, nil
}
