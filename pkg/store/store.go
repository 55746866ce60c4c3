// Package store defines agentgate's one table: the item model, the operations
// both implementations provide (DynamoDB in package dynamo, a file-backed
// embedded store in package embedded), and the key layout of every record kind.
//
// The interface is deliberately small and DynamoDB-shaped: items addressed by a
// partition key and a sort key, two overloaded secondary indexes, a TTL, a
// version for compare-and-set and an atomic counter. Everything richer (sessions,
// consents, dedup, keys) is built once on top of it, so both stores pass one
// contract suite (package storetest) and nothing above this package knows which
// one it runs on.
package store

import (
	"context"
	"time"

	"github.com/agentgate/agentgate/pkg/agentgate"
)

// Key addresses one item.
type Key struct {
	PK string // partition key
	SK string // sort key
}

// IndexKey places an item in a secondary index. The zero value leaves the item
// out of that index.
type IndexKey struct {
	PK string
	SK string
}

// IsZero reports whether the index key is unset.
func (k IndexKey) IsZero() bool { return k.PK == "" }

// Index names where a Query looks.
type Index int

const (
	Primary Index = iota // the table itself: PK, SK
	Index1               // GSI1: listing by owner or caller
	Index2               // GSI2: listing by agent
)

// Item is one record in the table.
type Item struct {
	Key
	Kind   string   // record kind, for humans reading the table
	Data   []byte   // the record, JSON
	Index1 IndexKey // optional GSI1 placement
	Index2 IndexKey // optional GSI2 placement

	// ExpiresAt is when the item stops existing for every read. Zero means
	// never. The table keeps whole seconds (DynamoDB TTL is epoch seconds), so
	// the stored time is rounded up to the next second: an item never expires
	// early. Records that need a finer deadline keep their own inside Data.
	ExpiresAt time.Time

	// Version is maintained by the store: 1 after Create, +1 after every Put or
	// Update. Update succeeds only if the caller's Version matches.
	Version int64

	// Count and CountedAt are changed only by Add (rate-limit windows, key use
	// counters). Put and Update leave them alone. CountedAt keeps
	// milliseconds.
	Count     int64
	CountedAt time.Time
}

// Query lists items of one partition, in sort-key order.
type Query struct {
	Index      Index
	PK         string // the partition to list (in the chosen index)
	SKPrefix   string // optional: only sort keys with this prefix
	Limit      int    // page size; 0 means DefaultLimit, above MaxLimit is an error
	Cursor     string // from a previous Page.Next; "" starts at the beginning
	Descending bool
}

// Page sizes.
const (
	DefaultLimit = 50
	MaxLimit     = 1000
)

// Page is one page of a Query. A page may hold fewer than Limit items (expired
// items are filtered out after the limit is applied, as DynamoDB does) even
// when more follow: iterate until Next is empty.
type Page struct {
	Items []Item
	Next  string // opaque cursor; "" when there is nothing more
}

// AddOptions tune Add.
type AddOptions struct {
	// ExpiresAt is set only when Add creates the item (or replaces an expired
	// one); an existing item keeps its expiry.
	ExpiresAt time.Time
	// MustExist makes Add fail with ErrNotFound instead of creating the item.
	MustExist bool
}

// Store is agentgate's table. Every method treats an item past its ExpiresAt
// as absent, whether or not the backend has deleted it yet.
//
// Errors: ErrNotFound, ErrConflict (a lost race: the caller re-reads and
// decides) and ErrUnavailable (the backend failed; retry later) are told apart
// with errors.Is; bad arguments are agentgate.EINVALID.
type Store interface {
	// Get returns the item at key.
	Get(ctx context.Context, key Key) (Item, error)
	// Create writes item only if no live item has its key; otherwise it
	// returns ErrConflict. The returned item has Version 1.
	Create(ctx context.Context, item Item) (Item, error)
	// Put writes item whether or not one exists (an upsert), bumping Version.
	Put(ctx context.Context, item Item) (Item, error)
	// Update replaces the live item at item.Key only if its Version equals
	// item.Version (compare-and-set). It returns the stored item with the new
	// Version, ErrNotFound if there is no live item, ErrConflict if the
	// version moved on.
	Update(ctx context.Context, item Item) (Item, error)
	// Delete removes the item at key. Deleting an absent item is not an error.
	Delete(ctx context.Context, key Key) error
	// Query lists one partition of the table or of a secondary index.
	Query(ctx context.Context, q Query) (Page, error)
	// Add atomically adds delta to the item's Count, sets CountedAt to now and
	// returns the new Count. An absent or expired item starts from zero; an
	// item Add creates has Version 1 and no Data. Add never changes Version,
	// so counting does not disturb a concurrent compare-and-set.
	Add(ctx context.Context, key Key, delta int64, opts AddOptions) (int64, error)
	// Close releases the store's resources.
	Close() error
}

// MemoryCounter is implemented by a store that counts in volatile items
// (Volatile) in its own process's memory, where a count costs no round
// trip: callers that would otherwise overlap such counts with other store
// calls may as well make them in line.
type MemoryCounter interface {
	CountsInMemory() bool
}

// The errors every Store returns, matched with errors.Is.
var (
	ErrNotFound    = &agentgate.Error{Code: agentgate.ENOTFOUND, Message: "not found"}
	ErrConflict    = &agentgate.Error{Code: agentgate.ECONFLICT, Message: "conflicting write"}
	ErrUnavailable = &agentgate.Error{Code: agentgate.EUNAVAILABLE, Message: "the store is unavailable"}
)

// Unavailable wraps a backend failure so that it matches ErrUnavailable while
// keeping its cause for the logs.
func Unavailable(cause error) error {
	return &unavailable{cause: cause}
}

type unavailable struct{ cause error }

func (u *unavailable) Error() string   { return "store unavailable: " + u.cause.Error() }
func (u *unavailable) Unwrap() []error { return []error{ErrUnavailable, u.cause} }
