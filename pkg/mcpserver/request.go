package mcpserver

import (
	"context"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/connector"
	"github.com/agentgate/agentgate/pkg/dispatch"
)

// request is what the server must know of one HTTP request before the SDK
// runs it: which SDK server serves the caller, and why not if none does.
//
//   - A connector key is checked on every request, with one read of its
//     connector's configuration (connector.Service.ForConnectorKey, which
//     reads the agent too): a connector disabled, a key revoked or
//     replaced, or an agent deleted stops the key on the next request, on
//     every instance. begin starts the check as the request comes in, so
//     that it overlaps the request's other reads (a legacy session's
//     record); server waits for it.
//   - A user gets the server of the current exposure set (exposure.go),
//     which costs a read only when this instance's copy is older than
//     ExposureRefresh. That read is made by server itself, on the
//     request's goroutine: a frozen Lambda instance must not keep a read
//     that every request of the instance waits for half done.
type request struct {
	ready chan struct{} // closed once srv or err is set
	// refresh, for a user whose exposure copy is stale, is run once by
	// server to set srv.
	refresh sync.Once
	stale   bool
	srv     *mcp.Server
	err     error
	// config is a connector key's connector configuration, as checked.
	config *connector.Config
	// exposed is the exposure set a user's server was built for.
	exposed *exposureSet
}

type requestKey struct{}

// current is the request's state, if begin has run.
func current(ctx context.Context) *request {
	req, _ := ctx.Value(requestKey{}).(*request)
	return req
}

// begin starts what r needs read before its SDK server can be chosen and
// returns r carrying it.
func (s *Server) begin(r *http.Request) *http.Request {
	ctx := r.Context()
	p := principal(ctx)
	req := &request{ready: make(chan struct{})}
	ctx = context.WithValue(ctx, requestKey{}, req)
	if p.Scope == agentgate.ScopeConnector {
		// The check reads the key's agent: the request's tools find it
		// there (dispatch.Preloaded) rather than reading it again.
		ctx, remember := dispatch.Preloaded(ctx)
		go func() {
			defer close(req.ready)
			if s.connectors == nil {
				req.err = agentgate.Errorf(agentgate.EFORBIDDEN, "this server takes no connector keys")
				return
			}
			a, cfg, err := s.connectors.ForConnectorKey(ctx, p)
			if err != nil {
				req.err = err
				return
			}
			remember(a)
			req.srv, req.config = s.connectorServer(), &cfg
		}()
		return r.WithContext(ctx)
	}
	if set, fresh := s.exposure.current(); fresh {
		req.exposed, req.srv = set, s.userServer(set)
		close(req.ready)
	} else {
		req.stale = true
	}
	return r.WithContext(ctx)
}

// server is the SDK server for r, once begin's reads are done; an error
// says why the caller may not go on (a connector key that no longer
// reaches its agent: EFORBIDDEN, 403).
func (s *Server) server(r *http.Request) (*mcp.Server, error) {
	req := current(r.Context())
	if req == nil {
		return nil, agentgate.Errorf(agentgate.EINTERNAL, "mcpserver: a request that did not begin")
	}
	if req.stale {
		req.refresh.Do(func() {
			defer close(req.ready)
			set := s.exposure.refresh(r.Context())
			req.exposed, req.srv = set, s.userServer(set)
		})
	}
	select {
	case <-req.ready:
		return req.srv, req.err
	case <-r.Context().Done():
		return nil, agentgate.Wrap(agentgate.ETIMEOUT, r.Context().Err(), "the request timed out")
	}
}
