package sampleagent_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentgate/agentgate/pkg/a2acall"
	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/sampleagent"
)

// start serves a fresh agent and returns it with its endpoint URL.
func start(t *testing.T) (*sampleagent.Agent, string) {
	t.Helper()
	agent := sampleagent.New(sampleagent.Options{Logger: slog.New(slog.DiscardHandler)})
	srv := httptest.NewServer(agent.Handler())
	t.Cleanup(srv.Close)
	return agent, srv.URL + "/"
}

func message(text string) *a2a.Message {
	return a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
}

func TestPlaybooks(t *testing.T) {
	_, endpoint := start(t)
	client := a2acall.New(a2acall.Options{})
	withPlaybook := func(name, text string) *a2a.Message {
		m := message(text)
		m.SetMeta("playbook", name)
		return m
	}
	tests := []struct {
		name     string
		msg      *a2a.Message
		state    a2a.TaskState
		artifact string // the output, for a completed task
		text     string // the status message, for a failed one
	}{
		{"echo", message("echo hello  world"), a2a.TaskStateCompleted, "hello  world", ""},
		{"plain text is echoed", message("what is this?"), a2a.TaskStateCompleted, "what is this?", ""},
		{"word-count", message("word-count one two\nthree"), a2a.TaskStateCompleted, "3", ""},
		{"reverse", message("reverse héllo"), a2a.TaskStateCompleted, "olléh", ""},
		{"slow", message("slow 0.05"), a2a.TaskStateCompleted, "waited 50ms", ""},
		{"slow with bad input", message("slow forever"), a2a.TaskStateFailed, "", `slow wants a number of seconds, not "forever"`},
		{"fail", message("fail out of coffee"), a2a.TaskStateFailed, "", "out of coffee"},
		{"fail without input", message("fail"), a2a.TaskStateFailed, "", "failed as asked"},
		{"metadata names the playbook", withPlaybook("reverse", "echo abc"), a2a.TaskStateCompleted, "cba ohce", ""},
		{"metadata names no playbook", withPlaybook("dance", "abc"), a2a.TaskStateFailed, "", `unknown playbook "dance"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := client.SendBlocking(t.Context(), endpoint, tt.msg)
			if err != nil {
				t.Fatal(err)
			}
			if r.State != tt.state || r.Text != tt.text {
				t.Fatalf("state %s, text %q; want %s, %q", r.State, r.Text, tt.state, tt.text)
			}
			if tt.state == a2a.TaskStateCompleted && (len(r.Artifacts) != 1 || r.Artifacts[0] != tt.artifact) {
				t.Fatalf("artifacts %q, want [%q]", r.Artifacts, tt.artifact)
			}
		})
	}
}

// poll follows a task until it ends, and returns every state it saw.
func poll(t *testing.T, client *a2acall.Client, endpoint string, id a2a.TaskID) []a2a.TaskState {
	t.Helper()
	var seen []a2a.TaskState
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		r, err := client.GetTask(t.Context(), endpoint, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(seen) == 0 || seen[len(seen)-1] != r.State {
			seen = append(seen, r.State)
		}
		if r.State.Terminal() {
			return seen
		}
	}
	t.Fatalf("task %s still not done; states seen: %v", id, seen)
	return nil
}

func TestSlowTaskCanBePolledToCompletion(t *testing.T) {
	agent, endpoint := start(t)
	client := a2acall.New(a2acall.Options{})

	begin := time.Now()
	r, err := client.Send(t.Context(), endpoint, message("slow 1"))
	if err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(begin); elapsed > 500*time.Millisecond {
		t.Fatalf("Send took %s: it waited for the work", elapsed)
	}
	if r.TaskID == "" || r.ContextID == "" || r.State.Terminal() {
		t.Fatalf("Send answered %+v, want a task still in progress", r)
	}
	if got := agent.Received(); got != 1 {
		t.Fatalf("Received() = %d, want 1", got)
	}

	seen := poll(t, client, endpoint, r.TaskID)
	if len(seen) < 2 || seen[len(seen)-2] != a2a.TaskStateWorking || seen[len(seen)-1] != a2a.TaskStateCompleted {
		t.Fatalf("states seen %v, want working then completed", seen)
	}
	if got, err := client.GetTask(t.Context(), endpoint, r.TaskID); err != nil || got.Artifacts[0] != "waited 1s" {
		t.Fatalf("GetTask = %+v, %v", got, err)
	}
}

func TestCancelStopsSlowTask(t *testing.T) {
	_, endpoint := start(t)
	client := a2acall.New(a2acall.Options{})

	r, err := client.Send(t.Context(), endpoint, message("slow 20"))
	if err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	canceled, err := client.Cancel(t.Context(), endpoint, r.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	if canceled.State != a2a.TaskStateCanceled || time.Since(begin) > 2*time.Second {
		t.Fatalf("Cancel answered %s after %s", canceled.State, time.Since(begin))
	}
	if got := poll(t, client, endpoint, r.TaskID); got[len(got)-1] != a2a.TaskStateCanceled {
		t.Fatalf("task ended %v", got)
	}

	// A completed task cannot be canceled; the agent says so.
	done, err := client.SendBlocking(t.Context(), endpoint, message("echo done"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.Cancel(t.Context(), endpoint, done.TaskID)
	if agentgate.ErrorCode(err) != agentgate.EAGENT || !strings.Contains(agentgate.ErrorMessage(err), "cannot be canceled") {
		t.Fatalf("Cancel of a completed task: %v, want %s saying it cannot be canceled", err, agentgate.EAGENT)
	}
}

func TestReceivedCountsMessagesThatReachTheAgent(t *testing.T) {
	agent, endpoint := start(t)
	client := a2acall.New(a2acall.Options{})

	// Rejected by a2a-go before the agent sees it: a message without parts.
	if _, err := client.Send(t.Context(), endpoint, a2a.NewMessage(a2a.MessageRoleUser)); agentgate.ErrorCode(err) != agentgate.EAGENT {
		t.Fatalf("empty message: %v, want %s", err, agentgate.EAGENT)
	}
	if err := client.Ping(t.Context(), endpoint); err != nil {
		t.Fatal(err)
	}
	if got := agent.Received(); got != 0 {
		t.Fatalf("Received() = %d before any message, want 0", got)
	}
	for range 2 {
		if _, err := client.SendBlocking(t.Context(), endpoint, message("echo hi")); err != nil {
			t.Fatal(err)
		}
	}
	if got := agent.Received(); got != 2 {
		t.Fatalf("Received() = %d, want 2", got)
	}
}

func TestCard(t *testing.T) {
	_, endpoint := start(t)
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, endpoint+".well-known/agent-card.json", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var card a2a.AgentCard
	if err := json.NewDecoder(resp.Body).Decode(&card); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || len(card.SupportedInterfaces) != 1 || card.SupportedInterfaces[0].URL != endpoint {
		t.Fatalf("status %d, interfaces %+v; want one at %s", resp.StatusCode, card.SupportedInterfaces, endpoint)
	}
	if card.SupportedInterfaces[0].ProtocolBinding != a2a.TransportProtocolJSONRPC || len(card.Skills) != 5 {
		t.Fatalf("card %+v", card)
	}
}
