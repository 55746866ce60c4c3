package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/dispatch"
)

const (
	agentsResource = "agentgate://agents"
	statusResource = "agentgate://agents/{agentId}/status"
	statusPrefix   = "agentgate://agents/"
	statusSuffix   = "/status"
)

// maxListedAgents bounds the agents one read of agentgate://agents shows
// (and pings).
const maxListedAgents = 100

// addResources registers the allowed resources and returns how many.
func (s *Server) addResources(srv *mcp.Server, allow []string) int {
	n := 0
	if allow == nil || slices.Contains(allow, agentsResource) {
		srv.AddResource(&mcp.Resource{
			URI: agentsResource, Name: "agents", Title: "Agents you can dispatch to", MIMEType: "application/json",
			Description: "The agents you may hand tasks to with dispatch_task: agentId, description, capabilities and " +
				"whether each is reachable right now, with how many of its tasks are running; and whether its owner exposed it " +
				"as a tool of its own (tool: its chat_with_ tool).",
		}, s.readAgents)
		n++
	}
	if allow == nil || slices.Contains(allow, statusResource) {
		srv.AddResourceTemplate(&mcp.ResourceTemplate{
			URITemplate: statusResource, Name: "agent-status", Title: "An agent's status", MIMEType: "application/json",
			Description: "Whether an agent is registered and reachable (with the reason when it is not) and how many of its tasks are running. " +
				"Read it before dispatching to an agent that may be down.",
		}, s.readStatus)
		n++
	}
	return n
}

// AgentView is an agent as agentgate://agents shows it.
type AgentView struct {
	AgentID      string          `json:"agentId"`
	Description  string          `json:"description"`
	Version      string          `json:"version"`
	Capabilities []string        `json:"capabilities"`
	Status       dispatch.Status `json:"status"`
	// Exposed says whether its owner exposed the agent as an MCP tool of
	// its own, and Tool names that tool.
	Exposed bool   `json:"exposed"`
	Tool    string `json:"tool,omitempty"`
}

// readAgents lists the agents (a user's resource: a connector key has
// none), with the exposure set this request's tools were built from.
func (s *Server) readAgents(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	agents, _, err := s.svc.Agents.List(ctx, "", maxListedAgents)
	if err != nil {
		return nil, toolError(err)
	}
	var exposed map[string]string
	if r := current(ctx); r != nil && r.exposed != nil {
		exposed = r.exposed.tools
	}
	views := make([]AgentView, len(agents))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8) // pings at once
	for i, a := range agents {
		tool := exposed[a.Template.Name]
		views[i] = AgentView{AgentID: a.Template.Name, Description: a.Template.Description, Version: a.Template.Version, Capabilities: []string{},
			Exposed: tool != "", Tool: tool}
		for _, c := range a.Template.Capabilities {
			views[i].Capabilities = append(views[i].Capabilities, c.Name+": "+c.Description)
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			st, err := s.svc.StatusOf(ctx, a)
			if err != nil {
				st = dispatch.Status{Agent: a.Template.Name, Registered: true, Reason: "status unavailable: " + agentgate.ErrorMessage(err)}
			}
			views[i].Status = st
		})
	}
	wg.Wait()
	return jsonResource(req.Params.URI, views)
}

func (s *Server) readStatus(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	name, ok := strings.CutPrefix(uri, statusPrefix)
	name, ok2 := strings.CutSuffix(name, statusSuffix)
	if !ok || !ok2 || name == "" || strings.Contains(name, "/") {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	a, err := s.svc.Usable(ctx, principal(ctx), name)
	if agentgate.ErrorCode(err) == agentgate.ENOTFOUND {
		return nil, mcp.ResourceNotFoundError(uri)
	} else if err != nil {
		return nil, toolError(err)
	}
	st, err := s.svc.StatusOf(ctx, a)
	if err != nil {
		return nil, toolError(err)
	}
	return jsonResource(uri, st)
}

func jsonResource(uri string, v any) (*mcp.ReadResourceResult, error) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", uri, err)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(data)}}}, nil
}
