package mcpsession

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/mcphttp"
	"github.com/agentgate/agentgate/pkg/store"
	"github.com/agentgate/agentgate/pkg/web"
)

// Handler serves MCP sessions (protocol 2025-11-25, 2025-06-18, 2025-03-26)
// from the table, so that no request depends on the memory of another:
//
//   - initialize creates a session record (the SDK's session state, the
//     principal, timestamps) under an unguessable id, with a sliding TTL;
//   - every later request loads it, runs through a fresh SDK session
//     restored from it (one connection per HTTP request) and answers;
//   - a tool that needs consent gets its elicitation/create sent on the
//     tools/call SSE stream, with an event id and a retry hint, and the
//     stream ends there (SEP-1699); the pending call is stored as the
//     stream's event 0;
//   - the client's answer, POSTed to any instance, re-runs the tools/call
//     with the answer and stores its result as event 1;
//   - the client's GET with Last-Event-ID, on any instance, replays it.
//
// It expects the principal in the request's context (the security chain
// puts it there): a session is its creator's only.
type Handler struct {
	Store store.Store
	// Server is the SDK server that serves the request's caller, or why
	// none does.
	Server func(*http.Request) (*mcp.Server, error)
	// TTL is how long an idle session, and a stream's events, live.
	TTL time.Duration
	Now func() time.Time
	// Unanswered is the result of a tools/call whose consent went
	// unanswered, whatever the tool: the server's refusal, which must fit
	// every consent-gated tool's output schema.
	Unanswered *mcp.CallToolResult
}

// sessionRecord is a legacy session's table item.
type sessionRecord struct {
	Subject   string                 `json:"subject"`
	Scope     string                 `json:"scope"`
	Agent     string                 `json:"agent,omitempty"`
	State     mcp.ServerSessionState `json:"state"`
	CreatedAt time.Time              `json:"createdAt"`
	LastSeen  time.Time              `json:"lastSeen"`
}

// pendingCall is a tools/call waiting for the client's answer to an
// elicitation: the stream's event 0.
type pendingCall struct {
	CallID       json.RawMessage `json:"callId"` // the tools/call's JSON-RPC id
	Params       json.RawMessage `json:"params"` // and its params
	RequestState string          `json:"requestState"`
	Answered     bool            `json:"answered"`
}

// elicitationIDPrefix starts the JSON-RPC id of our elicitation/create
// requests; the rest is the stream id, so that the answer names its stream.
const elicitationIDPrefix = "agentgate-consent-"

// retryAfter is the reconnection delay the SSE streams suggest. The answer
// POST stores the result before it returns, so a client that comes back
// this soon usually finds it; one that comes back earlier waits in get's
// poll. It sets the latency of a legacy consented dispatch.
const retryAfter = 100 * time.Millisecond

// resumeWait bounds how long a resuming GET waits for a result before it
// ends with a keep-alive event, and resumePoll how often it looks.
const (
	resumeWait = 2 * time.Second
	resumePoll = 100 * time.Millisecond
)

const headerSession = "Mcp-Session-Id"

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		h.post(w, r)
	case http.MethodGet:
		h.get(w, r)
	case http.MethodDelete:
		h.delete(w, r)
	}
}

func (h *Handler) post(w http.ResponseWriter, r *http.Request) {
	checked, body, ok := mcphttp.ReadMessage(w, r)
	if !ok {
		return
	}
	msg, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		// ReadMessage took it, the SDK's decoder does not (a response
		// whose error is not an error object, say).
		web.WriteRPCFailure(w, r, checked.ID, agentgate.Wrap(agentgate.EINVALID, err, "the body is not a JSON-RPC message agentgate can read"))
		return
	}
	sid := r.Header.Get(headerSession)
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "initialize" {
		if sid != "" {
			web.WriteRPCError(w, http.StatusBadRequest, req.ID.Raw(), jsonrpc.CodeInvalidRequest, "initialize inside a session: start a new session without Mcp-Session-Id")
			return
		}
		h.initialize(w, r, req)
		return
	}
	sess, version, ok := h.load(w, r, sid)
	if !ok {
		return
	}
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if !m.IsCall() {
			h.notification(w, r, sid, sess, version, m)
			return
		}
		h.call(w, r, sid, sess, version, m)
	case *jsonrpc.Response:
		h.answer(w, r, sid, sess, m)
	}
}

// initialize starts a session: the SDK answers the handshake, the record
// goes to the table, and the answer carries the new session's id.
func (h *Handler) initialize(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
	ctx := r.Context()
	sid, err := NewID()
	if err != nil {
		web.WriteRPCFailure(w, r, req.ID.Raw(), err)
		return
	}
	resp, _, err := h.run(ctx, r, sid, nil, req)
	if err != nil {
		web.WriteRPCFailure(w, r, req.ID.Raw(), err)
		return
	}
	if resp.Error != nil {
		mcphttp.RewordSDKError(ctx, req.Method, resp)
		writeMessage(w, http.StatusOK, resp)
		return
	}
	// mcphttp.ReadMessage has decoded these params already, and capped what is kept.
	var params mcp.InitializeParams
	var result mcp.InitializeResult
	if err := json.Unmarshal(req.Params, &params); err != nil {
		web.WriteRPCFailure(w, r, req.ID.Raw(), web.InvalidParams(web.JSONError("params", "params", err)))
		return
	}
	if err := json.Unmarshal(resp.Result, &result); err != nil {
		web.WriteRPCFailure(w, r, req.ID.Raw(), err)
		return
	}
	// The SDK's checks read the version from InitializeParams: keep the
	// negotiated one there, not the one the client asked for.
	params.ProtocolVersion = result.ProtocolVersion
	p := principal(ctx)
	now := h.Now().UTC()
	rec := sessionRecord{Subject: p.Subject, Scope: p.Scope, Agent: p.Agent, CreatedAt: now, LastSeen: now,
		State: mcp.ServerSessionState{InitializeParams: &params, NegotiatedProtocolVersion: result.ProtocolVersion}}
	data, err := json.Marshal(rec)
	if err != nil {
		web.WriteRPCFailure(w, r, req.ID.Raw(), err)
		return
	}
	if _, err := h.Store.Create(ctx, store.Item{Key: store.SessionKey(sid), Kind: "mcp-session", Data: data, ExpiresAt: now.Add(h.TTL)}); err != nil {
		writeStoreError(w, r, req.ID.Raw(), err)
		return
	}
	slog.InfoContext(ctx, "mcp session started", "caller", p.Subject, "protocol_version", result.ProtocolVersion,
		"client", clientName(params.ClientInfo))
	w.Header().Set(headerSession, sid)
	writeMessage(w, http.StatusOK, resp)
}

func clientName(impl *mcp.Implementation) string {
	if impl == nil {
		return ""
	}
	return impl.Name + "/" + impl.Version
}

// errNoSession is a session that is missing, expired or someone else's:
// the client's cue to start a new one.
var errNoSession = agentgate.Errorf(agentgate.ENOTFOUND, "session not found or expired; initialize a new session")

// maxSessionIDLen bounds Mcp-Session-Id. agentgate's ids are 22
// characters; a much longer one is no session of this server (and would
// not even make a table key).
const maxSessionIDLen = 128

// lookup reads the session sid and checks that it is the caller's. It
// returns an EINVALID error for a missing or malformed id, errNoSession, a
// store error, or the record and its version.
func (h *Handler) lookup(ctx context.Context, sid string) (sessionRecord, int64, error) {
	switch {
	case sid == "":
		return sessionRecord{}, 0, agentgate.Errorf(agentgate.EINVALID, "Mcp-Session-Id is required; initialize first")
	case len(sid) > maxSessionIDLen:
		return sessionRecord{}, 0, agentgate.Errorf(agentgate.EINVALID, "Mcp-Session-Id is %d bytes, over the limit of %d: it is no session of this server; initialize a new session", len(sid), maxSessionIDLen)
	case strings.ContainsFunc(sid, func(c rune) bool { return c < 0x21 || c > 0x7e }):
		// The spec's rule for session ids: visible ASCII only.
		return sessionRecord{}, 0, agentgate.Errorf(agentgate.EINVALID, "Mcp-Session-Id may only contain visible ASCII characters; initialize a new session")
	}
	it, err := h.Store.Get(ctx, store.SessionKey(sid))
	if errors.Is(err, store.ErrNotFound) {
		return sessionRecord{}, 0, errNoSession
	} else if err != nil {
		return sessionRecord{}, 0, err
	}
	var rec sessionRecord
	if err := json.Unmarshal(it.Data, &rec); err != nil {
		return sessionRecord{}, 0, fmt.Errorf("decoding session: %w", err)
	}
	p := principal(ctx)
	if rec.Subject != p.Subject || rec.Scope != p.Scope || rec.Agent != p.Agent {
		// Someone else's session does not exist, as far as this caller knows.
		return sessionRecord{}, 0, errNoSession
	}
	return rec, it.Version, nil
}

// load is lookup answering its failures (failLookup).
func (h *Handler) load(w http.ResponseWriter, r *http.Request, sid string) (sessionRecord, int64, bool) {
	rec, version, err := h.lookup(r.Context(), sid)
	if err != nil {
		failLookup(w, r, err)
		return sessionRecord{}, 0, false
	}
	return rec, version, true
}

// failLookup answers a lookup's error: 400 for a missing or malformed
// session id, 404 for no session, 503 for a store failure (never 404, which
// would end the client's session).
func failLookup(w http.ResponseWriter, r *http.Request, err error) {
	switch agentgate.ErrorCode(err) {
	case agentgate.EINVALID, agentgate.ENOTFOUND:
		web.WriteRPCFailure(w, r, nil, err)
	default:
		writeStoreError(w, r, nil, err)
	}
}

// save stores the session with a fresh TTL. The TTL slides on a write at
// most every quarter TTL, so that most requests cost one read, no write.
func (h *Handler) save(ctx context.Context, sid string, rec sessionRecord, version int64, force bool) error {
	now := h.Now().UTC()
	if !force && now.Sub(rec.LastSeen) < h.TTL/4 {
		return nil
	}
	rec.LastSeen = now
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	_, err = h.Store.Update(ctx, store.Item{Key: store.SessionKey(sid), Kind: "mcp-session", Data: data, Version: version, ExpiresAt: now.Add(h.TTL)})
	if errors.Is(err, store.ErrConflict) && !force {
		return nil // a concurrent request slid it already
	}
	return err
}

// notification handles a client notification: initialized and the log
// level are session state; the rest need no answer.
func (h *Handler) notification(w http.ResponseWriter, r *http.Request, sid string, sess sessionRecord, version int64, m *jsonrpc.Request) {
	if m.Method == "notifications/initialized" && sess.State.InitializedParams == nil {
		sess.State.InitializedParams = &mcp.InitializedParams{}
		if err := h.save(r.Context(), sid, sess, version, true); err != nil {
			writeStoreError(w, r, nil, err)
			return
		}
	}
	w.WriteHeader(http.StatusAccepted)
}

// call runs one request of a session.
func (h *Handler) call(w http.ResponseWriter, r *http.Request, sid string, sess sessionRecord, version int64, m *jsonrpc.Request) {
	ctx := r.Context()
	resp, rec, err := h.run(ctx, r, sid, &sess.State, m)
	if err != nil {
		web.WriteRPCFailure(w, r, m.ID.Raw(), err)
		return
	}
	if requests, state := rec.recorded(); requests != nil {
		h.elicit(w, r, sid, m, requests, state)
		return
	}
	mcphttp.RewordSDKError(ctx, m.Method, resp)
	force := false
	if m.Method == "logging/setLevel" && resp.Error == nil {
		// mcphttp.ReadMessage has made sure the level is one of the spec's.
		var params mcp.SetLoggingLevelParams
		if json.Unmarshal(m.Params, &params) == nil {
			sess.State.LogLevel, force = params.Level, true
		}
	}
	if err := h.save(ctx, sid, sess, version, force); err != nil && force {
		writeStoreError(w, r, m.ID.Raw(), err)
		return
	}
	writeMessage(w, http.StatusOK, resp)
}

// elicit stores the pending call and sends the elicitation on an SSE
// stream that then ends: the answer may reach any instance.
func (h *Handler) elicit(w http.ResponseWriter, r *http.Request, sid string, m *jsonrpc.Request, requests mcp.InputRequestMap, state string) {
	ctx := r.Context()
	stream, err := NewID()
	if err != nil {
		web.WriteRPCFailure(w, r, m.ID.Raw(), err)
		return
	}
	params, ok := requests[ConsentKey].(*mcp.ElicitParams)
	if !ok {
		web.WriteRPCFailure(w, r, m.ID.Raw(), fmt.Errorf("input request %q is %T, not an elicitation", ConsentKey, requests[ConsentKey]))
		return
	}
	callID, err := json.Marshal(m.ID.Raw())
	if err != nil {
		web.WriteRPCFailure(w, r, m.ID.Raw(), err)
		return
	}
	data, err := json.Marshal(pendingCall{CallID: callID, Params: m.Params, RequestState: state})
	if err != nil {
		web.WriteRPCFailure(w, r, m.ID.Raw(), err)
		return
	}
	if _, err := h.Store.Create(ctx, store.Item{Key: store.SessionEventKey(sid, stream, 0), Kind: "mcp-event", Data: data, ExpiresAt: h.Now().Add(h.TTL)}); err != nil {
		// Nothing was dispatched; the call fails, and says why.
		writeStoreError(w, r, m.ID.Raw(), err)
		return
	}
	encoded, err := json.Marshal(params)
	if err != nil {
		web.WriteRPCFailure(w, r, m.ID.Raw(), err)
		return
	}
	id, _ := jsonrpc.MakeID(elicitationIDPrefix + stream)
	event, err := jsonrpc.EncodeMessage(&jsonrpc.Request{ID: id, Method: "elicitation/create", Params: encoded})
	if err != nil {
		web.WriteRPCFailure(w, r, m.ID.Raw(), err)
		return
	}
	startSSE(w)
	writeEvent(w, eventID(stream, 0, 0), retryAfter, event)
}

// answer takes the client's answer to an elicitation: the first answer
// re-runs the pending tools/call with it, and stores the result as the
// stream's next event. A repeated answer changes nothing.
func (h *Handler) answer(w http.ResponseWriter, r *http.Request, sid string, sess sessionRecord, m *jsonrpc.Response) {
	ctx := r.Context()
	raw, _ := m.ID.Raw().(string)
	stream, ok := strings.CutPrefix(raw, elicitationIDPrefix)
	if !ok || !isStreamID(stream) {
		web.WriteRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, "this response answers no request of this server")
		return
	}
	it, err := h.Store.Get(ctx, store.SessionEventKey(sid, stream, 0))
	if errors.Is(err, store.ErrNotFound) {
		web.WriteRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, "no pending request with this id in this session; it may have expired")
		return
	} else if err != nil {
		writeStoreError(w, r, nil, err)
		return
	}
	var pending pendingCall
	if err := json.Unmarshal(it.Data, &pending); err != nil {
		web.WriteRPCFailure(w, r, nil, err)
		return
	}
	if pending.Answered {
		w.WriteHeader(http.StatusAccepted) // the first answer counted
		return
	}
	pending.Answered = true
	data, err := json.Marshal(pending)
	if err != nil {
		web.WriteRPCFailure(w, r, nil, err)
		return
	}
	it.Data = data
	if _, err := h.Store.Update(ctx, it); errors.Is(err, store.ErrConflict) {
		w.WriteHeader(http.StatusAccepted) // another instance took the answer
		return
	} else if err != nil {
		writeStoreError(w, r, nil, err)
		return
	}

	retry, err := retryCall(pending, m)
	if err != nil {
		web.WriteRPCFailure(w, r, nil, err)
		return
	}
	resp, rec, err := h.run(ctx, r, sid, &sess.State, retry)
	if err != nil {
		resp = &jsonrpc.Response{ID: retry.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: agentgate.ErrorMessage(err)}}
	} else if requests, _ := rec.recorded(); requests != nil {
		resp = &jsonrpc.Response{ID: retry.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the tool asked for input again"}}
	}
	mcphttp.RewordSDKError(ctx, retry.Method, resp)
	event, err := jsonrpc.EncodeMessage(resp)
	if err != nil {
		web.WriteRPCFailure(w, r, nil, err)
		return
	}
	// Stored with a fresh context: the result must land even if this
	// request is being cut short, or the client's GET waits in vain.
	if _, err := h.Store.Put(context.WithoutCancel(ctx), store.Item{Key: store.SessionEventKey(sid, stream, 1), Kind: "mcp-event", Data: event, ExpiresAt: h.Now().Add(h.TTL)}); err != nil {
		writeStoreError(w, r, nil, err)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// retryCall is the pending tools/call again, with the client's answer as
// its input response and the signed state it was asked with: the same
// request a 2026-07-28 client retries with, so one tool serves both.
func retryCall(pending pendingCall, m *jsonrpc.Response) (*jsonrpc.Request, error) {
	var params map[string]json.RawMessage
	if err := json.Unmarshal(pending.Params, &params); err != nil {
		return nil, err
	}
	if params == nil {
		params = map[string]json.RawMessage{}
	}
	if m.Error == nil && len(m.Result) > 0 {
		params["inputResponses"] = json.RawMessage(`{"` + ConsentKey + `":` + string(m.Result) + `}`)
	}
	state, err := json.Marshal(pending.RequestState)
	if err != nil {
		return nil, err
	}
	params["requestState"] = state
	encoded, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	id, err := pending.callID()
	if err != nil {
		return nil, err
	}
	return &jsonrpc.Request{ID: id, Method: "tools/call", Params: encoded}, nil
}

// callID is the pending tools/call's JSON-RPC id.
func (p pendingCall) callID() (jsonrpc.ID, error) {
	var raw any
	if err := json.Unmarshal(p.CallID, &raw); err != nil {
		return jsonrpc.ID{}, err
	}
	return jsonrpc.MakeID(raw)
}

// get resumes a stream after Last-Event-ID: it sends the stored result if
// there is one, and otherwise, after a short wait, a keep-alive event with
// a new id, so that the client comes back (the official clients give up
// after a few resumptions without a new event id, and drop their whole
// connection on any error status here). A table failure is a keep-alive
// too, for a while. Neither waits forever: after maxKeepAlives, an
// unanswered consent is closed as refused, and a table still failing is
// a 503. An id of a stream the session does not have (never had, or has
// expired) is the client's mistake, and nothing will ever arrive on it:
// 400 at once, as the go-sdk answers a stream it cannot replay (404 would
// tell the client that its session is gone).
func (h *Handler) get(w http.ResponseWriter, r *http.Request) {
	last := r.Header.Get("Last-Event-ID")
	if last == "" {
		// No server-initiated stream: agentgate sends nothing unasked.
		// Both official clients open one after initialize and take 405
		// as "no such stream".
		w.Header().Set("Allow", "POST, DELETE")
		web.WriteRPCError(w, http.StatusMethodNotAllowed, nil, jsonrpc.CodeInvalidRequest, "GET without Last-Event-ID: this server opens no standalone stream")
		return
	}
	stream, seq, keep, ok := parseEventID(last)
	if !ok {
		web.WriteRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, "Last-Event-ID is not an event id of this server")
		return
	}
	ctx := r.Context()
	sid := r.Header.Get(headerSession)
	keepAlive := func(err error) {
		if err != nil && keep >= maxKeepAlives {
			writeStoreError(w, r, nil, err)
			return
		}
		startSSE(w)
		writeEvent(w, eventID(stream, seq, keep+1), retryAfter, nil)
	}
	if _, _, err := h.lookup(ctx, sid); errors.Is(err, store.ErrUnavailable) {
		keepAlive(err)
		return
	} else if err != nil {
		failLookup(w, r, err)
		return
	}
	deadline := h.Now().Add(resumeWait)
	for known := false; ; {
		it, err := h.Store.Get(ctx, store.SessionEventKey(sid, stream, seq+1))
		switch {
		case err == nil:
			startSSE(w)
			writeEvent(w, eventID(stream, seq+1, 0), 0, it.Data)
			return
		case !errors.Is(err, store.ErrNotFound):
			keepAlive(err)
			return
		}
		if !known {
			// Event 0, the pending call, is there as long as the stream.
			_, err := h.Store.Get(ctx, store.SessionEventKey(sid, stream, 0))
			switch {
			case errors.Is(err, store.ErrNotFound):
				web.WriteRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest,
					"Last-Event-ID names no stream of this session: it is unknown or has expired; call the tool again")
				return
			case err != nil:
				keepAlive(err)
				return
			}
			known = true
		}
		if !h.Now().Before(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(resumePoll):
		}
	}
	if keep+1 < maxKeepAlives {
		keepAlive(nil)
		return
	}
	event, err := h.expire(ctx, sid, stream)
	if err != nil {
		keepAlive(err)
		return
	}
	if event == nil {
		if keep < 2*maxKeepAlives {
			keepAlive(nil) // an answer took the call: its result follows
			return
		}
		// The answer's result never landed (the table failed as it was
		// stored): end the call rather than wait forever.
		web.WriteRPCFailure(w, r, nil, agentgate.Errorf(agentgate.EUNAVAILABLE,
			"the result of this call was lost; look it up with get_execution_result"))
		return
	}
	startSSE(w)
	writeEvent(w, eventID(stream, seq+1, 0), 0, event)
}

// maxKeepAlives bounds how many times a resuming GET ends without the
// result: about a minute of waiting for an answer.
const maxKeepAlives = 25

// expire closes a stream whose consent went unanswered: the pending call is
// marked answered, so that a late answer dispatches nothing, and its result
// (not dispatched) is stored as the stream's event 1 and returned. It
// returns nil if an answer took the pending call first.
func (h *Handler) expire(ctx context.Context, sid, stream string) ([]byte, error) {
	it, err := h.Store.Get(ctx, store.SessionEventKey(sid, stream, 0))
	if err != nil {
		return nil, err
	}
	var pending pendingCall
	if err := json.Unmarshal(it.Data, &pending); err != nil {
		return nil, err
	}
	if pending.Answered {
		return nil, nil // an answer is being processed: its result follows
	}
	pending.Answered = true
	if it.Data, err = json.Marshal(pending); err != nil {
		return nil, err
	}
	if _, err := h.Store.Update(ctx, it); errors.Is(err, store.ErrConflict) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	encoded, err := json.Marshal(h.Unanswered)
	if err != nil {
		return nil, err
	}
	id, err := pending.callID()
	if err != nil {
		return nil, err
	}
	event, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Result: encoded})
	if err != nil {
		return nil, err
	}
	// This request marked the call answered, so no answer will store a
	// result for it: this refusal is the stream's last event.
	if _, err := h.Store.Put(ctx, store.Item{Key: store.SessionEventKey(sid, stream, 1), Kind: "mcp-event", Data: event, ExpiresAt: h.Now().Add(h.TTL)}); err != nil {
		return nil, err
	}
	return event, nil
}

// delete ends a session.
func (h *Handler) delete(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get(headerSession)
	if _, _, ok := h.load(w, r, sid); !ok {
		return
	}
	if err := h.Store.Delete(r.Context(), store.SessionKey(sid)); err != nil {
		writeStoreError(w, r, nil, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// run answers one request through an SDK session restored from state (nil
// for initialize), on a connection that lives for this request only.
func (h *Handler) run(ctx context.Context, r *http.Request, sid string, state *mcp.ServerSessionState, req *jsonrpc.Request) (*jsonrpc.Response, *inputRecorder, error) {
	rec := &inputRecorder{}
	ctx = context.WithValue(ctx, recorderKey{}, rec)
	c := &conn{sid: sid, in: make(chan jsonrpc.Message, 1), out: make(chan jsonrpc.Message), done: make(chan struct{})}
	var restored *mcp.ServerSessionState
	if state != nil {
		copied := *state
		restored = &copied
	}
	srv, err := h.Server(r)
	if err != nil {
		return nil, nil, err
	}
	ss, err := srv.Connect(ctx, transport{c}, &mcp.ServerSessionOptions{State: restored})
	if err != nil {
		return nil, nil, err
	}
	defer ss.Close()
	c.in <- req
	for {
		select {
		case msg := <-c.out:
			if resp, ok := msg.(*jsonrpc.Response); ok && resp.ID == req.ID {
				// If the tool recorded an input request, resp carries
				// errInputRecorded, and callers look at rec first.
				return resp, rec, nil
			}
			// Notifications (logs, progress) have nowhere to go on a JSON
			// answer; server-to-client requests are never made here.
		case <-ctx.Done():
			return nil, nil, agentgate.Wrap(agentgate.ETIMEOUT, ctx.Err(), "the request timed out")
		}
	}
}

// conn is a connection for one request: it reads the one message, then
// blocks until closed (an EOF would cancel the handler), and hands what
// the server writes to run.
type conn struct {
	sid  string
	in   chan jsonrpc.Message
	out  chan jsonrpc.Message
	done chan struct{}
	once sync.Once
}

func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m := <-c.in:
		return m, nil
	case <-c.done:
		return nil, io.EOF
	}
}

func (c *conn) Write(ctx context.Context, m jsonrpc.Message) error {
	select {
	case c.out <- m:
		return nil
	case <-c.done:
		return io.ErrClosedPipe
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *conn) Close() error {
	c.once.Do(func() { close(c.done) })
	return nil
}

func (c *conn) SessionID() string { return c.sid }

type transport struct{ c *conn }

func (t transport) Connect(context.Context) (mcp.Connection, error) { return t.c, nil }

// Event ids are <stream>_<seq>, and for keep-alives <stream>_<seq>.k<n>
// (still after seq, but new, so that clients count them as progress).
func eventID(stream string, seq, keep int) string {
	id := stream + "_" + strconv.Itoa(seq)
	if keep > 0 {
		id += ".k" + strconv.Itoa(keep)
	}
	return id
}

func parseEventID(id string) (stream string, seq, keep int, ok bool) {
	i := strings.LastIndexByte(id, '_') // stream ids are base64url, which has '_' too
	if i <= 0 || !isStreamID(id[:i]) {
		return "", 0, 0, false
	}
	stream, rest := id[:i], id[i+1:]
	n, k, hasKeep := strings.Cut(rest, ".k")
	seq, err := strconv.Atoi(n)
	if err != nil || seq < 0 || seq > 1 {
		return "", 0, 0, false
	}
	if hasKeep {
		if keep, err = strconv.Atoi(k); err != nil || keep < 0 {
			return "", 0, 0, false
		}
	}
	return stream, seq, keep, true
}

// maxStreamIDLen bounds a stream id a client names; agentgate's are 22
// characters (NewID).
const maxStreamIDLen = 64

// isStreamID reports whether s could be a stream id of this server:
// base64url, not too long. Anything else names no stream, and never
// reaches the table.
func isStreamID(s string) bool {
	return s != "" && len(s) <= maxStreamIDLen && !strings.ContainsFunc(s, func(c rune) bool {
		return !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_')
	})
}

func startSSE(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache, no-store")
	w.WriteHeader(http.StatusOK)
}

// writeEvent writes one SSE event and flushes it. data nil is an empty
// event (a keep-alive).
func writeEvent(w http.ResponseWriter, id string, retry time.Duration, data []byte) {
	var b strings.Builder
	b.WriteString("id: " + id + "\n")
	if retry > 0 {
		b.WriteString("retry: " + strconv.FormatInt(retry.Milliseconds(), 10) + "\n")
	}
	b.WriteString("data: ")
	b.Write(data)
	b.WriteString("\n\n")
	io.WriteString(w, b.String())
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func writeMessage(w http.ResponseWriter, status int, m jsonrpc.Message) {
	data, err := jsonrpc.EncodeMessage(m)
	if err != nil {
		status, data = http.StatusInternalServerError, []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(data)
}

// writeStoreError answers a failed table call. Unavailable is 503 with a
// JSON-RPC error, so that the client retries rather than taking its session
// for gone; the request deadline is the deadline's 504. Anything else (the
// table refusing an item as too large, say) is agentgate's fault, since the
// request should have been refused before it reached the table: 500,
// logged with its cause.
func writeStoreError(w http.ResponseWriter, r *http.Request, id any, err error) {
	switch agentgate.ErrorCode(err) {
	case agentgate.EUNAVAILABLE:
		err = agentgate.Wrap(agentgate.EUNAVAILABLE, err, "the session store is unavailable; retry shortly")
	case agentgate.ETIMEOUT:
	default:
		err = agentgate.Wrap(agentgate.EINTERNAL, err, "")
	}
	web.WriteRPCFailure(w, r, id, err)
}

// principal is the caller, as the security chain established it.
func principal(ctx context.Context) agentgate.Principal {
	p, _ := agentgate.PrincipalFrom(ctx)
	return p
}
