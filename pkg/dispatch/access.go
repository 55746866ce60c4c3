package dispatch

import (
	"context"
	"sync/atomic"

	"github.com/agentgate/agentgate/pkg/agent"
	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/execution"
)

// Who may act on which agent and task is decided here, and only here, from
// the caller's Principal:
//
//   - an agent: any user credential may hand work to a registered agent; a
//     connector key only to its own agent (any other is ENOTFOUND, as an
//     unknown agent is: the key learns nothing of the others);
//   - a task: its caller, or the agent's owner with a user credential; a
//     connector key only the tasks of its own agent. Anyone else gets
//     ENOTFOUND, as if the task did not exist.
//
// Whether a connector key is still its connector's current key, and the
// connector enabled, is the connector's to say (connector.Service); the MCP
// server asks it on every request of a connector key.

// reaches reports whether p may act on agent name at all: a connector key
// reaches only its own agent.
func reaches(p agentgate.Principal, name string) bool {
	return p.Scope != agentgate.ScopeConnector || name == p.Agent
}

// owns reports whether p acts as the owner of an agent owned by owner: the
// owner's rights need a user credential.
func owns(p agentgate.Principal, owner string) bool {
	return p.Scope == agentgate.ScopeUser && p.Subject != "" && owner == p.Subject
}

// mayFollow reports whether p may see and act on e, a task of an agent
// owned by owner: its caller, or the agent's owner, within what p reaches.
func mayFollow(p agentgate.Principal, e execution.Execution, owner string) bool {
	return reaches(p, e.Agent) && (p.Subject != "" && e.Caller == p.Subject || owns(p, owner))
}

// Usable returns the agent called name if p may hand it work, and ENOTFOUND
// otherwise (no such agent, or one p does not reach). It reads the agent
// unless the request has read it already (WithAgent).
func (s *Service) Usable(ctx context.Context, p agentgate.Principal, name string) (agent.Agent, error) {
	if !reaches(p, name) {
		return agent.Agent{}, agentgate.Errorf(agentgate.ENOTFOUND, "no agent %q", name)
	}
	if a, ok := loaded(ctx, name); ok {
		return a, nil
	}
	return s.Agents.Get(ctx, name)
}

// UsableSoon starts Usable and returns the function that waits for its
// result, so that a request reads the agent while it does what does not
// depend on it (the claim of a consented task, AnswerTask). Every caller
// must call the function, which may be called again.
func (s *Service) UsableSoon(ctx context.Context, p agentgate.Principal, name string) func() (agent.Agent, error) {
	var (
		a    agent.Agent
		err  error
		done = make(chan struct{})
	)
	go func() {
		defer close(done)
		a, err = s.Usable(ctx, p, name)
	}()
	return func() (agent.Agent, error) {
		<-done
		return a, err
	}
}

// loadedKey carries the agent a request has read already.
type loadedKey struct{}

// Preloaded returns ctx ready to carry an agent that this request reads
// elsewhere (the MCP server's check of a connector key reads the key's
// agent, concurrently with the request's other reads), and the function that
// records it once read. Usable in the request then answers from the record
// rather than reading the agent again; who may use it is still Usable's
// decision.
func Preloaded(ctx context.Context) (context.Context, func(agent.Agent)) {
	cell := new(atomic.Pointer[agent.Agent])
	return context.WithValue(ctx, loadedKey{}, cell), func(a agent.Agent) { cell.Store(&a) }
}

func loaded(ctx context.Context, name string) (agent.Agent, bool) {
	cell, _ := ctx.Value(loadedKey{}).(*atomic.Pointer[agent.Agent])
	if cell == nil {
		return agent.Agent{}, false
	}
	a := cell.Load()
	if a == nil || a.Template.Name != name {
		return agent.Agent{}, false
	}
	return *a, true
}

// Execution returns the execution at ref if p may see it (mayFollow), and
// ENOTFOUND otherwise. The agent is read only when p is not the task's
// caller.
func (s *Service) Execution(ctx context.Context, p agentgate.Principal, ref execution.Ref) (execution.Execution, error) {
	e, err := s.Executions.Get(ctx, ref)
	if err != nil {
		return execution.Execution{}, err
	}
	owner := ""
	if e.Caller != p.Subject && reaches(p, e.Agent) {
		a, err := s.Agents.Get(ctx, e.Agent)
		if err != nil && agentgate.ErrorCode(err) != agentgate.ENOTFOUND {
			return execution.Execution{}, err
		}
		owner = a.Owner
	}
	if !mayFollow(p, e, owner) {
		return execution.Execution{}, agentgate.Errorf(agentgate.ENOTFOUND, "no execution %q", ref.ID)
	}
	return e, nil
}

// Visible says which executions p may list, of agent name if not "": the
// filter to list them by, and a test that every listed one must pass.
// The agent's owner lists all of its executions; anyone else their own (of
// that agent, if named); a connector key those of its own agent. An agent
// that p does not reach, or that does not exist, is ENOTFOUND.
func (s *Service) Visible(ctx context.Context, p agentgate.Principal, name string) (execution.Filter, func(execution.Execution) bool, error) {
	if name == "" && p.Scope == agentgate.ScopeConnector {
		name = p.Agent
	}
	mine := func(e execution.Execution) bool { return mayFollow(p, e, "") }
	if name == "" {
		return execution.Filter{Caller: p.Subject}, mine, nil
	}
	a, err := s.Usable(ctx, p, name)
	if err != nil {
		return execution.Filter{}, nil, err
	}
	if owns(p, a.Owner) {
		return execution.Filter{Agent: name}, func(execution.Execution) bool { return true }, nil
	}
	return execution.Filter{Caller: p.Subject}, func(e execution.Execution) bool { return e.Agent == name && mine(e) }, nil
}
