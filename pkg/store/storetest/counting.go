package storetest

import (
	"context"
	"sync/atomic"

	"github.com/agentgate/agentgate/pkg/store"
)

// Counting wraps a store and counts the calls made through it, so that
// benchmarks can report store calls per request next to their timings.
type Counting struct {
	store.Store
	reads, writes atomic.Int64
}

// Count returns s wrapped in a Counting.
func Count(s store.Store) *Counting { return &Counting{Store: s} }

// Reads is the number of Get and Query calls so far.
func (c *Counting) Reads() int64 { return c.reads.Load() }

// Writes is the number of Create, Put, Update, Delete and Add calls so far.
func (c *Counting) Writes() int64 { return c.writes.Load() }

func (c *Counting) Get(ctx context.Context, k store.Key) (store.Item, error) {
	c.reads.Add(1)
	return c.Store.Get(ctx, k)
}

func (c *Counting) Query(ctx context.Context, q store.Query) (store.Page, error) {
	c.reads.Add(1)
	return c.Store.Query(ctx, q)
}

func (c *Counting) Create(ctx context.Context, it store.Item) (store.Item, error) {
	c.writes.Add(1)
	return c.Store.Create(ctx, it)
}

func (c *Counting) Put(ctx context.Context, it store.Item) (store.Item, error) {
	c.writes.Add(1)
	return c.Store.Put(ctx, it)
}

func (c *Counting) Update(ctx context.Context, it store.Item) (store.Item, error) {
	c.writes.Add(1)
	return c.Store.Update(ctx, it)
}

func (c *Counting) Delete(ctx context.Context, k store.Key) error {
	c.writes.Add(1)
	return c.Store.Delete(ctx, k)
}

func (c *Counting) Add(ctx context.Context, k store.Key, delta int64, opts store.AddOptions) (int64, error) {
	c.writes.Add(1)
	return c.Store.Add(ctx, k, delta, opts)
}
