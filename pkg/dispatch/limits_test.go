package dispatch

import (
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentgate/agentgate/pkg/agentgate"
)

func TestCheckMessage(t *testing.T) {
	text := func(s string) *a2a.Message {
		m := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(s))
		m.ID = "m-1"
		return m
	}
	if err := CheckMessage(text("hello")); err != nil {
		t.Fatalf("a plain message: %v", err)
	}
	manyParts := text("x")
	for range MaxParts {
		manyParts.Parts = append(manyParts.Parts, a2a.NewTextPart("y"))
	}
	noID := text("x")
	noID.ID = ""
	agentRole := text("x")
	agentRole.Role = a2a.MessageRoleAgent
	badTask := text("x")
	badTask.TaskID = a2a.TaskID(strings.Repeat("t", MaxIDLen+1))
	for name, tc := range map[string]struct {
		m    *a2a.Message
		want []string
	}{
		"nil":            {nil, []string{"message: required"}},
		"no id":          {noID, []string{"message.messageId: required"}},
		"agent role":     {agentRole, []string{"message.role: must be ROLE_USER"}},
		"too many parts": {manyParts, []string{"17 parts is over the limit of 16"}},
		"too much text":  {text(strings.Repeat("x", MaxTextBytes+1)), []string{"bytes of text is over the limit"}},
		"long task id":   {badTask, []string{"message.taskId: longer than 128 bytes"}},
		"control in id":  {func() *a2a.Message { m := text("x"); m.ID = "a\x00b"; return m }(), []string{"only printable characters"}},
	} {
		err := CheckMessage(tc.m)
		if agentgate.ErrorCode(err) != agentgate.EINVALID {
			t.Errorf("%s: %v, want invalid", name, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q lacks %q", name, err, w)
			}
		}
	}
	// Every problem is listed, not just the first.
	both := text("")
	both.ID, both.Role = "", a2a.MessageRoleAgent
	if err := CheckMessage(both); err == nil || !strings.Contains(err.Error(), "messageId: required") || !strings.Contains(err.Error(), "role") {
		t.Errorf("two problems: %v", err)
	}
}

func TestCheckTask(t *testing.T) {
	if err := CheckTask("t-1", "do it", ""); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct{ id, instruction, expected, want string }{
		"empty instruction": {"t-1", "  ", "", "instruction: required"},
		"bad id":            {"t 1", "x", "", "taskId: only printable"},
		"too long together": {"t-1", strings.Repeat("x", MaxTextBytes/2+1), strings.Repeat("y", MaxTextBytes/2), "together"},
		"not UTF-8":         {"t-1", "\xff", "", "not valid UTF-8"},
	} {
		if err := CheckTask(tc.id, tc.instruction, tc.expected); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}
