package agentcard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"strings"

	a2av03 "github.com/a2aproject/a2a-go/a2a"
	a2asrvv03 "github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/agentgate/agentgate/pkg/a2acall"
	"github.com/agentgate/agentgate/pkg/agent"
	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/dedup"
	"github.com/agentgate/agentgate/pkg/dispatch"
	"github.com/agentgate/agentgate/pkg/execution"
	"github.com/agentgate/agentgate/pkg/web"
)

// method is how the front door answers one A2A JSON-RPC method.
type method struct {
	v03 bool // a v0.3 method, answered by the v0.3 binding
	// params, for a method the front door serves, returns the value its
	// binding decodes the params into.
	params func() any
	// refusal, for a method it does not serve, is the A2A error code and
	// message it answers with.
	code    int64
	refusal string
}

// A2A error codes, the same in both generations.
const (
	rpcPushNotSupported   = -32003
	rpcUnsupported        = -32004
	rpcExtendedCardAbsent = -32007
	rpcVersionUnsupported = -32009
)

const (
	noStreaming = "streaming is not supported (the card says capabilities.streaming false): send the message without streaming and poll the task"
	noPush      = "push notifications are not supported (the card says capabilities.pushNotifications false): poll the task"
	noListing   = "listing tasks is not supported: get each task by its id"
	noExtended  = "there is no extended agent card (the card says capabilities.extendedAgentCard false)"
)

// methods are the A2A methods of both generations: v1.0's names
// (SendMessage) and v0.3's (message/send), so the method a request calls
// says which generation it speaks. Every generation's send, get and cancel
// reach the one handler, so dedup, input caps, execution records and
// access rules are the same whichever a client speaks, and a task sent in
// one generation can be followed in the other. The others are refused with
// the error a client of that generation expects, before a binding would
// open a stream for them; anything else is method-not-found.
var methods = map[string]method{
	"SendMessage":                      {params: func() any { return new(a2a.SendMessageRequest) }},
	"GetTask":                          {params: func() any { return new(a2a.GetTaskRequest) }},
	"CancelTask":                       {params: func() any { return new(a2a.CancelTaskRequest) }},
	"SendStreamingMessage":             {code: rpcUnsupported, refusal: noStreaming},
	"SubscribeToTask":                  {code: rpcUnsupported, refusal: noStreaming},
	"ListTasks":                        {code: rpcUnsupported, refusal: noListing},
	"CreateTaskPushNotificationConfig": {code: rpcPushNotSupported, refusal: noPush},
	"GetTaskPushNotificationConfig":    {code: rpcPushNotSupported, refusal: noPush},
	"ListTaskPushNotificationConfigs":  {code: rpcPushNotSupported, refusal: noPush},
	"DeleteTaskPushNotificationConfig": {code: rpcPushNotSupported, refusal: noPush},
	"GetExtendedAgentCard":             {code: rpcExtendedCardAbsent, refusal: noExtended},

	"message/send":                        {v03: true, params: func() any { return new(a2av03.MessageSendParams) }},
	"tasks/get":                           {v03: true, params: func() any { return new(a2av03.TaskQueryParams) }},
	"tasks/cancel":                        {v03: true, params: func() any { return new(a2av03.TaskIDParams) }},
	"message/stream":                      {v03: true, code: rpcUnsupported, refusal: noStreaming},
	"tasks/resubscribe":                   {v03: true, code: rpcUnsupported, refusal: noStreaming},
	"tasks/pushNotificationConfig/set":    {v03: true, code: rpcPushNotSupported, refusal: noPush},
	"tasks/pushNotificationConfig/get":    {v03: true, code: rpcPushNotSupported, refusal: noPush},
	"tasks/pushNotificationConfig/list":   {v03: true, code: rpcPushNotSupported, refusal: noPush},
	"tasks/pushNotificationConfig/delete": {v03: true, code: rpcPushNotSupported, refusal: noPush},
	"agent/getAuthenticatedExtendedCard":  {v03: true, code: rpcExtendedCardAbsent, refusal: noExtended},
}

// FrontDoor is the A2A JSON-RPC endpoint agentgate serves for each agent,
// POST /api/agents/{name}/a2a, the URL its card advertises. a2a-go's
// JSON-RPC binding (a2asrv) parses and answers the protocol; FrontDoor is
// its request handler, which forwards through package dispatch, so every
// message is deduplicated on its messageId (per agent and caller) and
// leaves an execution record, and a caller can only follow its own tasks.
//
// It speaks A2A v1.0 and v0.3 (a2a-go's v0.3 binding, from its module
// before v2, over v03Handler, which converts to v1.0 and calls the same
// handler); the method a request calls picks the generation.
//
// A message is forwarded to the agent without waiting for the work, so the
// once-only send and its record do not depend on how long the agent takes.
// A caller that asked to block (v1.0 without returnImmediately; v0.3 with
// blocking, which @a2a-js/sdk 0.3 asks by default) then waits while the
// front door follows the task, until it settles or the request's deadline
// draws near, and gets the task as it stands: a Lambda invocation cannot
// outwait long work, and a caller given an unfinished task polls it.
type FrontDoor struct {
	rpc, rpcV03 http.Handler
	svc         *dispatch.Service
}

// NewFrontDoor returns the front door over svc.
func NewFrontDoor(svc *dispatch.Service) *FrontDoor {
	h := &handler{svc: svc}
	return &FrontDoor{svc: svc, rpc: a2asrv.NewJSONRPCHandler(h), rpcV03: a2asrvv03.NewJSONRPCHandler(v03Handler{h})}
}

type calleeKey struct{}

// callee is the agent a front-door request is for, and who calls it.
type callee struct {
	agent  agent.Agent
	caller agentgate.Principal
}

// ServeHTTP checks the request before a2asrv reads it: a2asrv answers a
// body it cannot decode with Go's own words, and reads ids as float64 (an
// id beyond 2^53 would come back as another). A body the front door cannot
// read (too large, not JSON by its Content-Type, cut short) is answered
// with its HTTP status; every JSON-RPC error with 200, as a2asrv answers
// its own, and as a2a-go's client expects (it reads no body from any other
// status).
func (f *FrontDoor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := web.ReadBody(r)
	if err != nil {
		web.WriteRPCFailure(w, r, nil, err)
		return
	}
	msg, err := web.ParseRPC(body)
	if err == nil && msg.Response {
		err = &web.RPCFault{Code: web.RPCInvalidRequest, Err: agentgate.Errorf(agentgate.EINVALID, "the front door takes requests, not responses")}
	}
	var fault *web.RPCFault
	if errors.As(err, &fault) {
		fault.Status = http.StatusOK
		web.WriteRPCFailure(w, r, msg.ID, err)
		return
	}
	if v := r.Header.Get(VersionHeader); v != "" && !supportedVersion(v) {
		web.WriteRPCError(w, http.StatusOK, msg.ID, rpcVersionUnsupported,
			fmt.Sprintf("A2A version %.16q is not supported; this front door speaks %s and %s", v, ProtocolVersion, ProtocolVersionV03))
		return
	}
	m, ok := methods[msg.Method]
	switch {
	case !ok:
		web.WriteRPCError(w, http.StatusOK, msg.ID, web.RPCMethodNotFound,
			fmt.Sprintf("method not found: %.64q; this front door serves SendMessage, GetTask and CancelTask (A2A 1.0) and message/send, tasks/get and tasks/cancel (A2A 0.3)", msg.Method))
		return
	case m.params == nil:
		web.WriteRPCError(w, http.StatusOK, msg.ID, m.code, m.refusal)
		return
	}
	if err := checkParams(m.params(), msg.Params); err != nil {
		web.WriteRPCFailure(w, r, msg.ID, &web.RPCFault{Code: web.RPCInvalidParams, Status: http.StatusOK, Err: err})
		return
	}
	a, err := f.svc.Agent(r.Context(), r.PathValue("name"))
	if err != nil {
		web.WriteError(w, r, err)
		return
	}
	p, _ := agentgate.PrincipalFrom(r.Context())
	r.Body = io.NopCloser(bytes.NewReader(body))
	ctx := context.WithValue(r.Context(), calleeKey{}, callee{agent: a, caller: p})
	binding := f.rpc
	if m.v03 {
		binding = f.rpcV03
		// The v0.3 binding writes no Content-Type; its answers, results
		// and errors, are JSON.
		w.Header().Set("Content-Type", "application/json")
	}
	binding.ServeHTTP(w, r.WithContext(ctx))
}

// supportedVersion reports whether an A2A-Version header names a version
// the front door speaks: 1.0 or 0.3, with or without a patch number.
func supportedVersion(v string) bool {
	parts := strings.SplitN(strings.TrimSpace(v), ".", 3)
	if len(parts) < 2 {
		return false
	}
	mm := parts[0] + "." + parts[1]
	return mm == ProtocolVersion || mm == ProtocolVersionV03
}

// checkParams decodes a request's params as a2asrv will (encoding/json,
// into a2a's request type for the method), so that a mismatch is described
// in agentgate's words.
func checkParams(params any, raw json.RawMessage) error {
	if raw == nil {
		return agentgate.Errorf(agentgate.EINVALID, "params: required")
	}
	if err := json.Unmarshal(raw, params); err != nil {
		return web.JSONError("params", "params", err)
	}
	return nil
}

// handler is the a2asrv.RequestHandler behind the front door.
type handler struct {
	svc *dispatch.Service
}

var _ a2asrv.RequestHandler = (*handler)(nil)

func from(ctx context.Context) callee { c, _ := ctx.Value(calleeKey{}).(callee); return c }

// taskRef names a task of the agent the request is for.
func taskRef(c callee, id a2a.TaskID) execution.Ref {
	return execution.Ref{Origin: execution.OriginA2A, Scope: c.agent.Template.Name, ID: string(id)}
}

func (h *handler) SendMessage(ctx context.Context, req *a2a.SendMessageRequest) (a2a.SendMessageResult, error) {
	c := from(ctx)
	if err := dispatch.CheckMessage(req.Message); err != nil {
		return nil, rpcError(ctx, err)
	}
	if req.Config != nil && req.Config.PushConfig != nil {
		return nil, a2a.NewError(a2a.ErrPushNotificationNotSupported, "push notifications are not supported; poll GetTask")
	}
	if req.Message.TaskID != "" {
		// Continuing a task: it must be one the caller may see.
		if _, err := h.svc.Execution(ctx, c.caller, taskRef(c, req.Message.TaskID)); err != nil {
			return nil, rpcError(ctx, err)
		}
	}
	// What the message says, not how it asks to be answered (blocking or
	// not) nor in which generation: a repeat in the other generation, or
	// one that no longer waits, is the same message.
	digest, err := dedup.Digest([]any{req.Message, req.Metadata})
	if err != nil {
		return nil, rpcError(ctx, err)
	}
	sent, err := h.svc.Send(ctx, dispatch.Send{
		Agent: c.agent, Caller: c.caller, Message: req.Message, Digest: digest,
		Dedup: dedup.Key{Scope: "a2a:" + c.agent.Template.Name, Caller: c.caller.Subject, ID: req.Message.ID},
	})
	if err != nil {
		return nil, rpcError(ctx, err)
	}
	if req.Config == nil || !req.Config.ReturnImmediately {
		wait, cancel := dispatch.WaitBound(ctx)
		defer cancel()
		return h.svc.Settle(wait, c.agent, sent), nil
	}
	return sent.Answer, nil
}

func (h *handler) GetTask(ctx context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	c := from(ctx)
	_, res, err := h.svc.Refresh(ctx, c.caller, c.agent, taskRef(c, req.ID))
	return task(ctx, res, err)
}

func (h *handler) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	c := from(ctx)
	_, res, err := h.svc.Cancel(ctx, c.caller, c.agent, taskRef(c, req.ID))
	return task(ctx, res, err)
}

// task is the agent's answer to GetTask or CancelTask, as a task.
func task(ctx context.Context, res *a2acall.Result, err error) (*a2a.Task, error) {
	if err != nil {
		return nil, rpcError(ctx, err)
	}
	t, ok := res.Answer.(*a2a.Task)
	if !ok {
		return nil, a2a.NewError(a2a.ErrInvalidAgentResponse, "the agent did not answer with a task")
	}
	return t, nil
}

// rpcError turns an agentgate error into the A2A error a2asrv answers with.
// An agent's own JSON-RPC error keeps its code; every message is the
// caller-safe one, never a cause's details.
func rpcError(ctx context.Context, err error) error {
	msg := agentgate.ErrorMessage(err)
	var answered *a2a.Error
	if errors.As(err, &answered) && answered.Err != nil {
		return a2a.NewError(answered.Err, msg)
	}
	switch agentgate.ErrorCode(err) {
	case agentgate.ENOTFOUND:
		return a2a.NewError(a2a.ErrTaskNotFound, msg)
	case agentgate.EINVALID, agentgate.ECONFLICT:
		return a2a.NewError(a2a.ErrInvalidParams, msg)
	case agentgate.EFORBIDDEN:
		return a2a.NewError(a2a.ErrUnauthorized, msg)
	case agentgate.EUNAVAILABLE, agentgate.ETIMEOUT, agentgate.EAGENT:
		return a2a.NewError(a2a.ErrServerError, msg)
	}
	slog.ErrorContext(ctx, "front door: internal error", "error", err.Error())
	return a2a.NewError(a2a.ErrInternalError, "internal error")
}

// Methods the front door does not serve. ServeHTTP refuses them before
// they get here (see methods); these answers are the backstop.

func (h *handler) ListTasks(context.Context, *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	return nil, a2a.ErrUnsupportedOperation
}

func (h *handler) SubscribeToTask(context.Context, *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) { yield(nil, a2a.ErrUnsupportedOperation) }
}

func (h *handler) SendStreamingMessage(context.Context, *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) { yield(nil, a2a.ErrUnsupportedOperation) }
}

func (h *handler) GetTaskPushConfig(context.Context, *a2a.GetTaskPushConfigRequest) (*a2a.PushConfig, error) {
	return nil, a2a.ErrPushNotificationNotSupported
}

func (h *handler) ListTaskPushConfigs(context.Context, *a2a.ListTaskPushConfigRequest) (*a2a.ListTaskPushConfigResponse, error) {
	return nil, a2a.ErrPushNotificationNotSupported
}

func (h *handler) CreateTaskPushConfig(context.Context, *a2a.PushConfig) (*a2a.PushConfig, error) {
	return nil, a2a.ErrPushNotificationNotSupported
}

func (h *handler) DeleteTaskPushConfig(context.Context, *a2a.DeleteTaskPushConfigRequest) error {
	return a2a.ErrPushNotificationNotSupported
}

func (h *handler) GetExtendedAgentCard(context.Context, *a2a.GetExtendedAgentCardRequest) (*a2a.AgentCard, error) {
	return nil, a2a.ErrExtendedCardNotConfigured
}
