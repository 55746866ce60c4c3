package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentgate/agentgate/pkg/agent"
	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/dedup"
	"github.com/agentgate/agentgate/pkg/execution"
	"github.com/agentgate/agentgate/pkg/store"
)

// A task (dispatch_task) is one record, its execution's, from the consent
// question to its end: its phases (execution/dispatch.go) are the consent,
// the once-only claim on the send and the execution, moved by
// compare-and-set. A consented dispatch costs the record's creation when
// the user is asked (AskTask), and when they answer yes (AnswerTask) the
// claim, then the start written together with the running count: no read,
// when nobody moved the record in between, for the consent state carries
// the version the answer is for.

// taskTTL is how long a task not sent yet is kept: a taskId's idempotency
// has the same span.
const taskTTL = dedup.DefaultTTL

// Polling of a send under way elsewhere, as dedup polls: FirstPoll, then
// each wait doubled (Pause), up to maxPoll.
const (
	FirstPoll = 20 * time.Millisecond
	maxPoll   = 500 * time.Millisecond
)

// Lease is how long a send's claim holds off others: longer than a request
// may run, so that a live sender is never overtaken.
const Lease = dedup.DefaultLease

// Outcome is what became of a task: the agent's answer, or the user's no.
type Outcome struct {
	Sent    *Sent  // the agent has the task: its answer (Replayed if not sent this time)
	Refused string // or the user said no, and why; nothing was sent
	// Replayed: the outcome was decided before this call.
	Replayed bool
}

// superseded is why an answer to a question that is no longer the task's
// is refused: it was answered, and the tool called (the user asked) anew
// since; the newest question is the one to answer.
const superseded = "this consent request was answered already, and the task asked about anew since; nothing was dispatched by this answer"

// pending is t's record as created, in phase.
func (t Task) pending(phase string) (execution.Execution, error) {
	digest, err := t.Digest()
	if err != nil {
		return execution.Execution{}, err
	}
	input := t.message().Parts
	data, err := json.Marshal(input)
	if err != nil {
		return execution.Execution{}, err
	}
	inputDigest, err := dedup.Digest(input)
	if err != nil {
		return execution.Execution{}, err
	}
	return execution.Execution{
		Ref: t.Ref(), Agent: t.Agent.Template.Name, Caller: t.Caller.Subject,
		InputBytes: len(data), InputDigest: inputDigest,
		Pending: execution.Pending{Phase: phase, Digest: digest},
	}, nil
}

// AskTask records that the user is asked about t and returns the question
// (ask) their answer is for, to pass to AnswerTask. A task the agent has
// already is not asked about again: its first answer is returned
// (Replayed). A taskId used for other work is ECONFLICT.
func (s *Service) AskTask(ctx context.Context, t Task) (ask int64, replay *Sent, err error) {
	rec, err := t.pending(execution.PhaseAwaiting)
	if err != nil {
		return 0, nil, err
	}
	rec.Ask = 1 // the version Create gives
	created, err := s.Executions.Begin(ctx, rec, taskTTL)
	if err == nil {
		return created.Ask, nil, nil
	} else if agentgate.ErrorCode(err) != agentgate.ECONFLICT {
		return 0, nil, err
	}
	for wait := FirstPoll; ; {
		cur, err := s.current(ctx, t, rec)
		if errors.Is(err, errGone) {
			return s.AskTask(ctx, t)
		} else if err != nil {
			return 0, nil, err
		}
		switch {
		case cur.Phase == "":
			sent, err := sentOf(cur)
			return 0, sent, err
		case cur.Phase == execution.PhaseAwaiting && cur.Ask != 0:
			return cur.Ask, nil, nil
		case cur.Phase == execution.PhaseSending && s.now().Before(cur.LeaseUntil):
			if wait, err = pause(ctx, t, wait); err != nil {
				return 0, nil, err
			}
			continue
		}
		// Refused, or a sender that died: ask anew.
		cur.Phase, cur.Ask, cur.Reason = execution.PhaseAwaiting, cur.Version()+1, ""
		asked, err := s.Executions.Move(ctx, cur, taskTTL)
		if err == nil {
			return asked.Ask, nil, nil
		} else if !errors.Is(err, store.ErrConflict) && agentgate.ErrorCode(err) != agentgate.ENOTFOUND {
			return 0, nil, err
		}
	}
}

// Withdraw takes back question ask about t, which AskTask recorded for a
// call that then did not ask it (the agent turned out not to be usable, a
// check made while the question was recorded): if nobody has moved the
// record since, it goes, so that the taskId is as free as before the call.
// A record moved since is left to whoever moved it.
func (s *Service) Withdraw(ctx context.Context, t Task, ask int64) error {
	rec, err := t.pending(execution.PhaseAwaiting)
	if err != nil {
		return err
	}
	rec.Ask = ask
	err = s.Executions.Withdraw(ctx, rec.AtVersion(ask))
	if errors.Is(err, store.ErrConflict) || agentgate.ErrorCode(err) == agentgate.ENOTFOUND {
		return nil
	}
	return err
}

// AnswerTask settles question ask (from AskTask) about t with the user's
// answer, refusal ("" is yes): the first answer decides, once. Yes claims
// the send and sends; a later answer, or a repeat, gets the outcome
// decided (Replayed), after waiting for a send under way elsewhere.
//
// t.Agent need only be named: usable (UsableSoon, started before) gives
// the agent once the claim is taken, so that its read overlaps the claim's
// rather than adding a round trip. A yes to an agent the caller may not
// use (or that is gone) gives the claim back and is usable's error.
func (s *Service) AnswerTask(ctx context.Context, t Task, ask int64, refusal string, usable func() (agent.Agent, error)) (Outcome, error) {
	rec, err := t.pending(execution.PhaseAwaiting)
	if err != nil {
		return Outcome{}, err
	}
	rec.Ask = ask
	// Optimistically, the record as asked: the first move needs no read.
	return s.decide(ctx, t, rec.AtVersion(ask), ask, refusal, usable)
}

// DispatchTask sends t, once per caller and taskId, without asking anyone
// (consent off): a repeat with the same content gets the first answer
// (Replayed), with other content ECONFLICT.
func (s *Service) DispatchTask(ctx context.Context, t Task) (*Sent, error) {
	rec, err := t.pending(execution.PhaseSending)
	if err != nil {
		return nil, err
	}
	rec.LeaseUntil = s.now().Add(Lease)
	claimed, err := s.Executions.Begin(ctx, rec, taskTTL)
	var out Outcome
	switch {
	case err == nil:
		out, err = s.send(ctx, t, claimed)
	case agentgate.ErrorCode(err) == agentgate.ECONFLICT:
		out, err = s.decide(ctx, t, execution.Execution{}, 0, "", nil)
	}
	if err != nil {
		return nil, err
	}
	if out.Sent == nil {
		return nil, agentgate.Errorf(agentgate.ECONFLICT, "taskId %q was refused by its user; use a new taskId", t.TaskID)
	}
	return out.Sent, nil
}

// errGone: the record expired (or was never made) while it was decided on.
var errGone = errors.New("dispatch: the task's record is gone")

// current reads t's record: errGone if there is none, ECONFLICT if it is
// for other work than want, t's record as it would be made.
func (s *Service) current(ctx context.Context, t Task, want execution.Execution) (execution.Execution, error) {
	cur, err := s.Executions.Peek(ctx, t.Ref())
	switch {
	case agentgate.ErrorCode(err) == agentgate.ENOTFOUND:
		return execution.Execution{}, errGone
	case err != nil:
		return execution.Execution{}, err
	case !sameWork(cur, want):
		return execution.Execution{}, agentgate.Errorf(agentgate.ECONFLICT, "taskId %q was already used for a different request", t.TaskID)
	}
	return cur, nil
}

// sameWork reports whether the record cur is for the work of want. An
// execution recorded before tasks kept their digest (under a dedup entry
// of its own) is told by its agent and the digest of what was sent.
func sameWork(cur, want execution.Execution) bool {
	if cur.Digest == "" && cur.Phase == "" {
		return cur.Agent == want.Agent && cur.InputDigest == want.InputDigest
	}
	return cur.Digest == want.Digest
}

// decide moves t's record, cur as last seen (version 0: not read yet), by
// the answer refusal to question ask (0: no question, consent off), and
// sends if that claimed the send, to the agent usable gives (nil: t.Agent).
func (s *Service) decide(ctx context.Context, t Task, cur execution.Execution, ask int64, refusal string, usable func() (agent.Agent, error)) (Outcome, error) {
	want, err := t.pending(execution.PhaseAwaiting)
	if err != nil {
		return Outcome{}, err
	}
	for wait := FirstPoll; ; {
		if cur.Version() == 0 {
			if cur, err = s.current(ctx, t, want); errors.Is(err, errGone) {
				return Outcome{}, agentgate.Errorf(agentgate.ENOTFOUND, "the consent request is unknown or has expired; call the tool again to be asked anew")
			} else if err != nil {
				return Outcome{}, err
			}
		}
		switch {
		case cur.Phase == "":
			sent, err := sentOf(cur)
			return Outcome{Sent: sent, Replayed: true}, err
		case cur.Phase == execution.PhaseSending && s.now().Before(cur.LeaseUntil):
			if wait, err = pause(ctx, t, wait); err != nil {
				return Outcome{}, err
			}
			cur = execution.Execution{}
			continue
		case ask != 0 && cur.Ask != ask:
			return Outcome{Refused: superseded, Replayed: true}, nil
		case ask != 0 && cur.Phase == execution.PhaseRefused:
			return Outcome{Refused: cur.Reason, Replayed: true}, nil
		}
		// This call decides: the question is open, or its sender died.
		next := cur
		if refusal != "" {
			next.Phase, next.Reason = execution.PhaseRefused, refusal
		} else {
			next.Phase, next.LeaseUntil = execution.PhaseSending, s.now().Add(Lease)
		}
		moved, err := s.Executions.Move(ctx, next, taskTTL)
		switch {
		case errors.Is(err, store.ErrConflict) || agentgate.ErrorCode(err) == agentgate.ENOTFOUND:
			cur = execution.Execution{} // moved meanwhile, or expired: look
			continue
		case err != nil:
			return Outcome{}, err
		case refusal != "":
			return Outcome{Refused: refusal}, nil
		}
		if usable != nil {
			if t.Agent, err = usable(); err != nil {
				return Outcome{}, errors.Join(err, s.release(ctx, moved))
			}
		}
		return s.send(ctx, t, moved)
	}
}

// send sends t under the claim held as claimed and starts its execution.
// A failed send gives the claim back, to the same question, so that the
// same answer may try again; a failed start loses only the replay (the
// claim's lease runs out and a repeat sends again), and is logged.
func (s *Service) send(ctx context.Context, t Task, claimed execution.Execution) (Outcome, error) {
	res, err := s.Client.Send(ctx, t.Agent.Template.Endpoint, t.message())
	keep := context.WithoutCancel(ctx)
	if err != nil {
		return Outcome{}, errors.Join(err, s.release(keep, claimed))
	}
	answer, err := json.Marshal(a2a.StreamResponse{Event: res.Answer.(a2a.Event)})
	if err != nil {
		return Outcome{}, err
	}
	started := claimed
	apply(&started, res)
	started.Answer = answer
	if _, err := s.Executions.Start(keep, started); err != nil {
		slog.WarnContext(ctx, "dispatch: starting a sent task's execution failed; a repeat after the lease may send again",
			"task_id", t.TaskID, "error", err.Error())
	}
	return Outcome{Sent: &Sent{Answer: res.Answer, Ref: t.Ref()}}, nil
}

// release gives the claim held as claimed back to the question it was
// taken under (consent off: none, Ask 0, which a repeat claims again and
// AskTask asks anew), so that the same answer may try again.
func (s *Service) release(ctx context.Context, claimed execution.Execution) error {
	back := claimed
	back.Phase, back.LeaseUntil = execution.PhaseAwaiting, time.Time{}
	_, err := s.Executions.Move(context.WithoutCancel(ctx), back, taskTTL)
	return err
}

// sentOf is the replay of a task its agent has. An execution recorded
// before tasks kept their agent's answer is replayed as the task it
// records.
func sentOf(e execution.Execution) (*Sent, error) {
	if len(e.Answer) == 0 {
		task := &a2a.Task{ID: a2a.TaskID(e.RemoteTaskID), ContextID: e.ContextID, Status: a2a.TaskStatus{State: e.State}}
		return &Sent{Answer: task, Ref: e.Ref, Replayed: true}, nil
	}
	var answer a2a.StreamResponse
	if err := json.Unmarshal(e.Answer, &answer); err != nil {
		return nil, err
	}
	result, ok := answer.Event.(a2a.SendMessageResult)
	if !ok {
		return nil, agentgate.Errorf(agentgate.EINTERNAL, "stored answer is a %T", answer.Event)
	}
	return &Sent{Answer: result, Ref: e.Ref, Replayed: true}, nil
}

// pause waits before the next look at a send of t under way elsewhere
// (Pause); ETIMEOUT when ctx ends first.
func pause(ctx context.Context, t Task, wait time.Duration) (time.Duration, error) {
	next, ok := Pause(ctx, wait)
	if !ok {
		return 0, agentgate.Wrap(agentgate.ETIMEOUT, ctx.Err(), "taskId "+t.TaskID+" is being dispatched by another request; retry later")
	}
	return next, nil
}

// Pause waits wait before the next look at a send under way elsewhere, and
// returns the wait after it; false when ctx ends first.
func Pause(ctx context.Context, wait time.Duration) (time.Duration, bool) {
	if !agentgate.Sleep(ctx, wait) {
		return 0, false
	}
	return min(2*wait, maxPoll), true
}
