// Package mcphttp is what agentgate puts between an MCP client and the go-sdk's
// Streamable HTTP handling, for every MCP endpoint it serves (/mcp, both
// generations, and the public /ask/mcp): each POSTed message is read and
// checked before the SDK sees it, and the SDK's own refusals are answered in
// agentgate's words, as JSON-RPC errors.
package mcphttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/web"
)

// Every POST to the endpoint, of either generation, is read and checked
// here before the SDK sees it (ReadMessage): the SDK would answer a bad
// body, id or params with Go's own words (type names, "Go struct field"),
// turn an id beyond 2^53 into another, and, on a legacy session, store
// whatever initialize or logging/setLevel brought until the table refused
// the item.

// Caps on what a client may ask a legacy session to keep, serialized as
// the session record holds them. Real clients send a few hundred bytes of
// each; the caps keep a session record, and a pending consent-gated call,
// well inside a table item (350 KiB).
const (
	MaxClientInfoBytes   = 16 << 10
	MaxCapabilitiesBytes = 16 << 10
	// MaxMetaBytes caps a request's _meta, which at 2026-07-28 carries the
	// client's info and capabilities on every request.
	MaxMetaBytes = 48 << 10
)

// logLevels are the spec's eight logging levels (syslog's severities), the
// only values logging/setLevel may set.
var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// paramTypes are the params the SDK decodes each method it serves into.
// checkParams decodes them first, so that a mismatch is described in
// agentgate's words; a method missing here falls back on sdkMessage.
var paramTypes = map[string]func() mcp.Params{
	"initialize":                       func() mcp.Params { return new(mcp.InitializeParams) },
	"ping":                             func() mcp.Params { return new(mcp.PingParams) },
	"server/discover":                  func() mcp.Params { return new(mcp.DiscoverParams) },
	"tools/list":                       func() mcp.Params { return new(mcp.ListToolsParams) },
	"tools/call":                       func() mcp.Params { return new(mcp.CallToolParamsRaw) },
	"resources/list":                   func() mcp.Params { return new(mcp.ListResourcesParams) },
	"resources/templates/list":         func() mcp.Params { return new(mcp.ListResourceTemplatesParams) },
	"resources/read":                   func() mcp.Params { return new(mcp.ReadResourceParams) },
	"resources/subscribe":              func() mcp.Params { return new(mcp.SubscribeParams) },
	"resources/unsubscribe":            func() mcp.Params { return new(mcp.UnsubscribeParams) },
	"subscriptions/listen":             func() mcp.Params { return new(mcp.SubscriptionsListenParams) },
	"prompts/list":                     func() mcp.Params { return new(mcp.ListPromptsParams) },
	"prompts/get":                      func() mcp.Params { return new(mcp.GetPromptParams) },
	"completion/complete":              func() mcp.Params { return new(mcp.CompleteParams) },
	"logging/setLevel":                 func() mcp.Params { return new(mcp.SetLoggingLevelParams) },
	"notifications/initialized":        func() mcp.Params { return new(mcp.InitializedParams) },
	"notifications/cancelled":          func() mcp.Params { return new(mcp.CancelledParams) },
	"notifications/progress":           func() mcp.Params { return new(mcp.ProgressNotificationParams) },
	"notifications/roots/list_changed": func() mcp.Params { return new(mcp.RootsListChangedParams) },
}

// ReadMessage reads a POSTed message (web.ReadBody), checks its envelope
// (web.ParseRPC) and params (checkParams), and answers any problem itself,
// returning false.
func ReadMessage(w http.ResponseWriter, r *http.Request) (web.RPCMessage, []byte, bool) {
	body, err := web.ReadBody(r)
	if err != nil {
		web.WriteRPCFailure(w, r, nil, err)
		return web.RPCMessage{}, nil, false
	}
	msg, err := web.ParseRPC(body)
	if err == nil && !msg.Response {
		err = checkParams(msg.Method, msg.Params)
	}
	if err != nil {
		web.WriteRPCFailure(w, r, msg.ID, err)
		return msg, nil, false
	}
	return msg, body, true
}

// checkParams decodes a request's params as the SDK will, and checks what
// the SDK does not: the size of what a session keeps, the log level, and
// that tool arguments are an object.
func checkParams(method string, raw json.RawMessage) error {
	newParams, ok := paramTypes[method]
	if !ok || raw == nil {
		return nil
	}
	p := newParams()
	if err := json.Unmarshal(raw, p); err != nil {
		return web.InvalidParams(web.JSONError("params", "params", err))
	}
	if err := capJSON("params._meta", p.GetMeta(), len(raw), MaxMetaBytes); err != nil {
		return err
	}
	switch p := p.(type) {
	case *mcp.InitializeParams:
		if err := capJSON("params.clientInfo", p.ClientInfo, len(raw), MaxClientInfoBytes); err != nil {
			return err
		}
		return capJSON("params.capabilities", p.Capabilities, len(raw), MaxCapabilitiesBytes)
	case *mcp.SetLoggingLevelParams:
		if !slices.Contains(logLevels, string(p.Level)) {
			return web.InvalidParams(agentgate.Errorf(agentgate.EINVALID, "params.level: %.32q is not a logging level; want one of %s",
				p.Level, strings.Join(logLevels, ", ")))
		}
	case *mcp.CallToolParamsRaw:
		if args := bytes.TrimSpace(p.Arguments); len(args) > 0 && args[0] != '{' && string(args) != "null" {
			return web.InvalidParams(agentgate.Errorf(agentgate.EINVALID, "params.arguments must be a JSON object"))
		}
	}
	return nil
}

// maxExpansion bounds how much json.Marshal can grow what it decoded: a
// byte at worst becomes a six-byte escape (\u003c, \ufffd).
const maxExpansion = 6

// capJSON refuses v, decoded from params of rawLen bytes, if it is over max
// bytes serialized. A value whose params could not reach max even escaped
// throughout needs no measuring: every request would otherwise marshal its
// _meta once more.
func capJSON(field string, v any, rawLen, max int) error {
	if rawLen*maxExpansion <= max {
		return nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return web.InvalidParams(agentgate.Wrap(agentgate.EINVALID, err, field+" cannot be encoded"))
	}
	if len(data) > max {
		return web.InvalidParams(agentgate.Errorf(agentgate.EINVALID, "%s is %d bytes, over the limit of %d", field, len(data), max))
	}
	return nil
}

// sdkMessage is an error message of the SDK's, fit to pass on. The SDK
// quotes Go types when it cannot decode something ("unmarshaling ... into a
// *mcp.ListToolsParams: json: cannot unmarshal ... into Go struct field"),
// which checkParams forestalls for every method it knows; for anything else
// this says what is wrong in agentgate's words, and logs the SDK's.
func sdkMessage(ctx context.Context, method, message string) string {
	if !strings.Contains(message, "unmarshal") {
		return message
	}
	slog.InfoContext(ctx, "mcp: request refused by the SDK", "method", method, "detail", message)
	if method == "" {
		return "the body is not a JSON-RPC message agentgate can read"
	}
	return fmt.Sprintf("invalid params for %.64s", method)
}

// RewordSDKError applies sdkMessage to the error answer of a legacy call.
func RewordSDKError(ctx context.Context, method string, resp *jsonrpc.Response) {
	if resp.Error == nil {
		return
	}
	var werr *jsonrpc.Error
	if !errors.As(resp.Error, &werr) {
		werr = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: resp.Error.Error()}
	}
	if msg := sdkMessage(ctx, method, werr.Message); msg != werr.Message {
		resp.Error = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msg}
	}
}

// Stateless serves MCP messages statelessly with the SDK's handler SDK
// (mcp.NewStreamableHTTPHandler with Stateless set): a POST is read and
// checked first (ReadMessage), and Before, if set, may refuse it; the SDK's
// refusals of any request are answered as agentgate answers its own.
type Stateless struct {
	SDK    http.Handler
	Before func(r *http.Request) error
}

// ServeHTTP implements http.Handler.
func (s Stateless) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var msg web.RPCMessage
	if r.Method == http.MethodPost {
		m, body, ok := ReadMessage(w, r)
		if !ok {
			return
		}
		if s.Before != nil {
			if err := s.Before(r); err != nil {
				web.WriteRPCFailure(w, r, m.ID, err)
				return
			}
		}
		if r.Header.Get("Content-Type") == "" {
			// agentgate reads an undeclared body as JSON (web.RequireJSON);
			// the SDK insists on the header.
			r = r.Clone(r.Context())
			r.Header.Set("Content-Type", "application/json")
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		msg = m
	}
	sw := &sdkErrors{ResponseWriter: w}
	s.SDK.ServeHTTP(sw, r)
	sw.finish(r, msg)
}

// sdkErrors holds the SDK's error answers (status 400 and up) on the
// stateless path, so that finish can answer them as agentgate does: its
// plain-text refusals (http.Error) as JSON-RPC errors, and its JSON-RPC
// errors reworded by sdkMessage. Other answers pass straight through.
type sdkErrors struct {
	http.ResponseWriter
	status int // the SDK's error status, while its body is held
	body   bytes.Buffer
}

func (e *sdkErrors) WriteHeader(status int) {
	if status >= 400 && e.status == 0 {
		e.status = status
		return
	}
	e.ResponseWriter.WriteHeader(status)
}

func (e *sdkErrors) Write(b []byte) (int, error) {
	if e.status != 0 {
		return e.body.Write(b)
	}
	return e.ResponseWriter.Write(b)
}

// FlushError flushes an answer going through; a held error waits for finish.
func (e *sdkErrors) FlushError() error {
	if e.status != 0 {
		return nil
	}
	return http.NewResponseController(e.ResponseWriter).Flush()
}

func (e *sdkErrors) Unwrap() http.ResponseWriter { return e.ResponseWriter }

// finish answers a held error for msg.
func (e *sdkErrors) finish(r *http.Request, msg web.RPCMessage) {
	if e.status == 0 {
		return
	}
	var answer struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Code    int64           `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data,omitempty"`
		} `json:"error"`
	}
	if strings.HasPrefix(e.Header().Get("Content-Type"), "application/json") &&
		json.Unmarshal(e.body.Bytes(), &answer) == nil && answer.Error != nil {
		answer.Error.Message = sdkMessage(r.Context(), msg.Method, answer.Error.Message)
		web.WriteJSON(e.ResponseWriter, e.status, map[string]any{"jsonrpc": "2.0", "id": answer.ID, "error": answer.Error})
		return
	}
	text := strings.TrimSpace(e.body.String())
	if e.status >= 500 {
		web.WriteRPCFailure(e.ResponseWriter, r, msg.ID, fmt.Errorf("mcp sdk: %d %s", e.status, text))
		return
	}
	web.WriteRPCError(e.ResponseWriter, e.status, msg.ID, web.RPCInvalidRequest, sdkMessage(r.Context(), "", text))
}
