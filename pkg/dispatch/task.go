package dispatch

import (
	"encoding/json"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentgate/agentgate/pkg/agent"
	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/dedup"
	"github.com/agentgate/agentgate/pkg/execution"
)

// Task is work an MCP host hands an agent: an instruction, under the
// caller's taskId, which is both the idempotency key and the name the host
// polls the execution by.
type Task struct {
	Agent          agent.Agent
	Caller         agentgate.Principal
	TaskID         string
	Instruction    string
	ExpectedOutput string
}

// CheckTask refuses a task outside the input contract the A2A front door
// also keeps: a printable taskId, a non-empty instruction, and at most
// MaxTextBytes of text in all.
func CheckTask(taskID, instruction, expectedOutput string) error {
	var problems []string
	add := func(err error) {
		if err != nil {
			problems = append(problems, agentgate.ErrorMessage(err))
		}
	}
	add(CheckID("taskId", taskID))
	if strings.TrimSpace(instruction) == "" {
		problems = append(problems, "instruction: required")
	}
	add(CheckText("instruction", instruction))
	add(CheckText("expectedOutput", expectedOutput))
	if len(problems) == 0 {
		add(CheckText("instruction and expectedOutput together", instruction+expectedOutput))
	}
	if len(problems) > 0 {
		return agentgate.Errorf(agentgate.EINVALID, "%s", strings.Join(problems, "; "))
	}
	return nil
}

// Digest identifies what the task asks, so that a taskId reused for other
// work is told from a retry.
func (t Task) Digest() (string, error) {
	return dedup.Digest([]string{t.Agent.Template.Name, t.Instruction, t.ExpectedOutput})
}

// Ref names the task's execution record.
func (t Task) Ref() execution.Ref { return TaskRef(t.Caller.Subject, t.TaskID) }

// TaskRef names the execution of caller's taskId.
func TaskRef(caller, taskID string) execution.Ref {
	return execution.Ref{Origin: execution.OriginMCP, Scope: caller, ID: taskID}
}

// message is the A2A message that carries the task: the instruction, then
// the expected output, as text; the taskId in its metadata, so the agent's
// logs can name it. Its messageId is fresh: taskIds are the caller's, not
// unique at the agent.
func (t Task) message() *a2a.Message {
	text := t.Instruction
	if t.ExpectedOutput != "" {
		text += "\n\nExpected output: " + t.ExpectedOutput
	}
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
	m.Metadata = map[string]any{"agentgate.taskId": t.TaskID}
	return m
}

// decodeSent reads what Send stored.
func decodeSent(raw json.RawMessage) (*Sent, error) {
	var rec sentRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		return nil, err
	}
	answer, ok := rec.Answer.Event.(a2a.SendMessageResult)
	if !ok {
		return nil, agentgate.Errorf(agentgate.EINTERNAL, "stored answer is a %T", rec.Answer.Event)
	}
	return &Sent{Answer: answer, Ref: rec.Ref}, nil
}
