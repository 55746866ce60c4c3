// Package mcpserver is the MCP function: agent discovery (resources), the
// delegate_task prompt, consent-gated dispatch_task and the tools that
// follow the work, over MCP Streamable HTTP, on
// github.com/modelcontextprotocol/go-sdk.
//
// Two protocol generations share one set of tools:
//
//   - 2026-07-28 clients are served statelessly by the SDK's handler; a
//     consent is an MRTR round (the tool returns an input request and a
//     signed requestState; the retry may land on any instance).
//   - 2025-11-25, 2025-06-18 and 2025-03-26 clients get sessions, which
//     the SDK keeps only in memory; legacy.go keeps them in the table, so
//     that any instance serves any session, and turns a consent into an
//     elicitation/create on the tools/call stream whose answer may reach
//     any instance.
package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/dispatch"
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

// The names of everything the server can offer, for allow-lists.
var (
	ToolNames     = []string{dispatchTool, listExecutionsTool, executionResultTool, activityTool}
	ResourceNames = []string{agentsResource, statusResource}
	PromptNames   = []string{delegatePrompt}
)

// Options configure a Server.
type Options struct {
	Dispatch *dispatch.Service
	Store    store.Store
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
	consents       consents
	signer         signer
	requireConsent bool
	now            func() time.Time
	servers        map[string]*mcp.Server // by principal scope
	stateless      http.Handler
	legacy         *legacy
}

// New returns the MCP server.
func New(opts Options) (*Server, error) {
	if len(opts.ConsentSecret) < MinConsentSecret {
		return nil, fmt.Errorf("mcpserver: the consent secret must be at least %d bytes", MinConsentSecret)
	}
	for _, l := range []struct {
		kind         string
		names, known []string
	}{{"tool", opts.Tools, ToolNames}, {"resource", opts.Resources, ResourceNames}, {"prompt", opts.Prompts, PromptNames}} {
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
		consents:       consents{store: opts.Store, ttl: opts.Dispatch.Dedup.TTL(), now: now},
		signer:         signer{secret: opts.ConsentSecret, now: now},
		requireConsent: opts.RequireConsent,
		now:            now,
	}
	cache := mcp.NewSchemaCache()
	s.servers = map[string]*mcp.Server{
		agentgate.ScopeUser:      s.build(opts, cache, agentgate.ScopeUser),
		agentgate.ScopeConnector: s.build(opts, cache, agentgate.ScopeConnector),
	}
	s.stateless = mcp.NewStreamableHTTPHandler(s.server, &mcp.StreamableHTTPOptions{
		Stateless:    true,
		JSONResponse: true,
		Logger:       quiet,
		// The chain caps bodies already.
		MaxRequestBodyBytes: -1,
	})
	ttl := opts.SessionTTL
	if ttl == 0 {
		ttl = DefaultSessionTTL
	}
	s.legacy = &legacy{store: opts.Store, server: s.server, ttl: ttl, now: now}
	return s, nil
}

// quiet keeps the SDK's per-connection logs out of ours: legacy requests
// connect once per request.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// server is the SDK server for the request's principal.
func (s *Server) server(r *http.Request) *mcp.Server {
	if p, ok := agentgate.PrincipalFrom(r.Context()); ok && p.Scope == agentgate.ScopeConnector {
		return s.servers[agentgate.ScopeConnector]
	}
	return s.servers[agentgate.ScopeUser]
}

// ServeHTTP routes by protocol generation: a request that says it speaks
// 2026-07-28 or later goes to the SDK's stateless handler; everything else
// (initialize carries no version header) to the session layer.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if v := r.Header.Get("Mcp-Protocol-Version"); r.Method == http.MethodPost && v >= Version20260728 {
		s.serveStateless(w, r)
		return
	}
	s.legacy.ServeHTTP(w, r)
}

// serveStateless hands a message that readMessage has checked to the SDK's
// stateless handler, and answers the SDK's own refusals as agentgate does
// (sdkErrors).
func (s *Server) serveStateless(w http.ResponseWriter, r *http.Request) {
	msg, body, ok := readMessage(w, r)
	if !ok {
		return
	}
	if r.Header.Get("Content-Type") == "" {
		// agentgate reads an undeclared body as JSON (web.RequireJSON);
		// the SDK insists on the header.
		r = r.Clone(r.Context())
		r.Header.Set("Content-Type", "application/json")
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	sw := &sdkErrors{ResponseWriter: w}
	s.stateless.ServeHTTP(sw, r)
	sw.finish(r, msg)
}

// build makes the SDK server for one scope: connector keys act for one
// agent, through the tools that take an agent, pinned to it.
func (s *Server) build(opts Options, cache *mcp.SchemaCache, scope string) *mcp.Server {
	allowed := func(list []string, name string) bool { return list == nil || slices.Contains(list, name) }
	caps := &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}}
	srv := mcp.NewServer(&mcp.Implementation{Name: "agentgate", Title: "agentgate", Version: opts.Version}, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       quiet,
		Capabilities: caps,
		SchemaCache:  cache,
		// Lists and reads depend on who asks: never cache them publicly.
		SetCacheable:              func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) { c.CacheScope = "private" },
		SupportedProtocolVersions: ProtocolVersions,
	})
	srv.AddReceivingMiddleware(argumentErrors)
	tools := 0
	for _, t := range s.tools(scope) {
		if allowed(opts.Tools, t.name) {
			t.add(srv)
			tools++
		}
	}
	if tools > 0 {
		// Without listChanged: a Lambda cannot hold the stream a client
		// would open to hear of changes, and the list never changes.
		caps.Tools = &mcp.ToolCapabilities{}
	}
	if s.addResources(srv, opts.Resources) > 0 {
		caps.Resources = &mcp.ResourceCapabilities{}
	}
	if scope == agentgate.ScopeUser && allowed(opts.Prompts, delegatePrompt) {
		s.addPrompt(srv)
		caps.Prompts = &mcp.PromptCapabilities{}
	}
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

const instructions = `agentgate fronts AI agents. Read agentgate://agents to see the agents you may use and whether they are up.
To hand an agent work, call dispatch_task: the user is asked to approve each dispatch, and nothing is sent without a yes.
Work runs on the agent after the call returns: poll get_execution_result with the taskId until the status is completed, failed, canceled or rejected.`

// principal is the caller, as the security chain established it.
func principal(ctx context.Context) agentgate.Principal {
	p, _ := agentgate.PrincipalFrom(ctx)
	return p
}
