// Package agentcard is the agentcard function: an A2A Agent Card per agent
// (v1.0, and a form v0.3 clients read) and the A2A JSON-RPC front door it
// points to, which speaks both generations.
package agentcard

import (
	"net/http"

	"github.com/agentgate/agentgate/pkg/agent"
	"github.com/agentgate/agentgate/pkg/dispatch"
	"github.com/agentgate/agentgate/pkg/web"
)

// Routes is the agentcard function's route table. baseURL is the API's
// configured public base URL ("" derives it from each request).
func Routes(health http.Handler, agents *agent.Registry, svc *dispatch.Service, baseURL string) []web.Route {
	return []web.Route{
		{Method: http.MethodGet, Path: web.HealthPath("agentcard"), Handler: health, Public: true},
		{Method: http.MethodGet, Path: "/api/agents/{name}/a2a/agent-card", Class: web.ClassAPI,
			Handler: &CardHandler{Registry: agents, BaseURL: baseURL}},
		{Method: http.MethodGet, Path: "/api/agents/{name}/a2a/.well-known/agent-card.json", Public: true, Class: web.ClassPublic,
			Handler: &CardHandler{Registry: agents, BaseURL: baseURL, Public: true}},
		{Method: http.MethodGet, Path: "/api/agents/{name}/.well-known/agent-card.json", Public: true, Class: web.ClassPublic,
			Handler: &CardHandler{Registry: agents, BaseURL: baseURL, Public: true}},
		{Method: http.MethodPost, Path: "/api/agents/{name}/a2a", Class: web.ClassAPI, Handler: NewFrontDoor(svc), JSONRPC: true},
	}
}
