// Package agentcard is the agentcard function: an A2A v1.0 Agent Card per
// agent and the A2A JSON-RPC front door it points to.
package agentcard

import (
	"net/http"

	"github.com/agentgate/agentgate/pkg/web"
)

// Routes is the agentcard function's route table.
func Routes(health http.Handler) []web.Route {
	return []web.Route{
		{Method: http.MethodGet, Path: web.HealthPath("agentcard"), Handler: health, Public: true},
		{Method: http.MethodGet, Path: "/api/agents/{name}/a2a/agent-card", Handler: web.NotImplemented("the agent card"), Class: web.ClassAPI},
		{Method: http.MethodGet, Path: "/api/agents/{name}/a2a/.well-known/agent-card.json", Handler: web.NotImplemented("the public agent card"), Public: true, Class: web.ClassPublic},
		{Method: http.MethodPost, Path: "/api/agents/{name}/a2a", Handler: web.NotImplemented("the A2A front door"), Class: web.ClassAPI},
	}
}
