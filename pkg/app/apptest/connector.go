package apptest

import (
	"context"

	"github.com/agentgate/agentgate/pkg/agent"
	"github.com/agentgate/agentgate/pkg/connector"
)

// Agent is the stack's agent as registered now.
func (s *Stack) Agent() agent.Agent {
	s.t.Helper()
	a, err := s.Deps.Agents.Get(context.Background(), s.AgentID)
	if err != nil {
		s.t.Fatal(err)
	}
	return a
}

// ConnectorKey mints the connector key of the stack's agent, as its owner
// does with POST /api/agents/{name}/connector/key: the connector's current
// key (a previous one is revoked), the connector enabled. (Key with
// connector scope makes a key that no connector names, which the MCP server
// refuses.)
func (s *Stack) ConnectorKey() string {
	s.t.Helper()
	k, _, err := s.Deps.Connector.MintKey(context.Background(), s.Agent())
	if err != nil {
		s.t.Fatal(err)
	}
	return k.Key
}

// Configure changes the connector of the stack's agent, as PUT
// /api/agents/{name}/connector does.
func (s *Stack) Configure(ch connector.ConfigChange) connector.Config {
	s.t.Helper()
	c, err := s.Deps.Connector.Configure(context.Background(), s.Agent(), ch)
	if err != nil {
		s.t.Fatal(err)
	}
	return c
}

// Expose exposes the stack's agent as an MCP tool of its own, or stops,
// as PUT /api/agents/{name}/mcp-exposed does, and returns the tool's name.
func (s *Stack) Expose(exposed bool) string {
	s.t.Helper()
	tool, err := s.Deps.Connector.SetExposed(context.Background(), s.Agent(), exposed)
	if err != nil {
		s.t.Fatal(err)
	}
	return tool
}
