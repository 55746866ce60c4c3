package askproxy

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// gatedAsker answers once release is closed, counting the questions in
// flight at once.
type gatedAsker struct {
	release          chan struct{}
	inFlight, peak   atomic.Int32
	started, answers atomic.Int32
}

func (g *gatedAsker) Ask(ctx context.Context, question, sessionID string) (Answer, error) {
	g.started.Add(1)
	n := g.inFlight.Add(1)
	defer g.inFlight.Add(-1)
	for {
		p := g.peak.Load()
		if n <= p || g.peak.CompareAndSwap(p, n) {
			break
		}
	}
	select {
	case <-g.release:
	case <-ctx.Done():
		return Answer{}, ctx.Err()
	}
	g.answers.Add(1)
	return Answer{Answer: "yes", SessionID: "1"}, nil
}

// TestLimitBoundsUpstreamCalls: a burst of 32 questions never has more than
// the limit in flight upstream; those that wait past the queue time are
// refused with a clear error and never reach the upstream; the rest are
// answered once slots free up. A question refused on its own merits takes
// no slot.
func TestLimitBoundsUpstreamCalls(t *testing.T) {
	up := &gatedAsker{release: make(chan struct{})}
	l := &limited{next: up, slots: make(chan struct{}, 3), wait: time.Hour}
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for range 32 {
		wg.Go(func() {
			_, err := l.Ask(t.Context(), "how?", "")
			errs <- err
		})
	}
	for up.started.Load() < 3 {
		time.Sleep(time.Millisecond)
	}
	if _, err := l.Ask(t.Context(), "", ""); err == nil || !strings.Contains(err.Error(), "question: required") {
		t.Errorf("a blank question while full: %v, want its own refusal", err)
	}
	close(up.release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("queued question: %v", err)
		}
	}
	if p := up.peak.Load(); p != 3 {
		t.Errorf("peak in flight %d, want exactly the limit, 3", p)
	}
	if n := up.answers.Load(); n != 32 {
		t.Errorf("%d answered, want 32", n)
	}

	// Full, and nobody leaves within the queue time: refused, not asked.
	blocked := &gatedAsker{release: make(chan struct{})}
	l = &limited{next: blocked, slots: make(chan struct{}, 1), wait: 10 * time.Millisecond}
	go l.Ask(t.Context(), "first", "")
	for blocked.started.Load() < 1 {
		time.Sleep(time.Millisecond)
	}
	_, err := l.Ask(t.Context(), "second", "")
	var busy *ErrBusy
	if !errors.As(err, &busy) || !strings.Contains(err.Error(), "limit of 1 questions at once; ask again") {
		t.Errorf("full: %v, want ErrBusy", err)
	}
	if n := blocked.started.Load(); n != 1 {
		t.Errorf("%d upstream calls, want 1: a refused question must not reach the upstream", n)
	}
	close(blocked.release)
}
