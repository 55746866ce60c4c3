package mcpserver

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/askproxy"
	"github.com/agentgate/agentgate/pkg/dispatch"
	"github.com/agentgate/agentgate/pkg/execution"
)

const (
	listExecutionsTool  = "list_recent_executions"
	executionResultTool = "get_execution_result"
	activityTool        = "get_agent_activity_summary"
)

// toolDef is one tool, registered only if allowed.
type toolDef struct {
	name string
	add  func(*mcp.Server)
}

func ptr[T any](v T) *T { return &v }

// tools are a user's tools (the connector's are playbookTools).
func (s *Server) tools() []toolDef {
	tools := []toolDef{
		{dispatchTool, func(srv *mcp.Server) {
			addTool(srv, &mcp.Tool{
				Name:  dispatchTool,
				Title: "Dispatch a task to an agent",
				Description: "Hands a task to an agent, after the user approves it (you will not see the approval; if the user says no, " +
					"the result says so and nothing is sent). Returns at once with a taskId: the agent works on after this call, " +
					"so poll get_execution_result with the taskId for the outcome. Calling again with the same taskId and arguments " +
					"returns the first result and sends nothing.",
				Annotations: &mcp.ToolAnnotations{Title: "Dispatch a task to an agent", DestructiveHint: ptr(true), OpenWorldHint: ptr(true)},
			}, s.dispatchTask)
		}},
		{executionResultTool, func(srv *mcp.Server) {
			addTool(srv, &mcp.Tool{
				Name:  executionResultTool,
				Title: "Get a task's status and result",
				Description: "Returns the status of a task dispatched with dispatch_task, asking the agent for news while it runs, " +
					"and its result once completed. Poll it every few seconds until the status is completed, failed, canceled or rejected.",
				Annotations: &mcp.ToolAnnotations{Title: "Get a task's status and result", ReadOnlyHint: true, OpenWorldHint: ptr(true)},
			}, s.executionResult)
		}},
		{listExecutionsTool, func(srv *mcp.Server) {
			addTool(srv, &mcp.Tool{
				Name:  listExecutionsTool,
				Title: "List recent tasks",
				Description: "Lists your recent tasks, newest first, optionally for one agent or in one status. " +
					"An agent's owner sees all of that agent's tasks. Pass nextCursor back as cursor for more.",
				Annotations: &mcp.ToolAnnotations{Title: "List recent tasks", ReadOnlyHint: true, OpenWorldHint: ptr(false)},
			}, s.listExecutions)
		}},
		{activityTool, func(srv *mcp.Server) {
			addTool(srv, &mcp.Tool{
				Name:        activityTool,
				Title:       "Summarize recent activity",
				Description: "Counts your tasks by status over a recent window (default 24h), optionally for one agent, with the time of the last activity.",
				Annotations: &mcp.ToolAnnotations{Title: "Summarize recent activity", ReadOnlyHint: true, OpenWorldHint: ptr(false)},
			}, s.activity)
		}},
	}
	if s.opts.Ask != nil {
		// The askproxy function's own ask_docs: same schema, same client.
		tools = append(tools, toolDef{askproxy.AskDocsTool, func(srv *mcp.Server) { askproxy.AddAskDocs(srv, s.opts.Ask) }})
	}
	return tools
}

// ExecutionView is a task as the tools show it.
type ExecutionView struct {
	TaskID     string    `json:"taskId"`
	AgentID    string    `json:"agentId"`
	Status     string    `json:"status"`
	Result     string    `json:"result,omitempty" jsonschema:"The agent's answer or latest message."`
	Error      string    `json:"error,omitempty"`
	Via        string    `json:"via" jsonschema:"How the task came in: mcp or a2a."`
	CreatedAt  time.Time `json:"createdAt"`
	UpdatedAt  time.Time `json:"updatedAt"`
	FinishedAt time.Time `json:"finishedAt,omitzero" jsonschema:"When the task ended, as the agent reports it."`
}

func view(e execution.Execution) ExecutionView {
	return ExecutionView{TaskID: e.ID, AgentID: e.Agent, Status: status(e.State), Result: e.Text, Error: e.Error,
		Via: e.Origin, CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt, FinishedAt: e.FinishedAt}
}

// ExecutionResultInput is get_execution_result's arguments.
type ExecutionResultInput struct {
	TaskID string `json:"taskId" jsonschema:"The taskId dispatch_task returned."`
}

// ExecutionResultOutput is get_execution_result's result.
type ExecutionResultOutput struct {
	ExecutionView
	Done bool   `json:"done" jsonschema:"True once the status is final: stop polling."`
	Note string `json:"note,omitempty"`
}

func (s *Server) executionResult(ctx context.Context, _ *mcp.CallToolRequest, in ExecutionResultInput) (*mcp.CallToolResult, ExecutionResultOutput, error) {
	p := principal(ctx)
	if err := dispatch.CheckID("taskId", in.TaskID); err != nil {
		return nil, ExecutionResultOutput{}, err
	}
	e, err := s.svc.Execution(ctx, p, dispatch.TaskRef(p.Subject, in.TaskID))
	if err != nil {
		return nil, ExecutionResultOutput{}, toolError(err)
	}
	var note string
	if !e.Terminal() && e.RemoteTaskID != "" {
		fresh, _, err := s.svc.RefreshRecord(ctx, e)
		if err != nil {
			note = "Could not reach the agent for news (" + agentgate.ErrorMessage(err) + "); this is the last known status. Try again later."
		} else {
			e = fresh
		}
	}
	out := ExecutionResultOutput{ExecutionView: view(e), Done: e.Terminal(), Note: note}
	text := fmt.Sprintf("Task %s on agent %s: %s.", e.ID, e.Agent, out.Status)
	if out.Result != "" {
		text += "\n\n" + out.Result
	}
	if note != "" {
		text += "\n\n" + note
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, out, nil
}

// ListExecutionsInput is list_recent_executions' arguments.
type ListExecutionsInput struct {
	AgentID string `json:"agentId,omitempty" jsonschema:"Only this agent's tasks."`
	Status  string `json:"status,omitempty" jsonschema:"Only tasks in this status: submitted, working, input_required, completed, failed, canceled or rejected."`
	Limit   int    `json:"limit,omitempty" jsonschema:"At most this many tasks (1-100, default 20)."`
	Cursor  string `json:"cursor,omitempty" jsonschema:"nextCursor from a previous call, for the next page."`
}

// ListExecutionsOutput is list_recent_executions' result.
type ListExecutionsOutput struct {
	Executions []ExecutionView `json:"executions"`
	NextCursor string          `json:"nextCursor,omitempty"`
}

func (s *Server) listExecutions(ctx context.Context, _ *mcp.CallToolRequest, in ListExecutionsInput) (*mcp.CallToolResult, ListExecutionsOutput, error) {
	limit := in.Limit
	switch {
	case limit == 0:
		limit = 20
	case limit < 1 || limit > 100:
		return nil, ListExecutionsOutput{}, fmt.Errorf("limit: must be between 1 and 100")
	}
	filter, keep, err := s.svc.Visible(ctx, principal(ctx), in.AgentID)
	if err != nil {
		return nil, ListExecutionsOutput{}, toolError(err)
	}
	filter.Limit, filter.Cursor = limit, in.Cursor
	page, next, err := s.svc.Executions.List(ctx, filter)
	if err != nil {
		return nil, ListExecutionsOutput{}, toolError(err)
	}
	out := ListExecutionsOutput{Executions: []ExecutionView{}, NextCursor: next}
	for _, e := range page {
		if keep(e) && (in.Status == "" || status(e.State) == in.Status) {
			out.Executions = append(out.Executions, view(e))
		}
	}
	text := count(len(out.Executions), "task") + "."
	if next != "" {
		text += " More with cursor " + next
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, out, nil
}

// ActivityInput is get_agent_activity_summary's arguments.
type ActivityInput struct {
	AgentID string `json:"agentId,omitempty" jsonschema:"Only this agent's tasks."`
	Window  string `json:"window,omitempty" jsonschema:"How far back, as a duration like 1h or 24h (default 24h, at most 720h)."`
}

// ActivityOutput is get_agent_activity_summary's result.
type ActivityOutput struct {
	Window       string         `json:"window"`
	Total        int            `json:"total"`
	ByStatus     map[string]int `json:"byStatus"`
	LastActivity time.Time      `json:"lastActivity,omitzero"`
	Truncated    bool           `json:"truncated,omitempty" jsonschema:"True if there were more tasks than were counted."`
}

// maxSummarized bounds how many executions one summary reads.
const maxSummarized = 1000

func (s *Server) activity(ctx context.Context, _ *mcp.CallToolRequest, in ActivityInput) (*mcp.CallToolResult, ActivityOutput, error) {
	window := 24 * time.Hour
	if in.Window != "" {
		d, err := time.ParseDuration(in.Window)
		if err != nil || d <= 0 || d > 720*time.Hour {
			return nil, ActivityOutput{}, fmt.Errorf("window: want a duration like 24h, above 0 and at most 720h")
		}
		window = d
	}
	filter, keep, err := s.svc.Visible(ctx, principal(ctx), in.AgentID)
	if err != nil {
		return nil, ActivityOutput{}, toolError(err)
	}
	since := s.now().Add(-window)
	out := ActivityOutput{Window: window.String(), ByStatus: map[string]int{}}
	seen := 0
	filter.Limit = 200
pages:
	for {
		page, next, err := s.svc.Executions.List(ctx, filter)
		if err != nil {
			return nil, ActivityOutput{}, toolError(err)
		}
		for _, e := range page {
			if e.CreatedAt.Before(since) {
				break pages // newest first: the rest is older
			}
			if seen++; seen > maxSummarized {
				out.Truncated = true
				break pages
			}
			if !keep(e) {
				continue
			}
			out.Total++
			out.ByStatus[status(e.State)]++
			if e.UpdatedAt.After(out.LastActivity) {
				out.LastActivity = e.UpdatedAt
			}
		}
		if next == "" {
			break
		}
		filter.Cursor = next
	}
	text := fmt.Sprintf("%s in the last %s", count(out.Total, "task"), out.Window)
	if out.Total > 0 {
		var parts []string
		for _, st := range slices.Sorted(maps.Keys(out.ByStatus)) {
			parts = append(parts, fmt.Sprintf("%d %s", out.ByStatus[st], st))
		}
		text += ": " + strings.Join(parts, ", ")
	}
	text += "."
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, out, nil
}

// count is "1 task", "2 tasks": n and the noun it counts.
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// toolError is an error a tool may show: its caller-safe message.
func toolError(err error) error {
	return fmt.Errorf("%s", agentgate.ErrorMessage(err))
}
