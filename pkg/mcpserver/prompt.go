package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const delegatePrompt = "delegate_task"

func (s *Server) addPrompt(srv *mcp.Server) {
	srv.AddPrompt(&mcp.Prompt{
		Name:        delegatePrompt,
		Title:       "Delegate a task to an agent",
		Description: "Guides handing a goal to one of agentgate's agents: dispatch it with the user's consent, then follow it to its result.",
		Arguments: []*mcp.PromptArgument{
			{Name: "agentId", Description: "The agent to delegate to (see agentgate://agents).", Required: true},
			{Name: "goal", Description: "What you want done.", Required: true},
		},
	}, s.delegate)
}

func (s *Server) delegate(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	agentID, goal := req.Params.Arguments["agentId"], req.Params.Arguments["goal"]
	if agentID == "" || strings.TrimSpace(goal) == "" {
		return nil, fmt.Errorf("agentId and goal are required")
	}
	a, err := s.svc.Usable(ctx, principal(ctx), agentID)
	if err != nil {
		return nil, toolError(err)
	}
	var caps strings.Builder
	for _, c := range a.Template.Capabilities {
		fmt.Fprintf(&caps, "- %s: %s\n", c.Name, c.Description)
	}
	text := fmt.Sprintf(`Delegate this goal to the agent %q (%s).

Goal: %s

What the agent can do:
%s
Steps:
1. Write a self-contained instruction for the agent: it sees nothing of this conversation. Add expectedOutput if the form of the answer matters.
2. Call dispatch_task with agentId %q, the instruction, and a taskId you make up (reuse it if you must retry, so the task is not sent twice). The user is asked to approve; if the result says it was not dispatched, tell the user why and stop.
3. Call get_execution_result with the taskId every few seconds until done is true (status completed, failed, canceled or rejected).
4. Report the result to the user, or the reason it failed.`,
		a.Template.Name, a.Template.Description, goal, caps.String(), a.Template.Name)
	return &mcp.GetPromptResult{
		Description: "Delegate a goal to " + a.Template.Name,
		Messages:    []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}},
	}, nil
}
