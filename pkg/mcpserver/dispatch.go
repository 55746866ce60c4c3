package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/dispatch"
	"github.com/agentgate/agentgate/pkg/store"
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
	if p.Scope == agentgate.ScopeConnector && in.AgentID != p.Agent {
		return s.refuse(ctx, p, out, "forbidden", fmt.Sprintf("this key may only dispatch to agent %q", p.Agent))
	}
	a, err := s.svc.Agent(ctx, in.AgentID)
	if err != nil {
		return s.refuse(ctx, p, out, "unknown_agent", agentgate.ErrorMessage(err))
	}

	// An answer to a consent question carries the signed state; its taskId
	// is the one asked about.
	answering := req.Params.RequestState != "" || len(req.Params.InputResponses) > 0
	var claims consentClaims
	if answering {
		if claims, err = s.signer.verify(req.Params.RequestState, stateCaller(p), dispatchTool); err != nil {
			return s.refuse(ctx, p, out, "bad_state", agentgate.ErrorMessage(err))
		}
		if out.TaskID == "" {
			out.TaskID = claims.TaskID
		}
	}
	if out.TaskID == "" {
		out.TaskID = uuid.NewString()
	}
	if err := dispatch.CheckTask(out.TaskID, in.Instruction, in.ExpectedOutput); err != nil {
		return s.refuse(ctx, p, out, "invalid", agentgate.ErrorMessage(err))
	}
	task := dispatch.Task{Agent: a, Caller: p, TaskID: out.TaskID, Instruction: in.Instruction, ExpectedOutput: in.ExpectedOutput}
	digest, err := task.Digest()
	if err != nil {
		return s.fail(ctx, p, out, err)
	}
	if answering && (claims.Digest != digest || claims.TaskID != task.TaskID) {
		return s.refuse(ctx, p, out, "bad_state", agentgate.ErrorMessage(errBadState))
	}

	switch {
	case !s.requireConsent:
		return s.send(ctx, p, task) // the send's dedup answers a repeat
	case answering:
		return s.answerConsent(ctx, req, p, task, claims)
	}
	// Before asking: a repeat of a dispatched task gets its first result,
	// with no second consent and no second dispatch.
	sent, ok, err := s.svc.Dispatched(ctx, task)
	switch {
	case agentgate.ErrorCode(err) == agentgate.ECONFLICT:
		return s.refuse(ctx, p, out, "conflict", "taskId: "+agentgate.ErrorMessage(err)+"; use a new taskId for new work")
	case err != nil:
		return s.refuse(ctx, p, out, "store_error", agentgate.ErrorMessage(err))
	case ok:
		return s.dispatched(ctx, p, task, sent, "replayed")
	}
	return s.askConsent(ctx, req, p, task, digest)
}

// askConsent records a pending consent and asks the client's user for it.
func (s *Server) askConsent(ctx context.Context, req *mcp.CallToolRequest, p agentgate.Principal, task dispatch.Task, digest string) (*mcp.CallToolResult, DispatchOutput, error) {
	out := DispatchOutput{AgentID: task.Agent.Template.Name, TaskID: task.TaskID}
	if caps := req.ClientCapabilities(); caps == nil || caps.Elicitation == nil {
		return s.refuse(ctx, p, out, "no_elicitation",
			"this client cannot ask its user for consent (it declares no elicitation capability), and agentgate dispatches only with consent")
	}
	id, err := s.consents.create(ctx, consentRecord{Caller: p.Subject, Agent: task.Agent.Template.Name, TaskID: task.TaskID, Digest: digest})
	if err != nil {
		return s.refuse(ctx, p, out, "store_error", "the consent request could not be recorded: "+agentgate.ErrorMessage(err))
	}
	state, err := s.signer.sign(consentClaims{ID: id, Caller: stateCaller(p), Tool: dispatchTool, Digest: digest, TaskID: task.TaskID,
		Expires: s.now().Add(ConsentTTL).UnixMilli()})
	if err != nil {
		return s.fail(ctx, p, out, err)
	}
	s.audit(ctx, "consent_requested", p, task, "pending")
	return askInput(ctx, consentRequest(task), state)
}

// stateCaller is who a requestState is bound to: the subject and the kind
// of credential, so that a state asked through one of a user's credentials
// does not count through a connector key of theirs, or the other way round.
func stateCaller(p agentgate.Principal) string {
	return p.Scope + ":" + p.Agent + ":" + p.Subject
}

// consentRequest is the question the user sees: what, to whom, and a
// single yes/no field (a flat schema, as elicitation requires).
func consentRequest(task dispatch.Task) *mcp.ElicitParams {
	instruction := task.Instruction
	if len(instruction) > 500 {
		instruction = strings.ToValidUTF8(instruction[:500], "") + "…"
	}
	return &mcp.ElicitParams{
		Mode:    "form",
		Message: fmt.Sprintf("Send this task to the agent %q (%s)?\n\n%s", task.Agent.Template.Name, task.Agent.Template.Description, instruction),
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"approve": map[string]any{"type": "boolean", "title": "Send the task",
					"description": "Yes sends the task to the agent; no sends nothing."},
			},
			"required": []string{"approve"},
		},
	}
}

// answerConsent settles a consent with the user's answer, once: the first
// answer decides, and a replay of the same state gets the settled result.
func (s *Server) answerConsent(ctx context.Context, req *mcp.CallToolRequest, p agentgate.Principal, task dispatch.Task, claims consentClaims) (*mcp.CallToolResult, DispatchOutput, error) {
	out := DispatchOutput{AgentID: task.Agent.Template.Name, TaskID: task.TaskID}
	for {
		rec, version, err := s.consents.get(ctx, claims.ID)
		if err != nil {
			return s.refuse(ctx, p, out, "consent_unavailable", agentgate.ErrorMessage(err))
		}
		switch rec.State {
		case consentSettled:
			var settled DispatchOutput
			if err := json.Unmarshal(rec.Result, &settled); err != nil {
				return s.fail(ctx, p, out, err)
			}
			settled.Replayed = true
			s.audit(ctx, "consent_replayed", p, task, outcome(settled))
			return result(settled), settled, nil
		case consentAccepted:
			// Another request took the yes and is dispatching: the
			// taskId's dedup gives this one the same answer.
			return s.send(ctx, p, task)
		}
		reason, code := decide(req.Params.InputResponses[consentKey])
		if code != "accepted" {
			settled := out
			settled.Reason = reason
			if err := s.settle(ctx, claims.ID, version, rec, settled); errors.Is(err, store.ErrConflict) {
				continue // answered concurrently: read what was decided
			} else if err != nil {
				return s.refuse(ctx, p, out, "consent_unavailable", agentgate.ErrorMessage(err))
			}
			s.audit(ctx, "consent_refused", p, task, code)
			return result(settled), settled, nil
		}
		rec.State = consentAccepted
		if err := s.consents.transition(ctx, claims.ID, version, rec); errors.Is(err, store.ErrConflict) {
			continue
		} else if err != nil {
			return s.refuse(ctx, p, out, "consent_unavailable", agentgate.ErrorMessage(err))
		}
		s.audit(ctx, "consent_accepted", p, task, "accepted")
		res, settled, err := s.send(ctx, p, task)
		if err == nil {
			// A failed settle loses only the replay record: the taskId's
			// dedup still answers a repeat without a second dispatch.
			if err := s.settle(context.WithoutCancel(ctx), claims.ID, version+1, rec, settled); err != nil {
				slog.WarnContext(ctx, "mcp: settling a consent failed", "error", err.Error())
			}
		}
		return res, settled, err
	}
}

// decide reads the user's answer: accepted only for an explicit
// approve: true; every other answer is a refusal with its own reason.
func decide(answer mcp.InputResponse) (reason, code string) {
	r, ok := answer.(*mcp.ElicitResult)
	switch {
	case !ok || r == nil:
		return "the consent answer is missing or is not an elicitation result; nothing was dispatched", "malformed"
	case r.Action == "decline":
		return "the user declined; nothing was dispatched", "declined"
	case r.Action == "cancel":
		return "the user dismissed the consent request; nothing was dispatched", "canceled"
	case r.Action != "accept":
		return fmt.Sprintf("the consent answer's action %q is not accept, decline or cancel; nothing was dispatched", r.Action), "malformed"
	}
	switch approve, ok := r.Content["approve"].(bool); {
	case !ok:
		return "the consent answer has no yes/no approve field; nothing was dispatched", "malformed"
	case !approve:
		return "the user answered no; nothing was dispatched", "declined"
	}
	return "", "accepted"
}

// settle stores a consent's final result, for replays.
func (s *Server) settle(ctx context.Context, id string, version int64, rec consentRecord, out DispatchOutput) error {
	data, err := json.Marshal(out)
	if err != nil {
		return err
	}
	rec.State, rec.Result = consentSettled, data
	return s.consents.transition(ctx, id, version, rec)
}

// send dispatches the task (once per taskId).
func (s *Server) send(ctx context.Context, p agentgate.Principal, task dispatch.Task) (*mcp.CallToolResult, DispatchOutput, error) {
	sent, err := s.svc.DispatchTask(ctx, task)
	if err != nil {
		out := DispatchOutput{AgentID: task.Agent.Template.Name, TaskID: task.TaskID}
		return s.refuse(ctx, p, out, "dispatch_failed", agentgate.ErrorMessage(err))
	}
	outcomeName := "dispatched"
	if sent.Replayed {
		outcomeName = "replayed"
	}
	return s.dispatched(ctx, p, task, sent, outcomeName)
}

// dispatched is the result of a task the agent took.
func (s *Server) dispatched(ctx context.Context, p agentgate.Principal, task dispatch.Task, sent *dispatch.Sent, outcomeName string) (*mcp.CallToolResult, DispatchOutput, error) {
	out := DispatchOutput{Dispatched: true, AgentID: task.Agent.Template.Name, TaskID: task.TaskID, Replayed: sent.Replayed}
	switch a := sent.Answer.(type) {
	case *a2a.Task:
		out.Status = status(a.Status.State)
	default:
		out.Status = status(a2a.TaskStateCompleted)
	}
	s.audit(ctx, "dispatch", p, task, outcomeName)
	return result(out), out, nil
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

// fail answers a call that agentgate could not complete. A tool's error
// would reach the caller as its text (the SDK copies it into the result),
// so the cause goes to the log and the caller reads agentgate's words.
func (s *Server) fail(ctx context.Context, p agentgate.Principal, out DispatchOutput, err error) (*mcp.CallToolResult, DispatchOutput, error) {
	slog.ErrorContext(ctx, "mcp: dispatch_task failed", "task_id", out.TaskID, "error", err.Error())
	return s.refuse(ctx, p, out, "internal_error", "an internal error stopped this call; try again later")
}

// refuse answers a dispatch that did not happen, and audits why.
func (s *Server) refuse(ctx context.Context, p agentgate.Principal, out DispatchOutput, code, reason string) (*mcp.CallToolResult, DispatchOutput, error) {
	out.Dispatched, out.Reason = false, reason
	slog.InfoContext(ctx, "audit", "event", "dispatch_refused", "caller", p.Subject, "agent", out.AgentID,
		"task_id", out.TaskID, "outcome", code)
	return result(out), out, nil
}

// result is the text a model reads beside the structured output.
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

func outcome(out DispatchOutput) string {
	if out.Dispatched {
		return "dispatched"
	}
	return "refused"
}

// audit logs a consent or dispatch event: who, which agent, which task,
// what happened, and of the instruction only its length and digest.
func (s *Server) audit(ctx context.Context, event string, p agentgate.Principal, task dispatch.Task, outcome string) {
	sum := sha256.Sum256([]byte(task.Instruction))
	slog.InfoContext(ctx, "audit", "event", event, "caller", p.Subject, "agent", task.Agent.Template.Name,
		"task_id", task.TaskID, "outcome", outcome,
		"instruction_bytes", len(task.Instruction), "instruction_sha256", hex.EncodeToString(sum[:]))
}

// status names an A2A task state as the tools report it: "completed"
// rather than "TASK_STATE_COMPLETED".
func status(s a2a.TaskState) string { return dispatch.StatusName(s) }
