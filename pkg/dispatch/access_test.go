package dispatch_test

import (
	"testing"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/app/apptest"
	"github.com/agentgate/agentgate/pkg/dispatch"
	"github.com/agentgate/agentgate/pkg/execution"
)

// TestAccess: who may use which agent and follow which task, decided by
// the service from the principal alone, on both stores.
func TestAccess(t *testing.T) {
	for _, backend := range apptest.Backends {
		t.Run(backend, func(t *testing.T) {
			s := apptest.New(t, backend, nil)
			svc := s.Deps.Dispatch
			ctx := t.Context()
			alice := agentgate.Principal{Subject: "alice", Scope: agentgate.ScopeUser}
			bob := agentgate.Principal{Subject: "bob", Scope: agentgate.ScopeUser}
			owner := agentgate.Principal{Subject: "owner", Scope: agentgate.ScopeUser}
			ownersKey := agentgate.Principal{Subject: "owner", Scope: agentgate.ScopeConnector, Agent: s.AgentID, KeyID: "k1"}
			alicesOtherKey := agentgate.Principal{Subject: "alice", Scope: agentgate.ScopeConnector, Agent: "other-agent", KeyID: "k2"}
			notFound := func(what string, err error) {
				t.Helper()
				if agentgate.ErrorCode(err) != agentgate.ENOTFOUND {
					t.Errorf("%s: %v, want ENOTFOUND", what, err)
				}
			}

			// Agents: any user may use any registered one; a connector key
			// only its own.
			for _, p := range []agentgate.Principal{alice, bob, owner, ownersKey} {
				if a, err := svc.Usable(ctx, p, s.AgentID); err != nil || a.Template.Name != s.AgentID {
					t.Errorf("%+v: %v", p, err)
				}
			}
			_, err := svc.Usable(ctx, alicesOtherKey, s.AgentID)
			notFound("a connector key on another agent", err)
			_, err = svc.Usable(ctx, alice, "no-such-agent")
			notFound("an unknown agent", err)

			// Tasks: alice's turn is hers and the owner's (with a user
			// credential) to follow; not bob's, not the owner's connector
			// key's, not alice's key for another agent.
			a, _ := svc.Usable(ctx, alice, s.AgentID)
			r, err := svc.Chat(ctx, dispatch.Chat{Agent: a, Caller: alice, Message: "echo mine"})
			if err != nil {
				t.Fatal(err)
			}
			ref := execution.Ref{Origin: execution.OriginA2A, Scope: s.AgentID, ID: r.TaskID}
			for _, p := range []agentgate.Principal{alice, owner} {
				if _, err := svc.Execution(ctx, p, ref); err != nil {
					t.Errorf("%s reads the task: %v", p.Subject, err)
				}
				if _, _, err := svc.Refresh(ctx, p, a, ref); err != nil {
					t.Errorf("%s refreshes the task: %v", p.Subject, err)
				}
			}
			for name, p := range map[string]agentgate.Principal{"bob": bob, "the owner's connector key": ownersKey, "alice's key for another agent": alicesOtherKey} {
				_, err := svc.Execution(ctx, p, ref)
				notFound(name+" reads the task", err)
				_, _, err = svc.Refresh(ctx, p, a, ref)
				notFound(name+" refreshes the task", err)
			}

			// Listings: the owner lists the agent's tasks; anyone else
			// their own; a connector key those of its agent.
			f, keep, err := svc.Visible(ctx, owner, s.AgentID)
			if err != nil || f.Agent != s.AgentID || f.Caller != "" || !keep(execution.Execution{Agent: s.AgentID, Caller: "alice"}) {
				t.Errorf("the owner's listing: %+v, %v", f, err)
			}
			f, keep, err = svc.Visible(ctx, bob, s.AgentID)
			if err != nil || f.Caller != "bob" || keep(execution.Execution{Agent: "other", Caller: "bob"}) || !keep(execution.Execution{Agent: s.AgentID, Caller: "bob"}) {
				t.Errorf("bob's listing: %+v, %v", f, err)
			}
			f, keep, err = svc.Visible(ctx, ownersKey, "")
			if err != nil || f.Caller != "owner" || keep(execution.Execution{Agent: "other", Caller: "owner"}) || !keep(execution.Execution{Agent: s.AgentID, Caller: "owner"}) {
				t.Errorf("the connector key's listing: %+v, %v", f, err)
			}
			_, _, err = svc.Visible(ctx, alicesOtherKey, s.AgentID)
			notFound("a connector key listing another agent", err)
			_, _, err = svc.Visible(ctx, bob, "no-such-agent")
			notFound("listing an unknown agent", err)
		})
	}
}

// TestPreloaded: an agent the request has read already answers Usable
// without a read, and Usable's rule still applies to it.
func TestPreloaded(t *testing.T) {
	s := apptest.New(t, "embedded", nil)
	svc := s.Deps.Dispatch
	a := s.Agent()
	a.Template.Description = "as read by the request"
	ctx, remember := dispatch.Preloaded(t.Context())
	connectorKey := agentgate.Principal{Subject: "owner", Scope: agentgate.ScopeConnector, Agent: s.AgentID}
	if got, _ := svc.Usable(ctx, connectorKey, s.AgentID); got.Template.Description == a.Template.Description {
		t.Fatal("Usable answered from a record not yet made")
	}
	remember(a)
	if got, err := svc.Usable(ctx, connectorKey, s.AgentID); err != nil || got.Template.Description != a.Template.Description {
		t.Errorf("Usable after remember: %+v, %v", got.Template, err)
	}
	other := agentgate.Principal{Subject: "owner", Scope: agentgate.ScopeConnector, Agent: "other-agent"}
	if _, err := svc.Usable(ctx, other, s.AgentID); agentgate.ErrorCode(err) != agentgate.ENOTFOUND {
		t.Errorf("another agent's connector key: %v", err)
	}
}
