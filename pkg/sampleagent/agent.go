// Package sampleagent is a real A2A v1.0 agent with no model behind it:
// deterministic playbooks stand in for an LLM, so that agentgate's tests and
// demos can put a genuine A2A server (a2a-go's a2asrv, JSON-RPC binding)
// behind agentgate and know exactly what it will answer.
//
// A message chooses its playbook in one of two ways:
//
//   - message metadata "playbook" names it, and all the message's text is the
//     input: {"metadata": {"playbook": "reverse"}, "parts": [{"text": "abc"}]};
//   - otherwise the first word of the text names it and the rest is the
//     input: "word-count one two three". Text whose first word is not a
//     playbook is echoed whole, so plain chat gets an answer.
//
// The playbooks are echo, word-count, reverse, slow ("slow 5" waits five
// seconds: default 2, at most 20, fractions allowed; it can be canceled) and
// fail (the task ends failed, with the input as its message).
//
// Every message becomes a task that moves submitted -> working ->
// completed (one text artifact holding the output) or failed (the status
// message says why), through a2a-go's in-memory task store, so a SendMessage
// with returnImmediately answers at once and GetTask then sees the task
// progress. Tasks are kept in memory for the life of the process.
package sampleagent

import (
	"cmp"
	"context"
	"iter"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/log"
)

// Options configure an Agent.
type Options struct {
	// URL is the JSON-RPC endpoint the agent card advertises. Empty means the
	// origin the card was fetched from, which suits tests and local runs.
	URL string
	// Logger receives a2a-go's logs and the agent's; nil means slog.Default().
	Logger *slog.Logger
}

// maxRequestBytes bounds a JSON-RPC request body, which a2a-go would
// otherwise decode whatever its size.
const maxRequestBytes = 1 << 20

// Agent is the sample agent. Its zero value is not usable; call New.
type Agent struct {
	received atomic.Int64
	handler  http.Handler
}

// New returns an agent with its own in-memory task store.
func New(opts Options) *Agent {
	a := &Agent{}
	requests := a2asrv.NewHandler(executor{a}, a2asrv.WithLogger(cmp.Or(opts.Logger, slog.Default())))
	mux := http.NewServeMux()
	mux.Handle("/{$}", http.MaxBytesHandler(a2asrv.NewJSONRPCHandler(requests), maxRequestBytes))
	mux.Handle(a2asrv.WellKnownAgentCardPath, cardHandler(opts.URL))
	a.handler = mux
	return a
}

// Handler serves A2A JSON-RPC at "/" and the agent card at
// /.well-known/agent-card.json.
func (a *Agent) Handler() http.Handler { return a.handler }

// Received returns how many messages have reached the agent, that is, passed
// a2a-go's validation and started a task. Tests use it to prove that a
// request was, or was not, forwarded.
func (a *Agent) Received() int64 { return a.received.Load() }

// executor runs playbooks as a2a-go agent executions.
type executor struct{ agent *Agent }

// Execute emits the task's lifecycle as events; a2a-go applies them to the
// task store, and answers a returnImmediately SendMessage after the first.
func (e executor) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	e.agent.received.Add(1)
	return func(yield func(a2a.Event, error) bool) {
		// A message that continues a stored task must not submit it again.
		if ec.StoredTask == nil && !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		if !yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, nil), nil) {
			return
		}
		out, err := run(ctx, ec.Message)
		switch {
		case ctx.Err() != nil:
			// Canceled: a2a-go stops the execution once Cancel's event has
			// made the task terminal, so there is nothing left to say.
			return
		case err != nil:
			reason := a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart(err.Error()))
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateFailed, reason), nil)
			return
		}
		if yield(a2a.NewArtifactEvent(ec, a2a.NewTextPart(out)), nil) {
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, nil), nil)
		}
	}
}

// Cancel marks the task canceled. When the task is still running, a2a-go
// delivers this event to its execution, whose context it then cancels.
func (executor) Cancel(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

// run chooses msg's playbook and runs it.
func run(ctx context.Context, msg *a2a.Message) (string, error) {
	var texts []string
	for _, p := range msg.Parts {
		if t, ok := p.Content.(a2a.Text); ok {
			texts = append(texts, string(t))
		}
	}
	p, input, err := choose(msg.Metadata, strings.Join(texts, "\n"))
	if err != nil {
		return "", err
	}
	log.Info(ctx, "running playbook", "playbook", p.name)
	return p.run(ctx, input)
}

// cardHandler serves a simple card that advertises url, or the origin of
// each card request when url is empty. agentgate publishes its own card for
// the agents behind it; this one is for talking to the agent directly.
func cardHandler(url string) http.Handler {
	if url != "" {
		return a2asrv.NewStaticAgentCardHandler(card(url))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		a2asrv.NewStaticAgentCardHandler(card(scheme+"://"+r.Host+"/")).ServeHTTP(w, r)
	})
}

func card(url string) *a2a.AgentCard {
	skills := make([]a2a.AgentSkill, len(playbooks))
	for i, p := range playbooks {
		skills[i] = a2a.AgentSkill{
			ID:          p.name,
			Name:        p.name,
			Description: p.description,
			Tags:        []string{"playbook"},
			Examples:    []string{p.example},
		}
	}
	return &a2a.AgentCard{
		Name:                "sampleagent",
		Description:         "A deterministic A2A agent with no model: the first word of a message (or its \"playbook\" metadata) picks a playbook.",
		Version:             "1.0.0",
		SupportedInterfaces: []*a2a.AgentInterface{a2a.NewAgentInterface(url, a2a.TransportProtocolJSONRPC)},
		Capabilities:        a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes:   []string{"text/plain"},
		DefaultOutputModes:  []string{"text/plain"},
		Skills:              skills,
	}
}
