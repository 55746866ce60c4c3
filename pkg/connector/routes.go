// Package connector is the connector function: owner APIs that turn an agent
// into an MCP connector with scoped keys, chat, MCP exposure, settings and
// user API keys.
package connector

import (
	"net/http"

	"github.com/agentgate/agentgate/pkg/apikey"
	"github.com/agentgate/agentgate/pkg/web"
)

// Routes is the connector function's route table. Its resource routes take
// any method (API Gateway ANY) and the function routes methods itself, so
// that adding a method does not need a template change.
func Routes(health http.Handler, keys *apikey.Service) []web.Route {
	keysAPI := web.NewMux(KeysRoutes(keys))
	api := func(path string, h http.Handler) web.Route {
		return web.Route{Path: path, Handler: h, Class: web.ClassAPI}
	}
	return []web.Route{
		{Method: http.MethodGet, Path: web.HealthPath("connector"), Handler: health, Public: true},
		api("/api/agents/{name}/connector", web.NotImplemented("connector configuration")),
		api("/api/agents/{name}/connector/{rest...}", web.NotImplemented("connector keys")),
		{Method: http.MethodPost, Path: "/api/agents/{name}/chat", Handler: web.NotImplemented("chat"), Class: web.ClassAPI},
		api("/api/agents/{name}/mcp-exposed", web.NotImplemented("MCP exposure")),
		api("/api/settings/mcp-url", web.NotImplemented("settings")),
		api("/api/keys", keysAPI),
		api("/api/keys/{rest...}", keysAPI),
	}
}
