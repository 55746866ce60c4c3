package web

import (
	"bytes"
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/agentgate/agentgate/pkg/agentgate"
)

// API Gateway HTTP APIs end an integration at 30 s (29 s for REST APIs), and
// Lambda kills a function at its timeout without a word. A request must end
// before either, with an answer that says what happened.
const (
	DefaultTimeout = 25 * time.Second
	// lambdaMargin is kept before the Lambda invocation's own deadline, for
	// writing the answer and flushing logs.
	lambdaMargin = time.Second
)

// requestDeadline returns when a request arriving now with ctx must end.
func requestDeadline(ctx context.Context, timeout time.Duration) time.Time {
	d := time.Now().Add(timeout)
	if parent, ok := ctx.Deadline(); ok && parent.Add(-lambdaMargin).Before(d) {
		d = parent.Add(-lambdaMargin)
	}
	return d
}

// withDeadline runs next with a context that ends at the request deadline. If
// next has not answered by then, the client gets 504 with a JSON error at
// once; next's context is cancelled, and whatever it writes later is dropped.
//
// The response is buffered until next returns or flushes. A handler that
// flushes (an SSE stream) has committed its answer; after that the deadline
// only cancels its context, since nothing else can be said.
func withDeadline(timeout time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithDeadline(r.Context(), requestDeadline(r.Context(), timeout))
		defer cancel()
		tw := &timeoutWriter{w: w, ctx: ctx, header: w.Header().Clone()}
		done := make(chan struct{})
		panicked := make(chan any, 1)
		go func() {
			defer close(done)
			defer func() {
				if p := recover(); p != nil {
					panicked <- p
				}
			}()
			next.ServeHTTP(tw, r.WithContext(ctx))
		}()
		select {
		case <-done:
			select {
			case p := <-panicked:
				panic(p) // re-raised on the serving goroutine, for the recover step
			default:
			}
			tw.finish(r)
		case <-ctx.Done():
			tw.expire(r)
		}
	})
}

// timeoutWriter buffers a response so that a deadline can still replace it.
type timeoutWriter struct {
	w       http.ResponseWriter
	ctx     context.Context // the request's: once it is done, nothing more is written
	mu      sync.Mutex
	header  http.Header
	buf     bytes.Buffer
	status  int
	passed  bool // committed to w: streaming straight through
	expired bool // the deadline answered; later writes are dropped
}

func (tw *timeoutWriter) Header() http.Header { return tw.header }

func (tw *timeoutWriter) WriteHeader(status int) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.status != 0 || tw.expired {
		return
	}
	tw.status = status
	if tw.passed {
		tw.w.WriteHeader(status)
	}
}

func (tw *timeoutWriter) Write(b []byte) (int, error) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	switch {
	case tw.over():
		return 0, http.ErrHandlerTimeout
	case tw.passed:
		return tw.w.Write(b)
	}
	if tw.status == 0 {
		tw.status = http.StatusOK
	}
	return tw.buf.Write(b)
}

// FlushError commits the buffered response and streams from then on.
func (tw *timeoutWriter) FlushError() error {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.over() {
		return http.ErrHandlerTimeout
	}
	tw.commit()
	return http.NewResponseController(tw.w).Flush()
}

// Flush implements http.Flusher for handlers that assert it directly.
func (tw *timeoutWriter) Flush() { _ = tw.FlushError() }

// commit sends the header and buffer to w; tw.mu must be held.
func (tw *timeoutWriter) commit() {
	if tw.passed {
		return
	}
	tw.passed = true
	dst := tw.w.Header()
	for k, v := range tw.header {
		dst[k] = v
	}
	if tw.status == 0 {
		tw.status = http.StatusOK
	}
	tw.w.WriteHeader(tw.status)
	// An empty body is not written: a write, even of nothing, makes some
	// writers (the Lambda adapter's) sniff a Content-Type for it.
	if tw.buf.Len() > 0 {
		_, _ = tw.w.Write(tw.buf.Bytes())
		tw.buf.Reset()
	}
}

// over reports whether the deadline has passed; tw.mu must be held. It asks
// the context itself rather than waiting for expire, because the handler may
// wake on the same deadline first.
func (tw *timeoutWriter) over() bool { return tw.expired || tw.ctx.Err() != nil }

// finish sends what the handler wrote, unless the deadline passed while it
// was writing: a buffered answer cut short by ErrHandlerTimeout must not go
// out as a 200.
func (tw *timeoutWriter) finish(r *http.Request) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if !tw.passed && tw.over() {
		tw.expireLocked(r)
		return
	}
	tw.commit()
}

func (tw *timeoutWriter) expire(r *http.Request) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	tw.expireLocked(r)
}

// expireLocked answers 504 unless a stream is under way; tw.mu must be held.
func (tw *timeoutWriter) expireLocked(r *http.Request) {
	tw.expired = true
	if tw.passed {
		return // a stream already under way: its context is cancelled, nothing more to say
	}
	WriteError(tw.w, r, agentgate.Errorf(agentgate.ETIMEOUT, "the request did not complete within its deadline"))
}
