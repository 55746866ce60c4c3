package dispatch

import (
	"context"
	"time"

	"github.com/agentgate/agentgate/pkg/a2acall"
	"github.com/agentgate/agentgate/pkg/agent"
	"github.com/agentgate/agentgate/pkg/dedup"
	"github.com/agentgate/agentgate/pkg/execution"
	"github.com/agentgate/agentgate/pkg/netguard"
	"github.com/agentgate/agentgate/pkg/store"
)

// Open returns the dispatch path on st, every part on the clock now: the
// agent registry (NewRegistry), the A2A client, executions and dedup.
func Open(st store.Store, policy netguard.Policy, now func() time.Time) *Service {
	return &Service{
		Agents: NewRegistry(st, policy, now),
		// Every connection to an agent is checked again at dial time, so
		// that a name re-pointed after registration cannot reach a
		// forbidden address.
		Client:     a2acall.New(a2acall.Options{Transport: policy.Transport()}),
		Executions: execution.New(st, now),
		Dedup:      dedup.New(st, dedup.WithClock(now)),
		Now:        now,
	}
}

// NewRegistry returns the agent registry on st, which refuses agent
// endpoints that policy does not allow.
func NewRegistry(st store.Store, policy netguard.Policy, now func() time.Time) *agent.Registry {
	return agent.NewRegistry(st, now).WithEndpointCheck(func(ctx context.Context, endpoint string) error {
		return policy.CheckURL(ctx, endpoint, nil)
	})
}
