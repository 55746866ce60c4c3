package mcpsession

import (
	"context"
	"net/http"
	"sync"

	"github.com/agentgate/agentgate/pkg/store"
)

// A session request's first store calls are reads that need nothing from
// the security chain but the ids the request's headers carry: its session
// record (Mcp-Session-Id), and for a resuming GET its stream's pending call
// and answer (Last-Event-ID). Prefetch starts them while the chain makes
// its own calls (rate windows, the API key), so that a session request
// waits for one round trip before its handler, as a stateless one does,
// instead of two or three. The handler then takes the reads' results, and
// checks the session record against the caller the chain has by then
// authenticated before it uses any of them.

// prefetched is a read started by Prefetch.
type prefetched struct {
	done chan struct{}
	it   store.Item
	err  error
	once sync.Once // the result serves one read: a later one reads anew
}

// prefetches are a request's prefetched reads, by key; fixed once made.
type prefetches map[store.Key]*prefetched

type prefetchKey struct{}

// Prefetch starts the reads the session request r will make first, for
// web.Route.Prefetch. A request without a usable session id starts
// nothing. The reads run before the caller is authenticated, so nothing is
// done with their results but after lookup's check; a request the chain
// refuses leaves them to finish unread.
func (h *Handler) Prefetch(r *http.Request) *http.Request {
	sid := r.Header.Get(headerSession)
	if checkID(sid) != nil {
		return r
	}
	keys := []store.Key{store.SessionKey(sid)}
	if r.Method == http.MethodGet {
		if stream, seq, _, ok := parseEventID(r.Header.Get("Last-Event-ID")); ok {
			keys = append(keys, store.SessionEventKey(sid, stream, 0))
			if seq == 0 {
				keys = append(keys, answerKey(sid, stream))
			}
		}
	}
	ps := make(prefetches, len(keys))
	for _, key := range keys {
		f := &prefetched{done: make(chan struct{})}
		ps[key] = f
		go func() {
			defer close(f.done)
			f.it, f.err = h.Store.Get(r.Context(), key)
		}()
	}
	return r.WithContext(context.WithValue(r.Context(), prefetchKey{}, ps))
}

// read returns the item at key: the read Prefetch started for this
// request, the first time it is asked for, and a read of its own
// otherwise.
func (h *Handler) read(ctx context.Context, key store.Key) (store.Item, error) {
	ps, _ := ctx.Value(prefetchKey{}).(prefetches)
	if f, ok := ps[key]; ok {
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
