// Package dedup makes an operation idempotent across Lambda instances: the
// first call with a key runs it, every later call with the same key gets the
// first call's result, and concurrent calls on any instance run it once.
//
// agentgate uses it for the A2A front door's messageId. The consented MCP
// tools keep their once-only claim in a record they have anyway:
// dispatch_task in the task's own (pkg/dispatch/taskrecord.go), which is
// also the consent and the execution; chat, playbook and ask turns in
// their consent record.
//
// The state is one table item per key (store.DedupKey), created
// conditionally, so exactly one caller wins the claim. The claim is a lease:
// a winner that dies before it completes (a Lambda timeout, a crash) blocks
// its key only until the lease runs out, after which the next caller takes
// the claim over and runs the operation.
package dedup

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/store"
)

// Defaults.
const (
	// DefaultTTL is how long a result is remembered.
	DefaultTTL = 24 * time.Hour
	// DefaultLease is how long a claim holds off other callers. It is longer
	// than a request may run (API Gateway stops at 30 s), so that a live
	// winner is never overtaken.
	DefaultLease = 35 * time.Second
	// firstPoll and maxPoll bound the wait between looks at another
	// caller's claim.
	firstPoll = 20 * time.Millisecond
	maxPoll   = 500 * time.Millisecond
)

// Key names one idempotent operation.
type Key struct {
	Scope  string // what kind of id, for example "a2a:<agent>" or "mcp-task"
	Caller string // ids are the caller's own: two callers may use the same one
	ID     string
}

// Deduper runs operations at most once per Key. Its zero value is not
// usable; use New.
type Deduper struct {
	store store.Store
	now   func() time.Time
	ttl   time.Duration
	lease time.Duration
}

// Option tunes a Deduper.
type Option func(*Deduper)

// WithTTL sets how long results are remembered.
func WithTTL(d time.Duration) Option { return func(x *Deduper) { x.ttl = d } }

// WithLease sets how long a claim holds off other callers.
func WithLease(d time.Duration) Option { return func(x *Deduper) { x.lease = d } }

// WithClock sets the clock (tests).
func WithClock(now func() time.Time) Option { return func(x *Deduper) { x.now = now } }

// New returns a Deduper on st.
func New(st store.Store, opts ...Option) *Deduper {
	d := &Deduper{store: st, now: time.Now, ttl: DefaultTTL, lease: DefaultLease}
	for _, o := range opts {
		o(d)
	}
	return d
}

// TTL is how long results are remembered.
func (d *Deduper) TTL() time.Duration { return d.ttl }

// Digest returns a digest of v's JSON, for Do's digest argument: two calls
// whose arguments marshal alike (encoding/json sorts map keys) are the same
// call.
func Digest(v any) (string, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("dedup: digest: %w", err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// entry is the item's Data.
type entry struct {
	State      string          `json:"state"` // pending or done
	Digest     string          `json:"digest"`
	Result     json.RawMessage `json:"result,omitempty"`
	LeaseUntil time.Time       `json:"leaseUntil,omitzero"`
}

const (
	pending = "pending"
	done    = "done"
)

// Do returns the result of fn for key. The first call runs fn; a later call
// with the same key and digest returns the stored result without running
// it, with replayed true; a call with the same key and another digest is
// ECONFLICT (the id was reused for something else). A call that finds the
// operation still running elsewhere waits for its result, for as long as
// ctx allows.
//
// If fn fails, its claim is released and the error returned, so that the
// caller may retry with the same id: a failure is not a result. Once fn has
// succeeded its result is returned even if storing it fails (the work is
// done; the failure is logged), and stored even if ctx has ended.
func (d *Deduper) Do(ctx context.Context, key Key, digest string, fn func(context.Context) (json.RawMessage, error)) (result json.RawMessage, replayed bool, err error) {
	k := store.DedupKey(key.Scope, key.Caller, key.ID)
	wait := firstPoll
	// stillRunning is the answer of a caller whose context ends while it
	// waits for another's operation, whether that happens between two
	// looks or during one (then the store call fails with the context).
	stillRunning := func() error {
		return agentgate.Wrap(agentgate.ETIMEOUT, ctx.Err(), fmt.Sprintf("a request with id %q is still in progress; retry later", key.ID))
	}
	for waited := false; ; waited = true {
		claim, err := d.claim(ctx, k, digest)
		if err != nil {
			if waited && ctx.Err() != nil {
				return nil, false, stillRunning()
			}
			return nil, false, err
		}
		if claim != nil {
			return d.run(ctx, *claim, fn)
		}
		e, it, err := d.read(ctx, key, digest)
		if errors.Is(err, store.ErrNotFound) {
			continue // released or expired since: claim it
		} else if err != nil {
			if ctx.Err() != nil {
				return nil, false, stillRunning()
			}
			return nil, false, err
		}
		if e.State == done {
			return e.Result, true, nil
		}
		if !d.now().Before(e.LeaseUntil) {
			// The winner died without completing: take its claim over.
			next, err := d.item(k, entry{State: pending, Digest: digest, LeaseUntil: d.now().Add(d.lease)})
			if err != nil {
				return nil, false, err
			}
			next.Version = it.Version
			stored, err := d.store.Update(ctx, next)
			if err == nil {
				return d.run(ctx, stored, fn)
			} else if !errors.Is(err, store.ErrConflict) && !errors.Is(err, store.ErrNotFound) {
				return nil, false, err
			}
			continue // someone else moved first: look again
		}
		select {
		case <-ctx.Done():
			return nil, false, stillRunning()
		case <-time.After(wait):
		}
		wait = min(2*wait, maxPoll)
	}
}

// Lookup returns the stored result of key, if the operation has completed:
// a caller that must do something first (ask for consent) before it may run
// an operation can answer a repeat without doing it again. It is ECONFLICT
// if the key was used with another digest; found is false if there is no
// completed result.
func (d *Deduper) Lookup(ctx context.Context, key Key, digest string) (result json.RawMessage, found bool, err error) {
	e, _, err := d.read(ctx, key, digest)
	if errors.Is(err, store.ErrNotFound) {
		return nil, false, nil
	} else if err != nil {
		return nil, false, err
	}
	return e.Result, e.State == done, nil
}

// read returns key's entry and item: store.ErrNotFound if there is none,
// ECONFLICT if it was made for another digest.
func (d *Deduper) read(ctx context.Context, key Key, digest string) (entry, store.Item, error) {
	it, err := d.store.Get(ctx, store.DedupKey(key.Scope, key.Caller, key.ID))
	if err != nil {
		return entry{}, store.Item{}, err
	}
	var e entry
	if err := json.Unmarshal(it.Data, &e); err != nil {
		return entry{}, store.Item{}, fmt.Errorf("dedup: decoding %s: %w", it.PK, err)
	}
	if e.Digest != digest {
		return entry{}, store.Item{}, agentgate.Errorf(agentgate.ECONFLICT, "id %q was already used for a different request", key.ID)
	}
	return e, it, nil
}

// claim creates the pending entry. It returns nil, nil if the key is taken.
func (d *Deduper) claim(ctx context.Context, k store.Key, digest string) (*store.Item, error) {
	it, err := d.item(k, entry{State: pending, Digest: digest, LeaseUntil: d.now().Add(d.lease)})
	if err != nil {
		return nil, err
	}
	created, err := d.store.Create(ctx, it)
	if errors.Is(err, store.ErrConflict) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return &created, nil
}

// run runs fn under the claim held as it and stores its result.
func (d *Deduper) run(ctx context.Context, it store.Item, fn func(context.Context) (json.RawMessage, error)) (json.RawMessage, bool, error) {
	result, err := fn(ctx)
	// The claim is settled whatever happened to ctx: the work is done (or
	// not) regardless, and leaving the claim pending would block retries
	// until the lease runs out.
	settle := context.WithoutCancel(ctx)
	if err != nil {
		if derr := d.store.Delete(settle, it.Key); derr != nil {
			return nil, false, errors.Join(err, fmt.Errorf("dedup: releasing the claim: %w", derr))
		}
		return nil, false, err
	}
	var e entry
	if err := json.Unmarshal(it.Data, &e); err != nil {
		return nil, false, err
	}
	next, err := d.item(it.Key, entry{State: done, Digest: e.Digest, Result: result})
	if err != nil {
		return nil, false, err
	}
	next.Version = it.Version
	// A failed completion loses only the replay: a later duplicate finds
	// the claim pending and, once its lease runs out, runs again.
	if _, err := d.store.Update(settle, next); err != nil {
		slog.WarnContext(ctx, "dedup: storing a result failed; a duplicate after the lease may run again",
			"scope_key", it.PK, "error", err.Error())
	}
	return result, false, nil
}

func (d *Deduper) item(k store.Key, e entry) (store.Item, error) {
	data, err := json.Marshal(e)
	if err != nil {
		return store.Item{}, err
	}
	return store.Item{Key: k, Kind: "dedup", Data: data, ExpiresAt: d.now().Add(d.ttl)}, nil
}
