package apikey

import (
	"sync"
	"time"
)

// UseWriteInterval is how often, at most, one instance writes a key's use
// count. Counting each use with its own write would put a store round trip
// on every request; writing a batch at most once a minute, alongside the key
// read that every request makes anyway, costs none.
const UseWriteInterval = time.Minute

// uses is one instance's key-use accounting not yet written to the table.
//
// A key has an entry once it has been read from the table (an unknown id
// never gets one, so made-up ids cannot grow the map): pending counts the
// accepted uses since the last write, writtenAt is when that write started.
type uses struct {
	mu    sync.Mutex
	byKey map[string]*keyUses
}

type keyUses struct {
	pending   int64
	writtenAt time.Time
}

// take reports whether key id's uses are due to be written at now (never
// written by this instance, or not for UseWriteInterval) and, if so, claims
// the write: it returns the pending uses and resets them, so that concurrent
// requests of the same key make one write, not one each.
func (u *uses) take(id string, now time.Time) (pending int64, due bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	k := u.byKey[id]
	if k == nil {
		if u.byKey == nil {
			u.byKey = make(map[string]*keyUses)
		}
		k = &keyUses{}
		u.byKey[id] = k
	} else if now.Sub(k.writtenAt) < UseWriteInterval {
		return 0, false
	}
	pending, k.pending, k.writtenAt = k.pending, 0, now
	return pending, true
}

// add counts n uses of key id for a later write: an accepted use that no
// write carried, or the uses of a write that failed.
func (u *uses) add(id string, n int64) {
	if n == 0 {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if k := u.byKey[id]; k != nil {
		k.pending += n
	}
}

// forget drops key id, which is not in the table: its entry was made by take
// for a write that found no key.
func (u *uses) forget(id string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.byKey, id)
}
