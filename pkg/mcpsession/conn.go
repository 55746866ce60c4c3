package mcpsession

import (
	"context"
	"io"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/agentgate"
)

// run answers one request through an SDK session restored from state (nil
// for initialize), on a connection that lives for this request only.
func (h *Handler) run(ctx context.Context, r *http.Request, sid string, state *mcp.ServerSessionState, req *jsonrpc.Request) (*jsonrpc.Response, *inputRecorder, error) {
	rec := &inputRecorder{}
	ctx = context.WithValue(ctx, recorderKey{}, rec)
	c := &conn{sid: sid, in: make(chan jsonrpc.Message, 1), out: make(chan jsonrpc.Message), done: make(chan struct{})}
	var restored *mcp.ServerSessionState
	if state != nil {
		copied := *state
		restored = &copied
	}
	srv, err := h.Server(r)
	if err != nil {
		return nil, nil, err
	}
	ss, err := srv.Connect(ctx, transport{c}, &mcp.ServerSessionOptions{State: restored})
	if err != nil {
		return nil, nil, err
	}
	defer ss.Close()
	c.in <- req
	for {
		select {
		case msg := <-c.out:
			if resp, ok := msg.(*jsonrpc.Response); ok && resp.ID == req.ID {
				// If the tool recorded an input request, resp carries
				// errInputRecorded, and callers look at rec first.
				return resp, rec, nil
			}
			// Notifications (logs, progress) have nowhere to go on a JSON
			// answer; server-to-client requests are never made here.
		case <-ctx.Done():
			return nil, nil, agentgate.Wrap(agentgate.ETIMEOUT, ctx.Err(), "the request timed out")
		}
	}
}

// conn is a connection for one request: it reads the one message, then
// blocks until closed (an EOF would cancel the handler), and hands what
// the server writes to run.
type conn struct {
	sid  string
	in   chan jsonrpc.Message
	out  chan jsonrpc.Message
	done chan struct{}
	once sync.Once
}

func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m := <-c.in:
		return m, nil
	case <-c.done:
		return nil, io.EOF
	}
}

func (c *conn) Write(ctx context.Context, m jsonrpc.Message) error {
	select {
	case c.out <- m:
		return nil
	case <-c.done:
		return io.ErrClosedPipe
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *conn) Close() error {
	c.once.Do(func() { close(c.done) })
	return nil
}

func (c *conn) SessionID() string { return c.sid }

type transport struct{ c *conn }

func (t transport) Connect(context.Context) (mcp.Connection, error) { return t.c, nil }
