package app

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"slices"
	"time"

	"github.com/agentgate/agentgate/pkg/a2acall"
	"github.com/agentgate/agentgate/pkg/agent"
	"github.com/agentgate/agentgate/pkg/dedup"
	"github.com/agentgate/agentgate/pkg/dispatch"
	"github.com/agentgate/agentgate/pkg/execution"

	"github.com/agentgate/agentgate/pkg/agentcard"
	"github.com/agentgate/agentgate/pkg/apikey"
	"github.com/agentgate/agentgate/pkg/askproxy"
	"github.com/agentgate/agentgate/pkg/auth"
	"github.com/agentgate/agentgate/pkg/connector"
	"github.com/agentgate/agentgate/pkg/mcpserver"
	"github.com/agentgate/agentgate/pkg/ratelimit"
	"github.com/agentgate/agentgate/pkg/store"
	"github.com/agentgate/agentgate/pkg/web"
)

// Deps is what the functions' handlers are built from, once per process.
type Deps struct {
	Config   Config
	Store    store.Store
	Keys     *apikey.Service
	Authn    web.Authenticator
	Limiter  web.Limiter
	Agents   *agent.Registry
	Dispatch *dispatch.Service
	// Connector is the connector domain: agents' connector configurations
	// and keys, MCP exposure, the MCP URL setting.
	Connector *connector.Service
	MCP       *mcpserver.Server // nil unless the MCP server is enabled
	// Ask is ask_docs' upstream and the built-in docs Q&A, shared by the
	// askproxy function and the MCP server.
	Ask *askproxy.Service
}

// NewDeps builds the services every function shares on st.
func NewDeps(cfg Config, st store.Store) (Deps, error) {
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	now := cfg.Clock
	d := Deps{Config: cfg, Store: st, Keys: apikey.NewService(st, now), Limiter: ratelimit.New(st, now),
		Agents: NewRegistry(cfg, st)}
	askCfg := cfg.Ask
	askCfg.Now = now
	d.Ask = askproxy.New(askCfg)
	d.Dispatch = &dispatch.Service{
		Agents: d.Agents,
		// Every connection to an agent is checked again at dial time, so
		// that a name re-pointed after registration cannot reach a
		// forbidden address.
		Client:     a2acall.New(a2acall.Options{Transport: cfg.AgentNetwork.Transport()}),
		Executions: execution.New(st, now),
		Dedup:      dedup.New(st, dedup.WithClock(now)),
		Now:        now,
	}
	d.Connector = connector.NewService(connector.Options{
		Store: st, Agents: d.Agents, Keys: d.Keys, Now: now,
		Admins: cfg.AdminSubjects, SystemAgent: cfg.SystemAgent,
		ReservedTools: ReservedTools(), PublicBaseURL: cfg.PublicBaseURL,
	})
	a := &auth.Authenticator{Keys: d.Keys}
	if cfg.JWTSecret != "" {
		opts := []auth.JWTOption{auth.WithClock(now)}
		if cfg.JWTIssuer != "" {
			opts = append(opts, auth.WithIssuer(cfg.JWTIssuer))
		}
		if cfg.JWTAudience != "" {
			opts = append(opts, auth.WithAudience(cfg.JWTAudience))
		}
		v, err := auth.NewJWTVerifier([]byte(cfg.JWTSecret), opts...)
		if err != nil {
			return Deps{}, err
		}
		a.JWT = v
	}
	d.Authn = a
	if cfg.MCPEnabled {
		secret := []byte(cfg.ConsentSecret)
		if len(secret) == 0 {
			if cfg.RequireConsent {
				return Deps{}, errors.New("CONSENT_SECRET: required when MCP_SERVER_ENABLED=true and dispatch consent is on")
			}
			// Nothing is ever signed without consent: any key will do.
			secret = make([]byte, mcpserver.MinConsentSecret)
			rand.Read(secret)
		}
		m, err := mcpserver.New(mcpserver.Options{
			Dispatch: d.Dispatch, Store: st, ConsentSecret: secret, RequireConsent: cfg.RequireConsent,
			Connectors: d.Connector, Ask: d.Ask.Asker(),
			Tools: cfg.MCPTools, Resources: cfg.MCPResources, Prompts: cfg.MCPPrompts, Version: Version, Now: now,
		})
		if err != nil {
			return Deps{}, err
		}
		d.MCP = m
	}
	return d, nil
}

// ReservedTools are the MCP tool names no exposed agent's chat_with_ tool
// may take: the MCP server's built-in tools and the connector-scope ones.
func ReservedTools() []string {
	return slices.Clone(mcpserver.ToolNames)
}

// NewRegistry returns the agent registry on st, which refuses agent
// endpoints that cfg.AgentNetwork does not allow.
func NewRegistry(cfg Config, st store.Store) *agent.Registry {
	policy := cfg.AgentNetwork
	return agent.NewRegistry(st, cfg.Clock).WithEndpointCheck(func(ctx context.Context, endpoint string) error {
		return policy.CheckURL(ctx, endpoint, nil)
	})
}

// Function describes one of agentgate's Lambda functions.
type Function struct {
	Name      string // short name: health route, logs
	LogicalID string // its AWS::Serverless::Function in template.yaml
	Dir       string // its main package, relative to the module root
	routes    func(health http.Handler, d Deps) []web.Route
	// resourceMetadata, if set, names the protected-resource metadata a
	// 401 points to ("" when the function advertises none).
	resourceMetadata func(d Deps, r *http.Request) string
	// asks says the function serves ask_docs, whose upstream it announces
	// at start (askproxy.Service.Announce).
	asks bool
}

// Functions lists every function, in the order `agentgate serve` prints them.
var Functions = []Function{
	{Name: "mcp", LogicalID: "McpFunction", Dir: "functions/mcp", asks: true,
		routes: func(h http.Handler, d Deps) []web.Route {
			var endpoint http.Handler = web.NotImplemented("the MCP endpoint")
			if d.MCP != nil {
				endpoint = d.MCP
			}
			routes := mcpserver.Routes(h, endpoint, d.mcpMetadata())
			if !d.Config.MCPEnabled {
				return web.Hidden(routes)
			}
			return routes
		},
		resourceMetadata: func(d Deps, r *http.Request) string {
			if !d.mcpMetadata().Advertised() {
				return ""
			}
			return mcpserver.MetadataURL(web.BaseURL(r, d.Config.PublicBaseURL))
		}},
	{Name: "agentcard", LogicalID: "AgentCardFunction", Dir: "functions/agentcard",
		routes: func(h http.Handler, d Deps) []web.Route {
			return agentcard.Routes(h, d.Agents, d.Dispatch, d.Config.PublicBaseURL)
		}},
	{Name: "connector", LogicalID: "ConnectorFunction", Dir: "functions/connector",
		routes: func(h http.Handler, d Deps) []web.Route { return connector.Routes(h, d.Keys, d.Connector, d.Dispatch) }},
	{Name: "askproxy", LogicalID: "AskProxyFunction", Dir: "functions/askproxy", asks: true,
		routes: func(h http.Handler, d Deps) []web.Route {
			ask := d.Ask
			if ask == nil { // a Deps made only to list routes
				ask = askproxy.New(d.Config.Ask)
			}
			return askproxy.Routes(h, ask, Version)
		}},
}

// mcpMetadata is the MCP endpoint's protected-resource metadata.
func (d Deps) mcpMetadata() mcpserver.Metadata {
	return mcpserver.Metadata{BaseURL: d.Config.PublicBaseURL, AuthorizationServers: d.Config.AuthorizationServers}
}

// Chain is the security chain configured by d.
func (d Deps) Chain() *web.Chain {
	return &web.Chain{
		MaxBody: d.Config.MaxBody,
		Timeout: d.Config.Timeout,
		Limiter: d.Limiter,
		Limits:  d.Config.Limits,
		Authn:   d.Authn,

		AllowedOrigins:  d.Config.AllowedOrigins,
		LoopbackOrigins: d.Config.LoopbackOrigins,
	}
}

// Routes returns the function's route table built on d, each route behind
// the security chain.
func (f Function) Routes(d Deps) []web.Route {
	chain := d.Chain()
	if f.resourceMetadata != nil {
		chain.ResourceMetadata = func(r *http.Request) string { return f.resourceMetadata(d, r) }
	}
	return chain.Wrap(f.routes(web.Health(f.Name, Version), d))
}

// Lookup returns the function called name.
func Lookup(name string) (Function, bool) {
	for _, f := range Functions {
		if f.Name == name {
			return f, true
		}
	}
	return Function{}, false
}

// Handler serves the routes of fns on one mux, behind the request log and
// the security headers.
func Handler(d Deps, fns ...Function) http.Handler {
	var tables [][]web.Route
	name := "agentgate"
	for _, f := range fns {
		tables = append(tables, f.Routes(d))
	}
	if len(fns) == 1 {
		name = fns[0].Name
	}
	return web.RequestLog(name, web.SecurityHeaders(web.NewMux(tables...)))
}
