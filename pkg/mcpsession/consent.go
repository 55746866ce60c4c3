package mcpsession

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/mcphttp"
	"github.com/agentgate/agentgate/pkg/web"
)

// consent is a consent stream of the session, kept in its record
// (sessionRecord.Consents, by stream id): the tools/call waiting for the
// client's answer to an elicitation, written once when the call asks, and
// once there is one, what settled it.
type consent struct {
	pendingCall
	// Expires is when the stream is gone, a TTL after the call asked.
	Expires time.Time `json:"expires"`
	// Settlement is set once, by whichever comes first: the client's
	// answer, by the POST that carries it, or the consent's expiry, by a
	// resuming GET. Each sets it by compare-and-set on the session record
	// only where it finds none, so that exactly one settles the call: a
	// later answer, or an expiry that finds an answer, changes nothing.
	// The resuming GET acts on it (replay.go).
	Settlement *settlement `json:"settlement,omitempty"`
}

// pendingCall is a tools/call waiting for the client's answer.
type pendingCall struct {
	CallID       json.RawMessage `json:"callId"` // the tools/call's JSON-RPC id
	Params       json.RawMessage `json:"params"` // and its params
	RequestState string          `json:"requestState"`
}

// settlement is what settles a stream's pending call.
type settlement struct {
	// Answered: Result is the client's answer (nil for an error answer,
	// which the tool takes as no answer, a refusal).
	Answered bool            `json:"answered,omitempty"`
	Result   json.RawMessage `json:"result,omitempty"`
	// Unanswered: the consent expired; the call ends with the server's
	// refusal (Handler.Unanswered).
	Unanswered bool `json:"unanswered,omitempty"`
}

// elicitationIDPrefix starts the JSON-RPC id of our elicitation/create
// requests; the rest is the stream id, so that the answer names its stream.
const elicitationIDPrefix = "agentgate-consent-"

// errNoStream answers an answer to a stream the session does not have:
// never had, expired, or kept by a release that stored it outside the
// record (the client asks again; nothing was dispatched).
const errNoStream = "no pending request with this id in this session; it may have expired"

// elicit adds the pending call to the session record, in the write that
// slides its TTL, and sends the elicitation on an SSE stream that then
// ends: the answer may reach any instance. A session that waits for
// maxWaiting consents already, or whose record the call would make too
// large, refuses the call, nothing dispatched.
func (h *Handler) elicit(w http.ResponseWriter, r *http.Request, sid string, sess sessionRecord, version int64, m *jsonrpc.Request, requests mcp.InputRequestMap, state string) {
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
	asked := consent{pendingCall: pendingCall{CallID: callID, Params: m.Params, RequestState: state}, Expires: h.Now().Add(h.TTL)}
	err = h.modify(ctx, sid, sess, version, func(rec *sessionRecord) (bool, error) {
		if n := rec.waiting(h.Now()); n >= maxWaiting {
			return false, agentgate.Errorf(agentgate.ECONFLICT, "this session waits for the answers to %d consents already, the most it keeps: answer them (or let them expire), then call the tool again", n)
		}
		if rec.Consents == nil {
			rec.Consents = map[string]consent{}
		}
		rec.Consents[stream] = asked
		return true, nil
	})
	if err != nil {
		// Nothing was dispatched; the call fails, and says why.
		failSession(w, r, m.ID.Raw(), err)
		return
	}
	startSSE(w)
	writeEvent(w, eventID(stream, 0, 0), retryAfter, event)
}

// answer takes the client's answer to an elicitation: the first answer
// is kept as the stream's settlement, for the resuming GET to re-run the
// pending tools/call with; a repeated answer, or one after the consent
// expired, changes nothing. The session record the request has read says
// whether the stream is there and settled, so that the answer costs at
// most one write after the session's read.
func (h *Handler) answer(w http.ResponseWriter, r *http.Request, sid string, sess sessionRecord, version int64, m *jsonrpc.Response) {
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
	if data, err := json.Marshal(answer); err != nil {
		web.WriteRPCFailure(w, r, nil, err)
		return
	} else if len(data) > maxSettlementBytes {
		web.WriteRPCFailure(w, r, nil, agentgate.Errorf(agentgate.ETOOLARGE, "the answer is %d bytes, over the limit of %d: a consent's answer is a yes or a no", len(data), maxSettlementBytes))
		return
	}
	gone := false
	err := h.modify(r.Context(), sid, sess, version, func(rec *sessionRecord) (bool, error) {
		c, ok := rec.consentOf(stream, h.Now())
		if !ok {
			gone = true
			return false, nil
		}
		if c.Settlement != nil {
			return false, nil // the first answer (or the expiry) counted
		}
		c.Settlement = &answer
		rec.Consents[stream] = c
		return true, nil
	})
	switch {
	case err != nil:
		failSession(w, r, nil, err)
	case gone:
		web.WriteRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, errNoStream)
	default:
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

// settle runs the pending call as its settlement set decides, and returns
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
