// Package embedded is the store.Store that lives in one local file, for
// `agentgate serve` and for fast tests. It is built on bbolt: one writer at a
// time, any number of readers, each operation one transaction, so every
// conditional write (create-if-absent, compare-and-set, counting) is atomic
// without further locking, and a committed write survives a crash. The
// rate-limit windows are the exception (store.Volatile): counted on every
// request, they live in the process's memory, which serves every request,
// and cost no synced disk write.
package embedded

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"go.etcd.io/bbolt"

	"github.com/agentgate/agentgate/pkg/store"
)

// lockTimeout bounds the wait for the file lock: bbolt locks the file for one
// process, and a second `agentgate serve` on the same data should fail with
// a clear message rather than hang.
const lockTimeout = time.Second

// ErrInUse is Open's error when another process holds the file, so that
// callers can say what to do instead (stop `agentgate serve`, or use its
// API) without matching the message.
var ErrInUse = errors.New("store file is in use by another process")

// Store is a store.Store kept in a bbolt file. It is safe for concurrent use.
//
// Operations take microseconds and a bbolt transaction cannot be interrupted,
// so they do not watch their context.
type Store struct {
	db  *bbolt.DB
	now func() time.Time
	// volatile holds the rate-limit windows, in memory (store.Volatile).
	volatile volatile
}

var _ store.Store = (*Store)(nil)

// Option configures Open.
type Option func(*Store)

// WithClock sets the store's notion of now, which decides when items expire
// and what Add records as CountedAt. The default is time.Now.
func WithClock(now func() time.Time) Option {
	return func(s *Store) { s.now = now }
}

// Open opens the store file at path, creating it and its directory if needed.
// Every commit is synced to disk before the operation returns. The file is
// locked to one process: if another holds it, Open fails after a second with
// an error that says so.
func Open(path string, opts ...Option) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("embedded store: %w", err)
	}
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: lockTimeout})
	if errors.Is(err, bbolt.ErrTimeout) {
		return nil, fmt.Errorf("embedded store %s: %w", path, ErrInUse)
	}
	if err != nil {
		return nil, fmt.Errorf("embedded store %s: %w", path, err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		for _, name := range buckets {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("embedded store %s: %w", path, err)
	}
	s := &Store{db: db, now: time.Now}
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

// Close closes the file. Every later operation fails with store.ErrUnavailable.
func (s *Store) Close() error { return s.db.Close() }

// Get returns the live item at key.
func (s *Store) Get(_ context.Context, key store.Key) (store.Item, error) {
	if err := store.CheckKey(key); err != nil {
		return store.Item{}, err
	}
	if store.Volatile(key) {
		return s.volatile.get(key, s.now())
	}
	var it store.Item
	err := s.db.View(func(tx *bbolt.Tx) error {
		r, err := load(tx, itemKey(key))
		if err != nil {
			return err
		}
		if !r.live(s.now()) {
			return store.ErrNotFound
		}
		it = r.item(key)
		return nil
	})
	return it, fail(err)
}

// Create writes it only if no live item has its key.
func (s *Store) Create(_ context.Context, it store.Item) (store.Item, error) {
	return s.replace(it, func(cur *record) error {
		if cur != nil {
			return store.ErrConflict
		}
		return nil
	})
}

// Put writes it whether or not an item exists.
func (s *Store) Put(_ context.Context, it store.Item) (store.Item, error) {
	return s.replace(it, func(*record) error { return nil })
}

// Update replaces the live item at it.Key only if its version is it.Version.
func (s *Store) Update(_ context.Context, it store.Item) (store.Item, error) {
	return s.replace(it, func(cur *record) error {
		switch {
		case cur == nil:
			return store.ErrNotFound
		case cur.Version != it.Version:
			return store.ErrConflict
		}
		return nil
	})
}

// replace writes it over the live item at its key (nil if there is none)
// unless check, given that item, returns an error. Create, Put and Update
// differ only in that check.
func (s *Store) replace(it store.Item, check func(cur *record) error) (store.Item, error) {
	if err := store.CheckItem(it); err != nil {
		return store.Item{}, err
	}
	r, err := s.write(it.Key, func(cur *record, _ time.Time) (record, error) {
		if err := check(cur); err != nil {
			return record{}, err
		}
		return successor(cur, it), nil
	})
	if err != nil {
		return store.Item{}, err
	}
	return r.item(it.Key), nil
}

// Add adds delta to the item's counter, creating the item if it is absent or
// expired (unless opts.MustExist). An item created here has Version 1 and no
// data, as if created empty.
func (s *Store) Add(_ context.Context, key store.Key, delta int64, opts store.AddOptions) (int64, error) {
	if err := store.CheckKey(key); err != nil {
		return 0, err
	}
	if store.Volatile(key) {
		return s.volatile.add(key, delta, opts, s.now())
	}
	r, err := s.write(key, func(cur *record, now time.Time) (record, error) {
		if cur == nil {
			if opts.MustExist {
				return record{}, store.ErrNotFound
			}
			cur = &record{Version: 1, TTL: store.ExpiryEpoch(opts.ExpiresAt)}
		}
		next := *cur
		next.Count += delta
		next.CountedAt = now
		return next, nil
	})
	return r.Count, err
}

// Delete removes the item at key, live or expired, with its index entries.
func (s *Store) Delete(_ context.Context, key store.Key) error {
	if err := store.CheckKey(key); err != nil {
		return err
	}
	if store.Volatile(key) {
		s.volatile.remove(key)
		return nil
	}
	err := s.db.Update(func(tx *bbolt.Tx) error {
		k := itemKey(key)
		old, err := load(tx, k)
		if err != nil || old == nil {
			return err
		}
		if err := reindex(tx, key, old, nil); err != nil {
			return err
		}
		return tx.Bucket(buckets[store.Primary]).Delete(k)
	})
	return fail(err)
}

// Query lists one partition of the table or of an index. Unlike DynamoDB,
// which applies the limit before dropping expired items, it fills the page
// with live items; Next is set when any key of the partition follows the
// page, so the last page may be empty.
//
// The cursor is the last returned key of the queried bucket, base64url
// encoded; one that does not decode to a key of the queried partition and
// prefix is store.ErrBadCursor.
func (s *Store) Query(_ context.Context, q store.Query) (store.Page, error) {
	limit, err := store.CheckQuery(q)
	if err != nil {
		return store.Page{}, err
	}
	prefix := appendEscaped(appendPart(nil, q.PK), q.SKPrefix)
	after, err := decodeCursor(q.Cursor, q.Index, prefix)
	if err != nil {
		return store.Page{}, err
	}
	var page store.Page
	err = s.db.View(func(tx *bbolt.Tx) error {
		now := s.now()
		c := tx.Bucket(buckets[q.Index]).Cursor()
		step := c.Next
		if q.Descending {
			step = c.Prev
		}
		var last []byte
		for k, v := start(c, prefix, after, q.Descending); k != nil && bytes.HasPrefix(k, prefix); k, v = step() {
			if len(page.Items) == limit {
				page.Next = base64.RawURLEncoding.EncodeToString(last)
				break
			}
			parts, ok := splitKey(k)
			if !ok || len(parts) != arity(q.Index) {
				return fmt.Errorf("malformed key %q in bucket %s", k, buckets[q.Index])
			}
			key := keyOf(parts)
			var r *record
			var err error
			if q.Index == store.Primary {
				r, err = decodeRecord(v)
			} else {
				r, err = load(tx, itemKey(key))
			}
			if err != nil {
				return err
			}
			if r.live(now) {
				page.Items = append(page.Items, r.item(key))
				last = k
			}
		}
		return nil
	})
	if err != nil {
		return store.Page{}, fail(err)
	}
	return page, nil
}

// decodeCursor returns the bucket key a cursor names, nil for no cursor.
func decodeCursor(cursor string, ix store.Index, prefix []byte) ([]byte, error) {
	if cursor == "" {
		return nil, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || !bytes.HasPrefix(raw, prefix) {
		return nil, store.ErrBadCursor
	}
	if parts, ok := splitKey(raw); !ok || len(parts) != arity(ix) {
		return nil, store.ErrBadCursor
	}
	return raw, nil
}

// start positions c on the first key a query visits: the first key of the
// prefix range (ascending) or its last (descending), or, with a cursor, the
// key just past the cursor in the query's direction. The cursor's own key
// need not exist any more.
func start(c *bbolt.Cursor, prefix, after []byte, descending bool) (k, v []byte) {
	if !descending {
		if after == nil {
			return c.Seek(prefix)
		}
		if k, v = c.Seek(after); bytes.Equal(k, after) {
			return c.Next()
		}
		return k, v
	}
	bound := after
	if bound == nil {
		bound = prefixEnd(prefix)
	}
	if bound != nil {
		if k, _ := c.Seek(bound); k != nil {
			return c.Prev()
		}
	}
	return c.Last()
}

// write runs one read-write transaction on the item at key: change gets the
// live item (nil if absent or expired) and the time, and returns the record
// to store, or an error to abort without writing. Index entries follow the
// record, including dropping those of an expired item being replaced.
func (s *Store) write(key store.Key, change func(cur *record, now time.Time) (record, error)) (record, error) {
	var out record
	err := s.db.Update(func(tx *bbolt.Tx) error {
		k := itemKey(key)
		old, err := load(tx, k)
		if err != nil {
			return err
		}
		now := s.now()
		cur := old
		if !old.live(now) {
			cur = nil
		}
		next, err := change(cur, now)
		if err != nil {
			return err
		}
		v, err := json.Marshal(&next)
		if err != nil {
			return err
		}
		if err := reindex(tx, key, old, &next); err != nil {
			return err
		}
		out = next
		return tx.Bucket(buckets[store.Primary]).Put(k, v)
	})
	return out, fail(err)
}

// load returns the stored record at k, expired or not; nil if there is none.
func load(tx *bbolt.Tx, k []byte) (*record, error) {
	return decodeRecord(tx.Bucket(buckets[store.Primary]).Get(k))
}

// reindex moves the index entries of the item at key from those of old to
// those of next (either may be nil), leaving unchanged placements alone.
func reindex(tx *bbolt.Tx, key store.Key, old, next *record) error {
	was, is := old.placements(), next.placements()
	for i := range was {
		if was[i] == is[i] {
			continue
		}
		b := tx.Bucket(buckets[store.Index1+store.Index(i)])
		if !was[i].IsZero() {
			if err := b.Delete(indexKey(was[i], key)); err != nil {
				return err
			}
		}
		if !is[i].IsZero() {
			if err := b.Put(indexKey(is[i], key), nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// fail passes the store's own verdicts through and reports anything else
// (a closed store, a bbolt or disk failure, a corrupt record) as the backend
// being unavailable.
func fail(err error) error {
	if err == nil || errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrConflict) {
		return err
	}
	return store.Unavailable(err)
}
