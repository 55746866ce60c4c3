// Package askproxy is the askproxy function: a public MCP server whose
// ask_docs tool proxies a docs Q&A endpoint (by default the built-in one,
// pkg/docsqa over the project's own docs), and whose
// get_agent_requirements tool tells an agent's author what agentgate needs.
// The same server is served over Streamable HTTP (Routes) and stdio
// (`agentgate ask-mcp`); the main MCP server registers the same ask_docs.
package askproxy

import (
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/web"
)

// The function's paths.
const (
	// MCPPath is the public MCP endpoint.
	MCPPath = "/ask/mcp"
	// QAPath serves the built-in docs Q&A over the upstream contract, so
	// that it can be asked, and pointed at, directly.
	QAPath = "/ask/qa"
)

// Routes is the askproxy function's route table. It is public by design, so
// the per-IP rate limit, the body cap and the concurrency guard are its
// budget.
func Routes(health http.Handler, s *Service, version string) []web.Route {
	h := LazyHandler(sync.OnceValue(func() *mcp.Server { return s.Server(version) }))
	return []web.Route{
		{Method: http.MethodGet, Path: web.HealthPath("askproxy"), Handler: health, Public: true},
		{Method: http.MethodPost, Path: MCPPath, Handler: h, Public: true, Class: web.ClassPublic, MCP: true},
		{Method: http.MethodGet, Path: MCPPath, Handler: h, Public: true, Class: web.ClassPublic, MCP: true},
		{Method: http.MethodDelete, Path: MCPPath, Handler: h, Public: true, Class: web.ClassPublic, MCP: true},
		{Method: http.MethodPost, Path: QAPath, Handler: s.Builtin(), Public: true, Class: web.ClassPublic},
	}
}
