package mcpsession

import (
	"context"
	"net/http"
	"sync"

	"github.com/agentgate/agentgate/pkg/store"
)

// A session request's first store call is a read that needs nothing from
// the security chain but the id the request's headers carry: its session
// record (Mcp-Session-Id), which holds all a session keeps, the consents
// it waits for included. Prefetch starts it while the chain makes its own
// calls (rate windows, the API key), so that a session request waits for
// one round trip before its handler, as a stateless one does, instead of
// two. The handler then takes the read's result, and checks the session
// record against the caller the chain has by then authenticated before it
// uses it.

// prefetched is the read started by Prefetch.
type prefetched struct {
	key  store.Key
	done chan struct{}
	it   store.Item
	err  error
	once sync.Once // the result serves one read: a later one reads anew
}

type prefetchKey struct{}

// Prefetch starts the read the session request r will make first, for
// web.Route.Prefetch. A request without a usable session id starts
// nothing. The read runs before the caller is authenticated, so nothing is
// done with its result but after lookup's check; a request the chain
// refuses leaves it to finish unread.
func (h *Handler) Prefetch(r *http.Request) *http.Request {
	sid := r.Header.Get(headerSession)
	if checkID(sid) != nil {
		return r
	}
	f := &prefetched{key: store.SessionKey(sid), done: make(chan struct{})}
	go func() {
		defer close(f.done)
		f.it, f.err = h.Store.Get(r.Context(), f.key)
	}()
	return r.WithContext(context.WithValue(r.Context(), prefetchKey{}, f))
}

// read returns the item at key: the read Prefetch started for this
// request, the first time it is asked for, and a read of its own
// otherwise.
func (h *Handler) read(ctx context.Context, key store.Key) (store.Item, error) {
	if f, ok := ctx.Value(prefetchKey{}).(*prefetched); ok && f.key == key {
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
	return h.Store.Get(ctx, key)
}
