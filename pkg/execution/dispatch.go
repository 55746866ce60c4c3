package execution

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/store"
)

// An MCP dispatch (dispatch_task) is one record from the moment it is asked
// about to its end: the execution record, under the caller's taskId, is
// also the consent question and the once-only claim on the send. Before the
// agent has the work the record is in a Phase, moved by compare-and-set:
//
//	(absent) ──ask──▶ awaiting ──yes──▶ sending ──sent──▶ "" (an execution, State is the agent's)
//	                     │  ▲              │
//	                     no│  └─ask again─┐ └─send failed, or lease out─▶ awaiting (same ask)
//	                     ▼              │
//	                  refused ──────────┘
//
// Without consent (REQUIRE_DISPATCH_CONSENT off) a dispatch starts at
// sending. A record in a Phase is no execution yet: Get does not return it
// and it is in neither listing (it has no index keys), so every reader of
// executions sees only work an agent has. What makes it one record rather
// than three (a consent, a dedup entry, an execution) is that each state
// the three used to keep apart is a Phase of the one item: Ask names the
// question a consent answer is for; Digest refuses a taskId reused for
// other work; LeaseUntil lets a claim whose holder died be taken over;
// Answer is the agent's first answer, which a repeat replays.

// Phases of a dispatch before its agent has the work.
const (
	PhaseAwaiting = "awaiting-consent" // asked; the first answer decides
	PhaseSending  = "sending"          // claimed: one request is sending it
	PhaseRefused  = "refused"          // the answer was no (Reason says how)
)

// Pending is the part of a dispatch's record that only its phases use.
type Pending struct {
	// Phase is "" once the agent has the work.
	Phase string `json:"phase,omitempty"`
	// Digest identifies the request, so that a taskId reused with other
	// arguments is refused rather than answered with another's result.
	Digest string `json:"digest,omitempty"`
	// Ask is the record's version when the consent question in force was
	// asked: an answer counts for that question only.
	Ask int64 `json:"ask,omitempty"`
	// LeaseUntil bounds a send's claim: a holder that died (a Lambda
	// timeout) blocks the taskId until then, and the next request takes
	// the claim over.
	LeaseUntil time.Time `json:"leaseUntil,omitzero"`
	// Reason is why a refused dispatch was refused.
	Reason string `json:"reason,omitempty"`
	// Answer is the agent's answer to the send, replayed to a repeat.
	Answer json.RawMessage `json:"answer,omitempty"`
}

// Version is the record's version as read or last written, for Move.
func (e Execution) Version() int64 { return e.version }

// AtVersion returns e as if read at version: a caller that knows the
// version (from a signed consent state) moves the record without reading
// it first.
func (e Execution) AtVersion(version int64) Execution {
	e.version = version
	return e
}

// Begin creates the record of a dispatch in e.Phase (awaiting or sending),
// kept for ttl: ECONFLICT if the taskId has a record already.
func (s *Store) Begin(ctx context.Context, e Execution, ttl time.Duration) (Execution, error) {
	it, err := s.pendingItem(e, ttl)
	if err != nil {
		return Execution{}, err
	}
	return s.create(ctx, e, it)
}

// Peek returns the record at ref in whatever phase it is (Get returns
// executions only).
func (s *Store) Peek(ctx context.Context, ref Ref) (Execution, error) {
	it, err := s.store.Get(ctx, ref.key())
	if errors.Is(err, store.ErrNotFound) {
		return Execution{}, agentgate.Errorf(agentgate.ENOTFOUND, "no execution %q", ref.ID)
	} else if err != nil {
		return Execution{}, err
	}
	e, err := decode(it)
	e.version = it.Version
	return e, err
}

// Move stores next in place of the record at next.Version(), still in a
// phase, kept for ttl: store.ErrConflict if it changed since, ENOTFOUND if
// it is gone (expired).
func (s *Store) Move(ctx context.Context, next Execution, ttl time.Duration) (Execution, error) {
	it, err := s.pendingItem(next, ttl)
	if err != nil {
		return Execution{}, err
	}
	return s.move(ctx, next, it)
}

// Withdraw removes the record at e.Version(), still in a phase, if it has
// not changed since: it is rewritten as expired, which every reader takes
// for absent, so that the removal is a compare-and-set as a move is.
// store.ErrConflict if it changed since, ENOTFOUND if it is gone.
func (s *Store) Withdraw(ctx context.Context, e Execution) error {
	it, err := s.pendingItem(e, 0)
	if err != nil {
		return err
	}
	it.ExpiresAt = s.now().Add(-time.Second) // past, whatever the store's rounding
	_, err = s.move(ctx, e, it)
	return err
}

// Start moves the claimed record at sent.Version() out of its phase: the
// agent has the work, and the record is from now on an execution like any
// other, stamped now, listed, kept for the retention, and counted running
// unless already ended. The count is added while the record is written,
// and taken back if the write fails, so that the start costs one round
// trip.
func (s *Store) Start(ctx context.Context, sent Execution) (Execution, error) {
	now := s.now().UTC().Truncate(time.Millisecond)
	sent.Phase, sent.Ask, sent.LeaseUntil, sent.Reason = "", 0, time.Time{}, ""
	sent.CreatedAt, sent.UpdatedAt = now, now
	sent.Text = clip(sent.Text)
	sent.FinishedAt = finishedAt(sent, now)
	it, err := s.item(sent)
	if err != nil {
		return Execution{}, err
	}
	if sent.Terminal() {
		return s.move(ctx, sent, it)
	}
	added := make(chan error, 1)
	go func() {
		_, err := s.store.Add(ctx, store.RunningKey(sent.Agent), 1, store.AddOptions{})
		added <- err
	}()
	started, err := s.move(ctx, sent, it)
	addErr := <-added
	if err != nil {
		if addErr == nil {
			if _, undo := s.store.Add(context.WithoutCancel(ctx), store.RunningKey(sent.Agent), -1, store.AddOptions{}); undo != nil {
				err = errors.Join(err, undo)
			}
		}
		return Execution{}, err
	}
	return started, addErr
}

func (s *Store) move(ctx context.Context, next Execution, it store.Item) (Execution, error) {
	it.Version = next.version
	stored, err := s.store.Update(ctx, it)
	if errors.Is(err, store.ErrNotFound) {
		return Execution{}, agentgate.Errorf(agentgate.ENOTFOUND, "no execution %q", next.ID)
	} else if err != nil {
		return Execution{}, err
	}
	next.version = stored.Version
	return next, nil
}

// pendingItem is the item of e in a phase: not listed (no index keys), and
// gone after ttl unless it starts.
func (s *Store) pendingItem(e Execution, ttl time.Duration) (store.Item, error) {
	if e.Phase == "" {
		return store.Item{}, agentgate.Errorf(agentgate.EINTERNAL, "execution %s: a pending record needs a phase", e.ID)
	}
	data, err := json.Marshal(e)
	if err != nil {
		return store.Item{}, err
	}
	return store.Item{Key: e.Ref.key(), Kind: "execution", Data: data, ExpiresAt: s.now().Add(ttl)}, nil
}
