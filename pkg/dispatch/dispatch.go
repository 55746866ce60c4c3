// Package dispatch hands work to agents: it is the one path from agentgate's
// doors (the A2A front door, MCP dispatch_task) to an agent's A2A endpoint.
// Every send is deduplicated on the caller's id and leaves an execution
// record (a dispatch_task's is one record from its consent on,
// taskrecord.go); every task lookup checks that the caller may see the task and
// refreshes the record from the agent.
package dispatch

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentgate/agentgate/pkg/a2acall"
	"github.com/agentgate/agentgate/pkg/agent"
	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/dedup"
	"github.com/agentgate/agentgate/pkg/execution"
)

// Service sends messages to registered agents and follows their tasks.
type Service struct {
	Agents     *agent.Registry
	Client     *a2acall.Client
	Executions *execution.Store
	Dedup      *dedup.Deduper
	Now        func() time.Time // nil: time.Now
}

func (s *Service) now() time.Time {
	if s.Now == nil {
		return time.Now()
	}
	return s.Now()
}

// Agent returns the registered agent called name (ENOTFOUND if none),
// whoever asks; what a caller may use is Usable's to say.
func (s *Service) Agent(ctx context.Context, name string) (agent.Agent, error) {
	return s.Agents.Get(ctx, name)
}

// Send is one message to hand to an agent.
type Send struct {
	Agent   agent.Agent
	Caller  agentgate.Principal
	Message *a2a.Message
	// Dedup names the send: a second Send with the same key gets the
	// first one's answer and reaches the agent no more. The zero Key: the
	// caller holds the once-only claim itself (Chat.Claimed).
	Dedup dedup.Key
	// Digest identifies the caller's request, so that a reused id with
	// other content is refused rather than answered with a stale result.
	Digest string
	// Ref, if set, names the execution record; otherwise it is the
	// agent's task (OriginA2A, scoped to the agent).
	Ref execution.Ref
}

// Sent is the answer to a Send.
type Sent struct {
	Answer   a2a.SendMessageResult // the agent's *a2a.Task or *a2a.Message
	Ref      execution.Ref         // the execution record it left
	Replayed bool                  // the answer is a stored one: nothing was sent this time
}

// sentRecord is what dedup stores for a Send.
type sentRecord struct {
	Answer a2a.StreamResponse `json:"answer"`
	Ref    execution.Ref      `json:"ref"`
}

// Send hands in.Message to the agent without waiting for the work (the
// agent answers once it has taken it on), once per in.Dedup, and records
// the execution. The message must have passed CheckMessage.
func (s *Service) Send(ctx context.Context, in Send) (*Sent, error) {
	if in.Dedup == (dedup.Key{}) {
		res, ref, err := s.sendOnce(ctx, in)
		if err != nil {
			return nil, err
		}
		return &Sent{Answer: res.Answer, Ref: ref}, nil
	}
	raw, replayed, err := s.Dedup.Do(ctx, in.Dedup, in.Digest, func(ctx context.Context) (json.RawMessage, error) {
		res, ref, err := s.sendOnce(ctx, in)
		if err != nil {
			return nil, err
		}
		return json.Marshal(sentRecord{Answer: a2a.StreamResponse{Event: res.Answer.(a2a.Event)}, Ref: ref})
	})
	if err != nil {
		return nil, err
	}
	sent, err := decodeSent(raw)
	if err != nil {
		return nil, err
	}
	sent.Replayed = replayed
	return sent, nil
}

// sendOnce sends in.Message and records its execution.
func (s *Service) sendOnce(ctx context.Context, in Send) (*a2acall.Result, execution.Ref, error) {
	res, err := s.Client.Send(ctx, in.Agent.Template.Endpoint, in.Message)
	if err != nil {
		return nil, execution.Ref{}, err
	}
	ref := in.Ref
	if ref.ID == "" {
		ref = a2aRef(in.Agent.Template.Name, res)
	}
	if err := s.record(context.WithoutCancel(ctx), in, ref, res); err != nil {
		return nil, execution.Ref{}, err
	}
	return res, ref, nil
}

// a2aRef names the execution of an answer that came through the front
// door: the agent's task, or, for a message answer without a task, the
// message.
func a2aRef(agentName string, res *a2acall.Result) execution.Ref {
	id := string(res.TaskID)
	if id == "" {
		if m, ok := res.Answer.(*a2a.Message); ok {
			id = "message:" + m.ID
		}
	}
	return execution.Ref{Origin: execution.OriginA2A, Scope: agentName, ID: id}
}

// record creates the execution of a send, or, for a message that continues
// a task already recorded, updates it.
func (s *Service) record(ctx context.Context, in Send, ref execution.Ref, res *a2acall.Result) error {
	data, err := json.Marshal(in.Message.Parts)
	if err != nil {
		return err
	}
	digest, err := dedup.Digest(in.Message.Parts)
	if err != nil {
		return err
	}
	e := execution.Execution{
		Ref: ref, Agent: in.Agent.Template.Name, Caller: in.Caller.Subject,
		InputBytes: len(data), InputDigest: digest,
	}
	apply(&e, res)
	_, err = s.Executions.Create(ctx, e)
	if agentgate.ErrorCode(err) == agentgate.ECONFLICT {
		_, err = s.Executions.Update(ctx, ref, func(cur *execution.Execution) bool {
			apply(cur, res)
			return true
		})
	}
	return err
}

// Settle follows the task a Send answered with, asking agent a for it,
// until the task settles (a final state, or one that waits on the caller:
// input or authentication required) or ctx is done, records what it found
// and returns the answer as it then stands. A message answer, or a task
// settled already, is returned as it is. An agent that cannot be reached
// while Settle waits is not an error: the caller gets the task as last
// seen, and follows it with GetTask.
func (s *Service) Settle(ctx context.Context, a agent.Agent, sent *Sent) a2a.SendMessageResult {
	t, ok := sent.Answer.(*a2a.Task)
	if !ok || settled(t.Status.State) {
		return sent.Answer
	}
	var last *a2acall.Result
	for pause := settlePoll; last == nil || !settled(last.State); pause = min(2*pause, settlePollMax) {
		if !agentgate.Sleep(ctx, pause) {
			break
		}
		res, err := s.Client.GetTask(ctx, a.Template.Endpoint, t.ID)
		if err != nil {
			break
		}
		last = res
	}
	if last == nil {
		return sent.Answer
	}
	if _, err := s.Executions.Update(context.WithoutCancel(ctx), sent.Ref, func(cur *execution.Execution) bool {
		apply(cur, last)
		return true
	}); err != nil {
		// The answer stands; the record catches up on the next GetTask.
		slog.WarnContext(ctx, "dispatch: recording a settled task failed", "task", t.ID, "error", err)
	}
	return last.Answer
}

// How often Settle asks: soon at first, for the quick tasks, then less.
const (
	settlePoll    = 50 * time.Millisecond
	settlePollMax = time.Second
)

// settled reports whether a task in state st is done changing by itself.
func settled(st a2a.TaskState) bool {
	return st.Terminal() || st == a2a.TaskStateInputRequired || st == a2a.TaskStateAuthRequired
}

// apply copies what an agent's answer says about a task into its record.
func apply(e *execution.Execution, res *a2acall.Result) {
	e.RemoteTaskID, e.ContextID, e.State = string(res.TaskID), res.ContextID, res.State
	e.Text, e.Error = res.Text, ""
	if res.State.Terminal() {
		// When the task ended is the agent's to say; the store falls back
		// to the time it learns of the end (see execution.Execution).
		e.FinishedAt = res.StatusTime
	}
	for _, a := range res.Artifacts {
		if e.Text != "" {
			e.Text += "\n"
		}
		e.Text += a
	}
}

// Refresh asks agent a, which the caller has loaded, for the task of the
// execution at ref, which p must be allowed to see, and records what it
// says. If the agent cannot be reached, Refresh returns the record as it
// was, with the error.
func (s *Service) Refresh(ctx context.Context, p agentgate.Principal, a agent.Agent, ref execution.Ref) (execution.Execution, *a2acall.Result, error) {
	return s.follow(ctx, p, a, ref, (*a2acall.Client).GetTask)
}

// Cancel asks agent a to cancel the task of the execution at ref and
// records the answer.
func (s *Service) Cancel(ctx context.Context, p agentgate.Principal, a agent.Agent, ref execution.Ref) (execution.Execution, *a2acall.Result, error) {
	return s.follow(ctx, p, a, ref, (*a2acall.Client).Cancel)
}

// follow reads the execution once (the update starts from that read) and
// checks it against the agent the caller loaded, so neither is read twice.
func (s *Service) follow(ctx context.Context, p agentgate.Principal, a agent.Agent, ref execution.Ref,
	call func(*a2acall.Client, context.Context, string, a2a.TaskID) (*a2acall.Result, error)) (execution.Execution, *a2acall.Result, error) {
	e, err := s.Executions.Get(ctx, ref)
	if err != nil {
		return execution.Execution{}, nil, err
	}
	if e.Agent != a.Template.Name || !mayFollow(p, e, a.Owner) {
		return execution.Execution{}, nil, agentgate.Errorf(agentgate.ENOTFOUND, "no execution %q", ref.ID)
	}
	return s.ask(ctx, a, e, call)
}

// RefreshRecord is Refresh for an execution the caller has read through
// Execution already (and so may see).
func (s *Service) RefreshRecord(ctx context.Context, e execution.Execution) (execution.Execution, *a2acall.Result, error) {
	a, err := s.Agents.Get(ctx, e.Agent)
	if err != nil {
		return e, nil, err
	}
	return s.ask(ctx, a, e, (*a2acall.Client).GetTask)
}

// ask makes call to agent a about e's task and records the answer.
func (s *Service) ask(ctx context.Context, a agent.Agent, e execution.Execution,
	call func(*a2acall.Client, context.Context, string, a2a.TaskID) (*a2acall.Result, error)) (execution.Execution, *a2acall.Result, error) {
	if e.RemoteTaskID == "" {
		return e, nil, agentgate.Errorf(agentgate.ENOTFOUND, "the agent answered %q with a message, not a task", e.ID)
	}
	res, err := call(s.Client, ctx, a.Template.Endpoint, a2a.TaskID(e.RemoteTaskID))
	if err != nil {
		return e, nil, err
	}
	e, err = s.Executions.UpdateFrom(context.WithoutCancel(ctx), e, func(cur *execution.Execution) bool {
		apply(cur, res)
		return true
	})
	return e, res, err
}

// Status is what agentgate knows of an agent's health.
type Status struct {
	Agent      string    `json:"agent"`
	Registered bool      `json:"registered"`
	Reachable  bool      `json:"reachable"`
	Reason     string    `json:"reason,omitempty"` // why it is not reachable
	Running    int64     `json:"running"`          // tasks not seen to end
	CheckedAt  time.Time `json:"checkedAt"`
}

// Status checks the agent called name: registered in the table, answering
// at its endpoint (within a2acall.PingTimeout), and how many of its tasks
// are running. An agent that is down is a Status, not an error: only an
// unknown agent (ENOTFOUND) or a failing table is.
func (s *Service) Status(ctx context.Context, name string) (Status, error) {
	a, err := s.Agents.Get(ctx, name)
	if err != nil {
		return Status{}, err
	}
	return s.StatusOf(ctx, a)
}

// StatusOf is Status for an agent the caller has loaded already.
func (s *Service) StatusOf(ctx context.Context, a agent.Agent) (Status, error) {
	name := a.Template.Name
	st := Status{Agent: name, Registered: true}
	running, err := s.Executions.Running(ctx, name)
	if err != nil {
		return Status{}, err
	}
	st.Running = running
	if err := s.Client.Ping(ctx, a.Template.Endpoint); err != nil {
		st.Reason = agentgate.ErrorMessage(err)
	} else {
		st.Reachable = true
	}
	st.CheckedAt = s.now().UTC()
	return st, nil
}
