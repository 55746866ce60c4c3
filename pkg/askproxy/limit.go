package askproxy

import (
	"context"
	"fmt"
	"time"
)

// Limits of the concurrency guard.
const (
	// DefaultMaxConcurrent is how many questions one process asks its
	// upstream at once. A Lambda instance serves one request at a time, so
	// there the guard is the function's concurrency (see template.yaml's
	// AskProxyReservedConcurrency); `agentgate serve` and `ask-mcp` serve
	// many from one process, and a burst there must not fan out unbounded
	// upstream calls.
	DefaultMaxConcurrent = 8
	// QueueWait is how long a question waits for a slot before it is
	// refused: long enough to ride out a short burst, short enough that a
	// refused client hears so quickly.
	QueueWait = 2 * time.Second
)

// ErrBusy is the answer to a question that found no free slot in time.
type ErrBusy struct{ Max int }

func (e *ErrBusy) Error() string {
	return fmt.Sprintf("ask_docs is at its limit of %d questions at once; ask again in a few seconds", e.Max)
}

// limited is an Asker that lets at most cap(slots) questions through to
// next at once.
type limited struct {
	next  Asker
	slots chan struct{}
	wait  time.Duration // QueueWait, but for tests
}

// Limit returns an Asker that asks next at most max questions at once
// (max <= 0: DefaultMaxConcurrent); a question waits up to QueueWait for a
// slot, and is then refused with *ErrBusy. A question refused before any
// upstream call (CheckQuestion) takes no slot.
func Limit(next Asker, max int) Asker {
	if max <= 0 {
		max = DefaultMaxConcurrent
	}
	return &limited{next: next, slots: make(chan struct{}, max), wait: QueueWait}
}

// Ask implements Asker.
func (l *limited) Ask(ctx context.Context, question, sessionID string) (Answer, error) {
	if err := CheckQuestion(question); err != nil {
		return Answer{}, err
	}
	select {
	case l.slots <- struct{}{}:
	default:
		wait := time.NewTimer(l.wait)
		defer wait.Stop()
		select {
		case l.slots <- struct{}{}:
		case <-wait.C:
			return Answer{}, &ErrBusy{Max: cap(l.slots)}
		case <-ctx.Done():
			return Answer{}, &ErrBusy{Max: cap(l.slots)}
		}
	}
	defer func() { <-l.slots }()
	return l.next.Ask(ctx, question, sessionID)
}
