package mcpserver

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/dedup"
	"github.com/agentgate/agentgate/pkg/dispatch"
)

// ask (a connector key's agent) and chat_with_<slug> (an exposed agent, for
// every user) are one tool over two agents: a turn of a conversation,
// through chat below, the consent gate and dispatch.Service.Chat.

const askTool = "ask"

// ChatInput is the arguments of ask and of every chat_with_<slug> tool.
type ChatInput struct {
	Message   string `json:"message" jsonschema:"What to say to the agent, self-contained: the agent sees nothing of this conversation, only its own earlier turns (context_id). At most 32 KiB."`
	ContextID string `json:"context_id,omitempty" jsonschema:"Optional: the context_id of an earlier answer, to continue that conversation with the agent."`
}

// Turn is what a tool that talks to an agent answers: the agent's task and
// its answer as they stood when the call returned, or why nothing was
// sent.
type Turn struct {
	Dispatched bool   `json:"dispatched" jsonschema:"Whether the message was handed to the agent."`
	TaskID     string `json:"task_id,omitempty" jsonschema:"The agent's task for this message."`
	ContextID  string `json:"context_id,omitempty" jsonschema:"The conversation: pass it back as context_id to continue it."`
	Status     string `json:"status,omitempty" jsonschema:"The task's state when the call returned: completed, failed, canceled, rejected or input_required; submitted or working if the agent had not finished (its task goes on)."`
	Reply      string `json:"reply,omitempty" jsonschema:"The agent's answer."`
	Note       string `json:"note,omitempty"`
	Reason     string `json:"reason,omitempty" jsonschema:"Why nothing was sent."`
	Replayed   bool   `json:"replayed,omitempty" jsonschema:"True when this is the stored result of a consent answered before: nothing was sent again."`
}

// ChatOutput is the result of ask and of every chat_with_<slug> tool.
type ChatOutput = Turn

func (o *Turn) refuse(reason string) { o.Dispatched, o.Reason = false, reason }
func (o *Turn) replay()              { o.Replayed = true }
func (o *Turn) handed() bool         { return o.Dispatched }
func (o *Turn) result() *mcp.CallToolResult {
	return o.text("")
}

// text is the result a model reads: the agent's reply, then what became of
// the task (headed by what, when it says which playbook ran).
func (o *Turn) text(what string) *mcp.CallToolResult {
	if !o.Dispatched {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "Not dispatched: " + o.Reason}}}
	}
	text := o.Reply
	if text == "" {
		text = "(no reply)"
	}
	text += fmt.Sprintf("\n\n[%stask %s: %s; context_id %s]", what, o.TaskID, o.Status, o.ContextID)
	if o.Note != "" {
		text += "\n" + o.Note
	}
	if o.Replayed {
		text = "This consent was answered before; nothing was sent again.\n\n" + text
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

func (s *Server) askTool(srv *mcp.Server) {
	addTool(srv, &mcp.Tool{
		Name:  askTool,
		Title: "Ask the agent",
		Description: "Sends a message to this connector's agent, after the user approves it (if the user says no, the result says so " +
			"and nothing is sent), and returns the agent's reply. Pass context_id back to continue the conversation.",
		Annotations: &mcp.ToolAnnotations{Title: "Ask the agent", DestructiveHint: ptr(true), OpenWorldHint: ptr(true)},
	}, func(ctx context.Context, req *mcp.CallToolRequest, in ChatInput) (*mcp.CallToolResult, ChatOutput, error) {
		return s.chat(ctx, req, askTool, principal(ctx).Agent, in)
	})
}

// chatWithTool adds the tool of an exposed agent: named, within the
// exposure set, by connector.ToolNames.
func (s *Server) chatWithTool(srv *mcp.Server, tool, agentName string) {
	addTool(srv, &mcp.Tool{
		Name:  tool,
		Title: "Chat with " + agentName,
		Description: fmt.Sprintf("Sends a message to the agent %q, after the user approves it (if the user says no, the result says so "+
			"and nothing is sent), and returns the agent's reply. Pass context_id back to continue the conversation. "+
			"agentgate://agents describes the agent.", agentName),
		Annotations: &mcp.ToolAnnotations{Title: "Chat with " + agentName, DestructiveHint: ptr(true), OpenWorldHint: ptr(true)},
	}, func(ctx context.Context, req *mcp.CallToolRequest, in ChatInput) (*mcp.CallToolResult, ChatOutput, error) {
		return s.chat(ctx, req, tool, agentName, in)
	})
}

// chat is one turn with agent name through tool, for whoever may use it
// (dispatch.Service.Usable), with the user's consent.
func (s *Server) chat(ctx context.Context, req *mcp.CallToolRequest, tool, name string, in ChatInput) (*mcp.CallToolResult, ChatOutput, error) {
	p := principal(ctx)
	if err := dispatch.CheckChat(in.Message, in.ContextID); err != nil {
		return refusal[Turn](ctx, p, tool, name, "", Turn{}, "invalid", agentgate.ErrorMessage(err))
	}
	a, err := s.svc.Usable(ctx, p, name)
	if err != nil {
		return refusal[Turn](ctx, p, tool, name, "", Turn{}, "unknown_agent", agentgate.ErrorMessage(err))
	}
	claims, err := s.consentState(req, p, tool)
	if err != nil {
		return refusal[Turn](ctx, p, tool, name, "", Turn{}, "bad_state", agentgate.ErrorMessage(err))
	}
	digest, err := dedup.Digest([]string{tool, name, in.Message, in.ContextID})
	if err != nil {
		return failure[Turn](ctx, p, tool, name, "", Turn{}, err)
	}
	h := handing[Turn, *Turn]{
		tool: tool, agent: a.Template.Name, digest: digest, text: in.Message,
		question: fmt.Sprintf("Send this message to the agent %q (%s)?", a.Template.Name, a.Template.Description),
		do: func(ctx context.Context, once string) (Turn, string, error) {
			return s.turn(ctx, dispatch.Chat{Agent: a, Caller: p, Message: in.Message, ContextID: in.ContextID, MessageID: once, Claimed: once != ""})
		},
	}
	return h.run(ctx, s, req, p, claims)
}

// turn sends c and waits for the agent's answer within the request
// (dispatch.WaitBound). An agent that has not finished by then is no
// failure: the message was handed over, and the answer says the task goes
// on.
func (s *Server) turn(ctx context.Context, c dispatch.Chat) (Turn, string, error) {
	wait, cancel := dispatch.WaitBound(ctx)
	defer cancel()
	r, err := s.svc.Chat(wait, c)
	out := Turn{Dispatched: true, TaskID: r.TaskID, ContextID: r.ContextID, Status: r.Status, Reply: r.Reply}
	switch {
	case err == nil:
	case agentgate.ErrorCode(err) == agentgate.ETIMEOUT && r.TaskID != "":
		out.Note = fmt.Sprintf("The agent had not finished when this call returned; its task %s goes on.", r.TaskID)
	default:
		return Turn{}, "", err
	}
	return out, "dispatched", nil
}
