package connector

import (
	"github.com/agentgate/agentgate/pkg/agent"
	"github.com/agentgate/agentgate/pkg/core"
	"github.com/agentgate/agentgate/pkg/dispatch"
)

// BuiltinTools are the MCP server's built-in tool names, which no exposed
// agent's chat_with_ tool may take. They are listed here, not read from the
// MCP server, so that the connector function does not link the MCP server;
// the MCP server's tests check that the two lists agree.
var BuiltinTools = []string{
	"dispatch_task", "list_recent_executions", "get_execution_result", "get_agent_activity_summary", "ask_docs",
	"list_playbooks", "run_playbook", "ask",
}

// Open returns the connector domain on s, its agents in agents.
func Open(s core.Services, agents *agent.Registry) *Service {
	return NewService(Options{
		Store: s.Store, Agents: agents, Keys: s.Keys, Now: s.Now,
		Admins: s.Config.AdminSubjects, SystemAgent: s.Config.SystemAgent,
		ReservedTools: BuiltinTools, PublicBaseURL: s.Config.PublicBaseURL,
	})
}

// Function is the connector function on s: the owners' APIs over svc, chat
// through d, and the user API keys.
func Function(s core.Services, svc *Service, d *dispatch.Service) core.Function {
	return core.Function{Name: "connector", Routes: Routes(core.Health("connector"), s.Keys, svc, d)}
}

// BuildFunction is the connector function's builder for core.Main: its own
// dispatch path and connector domain.
func BuildFunction(s core.Services) (core.Function, error) {
	d := dispatch.Open(s.Store, s.Config.AgentNetwork, s.Now)
	return Function(s, Open(s, d.Agents), d), nil
}
