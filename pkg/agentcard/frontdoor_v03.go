package agentcard

import (
	"context"
	"iter"

	a2av03 "github.com/a2aproject/a2a-go/a2a"
	a2asrvv03 "github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2a"
)

// v03Handler is the front door's A2A v0.3 request handler, for a2a-go's
// v0.3 JSON-RPC binding (module a2a-go, package a2asrv, which links no
// gRPC): it converts each v0.3 request to v1.0 (v03convert.go), calls the
// one v1.0 handler, and converts its answer back, so that both
// generations share dedup, caps, records and access rules.
type v03Handler struct {
	h *handler
}

var _ a2asrvv03.RequestHandler = v03Handler{}

func (v v03Handler) OnSendMessage(ctx context.Context, p *a2av03.MessageSendParams) (a2av03.SendMessageResult, error) {
	req, err := sendFromV03(p)
	if err != nil {
		return nil, a2av03.NewError(a2av03.ErrInvalidParams, "params."+err.Error())
	}
	res, err := v.h.SendMessage(ctx, req)
	if err != nil {
		return nil, errToV03(err)
	}
	return resultToV03(res)
}

func (v v03Handler) OnGetTask(ctx context.Context, q *a2av03.TaskQueryParams) (*a2av03.Task, error) {
	t, err := v.h.GetTask(ctx, &a2a.GetTaskRequest{ID: a2a.TaskID(q.ID), HistoryLength: q.HistoryLength})
	return taskToV03(t), errToV03(err)
}

func (v v03Handler) OnCancelTask(ctx context.Context, p *a2av03.TaskIDParams) (*a2av03.Task, error) {
	t, err := v.h.CancelTask(ctx, &a2a.CancelTaskRequest{ID: a2a.TaskID(p.ID), Metadata: p.Metadata})
	return taskToV03(t), errToV03(err)
}

// Methods the front door does not serve. ServeHTTP refuses them before
// they get here (see methods); these answers are the backstop, with the
// same codes.

func (v03Handler) OnListTasks(context.Context, *a2av03.ListTasksRequest) (*a2av03.ListTasksResponse, error) {
	return nil, a2av03.ErrUnsupportedOperation
}

func (v03Handler) OnResubscribeToTask(context.Context, *a2av03.TaskIDParams) iter.Seq2[a2av03.Event, error] {
	return func(yield func(a2av03.Event, error) bool) { yield(nil, a2av03.ErrUnsupportedOperation) }
}

func (v03Handler) OnSendMessageStream(context.Context, *a2av03.MessageSendParams) iter.Seq2[a2av03.Event, error] {
	return func(yield func(a2av03.Event, error) bool) { yield(nil, a2av03.ErrUnsupportedOperation) }
}

func (v03Handler) OnGetTaskPushConfig(context.Context, *a2av03.GetTaskPushConfigParams) (*a2av03.TaskPushConfig, error) {
	return nil, a2av03.ErrPushNotificationNotSupported
}

func (v03Handler) OnListTaskPushConfig(context.Context, *a2av03.ListTaskPushConfigParams) ([]*a2av03.TaskPushConfig, error) {
	return nil, a2av03.ErrPushNotificationNotSupported
}

func (v03Handler) OnSetTaskPushConfig(context.Context, *a2av03.TaskPushConfig) (*a2av03.TaskPushConfig, error) {
	return nil, a2av03.ErrPushNotificationNotSupported
}

func (v03Handler) OnDeleteTaskPushConfig(context.Context, *a2av03.DeleteTaskPushConfigParams) error {
	return a2av03.ErrPushNotificationNotSupported
}

func (v03Handler) OnGetExtendedAgentCard(context.Context) (*a2av03.AgentCard, error) {
	return nil, a2av03.ErrAuthenticatedExtendedCardNotConfigured
}
