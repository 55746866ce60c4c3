package mcpserver

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/connector"
)

// MCP exposure: every agent in the exposure set (connector.Service.Exposed,
// one small record) is a tool of its own, chat_with_<slug>, for every
// user-scope caller. An SDK server's tools are fixed, so the server keeps
// one user-scope SDK server per exposure set, and each instance its copy of
// the set, read again at most every ExposureRefresh: a toggle shows in
// tools/list on every instance within that, without a restart, and costs
// one read per instance per ExposureRefresh, shared by all its requests.

// ExposureRefresh is how old an instance's copy of the exposure set may be
// before a request reads it again.
const ExposureRefresh = 2 * time.Second

// exposureReadTimeout bounds one read of the set, which every request
// waiting for it shares (so no one request's end cuts it short).
const exposureReadTimeout = 5 * time.Second

// exposureSet is one version of the exposure set.
type exposureSet struct {
	key   string            // the sorted names, one per line: which server serves the set
	tools map[string]string // agent -> its tool's name
	at    time.Time         // when it was read
}

// exposure is an instance's copy of the exposure set.
type exposure struct {
	read     func(context.Context) ([]string, error) // nil: nothing is ever exposed
	reserved []string
	every    time.Duration
	now      func() time.Time

	mu      sync.Mutex
	cur     *exposureSet
	reading chan struct{} // closed when the read under way ends; nil when none is
}

// newSet names the tools of an exposure set, read at.
func (e *exposure) newSet(names []string, at time.Time) *exposureSet {
	tools := connector.ToolNames(names, e.reserved)
	return &exposureSet{key: strings.Join(slices.Sorted(maps.Keys(tools)), "\n"), tools: tools, at: at}
}

// current returns the copy, and whether it is fresh enough to use without
// a read.
func (e *exposure) current() (*exposureSet, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.read == nil {
		if e.cur == nil {
			e.cur = e.newSet(nil, time.Time{})
		}
		return e.cur, true
	}
	return e.cur, e.cur != nil && e.now().Sub(e.cur.at) < e.every
}

// refresh reads the set, once for all the requests that want it at the
// same time (the others wait for that read), and returns the newest copy.
// A failed read keeps the last copy (none at first: nothing exposed) and is
// tried again a quarter of ExposureRefresh later: the other tools work on
// while the table fails.
func (e *exposure) refresh(ctx context.Context) *exposureSet {
	e.mu.Lock()
	if e.cur != nil && e.now().Sub(e.cur.at) < e.every {
		defer e.mu.Unlock()
		return e.cur // read while this request waited for the lock
	}
	if wait := e.reading; wait != nil {
		e.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
		}
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.cur == nil {
			return e.newSet(nil, time.Time{})
		}
		return e.cur
	}
	done := make(chan struct{})
	e.reading = done
	e.mu.Unlock()

	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), exposureReadTimeout)
	names, err := e.read(rctx)
	cancel()

	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	switch {
	case err == nil:
		e.cur = e.newSet(names, now)
	default:
		slog.WarnContext(ctx, "mcp: reading the MCP exposure set failed; the last one known stands", "error", err.Error())
		retry := now.Add(-e.every + e.every/4)
		if e.cur == nil {
			e.cur = e.newSet(nil, retry)
		} else {
			stale := *e.cur
			stale.at = retry
			e.cur = &stale
		}
	}
	e.reading = nil
	close(done)
	return e.cur
}

// maxUserServers bounds the user-scope SDK servers an instance keeps: one
// per exposure set seen lately.
const maxUserServers = 8

// userServer is the user-scope SDK server of set, built once per set.
func (s *Server) userServer(set *exposureSet) *mcp.Server {
	s.usersMu.Lock()
	defer s.usersMu.Unlock()
	if srv, ok := s.users[set.key]; ok {
		return srv
	}
	if len(s.users) >= maxUserServers {
		clear(s.users) // requests under way keep the servers they hold
	}
	srv := s.buildUser(set)
	s.users[set.key] = srv
	return srv
}
