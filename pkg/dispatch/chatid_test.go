package dispatch_test

import (
	"testing"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/app/apptest"
	"github.com/agentgate/agentgate/pkg/dispatch"
)

// TestChatMessageID: a turn named by its MessageID is sent once: the same
// id and content again gets the first answer without reaching the agent;
// the same id with other content is refused; a malformed id sends nothing.
func TestChatMessageID(t *testing.T) {
	s := apptest.New(t, "embedded", nil)
	svc := s.Deps.Dispatch
	alice := agentgate.Principal{Subject: "alice", Scope: agentgate.ScopeUser}
	turn := dispatch.Chat{Agent: s.Agent(), Caller: alice, Message: "reverse once", MessageID: "consent-1"}
	first, err := svc.Chat(t.Context(), turn)
	if err != nil || first.Reply != "ecno" {
		t.Fatalf("first: %+v, %v", first, err)
	}
	again, err := svc.Chat(t.Context(), turn)
	if err != nil || again.TaskID != first.TaskID || again.Reply != first.Reply {
		t.Errorf("again: %+v, %v; want the first answer", again, err)
	}
	other := turn
	other.Message = "reverse something else"
	if _, err := svc.Chat(t.Context(), other); agentgate.ErrorCode(err) != agentgate.ECONFLICT {
		t.Errorf("the id with other content: %v, want ECONFLICT", err)
	}
	bad := turn
	bad.MessageID = "has spaces"
	if _, err := svc.Chat(t.Context(), bad); agentgate.ErrorCode(err) != agentgate.EINVALID {
		t.Errorf("a malformed id: %v, want EINVALID", err)
	}
	if got := s.Sample.Received(); got != 1 {
		t.Errorf("the agent received %d messages, want 1", got)
	}
}
