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

// The A2A methods the front door serves. The others (streaming, task
// listing, push notifications, the extended card) answer method-not-found,
// and the card says so: streaming and push notifications are false.
// Each maps to the params a2asrv decodes it into.
var frontDoorMethods = map[string]func() any{
	"SendMessage": func() any { return new(a2a.SendMessageRequest) },
	"GetTask":     func() any { return new(a2a.GetTaskRequest) },
	"CancelTask":  func() any { return new(a2a.CancelTaskRequest) },
}

// FrontDoor is the A2A JSON-RPC endpoint agentgate serves for each agent,
// POST /api/agents/{name}/a2a, the URL its card advertises. a2a-go's
// JSON-RPC binding (a2asrv) parses and answers the protocol; FrontDoor is
// its request handler, which forwards through package dispatch, so every
// message is deduplicated on its messageId (per agent and caller) and
// leaves an execution record, and a caller can only follow its own tasks.
//
// SendMessage is always forwarded non-blocking (returnImmediately): a Lambda
// invocation cannot wait out an agent's work, so the caller polls GetTask.
type FrontDoor struct {
	rpc http.Handler
	svc *dispatch.Service
}

// NewFrontDoor returns the front door over svc.
func NewFrontDoor(svc *dispatch.Service) *FrontDoor {
	f := &FrontDoor{svc: svc}
	f.rpc = a2asrv.NewJSONRPCHandler(&handler{svc: svc})
	return f
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
	// What the front door does not serve is refused here, before a2asrv
	// opens a stream for it.
	newParams, ok := frontDoorMethods[msg.Method]
	if !ok {
		web.WriteRPCError(w, http.StatusOK, msg.ID, web.RPCMethodNotFound,
			fmt.Sprintf("method not found: %.64s; this front door serves SendMessage, GetTask and CancelTask", msg.Method))
		return
	}
	if err := checkParams(newParams(), msg.Params); err != nil {
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
	f.rpc.ServeHTTP(w, r.WithContext(ctx))
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
	digest, err := dedup.Digest(req)
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
// they get here; these answers are the backstop.

func (h *handler) ListTasks(context.Context, *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	return nil, a2a.ErrMethodNotFound
}

func (h *handler) SubscribeToTask(context.Context, *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) { yield(nil, a2a.ErrMethodNotFound) }
}

func (h *handler) SendStreamingMessage(context.Context, *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) { yield(nil, a2a.ErrMethodNotFound) }
}

func (h *handler) GetTaskPushConfig(context.Context, *a2a.GetTaskPushConfigRequest) (*a2a.PushConfig, error) {
	return nil, a2a.ErrMethodNotFound
}

func (h *handler) ListTaskPushConfigs(context.Context, *a2a.ListTaskPushConfigRequest) (*a2a.ListTaskPushConfigResponse, error) {
	return nil, a2a.ErrMethodNotFound
}

func (h *handler) CreateTaskPushConfig(context.Context, *a2a.PushConfig) (*a2a.PushConfig, error) {
	return nil, a2a.ErrMethodNotFound
}

func (h *handler) DeleteTaskPushConfig(context.Context, *a2a.DeleteTaskPushConfigRequest) error {
	return a2a.ErrMethodNotFound
}

func (h *handler) GetExtendedAgentCard(context.Context, *a2a.GetExtendedAgentCardRequest) (*a2a.AgentCard, error) {
	return nil, a2a.ErrMethodNotFound
}
