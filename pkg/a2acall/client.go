// Package a2acall is agentgate's client for the agents behind it. It calls an
// agent's A2A v1.0 JSON-RPC endpoint through a2a-go's client, and gives every
// call what a serverless front door needs: a timeout well inside API
// Gateway's, a bounded response, and failures as agentgate error codes whose
// messages are safe to show:
//
//   - EUNAVAILABLE, "agent unreachable: ...": no answer at all (unknown host,
//     refused or broken connection) or an HTTP 5xx without a JSON-RPC error.
//   - EAGENT: the agent answered, with an error. For a JSON-RPC error the
//     message is the agent's own, and the *a2a.Error stays in the chain, so a
//     proxy can relay the agent's code. Otherwise the message says what was
//     wrong: a 4xx or a redirect, a response too large, or not A2A at all.
//   - ETIMEOUT: the call's deadline passed first.
//
// Results are summaries (state and text, what agentgate's MCP tools show)
// that also carry the a2a-go value the agent sent (what agentgate's A2A front
// door relays), so a caller never decodes twice.
package a2acall

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/netguard"
)

const (
	// DefaultTimeout bounds each call. It leaves most of API Gateway's 29 s
	// for the rest of the request, and for answering in time when the agent
	// does not.
	DefaultTimeout = 10 * time.Second
	// DefaultMaxResponseBytes bounds an agent's response body.
	DefaultMaxResponseBytes = 1 << 20
	// PingTimeout bounds Ping, which status pages call for many agents.
	PingTimeout = 3 * time.Second
)

// maxAgentMessage bounds how much of an agent's error message is passed on.
const maxAgentMessage = 512

// pingTaskID names no task: asking an agent for it costs one lookup.
const pingTaskID = "agentgate-ping"

// Options configure a Client. Zero values mean the defaults.
type Options struct {
	Timeout          time.Duration     // per call; DefaultTimeout if zero
	MaxResponseBytes int64             // DefaultMaxResponseBytes if zero
	Transport        http.RoundTripper // http.DefaultTransport if nil
}

// Client calls agents at their JSON-RPC endpoint URLs. It is safe for
// concurrent use.
type Client struct {
	factory     *a2aclient.Factory
	timeout     time.Duration
	maxResponse int64
}

// New returns a Client.
func New(opts Options) *Client {
	base := opts.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	maxResponse := cmp.Or(opts.MaxResponseBytes, DefaultMaxResponseBytes)
	hc := &http.Client{Transport: &guard{base: base, limit: maxResponse}}
	return &Client{
		factory:     a2aclient.NewFactory(a2aclient.WithDefaultsDisabled(), a2aclient.WithJSONRPCTransport(hc)),
		timeout:     cmp.Or(opts.Timeout, DefaultTimeout),
		maxResponse: maxResponse,
	}
}

// Result is an agent's answer: a summary of it, and the answer itself.
type Result struct {
	// TaskID is "" when the agent answered with a message and no task.
	TaskID    a2a.TaskID
	ContextID string
	// State is the task's state; a message answer is TaskStateCompleted.
	State a2a.TaskState
	// Text is the text of the task's status message, or of the message answer.
	Text string
	// Artifacts holds the text of each of the task's artifacts, in order.
	Artifacts []string
	// StatusTime is when the agent says the task took its State; zero when
	// it does not say (and for a message answer).
	StatusTime time.Time
	// Answer is the *a2a.Task or *a2a.Message as the agent sent it.
	Answer a2a.SendMessageResult
}

// Send delivers msg without waiting for the work (returnImmediately): the
// agent answers once it has taken the message on, typically with a task
// submitted or working, which GetTask then follows. An agent may still answer
// with a finished task, or with a message and no task.
func (c *Client) Send(ctx context.Context, endpoint string, msg *a2a.Message) (*Result, error) {
	return c.do(ctx, endpoint, c.timeout, send(msg, &a2a.SendMessageConfig{ReturnImmediately: true}))
}

// SendBlocking delivers msg and waits until the agent finishes (or needs
// input), for as long as ctx's deadline allows, even past the per-call
// timeout, so that chat can wait out an agent's reply; without a deadline
// the per-call timeout applies. On ETIMEOUT the task, if one was made, runs
// on unseen: use Send and GetTask for work that may outlast the deadline.
func (c *Client) SendBlocking(ctx context.Context, endpoint string, msg *a2a.Message) (*Result, error) {
	timeout := c.timeout
	if deadline, ok := ctx.Deadline(); ok {
		timeout = time.Until(deadline)
	}
	return c.do(ctx, endpoint, timeout, send(msg, nil))
}

// GetTask returns the task's current state, as the agent stores it.
func (c *Client) GetTask(ctx context.Context, endpoint string, taskID a2a.TaskID) (*Result, error) {
	return c.do(ctx, endpoint, c.timeout, getTask(taskID))
}

// Cancel asks the agent to cancel the task and returns the task as the agent
// left it, normally canceled. An agent refuses to cancel a task that has
// completed or failed, which is EAGENT.
func (c *Client) Cancel(ctx context.Context, endpoint string, taskID a2a.TaskID) (*Result, error) {
	return c.do(ctx, endpoint, c.timeout, func(ctx context.Context, a *a2aclient.Client) (a2a.SendMessageResult, error) {
		return a.CancelTask(ctx, &a2a.CancelTaskRequest{ID: taskID})
	})
}

// Ping reports whether the agent answers A2A JSON-RPC at endpoint, within
// PingTimeout. It asks for a task that does not exist: any JSON-RPC answer,
// the expected "task not found" included, shows the agent is up. Unlike
// fetching the agent card, this tests the endpoint itself, which need not
// share a host with the card.
func (c *Client) Ping(ctx context.Context, endpoint string) error {
	_, err := c.do(ctx, endpoint, min(PingTimeout, c.timeout), getTask(pingTaskID))
	var answered *a2a.Error
	if errors.As(err, &answered) {
		return nil
	}
	return err
}

// call is one A2A method called through a2a-go's client.
type call func(context.Context, *a2aclient.Client) (a2a.SendMessageResult, error)

func send(msg *a2a.Message, config *a2a.SendMessageConfig) call {
	return func(ctx context.Context, a *a2aclient.Client) (a2a.SendMessageResult, error) {
		return a.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg, Config: config})
	}
}

func getTask(id a2a.TaskID) call {
	return func(ctx context.Context, a *a2aclient.Client) (a2a.SendMessageResult, error) {
		return a.GetTask(ctx, &a2a.GetTaskRequest{ID: id})
	}
}

// do makes one call to the agent at endpoint, within timeout.
func (c *Client) do(ctx context.Context, endpoint string, timeout time.Duration, fn call) (*Result, error) {
	if u, err := url.Parse(endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, agentgate.Errorf(agentgate.EINVALID, "the agent endpoint is not an http(s) URL")
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// A client is two small structs and no connection (those are pooled by
	// the shared http.Client), so one per call costs nothing.
	client, err := c.factory.CreateFromEndpoints(ctx, []*a2a.AgentInterface{a2a.NewAgentInterface(endpoint, a2a.TransportProtocolJSONRPC)})
	if err != nil {
		return nil, fmt.Errorf("a2acall: creating a client: %w", err)
	}
	answer, err := fn(ctx, client)
	if err != nil {
		return nil, c.classify(ctx, err)
	}
	return Summarize(answer), nil
}

// classify turns a failed call into an agentgate error. Its message is the
// agent's own for a JSON-RPC error and a short reason of ours otherwise,
// never addresses or a2a-go's internals; the cause stays in the chain, for
// logs.
func (c *Client) classify(ctx context.Context, err error) error {
	var (
		answered *a2a.Error
		status   *statusError
		tooLarge *http.MaxBytesError
		noAnswer *url.Error
	)
	switch {
	case errors.As(err, &answered):
		return agentgate.Wrap(agentgate.EAGENT, err, "agent error: "+clip(answered.Message))
	case ctx.Err() != nil:
		return agentgate.Wrap(agentgate.ETIMEOUT, err, "the agent did not answer in time")
	case errors.As(err, &tooLarge):
		return agentgate.Wrap(agentgate.EAGENT, err, fmt.Sprintf("the agent's response exceeds %d bytes", c.maxResponse))
	case errors.As(err, &status) && status.code >= 500:
		return agentgate.Wrap(agentgate.EUNAVAILABLE, err, "agent unreachable: "+status.Error())
	case errors.As(err, &status):
		return agentgate.Wrap(agentgate.EAGENT, err, "the agent answered "+status.Error())
	case errors.As(err, &noAnswer): // after status: guard's errors come wrapped in one
		return agentgate.Wrap(agentgate.EUNAVAILABLE, err, "agent unreachable: "+reason(err))
	}
	return agentgate.Wrap(agentgate.EAGENT, err, "the agent's response is not valid A2A JSON-RPC")
}

// reason says in a few words why a request got no answer, without the
// addresses that network errors spell out.
func reason(err error) string {
	var (
		dns  *net.DNSError
		cert *tls.CertificateVerificationError
	)
	switch {
	case errors.Is(err, netguard.ErrBlocked):
		return "its address is not an allowed destination"
	case errors.As(err, &dns):
		return "host not found"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.As(err, &cert):
		return "TLS certificate not trusted"
	}
	return "connection failed"
}

// clip bounds an agent's error message, which callers see and logs keep.
func clip(s string) string {
	if len(s) <= maxAgentMessage {
		return s
	}
	return strings.ToValidUTF8(s[:maxAgentMessage], "") + "…"
}

// Summarize reads an agent's answer, a task or a message, as a Result.
func Summarize(answer a2a.SendMessageResult) *Result {
	if m, ok := answer.(*a2a.Message); ok {
		return &Result{TaskID: m.TaskID, ContextID: m.ContextID, State: a2a.TaskStateCompleted, Text: text(m.Parts), Answer: m}
	}
	t := answer.(*a2a.Task) // a2a-go's client returns a task or a message, nothing else
	r := &Result{TaskID: t.ID, ContextID: t.ContextID, State: t.Status.State, Answer: t}
	if t.Status.Timestamp != nil {
		r.StatusTime = t.Status.Timestamp.UTC()
	}
	if t.Status.Message != nil {
		r.Text = text(t.Status.Message.Parts)
	}
	for _, a := range t.Artifacts {
		r.Artifacts = append(r.Artifacts, text(a.Parts))
	}
	return r
}

// text joins the text parts, one per line; other parts have no text to show.
func text(parts a2a.ContentParts) string {
	var texts []string
	for _, p := range parts {
		if t, ok := p.Content.(a2a.Text); ok {
			texts = append(texts, string(t))
		}
	}
	return strings.Join(texts, "\n")
}

// guard is the HTTP transport under a2a-go's client. It bounds every response
// body, and turns any status but 200 into a statusError, since a2a-go reports
// one only as text. That includes redirects, so a call is never re-sent to a
// URL the agent's owner did not register. A JSON-RPC error sent with an error
// status is passed on as a 200, so that a2a-go reads the agent's message.
type guard struct {
	base  http.RoundTripper
	limit int64
}

func (g *guard) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := g.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = http.MaxBytesReader(nil, resp.Body, g.limit)
	if resp.StatusCode == http.StatusOK {
		return resp, nil
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err == nil && isJSONRPCError(body) {
		resp.StatusCode, resp.Status = http.StatusOK, "200 OK"
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return resp, nil
	}
	return nil, &statusError{code: resp.StatusCode}
}

func isJSONRPCError(body []byte) bool {
	var resp struct {
		JSONRPC string    `json:"jsonrpc"`
		Error   *struct{} `json:"error"`
	}
	return json.Unmarshal(body, &resp) == nil && resp.JSONRPC == "2.0" && resp.Error != nil
}

// statusError is an HTTP status other than 200 that came without a JSON-RPC
// error.
type statusError struct{ code int }

func (e *statusError) Error() string {
	return fmt.Sprintf("HTTP %d %s", e.code, http.StatusText(e.code))
}
