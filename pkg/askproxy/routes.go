// Package askproxy is the askproxy function: a public MCP server whose
// ask_docs tool proxies a docs Q&A endpoint.
package askproxy

import (
	"net/http"

	"github.com/agentgate/agentgate/pkg/web"
)

// Routes is the askproxy function's route table. It is public by design, so
// the per-IP rate limit is its only budget.
func Routes(health http.Handler) []web.Route {
	mcp := web.NotImplemented("the ask_docs MCP endpoint")
	return []web.Route{
		{Method: http.MethodGet, Path: web.HealthPath("askproxy"), Handler: health, Public: true},
		{Method: http.MethodPost, Path: "/ask/mcp", Handler: mcp, Public: true, Class: web.ClassPublic, MCP: true},
		{Method: http.MethodGet, Path: "/ask/mcp", Handler: mcp, Public: true, Class: web.ClassPublic, MCP: true},
		{Method: http.MethodDelete, Path: "/ask/mcp", Handler: mcp, Public: true, Class: web.ClassPublic, MCP: true},
	}
}
