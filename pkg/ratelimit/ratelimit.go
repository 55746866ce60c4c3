// Package ratelimit counts requests in fixed windows kept in the table, so
// that every Lambda instance spends from one budget.
//
// Cost: one conditional UpdateItem (store.Add) per rule checked; no read. A
// window is its own item (its start is part of the key) and expires with its
// window, so an old count is never carried over, even on a store that never
// deletes expired items. Fixed windows allow up to twice the limit across a
// window boundary; for abuse protection that is an accepted trade for one
// write per check.
package ratelimit

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/store"
)

// Rule allows Limit requests per Window. The zero Rule allows everything.
type Rule struct {
	Limit  int64
	Window time.Duration
}

// Off reports whether the rule limits nothing.
func (r Rule) Off() bool { return r.Limit <= 0 || r.Window <= 0 }

func (r Rule) String() string {
	if r.Off() {
		return "off"
	}
	return fmt.Sprintf("%d/%s", r.Limit, r.Window)
}

// ParseRule reads "N/duration" (e.g. "120/1m") or "off".
func ParseRule(s string) (Rule, error) {
	s = strings.TrimSpace(s)
	if s == "off" || s == "0" {
		return Rule{}, nil
	}
	n, d, ok := strings.Cut(s, "/")
	limit, err1 := strconv.ParseInt(n, 10, 64)
	window, err2 := time.ParseDuration(d)
	if !ok || err1 != nil || err2 != nil || limit <= 0 || window < time.Second {
		return Rule{}, agentgate.Errorf(agentgate.EINVALID, "rate limit %q: want N/duration such as 120/1m (window at least 1s) or off", s)
	}
	return Rule{Limit: limit, Window: window}, nil
}

// Decision is the outcome of a check.
type Decision struct {
	Allowed    bool
	Count      int64         // requests counted in this window, this one included
	RetryAfter time.Duration // when refused: until the window ends (whole seconds, at least 1s)
}

// Limiter checks rules against counters in the table.
type Limiter struct {
	store store.Store
	now   func() time.Time
}

// New returns a Limiter on st; now is its clock (nil: time.Now).
func New(st store.Store, now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	return &Limiter{store: st, now: now}
}

// InMemory reports whether the limiter counts in its process's memory
// (store.MemoryCounter), where a check costs no round trip.
func (l *Limiter) InMemory() bool {
	m, ok := l.store.(store.MemoryCounter)
	return ok && m.CountsInMemory()
}

// Allow counts one request of subject (a client IP or a principal) in class
// against rule.
func (l *Limiter) Allow(ctx context.Context, class, subject string, rule Rule) (Decision, error) {
	if rule.Off() {
		return Decision{Allowed: true}, nil
	}
	now := l.now()
	width := int64(rule.Window / time.Second)
	start := now.Unix() / width * width
	end := time.Unix(start+width, 0)
	n, err := l.store.Add(ctx, store.RateKey(class, subject, start), 1, store.AddOptions{ExpiresAt: end})
	if err != nil {
		return Decision{}, err
	}
	d := Decision{Allowed: n <= rule.Limit, Count: n}
	if !d.Allowed {
		// Round up: a client that waits RetryAfter lands in the next window.
		d.RetryAfter = max((end.Sub(now) + time.Second - 1).Truncate(time.Second), time.Second)
	}
	return d, nil
}
