package dispatch

import (
	"context"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentgate/agentgate/pkg/a2acall"
	"github.com/agentgate/agentgate/pkg/agent"
	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/dedup"
)

// Chat is one turn of a conversation with an agent: a message, in the
// conversation (A2A context) of a previous turn when ContextID is set.
type Chat struct {
	Agent     agent.Agent
	Caller    agentgate.Principal
	Message   string
	ContextID string
	// Metadata goes with the message, for the agent (a playbook name, the
	// playbook's input).
	Metadata map[string]any
	// MessageID, if set, is the message's id, and names the send: a second
	// Chat with the same id and content gets the first one's answer and
	// reaches the agent no more. "": a fresh id.
	MessageID string
	// Claimed says that the caller holds the turn's once-only claim
	// itself (the MCP server's consent record, whose first yes claims the
	// send): the send then needs no dedup entry of its own.
	Claimed bool
}

// Reply is the agent's answer to a Chat.
type Reply struct {
	Reply     string `json:"reply"`
	ContextID string `json:"context_id"`
	TaskID    string `json:"task_id"`
	Status    string `json:"status"` // the task's state, as StatusName names it
}

// chatScope is the dedup scope of chat turns. Each turn has a fresh
// messageId, so the dedup entry only guards the send itself (a retry of
// one call on another instance), not the caller's intent.
const chatScope = "chat"

// CheckChat refuses a turn outside the input contract every door keeps.
func CheckChat(message, contextID string) error {
	var problems []string
	if strings.TrimSpace(message) == "" {
		problems = append(problems, "message: required")
	}
	for _, err := range []error{CheckText("message", message), checkOptionalID("context_id", contextID)} {
		if err != nil {
			problems = append(problems, agentgate.ErrorMessage(err))
		}
	}
	if len(problems) > 0 {
		return agentgate.Errorf(agentgate.EINVALID, "%s", strings.Join(problems, "; "))
	}
	return nil
}

func checkOptionalID(field, id string) error {
	if id == "" {
		return nil
	}
	return CheckID(field, id)
}

// Chat sends c to its agent through the one send path (dedup, execution
// record) and waits, until ctx's deadline, for the agent to settle the
// task it makes. An agent that has not finished by then is ETIMEOUT, with
// the task to follow named in the message: the work goes on.
func (s *Service) Chat(ctx context.Context, c Chat) (Reply, error) {
	if err := CheckChat(c.Message, c.ContextID); err != nil {
		return Reply{}, err
	}
	if err := checkOptionalID("messageId", c.MessageID); err != nil {
		return Reply{}, err
	}
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(c.Message))
	if c.MessageID != "" {
		m.ID = c.MessageID
	}
	m.ContextID = c.ContextID
	m.Metadata = c.Metadata
	digest, err := dedup.Digest(m)
	if err != nil {
		return Reply{}, err
	}
	send := Send{Agent: c.Agent, Caller: c.Caller, Message: m, Digest: digest}
	if !c.Claimed {
		send.Dedup = dedup.Key{Scope: chatScope + ":" + c.Agent.Template.Name, Caller: c.Caller.Subject, ID: m.ID}
	}
	sent, err := s.Send(ctx, send)
	if err != nil {
		return Reply{}, err
	}
	res := a2acall.Summarize(s.Settle(ctx, c.Agent, sent))
	reply := strings.Join(res.Artifacts, "\n")
	if reply == "" {
		reply = res.Text
	}
	r := Reply{Reply: reply, ContextID: res.ContextID, TaskID: string(res.TaskID), Status: StatusName(res.State)}
	if !settled(res.State) {
		return r, agentgate.Errorf(agentgate.ETIMEOUT, "the agent has not answered in time; its task %s is %s and goes on: follow it with GetTask at the agent's A2A front door", r.TaskID, r.Status)
	}
	return r, nil
}

// The longest a caller waits for a turn's answer (WaitBound), and how long
// before the request's deadline it stops waiting, to leave time to answer.
const (
	MaxWait    = 20 * time.Second
	WaitMargin = 2 * time.Second
)

// WaitBound is ctx bounded for waiting on an agent within a request: at most
// MaxWait, and WaitMargin before ctx's deadline.
func WaitBound(ctx context.Context) (context.Context, context.CancelFunc) {
	until := time.Now().Add(MaxWait)
	if d, ok := ctx.Deadline(); ok && d.Add(-WaitMargin).Before(until) {
		until = d.Add(-WaitMargin)
	}
	return context.WithDeadline(ctx, until)
}

// StatusName is the name the tools and APIs give a task state: the v1.0
// enum without its prefix, in lower case (completed, input_required).
func StatusName(s a2a.TaskState) string {
	if s == a2a.TaskStateUnspecified {
		return "unknown"
	}
	return strings.ToLower(strings.TrimPrefix(string(s), "TASK_STATE_"))
}
