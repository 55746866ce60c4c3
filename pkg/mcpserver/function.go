package mcpserver

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"

	"github.com/agentgate/agentgate/pkg/askproxy"
	"github.com/agentgate/agentgate/pkg/config"
	"github.com/agentgate/agentgate/pkg/connector"
	"github.com/agentgate/agentgate/pkg/core"
	"github.com/agentgate/agentgate/pkg/dispatch"
	"github.com/agentgate/agentgate/pkg/web"
)

// Open returns the MCP server on s as its configuration says, dispatching
// through d, with connector keys and exposure from c and ask_docs answered
// by ask.
func Open(s core.Services, d *dispatch.Service, c *connector.Service, ask askproxy.Asker) (*Server, error) {
	cfg := s.Config
	secret := []byte(cfg.ConsentSecret)
	if len(secret) == 0 {
		if cfg.RequireConsent {
			return nil, errors.New("CONSENT_SECRET: required when MCP_SERVER_ENABLED=true and dispatch consent is on")
		}
		// Nothing is ever signed without consent: any key will do.
		secret = make([]byte, MinConsentSecret)
		rand.Read(secret)
	}
	return New(Options{
		Dispatch: d, Store: s.Store, ConsentSecret: secret, RequireConsent: cfg.RequireConsent,
		Connectors: c, Ask: ask,
		Tools: cfg.MCPTools, Resources: cfg.MCPResources, Prompts: cfg.MCPPrompts, Version: config.Version, Now: s.Now,
	})
}

// Function is the MCP function on s, serving m; m is nil when the MCP
// server is off (MCP_SERVER_ENABLED), and then every route, health
// included, answers 404 as an unknown path does. start, if set, runs when
// the function starts.
func Function(s core.Services, m *Server, start func(context.Context)) core.Function {
	meta := Metadata{BaseURL: s.Config.PublicBaseURL, AuthorizationServers: s.Config.AuthorizationServers}
	var endpoint http.Handler = web.NotImplemented("the MCP endpoint")
	var prefetch func(*http.Request) *http.Request
	if m != nil {
		endpoint, prefetch = m, m.Prefetch
	}
	f := core.Function{Name: "mcp", Routes: Routes(core.Health("mcp"), endpoint, prefetch, meta), Start: start}
	if !s.Config.MCPEnabled {
		f.Routes = web.Hidden(f.Routes)
	}
	if meta.Advertised() {
		f.ResourceMetadata = func(r *http.Request) string { return MetadataURL(web.BaseURL(r, s.Config.PublicBaseURL)) }
	}
	return f
}

// BuildFunction is the MCP function's builder for core.Main: its own
// dispatch path, connector domain and docs Q&A.
func BuildFunction(s core.Services) (core.Function, error) {
	if !s.Config.MCPEnabled {
		return Function(s, nil, nil), nil
	}
	d := dispatch.Open(s.Store, s.Config.AgentNetwork, s.Now)
	ask := askproxy.New(s.Config.Ask, s.Now)
	m, err := Open(s, d, connector.Open(s, d.Agents), ask.Asker())
	if err != nil {
		return core.Function{}, err
	}
	return Function(s, m, ask.Announce), nil
}
