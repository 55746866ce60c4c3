package dispatch

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentgate/agentgate/pkg/agentgate"
)

// The input contract shared by every door to an agent (the A2A front door
// and MCP dispatch_task): what a caller may hand an agent through agentgate.
// The caps keep a request well inside a Lambda invocation and a stored
// record inside a DynamoDB item, and stop agentgate from being a cheap
// amplifier of large payloads.
const (
	// MaxIDLen bounds caller-chosen ids: messageId, taskId, contextId.
	MaxIDLen = 128
	// MaxTextBytes bounds a message's text: all its text parts, or an
	// instruction with its expected output.
	MaxTextBytes = 32 << 10
	// MaxParts bounds a message's parts.
	MaxParts = 16
	// MaxMessageBytes bounds a message as JSON: parts, data and metadata.
	MaxMessageBytes = 64 << 10
)

// CheckID refuses an id that is empty, too long, or has characters that
// are not printable (ids end up in logs, keys and answers).
func CheckID(field, id string) error {
	switch {
	case id == "":
		return agentgate.Errorf(agentgate.EINVALID, "%s: required", field)
	case len(id) > MaxIDLen:
		return agentgate.Errorf(agentgate.EINVALID, "%s: longer than %d bytes", field, MaxIDLen)
	case !utf8.ValidString(id) || strings.IndexFunc(id, func(r rune) bool { return !unicode.IsPrint(r) || unicode.IsSpace(r) }) >= 0:
		return agentgate.Errorf(agentgate.EINVALID, "%s: only printable characters without spaces are allowed", field)
	}
	return nil
}

// CheckText refuses text over MaxTextBytes or not UTF-8.
func CheckText(field, text string) error {
	switch {
	case len(text) > MaxTextBytes:
		return agentgate.Errorf(agentgate.EINVALID, "%s: %d bytes is over the limit of %d", field, len(text), MaxTextBytes)
	case !utf8.ValidString(text):
		return agentgate.Errorf(agentgate.EINVALID, "%s: not valid UTF-8", field)
	}
	return nil
}

// CheckMessage refuses a message a caller may not send to an agent: it must
// come from the user role, have an id and at least one part, and stay
// within the caps. Every problem found is listed.
func CheckMessage(m *a2a.Message) error {
	if m == nil {
		return agentgate.Errorf(agentgate.EINVALID, "message: required")
	}
	var problems []string
	add := func(err error) {
		if err != nil {
			problems = append(problems, agentgate.ErrorMessage(err))
		}
	}
	add(CheckID("message.messageId", m.ID))
	if m.ContextID != "" {
		add(CheckID("message.contextId", m.ContextID))
	}
	if m.TaskID != "" {
		add(CheckID("message.taskId", string(m.TaskID)))
	}
	if m.Role != a2a.MessageRoleUser {
		problems = append(problems, "message.role: must be ROLE_USER")
	}
	switch n := len(m.Parts); {
	case n == 0:
		problems = append(problems, "message.parts: at least one part is required")
	case n > MaxParts:
		problems = append(problems, fmt.Sprintf("message.parts: %d parts is over the limit of %d", n, MaxParts))
	}
	text := 0
	for _, p := range m.Parts {
		if t, ok := p.Content.(a2a.Text); ok {
			text += len(t)
		}
	}
	if text > MaxTextBytes {
		problems = append(problems, fmt.Sprintf("message.parts: %d bytes of text is over the limit of %d", text, MaxTextBytes))
	}
	if data, err := json.Marshal(m); err != nil {
		problems = append(problems, "message: cannot be encoded")
	} else if len(data) > MaxMessageBytes {
		problems = append(problems, fmt.Sprintf("message: %d bytes is over the limit of %d", len(data), MaxMessageBytes))
	}
	if len(problems) > 0 {
		return agentgate.Errorf(agentgate.EINVALID, "%s", strings.Join(problems, "; "))
	}
	return nil
}
