package mcpsession

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A tool that needs the user's input asks for it the MRTR way: it returns
// input requests and a requestState. For a 2026-07-28 client the SDK sends
// that as an input_required result. In a session the SDK would instead
// block on an elicitation/create round trip inside this request, which
// cannot survive a cold start; so run puts an inputRecorder in the context,
// the tool records its input request there (RecordInput) and ends the call
// with errInputRecorded, and the Handler sends the elicitation itself, on
// the tools/call stream, and ends the stream.

// ConsentKey names the one input request a session's tool may make, the
// consent elicitation, among the call's input requests; the retried call
// carries the client's answer under it in inputResponses.
const ConsentKey = "consent"

// inputRecorder receives a session's input request.
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

// errInputRecorded ends a session's tool call whose input request was
// recorded. It is a *jsonrpc.Error so that the SDK passes it through
// rather than wrapping it into a tool result; the Handler replaces it, so
// no client sees it.
var errInputRecorded = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "agentgate: input request recorded"}

// RecordInput hands a tool's input requests and requestState to the
// session layer, if ctx is a session's call: it then returns the error
// the tool must end its call with. It returns nil for a stateless call,
// whose tool returns the input requests as its result.
func RecordInput(ctx context.Context, requests mcp.InputRequestMap, state string) error {
	rec, ok := ctx.Value(recorderKey{}).(*inputRecorder)
	if !ok {
		return nil
	}
	rec.record(requests, state)
	return errInputRecorded
}

// NewID returns 128 random bits, URL-safe: unguessable ids for sessions
// and streams (and the MCP server's consents).
func NewID() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}
