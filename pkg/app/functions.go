package app

import (
	"context"
	"net/http"

	"github.com/agentgate/agentgate/pkg/agent"
	"github.com/agentgate/agentgate/pkg/agentcard"
	"github.com/agentgate/agentgate/pkg/askproxy"
	"github.com/agentgate/agentgate/pkg/connector"
	"github.com/agentgate/agentgate/pkg/core"
	"github.com/agentgate/agentgate/pkg/dispatch"
	"github.com/agentgate/agentgate/pkg/mcpserver"
	"github.com/agentgate/agentgate/pkg/store"
	"github.com/agentgate/agentgate/pkg/web"
)

// Deps are every function's services, built once per process for
// `agentgate serve` and the tests: the shared core, and one of each
// function's own services, so that the functions of one process share
// them. (On Lambda each function builds only its own: core.Main.)
type Deps struct {
	core.Services
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

// NewDeps builds every function's services on st.
func NewDeps(cfg Config, st store.Store) (Deps, error) {
	s, err := core.New(cfg, st)
	if err != nil {
		return Deps{}, err
	}
	d := Deps{Services: s, Dispatch: dispatch.Open(st, cfg.AgentNetwork, s.Now), Ask: askproxy.New(cfg.Ask, s.Now)}
	d.Agents = d.Dispatch.Agents
	d.Connector = connector.Open(s, d.Agents)
	if cfg.MCPEnabled {
		if d.MCP, err = mcpserver.Open(s, d.Dispatch, d.Connector, d.Ask.Asker()); err != nil {
			return Deps{}, err
		}
	}
	return d, nil
}

// ReservedTools are the MCP tool names no exposed agent's chat_with_ tool
// may take: the MCP server's built-in tools and the connector-scope ones.
func ReservedTools() []string { return connector.BuiltinTools }

// NewRegistry returns the agent registry on st, which refuses agent
// endpoints that cfg.AgentNetwork does not allow.
func NewRegistry(cfg Config, st store.Store) *agent.Registry {
	return dispatch.NewRegistry(st, cfg.AgentNetwork, cfg.Clock)
}

// Function describes one of agentgate's Lambda functions.
type Function struct {
	Name      string // short name: health route, logs
	LogicalID string // its AWS::Serverless::Function in template.yaml
	Dir       string // its main package, relative to the module root
	// Lambda builds the function with services of its own: what its main
	// package hands to core.Main.
	Lambda core.Builder
	// build makes the function on Deps' shared services.
	build func(d Deps) core.Function
}

// Functions lists every function, in the order `agentgate serve` prints them.
var Functions = []Function{
	{Name: "mcp", LogicalID: "McpFunction", Dir: "functions/mcp", Lambda: mcpserver.BuildFunction,
		build: func(d Deps) core.Function { return mcpserver.Function(d.Services, d.MCP, d.askStart()) }},
	{Name: "agentcard", LogicalID: "AgentCardFunction", Dir: "functions/agentcard", Lambda: agentcard.BuildFunction,
		build: func(d Deps) core.Function { return agentcard.Function(d.Services, d.dispatch()) }},
	{Name: "connector", LogicalID: "ConnectorFunction", Dir: "functions/connector", Lambda: connector.BuildFunction,
		build: func(d Deps) core.Function {
			dp := d.dispatch()
			c := d.Connector
			if c == nil {
				c = connector.Open(d.Services, dp.Agents)
			}
			return connector.Function(d.Services, c, dp)
		}},
	{Name: "askproxy", LogicalID: "AskProxyFunction", Dir: "functions/askproxy", Lambda: askproxy.BuildFunction,
		build: func(d Deps) core.Function {
			ask := d.Ask
			if ask == nil { // a Deps made only to list routes
				ask = askproxy.New(d.Config.Ask, d.Now)
			}
			return askproxy.Function(d.Services, ask)
		}},
}

// dispatch is d's dispatch path, or one of its own for a Deps made only to
// list routes.
func (d Deps) dispatch() *dispatch.Service {
	if d.Dispatch != nil {
		return d.Dispatch
	}
	return dispatch.Open(d.Store, d.Config.AgentNetwork, d.Now)
}

// askStart announces ask_docs' upstream, if d has one.
func (d Deps) askStart() func(ctx context.Context) {
	if d.Ask == nil || d.MCP == nil {
		return nil
	}
	return d.Ask.Announce
}

// Build makes the function on d.
func (f Function) Build(d Deps) core.Function { return f.build(d) }

// Routes returns the function's route table built on d, each route behind
// the security chain.
func (f Function) Routes(d Deps) []web.Route { return d.Wrap(f.build(d)) }

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
	built := make([]core.Function, len(fns))
	for i, f := range fns {
		built[i] = f.build(d)
	}
	return d.Services.Handler(built...)
}
