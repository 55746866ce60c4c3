package mcpserver

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/agent"
	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/dispatch"
)

// DispatchInput is dispatch_task's arguments.
type DispatchInput struct {
	AgentID        string `json:"agentId" jsonschema:"The agent to hand the task to: its agentId from the agentgate://agents resource."`
	Instruction    string `json:"instruction" jsonschema:"What the agent should do, self-contained: the agent sees nothing of this conversation. At most 32 KiB."`
	ExpectedOutput string `json:"expectedOutput,omitempty" jsonschema:"Optional: what a good result looks like (format, length, level of detail)."`
	TaskID         string `json:"taskId,omitempty" jsonschema:"Optional idempotency key (up to 128 printable characters, no spaces). Calling again with the same taskId and arguments returns the first result instead of dispatching twice. Generated when absent; use the returned taskId to poll."`
}

// DispatchOutput is dispatch_task's result.
type DispatchOutput struct {
	Dispatched bool   `json:"dispatched" jsonschema:"Whether the task was handed to the agent."`
	TaskID     string `json:"taskId,omitempty" jsonschema:"The taskId to poll with get_execution_result."`
	AgentID    string `json:"agentId,omitempty"`
	Status     string `json:"status,omitempty" jsonschema:"The task's state as the agent reported it: submitted, working, input_required, completed, failed, canceled or rejected."`
	Reason     string `json:"reason,omitempty" jsonschema:"Why the task was not dispatched."`
	Replayed   bool   `json:"replayed,omitempty" jsonschema:"True when this taskId was dispatched before and this is that first result."`
}

const dispatchTool = "dispatch_task"

// dispatchTask is the consent-gated dispatch. Every path that does not end
// in a dispatch answers dispatched:false with a reason (an isError result),
// so that a model sees why and nothing is sent.
func (s *Server) dispatchTask(ctx context.Context, req *mcp.CallToolRequest, in DispatchInput) (*mcp.CallToolResult, DispatchOutput, error) {
	p := principal(ctx)
	// The ids first, before anything uses them (a table key, the audit
	// log, the answer, which echoes them): a malformed one is not echoed.
	if err := checkIDs(in); err != nil {
		return s.refuse(ctx, p, DispatchOutput{}, "invalid", agentgate.ErrorMessage(err))
	}
	out := DispatchOutput{AgentID: in.AgentID, TaskID: in.TaskID}
	// The agent is read while the state is checked and, for an answer,
	// while the answer claims the task: only the send needs the agent.
	usable := s.svc.UsableSoon(ctx, p, in.AgentID)
	defer usable() // the read ends with the call, whichever path it takes
	// An answer to a consent question carries the signed state; its taskId
	// is the one asked about.
	claims, err := s.consentState(req, p, dispatchTool)
	if err != nil {
		return s.refuse(ctx, p, out, "bad_state", agentgate.ErrorMessage(err))
	}
	if claims != nil && out.TaskID == "" {
		out.TaskID = claims.TaskID
	}
	if out.TaskID == "" {
		out.TaskID = uuid.NewString()
	}
	invalid := dispatch.CheckTask(out.TaskID, in.Instruction, in.ExpectedOutput)
	// The agent need only be named for the task's record: an answer reads
	// it while its claim is taken (dispatch.Service.AnswerTask), and a
	// question is recorded while it is read (asking), and withdrawn if the
	// agent is not the caller's to use.
	task := dispatch.Task{Agent: agent.Agent{Template: agent.Template{Name: in.AgentID}}, Caller: p, TaskID: out.TaskID,
		Instruction: in.Instruction, ExpectedOutput: in.ExpectedOutput}
	var asking func() (int64, *dispatch.Sent, error)
	if invalid == nil && claims == nil && s.requireConsent && canElicit(req) {
		asking = s.askSoon(ctx, task)
	}
	if claims == nil || !s.requireConsent {
		a, err := usable()
		if err != nil {
			if asking != nil {
				if ask, sent, err := asking(); err == nil && sent == nil {
					if err := s.svc.Withdraw(context.WithoutCancel(ctx), task, ask); err != nil {
						slog.WarnContext(ctx, "mcp: withdrawing the question about a task for an agent not usable failed; its taskId stays taken until it expires",
							"task_id", task.TaskID, "error", err.Error())
					}
				}
			}
			return s.refuse(ctx, p, out, "unknown_agent", agentgate.ErrorMessage(err))
		}
		task.Agent = a
	}
	if invalid != nil {
		return s.refuse(ctx, p, out, "invalid", agentgate.ErrorMessage(invalid))
	}
	a := task.Agent
	digest, err := task.Digest()
	if err != nil {
		return failure[DispatchOutput](ctx, p, dispatchTool, in.AgentID, out.TaskID, out, err)
	}
	h := handing[DispatchOutput, *DispatchOutput]{
		tool: dispatchTool, agent: a.Template.Name, taskID: task.TaskID, digest: digest, base: out,
		question: fmt.Sprintf("Send this task to the agent %q (%s)?", a.Template.Name, a.Template.Description),
		text:     in.Instruction,
		// The consent is the task's record's, which is also its
		// once-only claim and its execution (pkg/dispatch/taskrecord.go).
		asked: func(ctx context.Context) (int64, *DispatchOutput, error) {
			if asking == nil {
				asking = s.askSoon(ctx, task)
			}
			ask, sent, err := asking()
			if err != nil || sent == nil {
				return ask, nil, taskConflict(err)
			}
			out := dispatched(task, sent)
			return 0, &out, nil
		},
		answered: func(ctx context.Context, ask int64, refusal string) (DispatchOutput, bool, error) {
			o, err := s.svc.AnswerTask(ctx, task, ask, refusal, usable)
			switch {
			case err != nil:
				return DispatchOutput{}, false, taskConflict(err)
			case o.Sent == nil:
				refused := out
				refused.refuse(o.Refused)
				return refused, o.Replayed, nil
			}
			return dispatched(task, o.Sent), o.Replayed, nil
		},
		// Once per taskId, whatever the consent: the taskId's dedup
		// answers a repeat.
		do: func(ctx context.Context, _ string) (DispatchOutput, string, error) {
			sent, err := s.svc.DispatchTask(ctx, task)
			if err != nil {
				return DispatchOutput{}, "", err
			}
			if sent.Replayed {
				return dispatched(task, sent), "replayed", nil
			}
			return dispatched(task, sent), "dispatched", nil
		},
	}
	return h.run(ctx, s, req, p, claims)
}

// askSoon starts recording the question about task (AskTask) and returns
// the function that waits for its result, so that a call that asks reads
// its agent meanwhile rather than first.
func (s *Server) askSoon(ctx context.Context, task dispatch.Task) func() (int64, *dispatch.Sent, error) {
	var (
		ask  int64
		sent *dispatch.Sent
		err  error
		done = make(chan struct{})
	)
	go func() {
		defer close(done)
		ask, sent, err = s.svc.AskTask(ctx, task)
	}()
	return func() (int64, *dispatch.Sent, error) {
		<-done
		return ask, sent, err
	}
}

// taskConflict says what to do about a taskId in use for other work.
func taskConflict(err error) error {
	if agentgate.ErrorCode(err) == agentgate.ECONFLICT {
		return agentgate.Errorf(agentgate.ECONFLICT, "taskId: %s; use a new taskId for new work", agentgate.ErrorMessage(err))
	}
	return err
}

// dispatched is the output of a task the agent took.
func dispatched(task dispatch.Task, sent *dispatch.Sent) DispatchOutput {
	out := DispatchOutput{Dispatched: true, AgentID: task.Agent.Template.Name, TaskID: task.TaskID, Replayed: sent.Replayed}
	switch a := sent.Answer.(type) {
	case *a2a.Task:
		out.Status = status(a.Status.State)
	default:
		out.Status = status(a2a.TaskStateCompleted)
	}
	return out
}

// checkIDs checks the ids of a dispatch_task call: the agent's, and the
// caller's taskId if given.
func checkIDs(in DispatchInput) error {
	if err := dispatch.CheckID("agentId", in.AgentID); err != nil {
		return err
	}
	if in.TaskID != "" {
		return dispatch.CheckID("taskId", in.TaskID)
	}
	return nil
}

// refuse answers a dispatch_task call that dispatched nothing (refusal).
func (s *Server) refuse(ctx context.Context, p agentgate.Principal, out DispatchOutput, code, reason string) (*mcp.CallToolResult, DispatchOutput, error) {
	return refusal[DispatchOutput](ctx, p, dispatchTool, out.AgentID, out.TaskID, out, code, reason)
}

// DispatchOutput is an output of the consent gate (gate.go).
func (o *DispatchOutput) refuse(reason string)        { o.Dispatched, o.Reason = false, reason }
func (o *DispatchOutput) replay()                     { o.Replayed = true }
func (o *DispatchOutput) handed() bool                { return o.Dispatched }
func (o *DispatchOutput) result() *mcp.CallToolResult { return result(*o) }

// result is the text a model reads beside the structured output. It is
// also the answer pkg/mcpsession gives a call whose consent went unanswered,
// whatever the tool: {"dispatched": false, "reason"} fits every work
// tool's output.
func result(out DispatchOutput) *mcp.CallToolResult {
	if !out.Dispatched {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "Not dispatched: " + out.Reason}}}
	}
	text := fmt.Sprintf("Dispatched task %s to agent %s; status %s. Poll get_execution_result with taskId %q until the status is completed, failed, canceled or rejected.",
		out.TaskID, out.AgentID, out.Status, out.TaskID)
	if out.Replayed {
		text = "This taskId was dispatched before; nothing was sent again. " + text
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// status names an A2A task state as the tools report it: "completed"
// rather than "TASK_STATE_COMPLETED".
func status(s a2a.TaskState) string { return dispatch.StatusName(s) }
