package embedded

import (
	"sync"
	"time"

	"github.com/agentgate/agentgate/pkg/store"
)

// volatile holds the items store.Volatile says may live in memory: the
// rate-limit windows, which every request counts in. The embedded store
// serves one process, so memory is where every request finds them, and a
// count need not cost a synced disk write.
type volatile struct {
	mu    sync.Mutex
	items map[store.Key]*record
	// sweepAt is the size at which add next drops expired windows: twice
	// the live ones after each sweep, so sweeping costs O(1) per add.
	sweepAt int
}

// add is Store.Add for a volatile key, at now.
func (v *volatile) add(key store.Key, delta int64, opts store.AddOptions, now time.Time) (int64, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.items == nil {
		v.items = map[store.Key]*record{}
	}
	r := v.items[key]
	if !r.live(now) {
		if opts.MustExist {
			return 0, store.ErrNotFound
		}
		v.sweep(now)
		r = &record{Version: 1, TTL: store.ExpiryEpoch(opts.ExpiresAt)}
		v.items[key] = r
	}
	r.Count += delta
	r.CountedAt = now
	return r.Count, nil
}

// get is Store.Get for a volatile key, at now.
func (v *volatile) get(key store.Key, now time.Time) (store.Item, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	r := v.items[key]
	if !r.live(now) {
		return store.Item{}, store.ErrNotFound
	}
	return r.item(key), nil
}

// remove is Store.Delete for a volatile key.
func (v *volatile) remove(key store.Key) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.items, key)
}

// sweep drops expired windows once the map has doubled since the last
// sweep. Called with mu held.
func (v *volatile) sweep(now time.Time) {
	if len(v.items) < max(v.sweepAt, 1024) {
		return
	}
	for k, r := range v.items {
		if !r.live(now) {
			delete(v.items, k)
		}
	}
	v.sweepAt = 2 * len(v.items)
}

// CountsInMemory implements store.MemoryCounter: the rate-limit windows
// are counted in memory.
func (s *Store) CountsInMemory() bool { return true }
