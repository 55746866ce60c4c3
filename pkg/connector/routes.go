// Package connector is the connector function: owner APIs that register
// agents and turn them into MCP connectors with scoped keys, chat, MCP
// exposure, the MCP URL setting and user API keys.
package connector

import (
	"net/http"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/apikey"
	"github.com/agentgate/agentgate/pkg/dispatch"
	"github.com/agentgate/agentgate/pkg/web"
)

// Routes is the connector function's route table. Every route but health
// is authenticated and takes user credentials only, except the two a
// connector key may call, for its own agent alone: its playbooks and its
// chat. Who owns the agent is checked by the handlers, which read it
// anyway. The user API keys API takes any method (API Gateway ANY) and
// routes methods itself.
func Routes(health http.Handler, keys *apikey.Service, svc *Service, chat *dispatch.Service) []web.Route {
	keysAPI := web.NewMux(KeysRoutes(keys))
	h := handler{svc: svc}
	if chat != nil {
		h.chatter = chat
	}
	route := func(method, path string, fn http.HandlerFunc) web.Route {
		return web.Route{Method: method, Path: path, Handler: fn, Class: web.ClassAPI}
	}
	// A connector key reaches these routes only for the agent it is bound
	// to; the handler checks that it is still the agent's current key.
	connectorToo := func(rt web.Route) web.Route {
		rt.Scopes = []string{agentgate.ScopeUser, agentgate.ScopeConnector}
		rt.Authorize = ownAgentOnly
		return rt
	}
	admin := func(rt web.Route) web.Route {
		rt.Authorize = func(_ *http.Request, p agentgate.Principal) error { return svc.CheckAdmin(p) }
		return rt
	}
	return []web.Route{
		{Method: http.MethodGet, Path: web.HealthPath("connector"), Handler: health, Public: true},
		route(http.MethodPost, "/api/agents", h.register),
		route(http.MethodGet, "/api/agents", h.list),
		route(http.MethodGet, "/api/agents/{name}", h.get),
		route(http.MethodDelete, "/api/agents/{name}", h.delete),
		route(http.MethodGet, "/api/agents/{name}/connector", h.getConnector),
		route(http.MethodPut, "/api/agents/{name}/connector", h.putConnector),
		route(http.MethodPost, "/api/agents/{name}/connector/key", h.mintKey),
		route(http.MethodDelete, "/api/agents/{name}/connector/key", h.revokeKey),
		connectorToo(route(http.MethodGet, "/api/agents/{name}/connector/playbooks", h.playbooks)),
		connectorToo(route(http.MethodPost, "/api/agents/{name}/chat", h.chat)),
		route(http.MethodGet, "/api/agents/{name}/mcp-exposed", h.getExposed),
		route(http.MethodPut, "/api/agents/{name}/mcp-exposed", h.putExposed),
		admin(route(http.MethodGet, "/api/settings/mcp-url", h.mcpURL)),
		admin(route(http.MethodPut, "/api/settings/mcp-url", h.putMCPURL)),
		admin(route(http.MethodDelete, "/api/settings/mcp-url", h.deleteMCPURL)),
		{Path: "/api/keys", Handler: keysAPI, Class: web.ClassAPI},
		{Path: "/api/keys/{rest...}", Handler: keysAPI, Class: web.ClassAPI},
	}
}

// ownAgentOnly refuses a connector key on a route of another agent than
// its own.
func ownAgentOnly(r *http.Request, p agentgate.Principal) error {
	if p.Scope == agentgate.ScopeConnector && p.Agent != r.PathValue("name") {
		return agentgate.Errorf(agentgate.EFORBIDDEN, "this connector key reaches only agent %q", p.Agent)
	}
	return nil
}
