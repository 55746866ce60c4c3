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
// Reading the body ends at the deadline too (the connection's read deadline;
// writers that cannot set one, such as the Lambda adapter's, hold the whole
// body in memory already). A context cannot interrupt a read: without it, a
// body shorter than its Content-Length would block the handler, and then
// net/http itself, which reads what is left of a body before it sends an
// answer, until the client gave up, with the 504 unsent.
//
// The response is buffered until next returns or flushes. A handler that
// flushes (an SSE stream) has committed its answer; after that the deadline
// only cancels its context, since nothing else can be said.
func withDeadline(timeout time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		deadline := requestDeadline(r.Context(), timeout)
		ctx, cancel := context.WithDeadline(r.Context(), deadline)
		defer cancel()
		_ = http.NewResponseController(w).SetReadDeadline(deadline)
		tw := &timeoutWriter{w: w, ctx: ctx, deadline: deadline, header: w.Header().Clone()}
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
	w        http.ResponseWriter
	ctx      context.Context // the request's: once it is done, nothing more is written
	deadline time.Time       // the request's, for the clock's word on over
	mu       sync.Mutex
	header   http.Header
	buf      bytes.Buffer
	status   int
	passed   bool // committed to w: streaming straight through
	expired  bool // the deadline answered; later writes are dropped
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
// the context and the clock rather than waiting for expire, because the
// handler may wake on the same deadline first (its context, or a body read
// that the connection's read deadline ended, before the context's timer
// fired).
func (tw *timeoutWriter) over() bool {
	return tw.expired || tw.ctx.Err() != nil || !time.Now().Before(tw.deadline)
}

// pastDeadline reports whether ctx's deadline has passed, by the clock.
func pastDeadline(ctx context.Context) bool {
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
}

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
