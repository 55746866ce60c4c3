package agentcard

import (
	"github.com/agentgate/agentgate/pkg/core"
	"github.com/agentgate/agentgate/pkg/dispatch"
)

// Function is the agentcard function on s, its cards and front door
// served by d.
func Function(s core.Services, d *dispatch.Service) core.Function {
	return core.Function{Name: "agentcard", Routes: Routes(core.Health("agentcard"), d.Agents, d, s.Config.PublicBaseURL)}
}

// BuildFunction is the agentcard function's builder for core.Main: its own
// dispatch path.
func BuildFunction(s core.Services) (core.Function, error) {
	return Function(s, dispatch.Open(s.Store, s.Config.AgentNetwork, s.Now)), nil
}
