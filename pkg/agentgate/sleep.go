package agentgate

import (
	"context"
	"time"
)

// Sleep waits d, or until ctx ends; it reports whether it waited the whole
// d. Every wait on a request's path (polling a task, a stream, a lease)
// must end with the request.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
