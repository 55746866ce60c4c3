package dispatch_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentgate/agentgate/pkg/agent"
	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/app/apptest"
	"github.com/agentgate/agentgate/pkg/dedup"
	"github.com/agentgate/agentgate/pkg/dispatch"
	"github.com/agentgate/agentgate/pkg/execution"
	"github.com/agentgate/agentgate/pkg/store/storetest"
)

// taskStack is a stack on a test clock, with alice's task taskID for its
// agent: "slow 20", which runs past the test, so it counts as running.
func taskStack(t *testing.T, backend, taskID string) (*apptest.Stack, *storetest.Clock, dispatch.Task) {
	t.Helper()
	clock := storetest.NewClock()
	s := apptest.NewOn(t, backend, nil, clock.Now)
	alice := agentgate.Principal{Subject: "alice", Scope: agentgate.ScopeUser}
	a, err := s.Deps.Dispatch.Usable(t.Context(), alice, s.AgentID)
	if err != nil {
		t.Fatal(err)
	}
	return s, clock, dispatch.Task{Agent: a, Caller: alice, TaskID: taskID, Instruction: "slow 20"}
}

// usableAs is an agent read that gives a.
func usableAs(a agent.Agent) func() (agent.Agent, error) {
	return func() (agent.Agent, error) { return a, nil }
}

// TestTaskRecord: a consented task is one record through its phases: not
// an execution while asked about, sent once on the first yes, replayed to
// every later answer and repeat, counted running once it starts, and its
// taskId refused for other work.
func TestTaskRecord(t *testing.T) {
	for _, backend := range apptest.Backends {
		t.Run(backend, func(t *testing.T) {
			s, _, task := taskStack(t, backend, "rec-1")
			svc, ctx := s.Deps.Dispatch, t.Context()

			ask, replay, err := svc.AskTask(ctx, task)
			if err != nil || replay != nil || ask == 0 {
				t.Fatalf("AskTask: %d %v %v", ask, replay, err)
			}
			if _, err := svc.Executions.Get(ctx, task.Ref()); agentgate.ErrorCode(err) != agentgate.ENOTFOUND {
				t.Errorf("a task asked about is an execution already: %v", err)
			}
			if page, _, err := svc.Executions.List(ctx, execution.Filter{Caller: "alice"}); err != nil || len(page) != 0 {
				t.Errorf("a task asked about is listed: %v %v", page, err)
			}
			if again, _, err := svc.AskTask(ctx, task); err != nil || again != ask {
				t.Errorf("asked again before an answer: %d %v, want the same question %d", again, err, ask)
			}

			first, err := svc.AnswerTask(ctx, task, ask, "", usableAs(task.Agent))
			if err != nil || first.Sent == nil || first.Replayed || s.Sample.Received() != 1 {
				t.Fatalf("the yes: %+v %v; agent received %d", first, err, s.Sample.Received())
			}
			e, err := svc.Executions.Get(ctx, task.Ref())
			if err != nil || e.Terminal() || e.Phase != "" || e.Caller != "alice" || e.Agent != s.AgentID {
				t.Errorf("the execution: %+v %v", e, err)
			}
			if n, err := svc.Executions.Running(ctx, s.AgentID); err != nil || n != 1 {
				t.Errorf("running %d %v, want 1", n, err)
			}

			again, err := svc.AnswerTask(ctx, task, ask, "the user declined", usableAs(task.Agent))
			if err != nil || again.Sent == nil || !again.Replayed || !again.Sent.Replayed {
				t.Errorf("a later answer: %+v %v, want the first one's outcome, replayed", again, err)
			}
			if _, replay, err := svc.AskTask(ctx, task); err != nil || replay == nil || !replay.Replayed {
				t.Errorf("a repeat: %v %v, want the first answer without a question", replay, err)
			}
			if sent, err := svc.DispatchTask(ctx, task); err != nil || !sent.Replayed {
				t.Errorf("a repeat without consent: %+v %v", sent, err)
			}
			if s.Sample.Received() != 1 {
				t.Errorf("the agent received %d messages, want 1", s.Sample.Received())
			}
			if n, _ := svc.Executions.Running(ctx, s.AgentID); n != 1 {
				t.Errorf("running %d after replays, want 1", n)
			}

			other := task
			other.Instruction = "slow 21"
			if _, _, err := svc.AskTask(ctx, other); agentgate.ErrorCode(err) != agentgate.ECONFLICT {
				t.Errorf("the taskId for other work: %v, want ECONFLICT", err)
			}
		})
	}
}

// TestTaskRefusal: the first answer decides, a no too; the tool called
// again asks anew, and an answer to the old question sends nothing.
func TestTaskRefusal(t *testing.T) {
	s, _, task := taskStack(t, "embedded", "no-1")
	svc, ctx := s.Deps.Dispatch, t.Context()
	ask, _, err := svc.AskTask(ctx, task)
	if err != nil {
		t.Fatal(err)
	}
	no, err := svc.AnswerTask(ctx, task, ask, "the user declined", usableAs(task.Agent))
	if err != nil || no.Sent != nil || no.Refused != "the user declined" || no.Replayed {
		t.Fatalf("the no: %+v %v", no, err)
	}
	late, err := svc.AnswerTask(ctx, task, ask, "", usableAs(task.Agent))
	if err != nil || late.Sent != nil || late.Refused != "the user declined" || !late.Replayed {
		t.Errorf("a yes after the no: %+v %v, want the no, replayed", late, err)
	}

	anew, _, err := svc.AskTask(ctx, task)
	if err != nil || anew == ask {
		t.Fatalf("asked anew: %d %v, want a new question (the old was %d)", anew, err, ask)
	}
	old, err := svc.AnswerTask(ctx, task, ask, "", usableAs(task.Agent))
	if err != nil || old.Sent != nil || !old.Replayed {
		t.Errorf("a yes to the old question: %+v %v, want a refusal", old, err)
	}
	if s.Sample.Received() != 0 {
		t.Fatalf("the agent received %d messages before any yes counted", s.Sample.Received())
	}
	yes, err := svc.AnswerTask(ctx, task, anew, "", usableAs(task.Agent))
	if err != nil || yes.Sent == nil || s.Sample.Received() != 1 {
		t.Errorf("the yes to the new question: %+v %v; agent received %d", yes, err, s.Sample.Received())
	}
}

// TestTaskClaimGivenBack: a yes whose agent read fails takes nothing: the
// same answer, tried again, sends.
func TestTaskClaimGivenBack(t *testing.T) {
	s, _, task := taskStack(t, "embedded", "back-1")
	svc, ctx := s.Deps.Dispatch, t.Context()
	ask, _, err := svc.AskTask(ctx, task)
	if err != nil {
		t.Fatal(err)
	}
	gone := func() (agent.Agent, error) { return agent.Agent{}, agentgate.Errorf(agentgate.ENOTFOUND, "no agent") }
	if _, err := svc.AnswerTask(ctx, task, ask, "", gone); agentgate.ErrorCode(err) != agentgate.ENOTFOUND || s.Sample.Received() != 0 {
		t.Fatalf("a yes to a gone agent: %v; agent received %d", err, s.Sample.Received())
	}
	if o, err := svc.AnswerTask(ctx, task, ask, "", usableAs(task.Agent)); err != nil || o.Sent == nil || o.Replayed || s.Sample.Received() != 1 {
		t.Errorf("the same yes again: %+v %v; agent received %d", o, err, s.Sample.Received())
	}
}

// TestTaskLease: a claim whose holder died holds the taskId off until its
// lease runs out, then the next request takes it over and sends.
func TestTaskLease(t *testing.T) {
	s, clock, task := taskStack(t, "embedded", "lease-1")
	svc, ctx := s.Deps.Dispatch, t.Context()
	digest, err := task.Digest()
	if err != nil {
		t.Fatal(err)
	}
	// A sender that claimed the task and died.
	dead := execution.Execution{Ref: task.Ref(), Agent: s.AgentID, Caller: "alice",
		Pending: execution.Pending{Phase: execution.PhaseSending, Digest: digest, LeaseUntil: clock.Now().Add(time.Minute)}}
	if _, err := svc.Executions.Begin(ctx, dead, time.Hour); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := svc.DispatchTask(short, task); agentgate.ErrorCode(err) != agentgate.ETIMEOUT || s.Sample.Received() != 0 {
		t.Fatalf("during the lease: %v; agent received %d, want ETIMEOUT and nothing sent", err, s.Sample.Received())
	}
	clock.Advance(time.Minute)
	if sent, err := svc.DispatchTask(ctx, task); err != nil || sent.Replayed || s.Sample.Received() != 1 {
		t.Errorf("after the lease: %+v %v; agent received %d", sent, err, s.Sample.Received())
	}
}

// TestTaskRecordedBefore: a task recorded before tasks kept their digest
// and answer (its once-only claim in a dedup entry) is still its taskId's:
// a repeat is answered from the execution, other work is refused.
func TestTaskRecordedBefore(t *testing.T) {
	s, _, task := taskStack(t, "embedded", "before-1")
	svc, ctx := s.Deps.Dispatch, t.Context()
	sentDigest, err := dedup.Digest(a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(task.Instruction)).Parts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Executions.Create(ctx, execution.Execution{Ref: task.Ref(), Agent: s.AgentID, Caller: "alice",
		RemoteTaskID: "remote-1", State: a2a.TaskStateWorking, InputDigest: sentDigest}); err != nil {
		t.Fatal(err)
	}
	_, replay, err := svc.AskTask(ctx, task)
	if err != nil || replay == nil || !replay.Replayed {
		t.Fatalf("a repeat: %+v %v, want the recorded task", replay, err)
	}
	if got, ok := replay.Answer.(*a2a.Task); !ok || got.ID != "remote-1" || got.Status.State != a2a.TaskStateWorking {
		t.Errorf("the replayed answer %#v, want the recorded task", replay.Answer)
	}
	other := task
	other.Instruction = "slow 21"
	if _, err := svc.DispatchTask(ctx, other); agentgate.ErrorCode(err) != agentgate.ECONFLICT {
		t.Errorf("the taskId for other work: %v, want ECONFLICT", err)
	}
	if s.Sample.Received() != 0 {
		t.Errorf("the agent received %d messages, want none", s.Sample.Received())
	}
}

// TestTaskOnceUnderConcurrency: 32 concurrent sends of one task, without
// consent and as answers to one question, reach the agent once, and every
// caller gets the one answer.
func TestTaskOnceUnderConcurrency(t *testing.T) {
	const n = 32
	for _, how := range []string{"without consent", "answers"} {
		t.Run(how, func(t *testing.T) {
			s, _, task := taskStack(t, "dynamodb", "many-1")
			svc, ctx := s.Deps.Dispatch, t.Context()
			var ask int64
			if how == "answers" {
				var err error
				if ask, _, err = svc.AskTask(ctx, task); err != nil {
					t.Fatal(err)
				}
			}
			ids := make([]a2a.TaskID, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					var sent *dispatch.Sent
					var err error
					if how == "answers" {
						var o dispatch.Outcome
						o, err = svc.AnswerTask(ctx, task, ask, "", usableAs(task.Agent))
						sent = o.Sent
					} else {
						sent, err = svc.DispatchTask(ctx, task)
					}
					if err != nil || sent == nil {
						t.Errorf("call %d: %v %v", i, sent, err)
						return
					}
					if got, ok := sent.Answer.(*a2a.Task); ok {
						ids[i] = got.ID
					}
				})
			}
			wg.Wait()
			if got := s.Sample.Received(); got != 1 {
				t.Fatalf("the agent received %d messages under %d concurrent calls, want 1", got, n)
			}
			for i, id := range ids {
				if id == "" || id != ids[0] {
					t.Errorf("call %d got task %q, call 0 %q", i, id, ids[0])
				}
			}
		})
	}
}

// TestTaskWithdraw: a question withdrawn before anyone moved its record
// leaves the taskId free, for other work too; one moved since (answered)
// is left as it is.
func TestTaskWithdraw(t *testing.T) {
	for _, backend := range apptest.Backends {
		t.Run(backend, func(t *testing.T) {
			s, _, task := taskStack(t, backend, "withdrawn-1")
			svc, ctx := s.Deps.Dispatch, t.Context()
			ask, _, err := svc.AskTask(ctx, task)
			if err != nil {
				t.Fatal(err)
			}
			if err := svc.Withdraw(ctx, task, ask); err != nil {
				t.Fatalf("withdraw: %v", err)
			}
			other := task
			other.Instruction = "echo other work"
			if _, _, err := svc.AskTask(ctx, other); err != nil {
				t.Fatalf("the taskId for other work after the withdrawal: %v", err)
			}

			task.TaskID = "withdrawn-2"
			ask, _, err = svc.AskTask(ctx, task)
			if err != nil {
				t.Fatal(err)
			}
			if no, err := svc.AnswerTask(ctx, task, ask, "the user declined", usableAs(task.Agent)); err != nil || no.Refused == "" {
				t.Fatalf("the no: %+v %v", no, err)
			}
			if err := svc.Withdraw(ctx, task, ask); err != nil {
				t.Fatalf("withdrawing an answered question: %v", err)
			}
			late, err := svc.AnswerTask(ctx, task, ask, "", usableAs(task.Agent))
			if err != nil || late.Refused != "the user declined" || !late.Replayed {
				t.Errorf("after withdrawing an answered question: %+v %v, want the no, replayed", late, err)
			}
		})
	}
}
