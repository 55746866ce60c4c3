// Package mcpserver is the MCP function: agent discovery, the delegate_task
// prompt and consent-gated dispatch over MCP Streamable HTTP.
package mcpserver

import (
	"net/http"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/web"
)

// Endpoint is the MCP endpoint's path.
const Endpoint = "/mcp"

// Routes is the MCP function's route table; mcp serves the endpoint, and
// prefetch, if set, starts a session request's read with the chain's
// (Server.Prefetch).
func Routes(health, mcp http.Handler, prefetch func(*http.Request) *http.Request, meta Metadata) []web.Route {
	// Connector keys reach the MCP endpoint (and only it); the server shows
	// them the connector tools alone.
	scopes := []string{agentgate.ScopeUser, agentgate.ScopeConnector}
	routes := []web.Route{
		{Method: http.MethodGet, Path: web.HealthPath("mcp"), Handler: health, Public: true},
		{Method: http.MethodPost, Path: Endpoint, Handler: mcp, Prefetch: prefetch, Scopes: scopes, Class: web.ClassMCP, MCP: true},
		{Method: http.MethodGet, Path: Endpoint, Handler: mcp, Prefetch: prefetch, Scopes: scopes, Class: web.ClassMCP, MCP: true},
		{Method: http.MethodDelete, Path: Endpoint, Handler: mcp, Prefetch: prefetch, Scopes: scopes, Class: web.ClassMCP, MCP: true},
	}
	// The RFC 9728 metadata exists to name the authorization servers that
	// issue tokens for the endpoint. Without one it would say nothing, and
	// clients such as mcp-remote then take the MCP URL itself for an
	// authorization server: better no metadata at all.
	if meta.Advertised() {
		routes = append(routes, web.Route{Method: http.MethodGet, Path: MetadataPath, Handler: meta, Public: true, Class: web.ClassPublic})
	}
	return routes
}
