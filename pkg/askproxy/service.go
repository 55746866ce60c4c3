package askproxy

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentgatedocs "github.com/agentgate/agentgate"
	"github.com/agentgate/agentgate/pkg/config"
	"github.com/agentgate/agentgate/pkg/docsqa"
)

// Service is askproxy: the upstream client behind its concurrency guard,
// the guide, and the built-in docs Q&A. One per process.
type Service struct {
	cfg     config.Ask
	asker   Asker
	guide   GuideFetcher
	builtin *docsqa.Service
}

// builtinEndpoint is the URL the built-in Q&A is asked at. It goes through
// the same client as a remote upstream, over an in-process transport, so
// that the remote path (its big-integer session ids above all) is the path
// taken every day.
const builtinEndpoint = "http://docs-qa.builtin.invalid/"

// New returns askproxy configured by cfg (checked: config.Ask.Check). now
// is the built-in Q&A's clock, by which its sessions expire (nil:
// time.Now).
func New(cfg config.Ask, now func() time.Time) *Service {
	s := &Service{cfg: cfg, guide: GuideFetcher{URL: cfg.GuideURL},
		builtin: docsqa.New(agentgatedocs.Docs, docsqa.Options{Now: now})}
	c := &Client{Endpoint: cfg.Endpoint, Timeout: cfg.Timeout}
	if cfg.Endpoint == "" {
		c.Endpoint, c.HTTP = builtinEndpoint, &http.Client{Transport: handlerTransport{s.builtin}}
	}
	s.asker = Limit(c, cfg.MaxConcurrent)
	return s
}

// Announce logs, once at start, where ask_docs' answers come from when it
// is not the built-in Q&A: a deployment pointed elsewhere says so.
func (s *Service) Announce(ctx context.Context) {
	if s.cfg.Endpoint == "" {
		return
	}
	where := "a configured endpoint"
	if u, err := url.Parse(s.cfg.Endpoint); err == nil {
		// Scheme, host and path only: a query or userinfo may hold a token.
		where = (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
	}
	slog.InfoContext(ctx, "ask_docs: answers come from ASK_ENDPOINT, not the built-in docs Q&A", "upstream", where)
}

// Asker is ask_docs' upstream, behind the concurrency guard: what the main
// MCP server registers its ask_docs with too.
func (s *Service) Asker() Asker { return s.asker }

// Builtin is the built-in docs Q&A's HTTP endpoint (the upstream
// contract), served at QAPath.
func (s *Service) Builtin() http.Handler { return s.builtin }

// Server returns askproxy's MCP server: ask_docs and
// get_agent_requirements, the same over HTTP and stdio.
func (s *Service) Server(version string) *mcp.Server {
	srv := NewServer(s.asker, version)
	AddRequirements(srv, s.guide)
	return srv
}
