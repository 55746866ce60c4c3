package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/agentgate/agentgate/pkg/agentgate"
)

// The JSON-RPC endpoints (MCP, the A2A front door) hand requests to SDKs
// that decode ids as float64 and answer decoding problems with Go's own
// words. ParseRPC checks a message first, so that every problem is answered
// by agentgate, and every id that reaches an SDK comes back unchanged.

// JSON-RPC 2.0 error codes.
const (
	RPCParseError     = -32700
	RPCInvalidRequest = -32600
	RPCMethodNotFound = -32601
	RPCInvalidParams  = -32602
	RPCInternalError  = -32603
)

// MaxRPCIDLen bounds a string id: ids are echoed in every answer and kept
// with a legacy MCP session's pending calls.
const MaxRPCIDLen = 256

// MaxRPCInt bounds an integer id: 2^53-1, the largest integer every JSON
// peer (and the SDKs, which read ids as float64) holds exactly. A larger
// one would be answered with a different id.
const MaxRPCInt = 1<<53 - 1

// RPCMessage is a JSON-RPC 2.0 message that ParseRPC accepted.
type RPCMessage struct {
	// ID is the id as sent (a string or an integer), for echoing in
	// answers; nil when absent or null.
	ID       json.RawMessage
	Method   string          // "" for a response
	Params   json.RawMessage // nil when absent
	Response bool            // a response (result or error) rather than a request
}

// RPCFault is an agentgate error answered as a JSON-RPC error with Code.
// Status, if set, is the HTTP status; otherwise the one Err's code maps to.
type RPCFault struct {
	Code   int64
	Status int
	Err    error
}

func (f *RPCFault) Error() string { return f.Err.Error() }
func (f *RPCFault) Unwrap() error { return f.Err }

// InvalidParams is err (an EINVALID error about a request's params) as the
// JSON-RPC invalid-params error.
func InvalidParams(err error) error { return &RPCFault{Code: RPCInvalidParams, Err: err} }

func invalidRequest(format string, args ...any) error {
	return &RPCFault{Code: RPCInvalidRequest, Err: agentgate.Errorf(agentgate.EINVALID, format, args...)}
}

// ParseRPC checks that body is one JSON-RPC 2.0 message that agentgate can
// answer exactly: a JSON object (batches are not served), "jsonrpc": "2.0",
// an id that is absent, null, a string of at most MaxRPCIDLen bytes or an
// integer literal within ±MaxRPCInt, a string method (a request) or a
// result or error (a response), and params, if any, an object (both MCP and
// A2A define their params as objects). A refusal is an *RPCFault; the
// message returned with it carries the id when the id itself was fine, so
// that the refusal can name the request it refuses.
func ParseRPC(body []byte) (RPCMessage, error) {
	var msg RPCMessage
	trimmed := bytes.TrimSpace(body)
	switch {
	case len(trimmed) == 0:
		return msg, invalidRequest("the request body is empty; want a JSON-RPC message")
	case trimmed[0] == '[':
		return msg, invalidRequest("JSON-RPC batches are not supported; send one message per request")
	case trimmed[0] != '{' && json.Valid(trimmed):
		return msg, invalidRequest("the request body is not a JSON-RPC message: want a JSON object")
	}
	var wire struct {
		JSONRPC json.RawMessage `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  json.RawMessage `json:"method"`
		Params  json.RawMessage `json:"params"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(trimmed, &wire); err != nil {
		return msg, &RPCFault{Code: RPCParseError, Err: JSONError("the request body", "", err)}
	}
	if err := checkRPCID(wire.ID); err != nil {
		return msg, err
	}
	if !isNull(wire.ID) {
		msg.ID = wire.ID
	}
	var version string
	if json.Unmarshal(wire.JSONRPC, &version) != nil || version != "2.0" {
		return msg, invalidRequest(`"jsonrpc" must be "2.0"`)
	}
	switch {
	case wire.Method != nil:
		if json.Unmarshal(wire.Method, &msg.Method) != nil || msg.Method == "" {
			return msg, invalidRequest(`"method" must be a non-empty string`)
		}
	case wire.Result != nil || wire.Error != nil:
		msg.Response = true
	default:
		return msg, invalidRequest(`a JSON-RPC message needs a "method" (a request) or a "result" or "error" (a response)`)
	}
	if !isNull(wire.Params) {
		if wire.Params[0] != '{' {
			return msg, InvalidParams(agentgate.Errorf(agentgate.EINVALID, `"params" must be a JSON object`))
		}
		msg.Params = wire.Params
	}
	return msg, nil
}

// checkRPCID refuses an id that an SDK could not echo as it was sent.
func checkRPCID(raw json.RawMessage) error {
	if isNull(raw) {
		return nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return invalidRequest(`"id" is not a valid JSON string`)
		}
		if len(s) > MaxRPCIDLen {
			return invalidRequest(`"id" is %d bytes, over the limit of %d`, len(s), MaxRPCIDLen)
		}
		return nil
	case '{', '[', 't', 'f':
		return invalidRequest(`"id" must be a string or an integer`)
	}
	if strings.ContainsAny(string(raw), ".eE") {
		return invalidRequest(`"id" must be a string or an integer, without a fraction or an exponent`)
	}
	if n, err := strconv.ParseInt(string(raw), 10, 64); err != nil || n > MaxRPCInt || n < -MaxRPCInt {
		return invalidRequest(`"id" %.32s is outside ±%d, the integers every JSON-RPC peer holds exactly; use a smaller integer or a string`, raw, MaxRPCInt)
	}
	return nil
}

func isNull(raw json.RawMessage) bool { return raw == nil || string(raw) == "null" }

// WriteRPCError answers a JSON-RPC 2.0 error (id nil when the request's
// is unknown) with an HTTP status: the JSON-RPC endpoints (MCP, the A2A
// front door) say what is wrong in both.
func WriteRPCError(w http.ResponseWriter, status int, id any, code int64, message string) {
	WriteJSON(w, status, map[string]any{
		"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": code, "message": message},
	})
}

// WriteRPCFailure answers err as a JSON-RPC error, as WriteError answers it
// in JSON: the status its code maps to (or an *RPCFault's), its caller-safe
// message, and the JSON-RPC code of an *RPCFault, else invalid request for a
// client error and internal error for a server one. Server errors are
// logged with their cause, client errors with it at info level: the cause is
// the detail (a decoder's words, a Go type) the answer leaves out.
func WriteRPCFailure(w http.ResponseWriter, r *http.Request, id any, err error) {
	code := agentgate.ErrorCode(err)
	status := Status(code)
	rpcCode := int64(RPCInvalidRequest)
	if status >= 500 {
		rpcCode = RPCInternalError
	}
	var fault *RPCFault
	if errors.As(err, &fault) {
		rpcCode = fault.Code
		if fault.Status != 0 {
			status = fault.Status
		}
	}
	logFailure(r, status, code, err)
	var cause *agentgate.Error
	if status < 500 && errors.As(err, &cause) && cause.Err != nil {
		slog.InfoContext(r.Context(), "request refused", "method", r.Method, "path", r.URL.Path, "status", status,
			"message", cause.Message, "detail", fmt.Sprint(cause.Err))
	}
	WriteRPCError(w, status, id, rpcCode, agentgate.ErrorMessage(err))
}
