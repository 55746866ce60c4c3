// Package mcpserver is the MCP function: agent discovery (resources), the
// delegate_task prompt, consent-gated dispatch_task and the tools that
// follow the work, a chat_with_<slug> tool per agent its owner exposed, and
// for a connector key its agent's connector (list_playbooks, run_playbook,
// ask), over MCP Streamable HTTP, on github.com/modelcontextprotocol/go-sdk.
//
// Two protocol generations share one set of tools:
//
//   - 2026-07-28 clients are served statelessly by the SDK's handler; a
//     consent is an MRTR round (the tool returns an input request and a
//     signed requestState; the retry may land on any instance).
//   - 2025-11-25, 2025-06-18 and 2025-03-26 clients get sessions, which
//     the SDK keeps only in memory; pkg/mcpsession keeps them in the table, so
//     that any instance serves any session, and turns a consent into an
//     elicitation/create on the tools/call stream whose answer may reach
//     any instance.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/askproxy"
	"github.com/agentgate/agentgate/pkg/connector"
	"github.com/agentgate/agentgate/pkg/dispatch"
	"github.com/agentgate/agentgate/pkg/mcphttp"
	"github.com/agentgate/agentgate/pkg/mcpsession"
	"github.com/agentgate/agentgate/pkg/store"
	"github.com/agentgate/agentgate/pkg/web"
)

// Protocol versions served: the stateless generation and the three
// session-based ones before it.
const (
	Version20260728 = "2026-07-28"
	Version20251125 = "2025-11-25"
)

// ProtocolVersions lists the versions served, newest first.
var ProtocolVersions = []string{Version20260728, Version20251125, "2025-06-18", "2025-03-26"}

// The tools of each principal scope: a user's, besides one chat_with_<slug>
// per exposed agent (ExposedTools), and a connector key's.
var (
	UserToolNames      = []string{dispatchTool, listExecutionsTool, executionResultTool, activityTool, askproxy.AskDocsTool}
	ConnectorToolNames = []string{listPlaybooksTool, runPlaybookTool, askTool}
)

// ExposedTools names, in the tools allow-list (MCP_TOOLS), the
// chat_with_<slug> tools of every exposed agent.
const ExposedTools = connector.ToolPrefix + "*"

// The names of everything the server can offer, for allow-lists (which
// also take ExposedTools). ToolNames are the built-in tools: no exposed
// agent's tool may take one of their names.
var (
	ToolNames     = slices.Concat(UserToolNames, ConnectorToolNames)
	ResourceNames = []string{agentsResource, statusResource}
	PromptNames   = []string{delegatePrompt}
)

// Options configure a Server.
type Options struct {
	Dispatch *dispatch.Service
	Store    store.Store
	// Connectors checks connector keys on every request and holds the
	// exposure set. nil: connector keys are refused, and nothing is
	// exposed.
	Connectors *connector.Service
	// Ask answers ask_docs, the docs Q&A tool the askproxy function serves
	// too; nil leaves the tool out.
	Ask askproxy.Asker
	// ConsentSecret signs consent state (at least MinConsentSecret bytes).
	ConsentSecret []byte
	// RequireConsent gates every dispatch on a human's yes. Only trusted,
	// non-interactive deployments turn it off.
	RequireConsent bool
	// Tools, Resources and Prompts are allow-lists by name; nil allows
	// all. What is not allowed is not registered, so it is neither listed
	// nor advertised as a capability.
	Tools, Resources, Prompts []string
	// Version is agentgate's, reported as the server's.
	Version string
	// SessionTTL is how long an idle legacy session lives.
	SessionTTL time.Duration
	Now        func() time.Time
}

// DefaultSessionTTL is how long an idle legacy session lives.
const DefaultSessionTTL = time.Hour

// Server is the MCP endpoint: an http.Handler for POST, GET and DELETE
// /mcp, behind the security chain (which puts the principal in the
// request's context).
type Server struct {
	svc            *dispatch.Service
	connectors     *connector.Service
	consents       consents
	signer         signer
	requireConsent bool
	now            func() time.Time
	opts           Options
	schemas        *mcp.SchemaCache
	exposure       *exposure
	// connectorServer is the server of connector keys, built by the first
	// connector request, not at start: building a server (its tools'
	// schemas inferred and resolved) is a millisecond or two of every cold
	// start that few instances would use. Users get one server per exposure
	// set (userServer), also built when first asked for.
	connectorServer func() *mcp.Server
	usersMu         sync.Mutex
	users           map[string]*mcp.Server // by exposureSet.key
	stateless       mcphttp.Stateless
	sessions        *mcpsession.Handler
}

// New returns the MCP server.
func New(opts Options) (*Server, error) {
	if len(opts.ConsentSecret) < MinConsentSecret {
		return nil, fmt.Errorf("mcpserver: the consent secret must be at least %d bytes", MinConsentSecret)
	}
	for _, l := range []struct {
		kind         string
		names, known []string
	}{{"tool", opts.Tools, append(slices.Clone(ToolNames), ExposedTools)}, {"resource", opts.Resources, ResourceNames}, {"prompt", opts.Prompts, PromptNames}} {
		for _, n := range l.names {
			if !slices.Contains(l.known, n) {
				return nil, fmt.Errorf("mcpserver: unknown %s %q in the allow-list (known: %s)", l.kind, n, strings.Join(l.known, ", "))
			}
		}
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	s := &Server{
		svc:            opts.Dispatch,
		connectors:     opts.Connectors,
		consents:       consents{store: opts.Store, ttl: opts.Dispatch.Dedup.TTL(), now: now},
		signer:         signer{secret: opts.ConsentSecret, now: now},
		requireConsent: opts.RequireConsent,
		now:            now,
		opts:           opts,
		schemas:        mcp.NewSchemaCache(),
		exposure:       &exposure{reserved: ToolNames, every: ExposureRefresh, now: now},
		users:          map[string]*mcp.Server{},
	}
	if opts.Connectors != nil {
		s.exposure.read = opts.Connectors.Exposed
	}
	s.connectorServer = sync.OnceValue(s.buildConnector)
	s.stateless = mcphttp.Stateless{
		SDK: mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
			srv, _ := s.server(r) // Before has waited for it
			return srv
		}, &mcp.StreamableHTTPOptions{
			Stateless:    true,
			JSONResponse: true,
			Logger:       quiet,
			// The chain caps bodies already.
			MaxRequestBodyBytes: -1,
		}),
		Before: func(r *http.Request) error { _, err := s.server(r); return err },
	}
	ttl := opts.SessionTTL
	if ttl == 0 {
		ttl = DefaultSessionTTL
	}
	out := DispatchOutput{Reason: "no answer to the consent request reached agentgate in time; nothing was dispatched"}
	unanswered := result(out) // the result dispatch_task gives for any refusal
	unanswered.StructuredContent = out
	s.sessions = &mcpsession.Handler{Store: opts.Store, Server: s.server, TTL: ttl, Now: now, Unanswered: unanswered}
	return s, nil
}

// quiet keeps the SDK's per-connection logs out of ours: legacy requests
// connect once per request.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// ServeHTTP routes by protocol generation: a request that says it speaks
// 2026-07-28 or later goes to the SDK's stateless handler; everything else
// (initialize carries no version header) to the session layer. Every
// request of a connector key is checked first (begin, server): a POST's
// check overlaps its session's read; a GET or DELETE waits for it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Every method may run a tool: a resuming GET runs the call its
	// consent answer settled (pkg/mcpsession).
	r = s.begin(r)
	if v := r.Header.Get("Mcp-Protocol-Version"); r.Method == http.MethodPost && v >= Version20260728 {
		s.stateless.ServeHTTP(w, r)
		return
	}
	if r.Method != http.MethodPost && principal(r.Context()).Scope == agentgate.ScopeConnector {
		if _, err := s.server(r); err != nil {
			web.WriteRPCFailure(w, r, nil, err)
			return
		}
	}
	s.sessions.ServeHTTP(w, r)
}

// Prefetch starts a session request's read of its session while the
// security chain makes its own store calls (mcpsession.Handler.Prefetch).
// A stateless request has no session to read.
func (s *Server) Prefetch(r *http.Request) *http.Request {
	if r.Method == http.MethodPost && r.Header.Get("Mcp-Protocol-Version") >= Version20260728 {
		return r
	}
	return s.sessions.Prefetch(r)
}

// allowed reports whether an allow-list (nil: everything) allows name.
func allowed(list []string, name string) bool { return list == nil || slices.Contains(list, name) }

// newSDKServer is an SDK server as every scope's starts.
func (s *Server) newSDKServer(instructions string) (*mcp.Server, *mcp.ServerCapabilities) {
	caps := &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}}
	srv := mcp.NewServer(&mcp.Implementation{Name: "agentgate", Title: "agentgate", Version: s.opts.Version}, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       quiet,
		Capabilities: caps,
		SchemaCache:  s.schemas,
		// Lists and reads depend on who asks: never cache them publicly.
		SetCacheable:              func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) { c.CacheScope = "private" },
		SupportedProtocolVersions: ProtocolVersions,
	})
	srv.AddReceivingMiddleware(argumentErrors)
	return srv, caps
}

// addTools registers the allowed tools and advertises them, if any.
func (s *Server) addTools(srv *mcp.Server, caps *mcp.ServerCapabilities, tools []toolDef) {
	n := 0
	for _, t := range tools {
		if allowed(s.opts.Tools, t.name) {
			t.add(srv)
			n++
		}
	}
	if n > 0 {
		// Without listChanged: a Lambda cannot hold the stream a client
		// would open to hear of changes. A new exposure set shows in the
		// next tools/list.
		caps.Tools = &mcp.ToolCapabilities{}
	}
}

// buildUser makes the user-scope SDK server of an exposure set: the tools,
// one chat_with_<slug> per exposed agent, the resources and the prompt.
func (s *Server) buildUser(set *exposureSet) *mcp.Server {
	srv, caps := s.newSDKServer(userInstructions)
	tools := s.tools()
	for _, name := range slices.Sorted(maps.Keys(set.tools)) {
		tool := set.tools[name]
		tools = append(tools, toolDef{ExposedTools, func(srv *mcp.Server) { s.chatWithTool(srv, tool, name) }})
	}
	s.addTools(srv, caps, tools)
	if s.addResources(srv, s.opts.Resources) > 0 {
		caps.Resources = &mcp.ResourceCapabilities{}
	}
	if allowed(s.opts.Prompts, delegatePrompt) {
		s.addPrompt(srv)
		caps.Prompts = &mcp.PromptCapabilities{}
	}
	return srv
}

// buildConnector makes the connector-scope SDK server: its agent's
// connector tools, and nothing else (no resource, no prompt).
func (s *Server) buildConnector() *mcp.Server {
	srv, caps := s.newSDKServer(connectorInstructions)
	s.addTools(srv, caps, s.playbookTools())
	return srv
}

// argumentErrors rewords a tool result that the SDK made from its own
// decoding error. Arguments can pass the input schema and still not decode
// into the tool's input (1e30 is an integer to JSON Schema, not to an int);
// the SDK then copies the decoder's words, Go type and field names, into
// the result. It keeps the error a result was made from (GetError), so this
// knows, without reading the text, which results those are.
func argumentErrors(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		var (
			typeErr   *json.UnmarshalTypeError
			syntaxErr *json.SyntaxError
		)
		if r, ok := res.(*mcp.CallToolResult); ok && r != nil && r.IsError {
			if cause := r.GetError(); errors.As(cause, &typeErr) || errors.As(cause, &syntaxErr) {
				slog.InfoContext(ctx, "mcp: tool arguments refused", "detail", cause.Error())
				r.Content = []mcp.Content{&mcp.TextContent{Text: agentgate.ErrorMessage(web.JSONError("arguments", "arguments", cause))}}
			}
		}
		return res, err
	}
}

const userInstructions = `agentgate fronts AI agents. Read agentgate://agents to see the agents you may use and whether they are up.
To hand an agent work, call dispatch_task: the user is asked to approve each dispatch, and nothing is sent without a yes.
Work runs on the agent after the call returns: poll get_execution_result with the taskId until the status is completed, failed, canceled or rejected.
Agents their owners expose have a chat_with_<agent> tool: it sends a message, with the user's approval, and returns the reply.`

const connectorInstructions = `This is an agent's connector, through agentgate. list_playbooks lists what the agent can run; run_playbook runs one on your input; ask sends the agent a message.
The user is asked to approve each run and message, and nothing is sent without a yes.`

// principal is the caller, as the security chain established it.
func principal(ctx context.Context) agentgate.Principal {
	p, _ := agentgate.PrincipalFrom(ctx)
	return p
}
