package mcpsession

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/mcphttp"
	"github.com/agentgate/agentgate/pkg/store"
	"github.com/agentgate/agentgate/pkg/web"
)

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
	pending, claimed, err := h.claim(ctx, it)
	if err != nil {
		// For an error of no code (a record that does not decode), this
		// is WriteRPCFailure's 500 to the letter.
		writeStoreError(w, r, nil, err)
		return
	} else if !claimed {
		w.WriteHeader(http.StatusAccepted) // the first answer counted
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

// claim takes a stream's pending call, it (event 0 as read), for this
// request, by marking it answered with a conditional write. Answers to one
// elicitation, and the expiry of its consent, may race on any instances:
// exactly one of them claims the call and settles it (re-runs it with the
// answer, or refuses it) and stores the stream's event 1; the others find it
// taken (false) and leave the stream to that one.
func (h *Handler) claim(ctx context.Context, it store.Item) (pendingCall, bool, error) {
	var pending pendingCall
	if err := json.Unmarshal(it.Data, &pending); err != nil {
		return pendingCall{}, false, err
	}
	if pending.Answered {
		return pendingCall{}, false, nil
	}
	pending.Answered = true
	data, err := json.Marshal(pending)
	if err != nil {
		return pendingCall{}, false, err
	}
	it.Data = data
	if _, err := h.Store.Update(ctx, it); errors.Is(err, store.ErrConflict) {
		return pendingCall{}, false, nil // taken by another instance since it was read
	} else if err != nil {
		return pendingCall{}, false, err
	}
	return pending, true, nil
}

// expire closes a stream whose consent went unanswered: the pending call is
// marked answered, so that a late answer dispatches nothing, and its result
// (not dispatched) is stored as the stream's event 1 and returned. It
// returns nil if an answer took the pending call first.
func (h *Handler) expire(ctx context.Context, sid, stream string) ([]byte, error) {
	it, err := h.Store.Get(ctx, store.SessionEventKey(sid, stream, 0))
	if err != nil {
		return nil, err
	}
	pending, claimed, err := h.claim(ctx, it)
	if err != nil || !claimed {
		return nil, err // not claimed: an answer took the call, and its result follows
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
