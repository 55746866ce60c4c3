package dispatch_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/app/apptest"
	"github.com/agentgate/agentgate/pkg/dispatch"
	"github.com/agentgate/agentgate/pkg/execution"
)

func TestChat(t *testing.T) {
	s := apptest.New(t, "embedded", nil)
	svc := s.Deps.Dispatch
	a, err := svc.Agent(t.Context(), s.AgentID)
	if err != nil {
		t.Fatal(err)
	}
	alice := agentgate.Principal{Subject: "alice", Scope: agentgate.ScopeUser}

	r, err := svc.Chat(t.Context(), dispatch.Chat{Agent: a, Caller: alice, Message: "reverse stressed"})
	if err != nil || r.Reply != "desserts" || r.Status != "completed" || r.TaskID == "" || r.ContextID == "" {
		t.Fatalf("chat: %+v, %v", r, err)
	}
	// The turn left its record, as every send does.
	e, err := svc.Executions.Get(t.Context(), execution.Ref{Origin: execution.OriginA2A, Scope: a.Template.Name, ID: r.TaskID})
	if err != nil || e.Caller != "alice" || e.Text != "desserts" {
		t.Errorf("record: %+v, %v", e, err)
	}
	// A next turn in the same conversation.
	if r2, err := svc.Chat(t.Context(), dispatch.Chat{Agent: a, Caller: alice, Message: "echo again", ContextID: r.ContextID}); err != nil || r2.ContextID != r.ContextID || r2.Reply != "again" {
		t.Errorf("second turn: %+v, %v", r2, err)
	}

	// A slow agent: a timeout that names the task, which goes on.
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	r, err = svc.Chat(ctx, dispatch.Chat{Agent: a, Caller: alice, Message: "slow 2"})
	if agentgate.ErrorCode(err) != agentgate.ETIMEOUT || r.TaskID == "" || !strings.Contains(agentgate.ErrorMessage(err), r.TaskID) {
		t.Errorf("slow agent: %+v, %v; want a timeout naming the task", r, err)
	}

	for _, bad := range []dispatch.Chat{
		{Agent: a, Caller: alice, Message: "  "},
		{Agent: a, Caller: alice, Message: "echo", ContextID: "has spaces"},
		{Agent: a, Caller: alice, Message: strings.Repeat("x", 40<<10)},
	} {
		if _, err := svc.Chat(t.Context(), bad); agentgate.ErrorCode(err) != agentgate.EINVALID {
			t.Errorf("chat %.20q/%q: %v, want EINVALID", bad.Message, bad.ContextID, err)
		}
	}
	if got := s.Sample.Received(); got != 3 {
		t.Errorf("the agent received %d messages, want 3 (refused turns send nothing)", got)
	}
}
