package mcpsession

import (
	"context"
	"net/http"
	"sync"

	"github.com/agentgate/agentgate/pkg/store"
)

// A session request's first store call is the read of its session record,
// which needs nothing from the security chain but the session id the
// request carries. Prefetch starts it while the chain makes its own calls
// (rate windows, the API key), so a session request waits for one round
// trip before its handler, as a stateless one does, instead of two. lookup
// then takes the read's result, and checks the record against the caller
// the chain has by then authenticated.

// prefetched is a session read started by Prefetch.
type prefetched struct {
	sid  string
	done chan struct{}
	it   store.Item
	err  error
	once sync.Once // the result serves one lookup: a later one reads anew
}

type prefetchKey struct{}

// Prefetch starts reading the session r names, for web.Route.Prefetch. A
// request without a usable session id starts nothing. The read runs before
// the caller is authenticated, so nothing is done with its result but
// lookup's, after authentication; a request the chain refuses leaves it to
// finish unread.
func (h *Handler) Prefetch(r *http.Request) *http.Request {
	sid := r.Header.Get(headerSession)
	if checkID(sid) != nil {
		return r
	}
	f := &prefetched{sid: sid, done: make(chan struct{})}
	go func() {
		defer close(f.done)
		f.it, f.err = h.Store.Get(r.Context(), store.SessionKey(sid))
	}()
	return r.WithContext(context.WithValue(r.Context(), prefetchKey{}, f))
}

// read returns the session record sid: the read Prefetch started for this
// request, the first time it is asked for, and a read of its own
// otherwise.
func (h *Handler) read(ctx context.Context, sid string) (store.Item, error) {
	if f, ok := ctx.Value(prefetchKey{}).(*prefetched); ok && f.sid == sid {
		taken := false
		f.once.Do(func() { taken = true })
		if taken {
			select {
			case <-f.done:
				return f.it, f.err
			case <-ctx.Done():
				return store.Item{}, ctx.Err()
			}
		}
	}
	return h.Store.Get(ctx, store.SessionKey(sid))
}
