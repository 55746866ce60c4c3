package mcpsession

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/mcphttp"
	"github.com/agentgate/agentgate/pkg/store"
	"github.com/agentgate/agentgate/pkg/web"
)

// Handler serves the session-based generations (see the package doc):
// POST carries initialize or a message of a session, GET resumes a consent
// stream (replay.go), DELETE ends a session. Every instance may serve any
// request: all it keeps between requests is in Store.
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

// headerSession carries the session id, from initialize's answer on.
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
		h.answer(w, r, sid, sess, version, m)
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

// notification handles a client notification: initialized and the log
// level are session state; the rest need no answer.
func (h *Handler) notification(w http.ResponseWriter, r *http.Request, sid string, sess sessionRecord, version int64, m *jsonrpc.Request) {
	if m.Method == "notifications/initialized" && sess.State.InitializedParams == nil {
		err := h.modify(r.Context(), sid, sess, version, func(rec *sessionRecord) (bool, error) {
			rec.State.InitializedParams = &mcp.InitializedParams{}
			return true, nil
		})
		if err != nil {
			failSession(w, r, nil, err)
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
		h.elicit(w, r, sid, sess, version, m, requests, state)
		return
	}
	mcphttp.RewordSDKError(ctx, m.Method, resp)
	// mcphttp.ReadMessage has made sure a level set is one of the spec's.
	var params mcp.SetLoggingLevelParams
	if m.Method == "logging/setLevel" && resp.Error == nil && json.Unmarshal(m.Params, &params) == nil {
		err := h.modify(ctx, sid, sess, version, func(rec *sessionRecord) (bool, error) {
			rec.State.LogLevel = params.Level
			return true, nil
		})
		if err != nil {
			failSession(w, r, m.ID.Raw(), err)
			return
		}
	} else {
		h.save(ctx, sid, sess, version) // best effort: the next request slides it
	}
	writeMessage(w, http.StatusOK, resp)
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
