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
// elicitation: the stream's event 0, written once when the call asks.
type pendingCall struct {
	CallID       json.RawMessage `json:"callId"` // the tools/call's JSON-RPC id
	Params       json.RawMessage `json:"params"` // and its params
	RequestState string          `json:"requestState"`
}

// settlement is what settles a stream's pending call, stored at its event
// 1 (answerKey) by whichever comes first: the client's answer, by the POST
// that carries it, or the consent's expiry, by a resuming GET. It is
// created if absent, so that exactly one settles the call: a later answer,
// or an expiry that finds an answer, changes nothing. The resuming GET
// acts on it (replay.go).
type settlement struct {
	// Answered: Result is the client's answer (nil for an error answer,
	// which the tool takes as no answer, a refusal).
	Answered bool            `json:"answered,omitempty"`
	Result   json.RawMessage `json:"result,omitempty"`
	// Unanswered: the consent expired; the call ends with the server's
	// refusal (Handler.Unanswered).
	Unanswered bool `json:"unanswered,omitempty"`
	// JSONRPC marks a record of the releases before settlements: the
	// stream's result itself, a JSON-RPC response, sent as it is.
	JSONRPC string `json:"jsonrpc,omitempty"`
}

// answerKey is where a stream's settlement is kept: its event 1, where
// releases before settlements kept the call's result.
func answerKey(sid, stream string) store.Key { return store.SessionEventKey(sid, stream, 1) }

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
// is stored as the stream's settlement, for the resuming GET to re-run the
// pending tools/call with; a repeated answer, or one after the consent
// expired, changes nothing. Storing the answer needs no read of the
// pending call: whether the stream exists is read while the answer is
// stored, so that the answer costs one round trip after the session's.
func (h *Handler) answer(w http.ResponseWriter, r *http.Request, sid string, m *jsonrpc.Response) {
	ctx := r.Context()
	raw, _ := m.ID.Raw().(string)
	stream, ok := strings.CutPrefix(raw, elicitationIDPrefix)
	if !ok || !isStreamID(stream) {
		web.WriteRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, "this response answers no request of this server")
		return
	}
	answer := settlement{Answered: true}
	if m.Error == nil {
		answer.Result = m.Result
	}
	data, err := json.Marshal(answer)
	if err != nil {
		web.WriteRPCFailure(w, r, nil, err)
		return
	}
	pending := make(chan error, 1)
	go func() {
		_, err := h.Store.Get(ctx, store.SessionEventKey(sid, stream, 0))
		pending <- err
	}()
	// An answer to a stream that does not exist stores a settlement no
	// GET will read (it names no pending call); it expires with the TTL.
	_, err = h.Store.Create(ctx, store.Item{Key: answerKey(sid, stream), Kind: "mcp-event", Data: data, ExpiresAt: h.Now().Add(h.TTL)})
	switch perr := <-pending; {
	case errors.Is(perr, store.ErrNotFound):
		web.WriteRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, "no pending request with this id in this session; it may have expired")
	case perr != nil:
		writeStoreError(w, r, nil, perr)
	case err != nil && !errors.Is(err, store.ErrConflict):
		writeStoreError(w, r, nil, err)
	default:
		// Stored, or the stream was settled already: the first answer
		// (or the expiry) counted.
		w.WriteHeader(http.StatusAccepted)
	}
}

// retryCall is the pending tools/call again, with the client's answer as
// its input response and the signed state it was asked with: the same
// request a 2026-07-28 client retries with, so one tool serves both.
func retryCall(pending pendingCall, answer json.RawMessage) (*jsonrpc.Request, error) {
	var params map[string]json.RawMessage
	if err := json.Unmarshal(pending.Params, &params); err != nil {
		return nil, err
	}
	if params == nil {
		params = map[string]json.RawMessage{}
	}
	if len(answer) > 0 {
		params["inputResponses"] = json.RawMessage(`{"` + ConsentKey + `":` + string(answer) + `}`)
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

// settle runs the pending call as the settlement set decides, and returns
// the stream's last event: the call re-run with the client's answer, or
// the server's refusal for an unanswered consent. A re-run repeats on every
// GET that asks for the stream's end, and is the tool's to make once: its
// own record (the task's, or a consent record) lets the first run decide and
// replays that to the others, so a GET whose answer was lost on the way
// gets the same outcome, marked replayed.
func (h *Handler) settle(ctx context.Context, r *http.Request, sid string, sess sessionRecord, pending pendingCall, set settlement) ([]byte, error) {
	id, err := pending.callID()
	if err != nil {
		return nil, err
	}
	if !set.Answered {
		encoded, err := json.Marshal(h.Unanswered)
		if err != nil {
			return nil, err
		}
		return jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Result: encoded})
	}
	retry, err := retryCall(pending, set.Result)
	if err != nil {
		return nil, err
	}
	resp, rec, err := h.run(ctx, r, sid, &sess.State, retry)
	if err != nil {
		resp = &jsonrpc.Response{ID: retry.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: agentgate.ErrorMessage(err)}}
	} else if requests, _ := rec.recorded(); requests != nil {
		resp = &jsonrpc.Response{ID: retry.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the tool asked for input again"}}
	}
	mcphttp.RewordSDKError(ctx, retry.Method, resp)
	return jsonrpc.EncodeMessage(resp)
}
