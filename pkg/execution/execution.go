// Package execution records the work agentgate hands to agents: one record
// per task (who asked, which agent, the agent's task id, its state and
// timestamps), so that any instance can answer "what happened to my task",
// list a caller's or an agent's recent work, and count what is running.
//
// Records are listed newest first through the table's two indexes (GSI1 by
// caller, GSI2 by agent). State changes are compare-and-set, so that two
// instances refreshing one task never both count its end.
package execution

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/store"
)

// DefaultRetention is how long an execution record is kept.
const DefaultRetention = 30 * 24 * time.Hour

// Origins: which door a task came through.
const (
	OriginA2A = "a2a" // the A2A front door; scope is the agent, id the agent's task id
	OriginMCP = "mcp" // MCP dispatch_task; scope is the caller, id the caller's taskId
)

// Ref names an execution.
type Ref struct {
	Origin string `json:"origin"`
	Scope  string `json:"scope"`
	ID     string `json:"id"`
}

func (r Ref) key() store.Key { return store.ExecutionKey(r.Origin, r.Scope, r.ID) }

// String is the ref as one value, unique across origins, for index sort keys.
func (r Ref) String() string { return r.key().PK }

// Execution is one task handed to an agent.
type Execution struct {
	Ref
	Agent  string `json:"agent"`
	Caller string `json:"caller"`
	// RemoteTaskID is the agent's id of the task; "" when the agent
	// answered with a message and no task.
	RemoteTaskID string        `json:"remoteTaskId,omitempty"`
	ContextID    string        `json:"contextId,omitempty"`
	State        a2a.TaskState `json:"state"`
	// Text summarizes the latest answer: the status message or the
	// artifacts' text, clipped (see MaxText).
	Text string `json:"text,omitempty"`
	// Error says why the agent could not be reached or refused, when it did.
	Error string `json:"error,omitempty"`
	// InputBytes and InputDigest describe what was sent, without keeping it.
	InputBytes  int       `json:"inputBytes"`
	InputDigest string    `json:"inputDigest,omitempty"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
	// FinishedAt is when the task ended: the agent's status time, as the
	// change that ends the execution sets it, within [CreatedAt, the
	// store's now] (an agent's clock may be off); when the agent gives no
	// time, the moment agentgate learned of the end.
	FinishedAt time.Time `json:"finishedAt,omitzero"`
	// Pending is an MCP dispatch's state before its agent has the work
	// (dispatch.go); zero for an execution.
	Pending

	// version is the item's, as read, so that an update of a record just
	// read need not read it again.
	version int64
}

// MaxText bounds Execution.Text, which keeps a record well under DynamoDB's
// item limit however much the agent says.
const MaxText = 16 << 10

// Terminal reports whether the execution has ended.
func (e Execution) Terminal() bool { return e.State.Terminal() }

// Store keeps execution records in the table.
type Store struct {
	store     store.Store
	now       func() time.Time
	retention time.Duration
}

// New returns a Store on st. now is the clock (nil: time.Now).
func New(st store.Store, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{store: st, now: now, retention: DefaultRetention}
}

// Create records e, stamped now. A record with e's Ref must not exist
// (ECONFLICT). A non-terminal execution counts as running for its agent.
func (s *Store) Create(ctx context.Context, e Execution) (Execution, error) {
	now := s.now().UTC().Truncate(time.Millisecond)
	e.CreatedAt, e.UpdatedAt = now, now
	e.Text = clip(e.Text)
	e.FinishedAt = finishedAt(e, now)
	it, err := s.item(e)
	if err != nil {
		return Execution{}, err
	}
	if e, err = s.create(ctx, e, it); err != nil {
		return Execution{}, err
	}
	if !e.Terminal() {
		if _, err := s.store.Add(ctx, store.RunningKey(e.Agent), 1, store.AddOptions{}); err != nil {
			return e, err
		}
	}
	return e, nil
}

// create writes it, e's item, if no record has e's Ref (ECONFLICT
// otherwise), and returns e at the version written.
func (s *Store) create(ctx context.Context, e Execution, it store.Item) (Execution, error) {
	created, err := s.store.Create(ctx, it)
	if errors.Is(err, store.ErrConflict) {
		return Execution{}, agentgate.Errorf(agentgate.ECONFLICT, "execution %s exists already", e.ID)
	} else if err != nil {
		return Execution{}, err
	}
	e.version = created.Version
	return e, nil
}

// finishedAt is the end time to record for e as of now: zero while e runs;
// else e's own FinishedAt (the agent's word) kept within [CreatedAt, now],
// or now when it has none.
func finishedAt(e Execution, now time.Time) time.Time {
	switch {
	case !e.Terminal():
		return time.Time{}
	case e.FinishedAt.IsZero() || e.FinishedAt.After(now):
		return now
	case e.FinishedAt.Before(e.CreatedAt):
		return e.CreatedAt
	}
	return e.FinishedAt.UTC().Truncate(time.Millisecond)
}

// Get returns the execution at ref.
func (s *Store) Get(ctx context.Context, ref Ref) (Execution, error) {
	e, err := s.Peek(ctx, ref)
	if err == nil && e.Phase != "" {
		// Not an execution yet: nothing an agent has (dispatch.go).
		return Execution{}, agentgate.Errorf(agentgate.ENOTFOUND, "no execution %q", ref.ID)
	}
	return e, err
}

// Update applies change to the execution at ref and stores the result,
// retrying on a concurrent change; change may be called more than once and
// returns false to leave the record as it is. A terminal execution's state
// is final: change cannot move it back. The agent's running count drops by
// one when, and only when, an update ends the execution.
func (s *Store) Update(ctx context.Context, ref Ref, change func(*Execution) bool) (Execution, error) {
	return s.UpdateFrom(ctx, Execution{Ref: ref}, change)
}

// UpdateFrom is Update starting from cur, the record as Get returned it:
// if nobody changed it since, the update costs no read.
func (s *Store) UpdateFrom(ctx context.Context, cur Execution, change func(*Execution) bool) (Execution, error) {
	ref := cur.Ref
	for {
		if cur.version == 0 {
			var err error
			if cur, err = s.Get(ctx, ref); err != nil {
				return Execution{}, err
			}
		}
		version := cur.version
		next := cur
		if !change(&next) {
			return cur, nil
		}
		if cur.Terminal() {
			next.State, next.FinishedAt = cur.State, cur.FinishedAt
		}
		now := s.now().UTC().Truncate(time.Millisecond)
		next.Ref, next.Agent, next.Caller, next.CreatedAt, next.UpdatedAt = cur.Ref, cur.Agent, cur.Caller, cur.CreatedAt, now
		next.Text = clip(next.Text)
		ended := !cur.Terminal() && next.Terminal()
		if ended {
			next.FinishedAt = finishedAt(next, now)
		}
		it, err := s.item(next)
		if err != nil {
			return Execution{}, err
		}
		it.Version = version
		stored, err := s.store.Update(ctx, it)
		if errors.Is(err, store.ErrConflict) {
			cur = Execution{} // changed meanwhile: read it again
			continue
		} else if err != nil {
			return Execution{}, err
		}
		next.version = stored.Version
		if ended {
			if _, err := s.store.Add(ctx, store.RunningKey(cur.Agent), -1, store.AddOptions{}); err != nil {
				return next, err
			}
		}
		return next, nil
	}
}

// Running returns how many of the agent's executions have not ended, as far
// as agentgate has seen: a task nobody polls stays running here.
func (s *Store) Running(ctx context.Context, agent string) (int64, error) {
	it, err := s.store.Get(ctx, store.RunningKey(agent))
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil
	} else if err != nil {
		return 0, err
	}
	return max(it.Count, 0), nil
}

// Filter selects executions to List: those of a caller, or of an agent.
type Filter struct {
	Caller string // list the caller's executions (GSI1) ...
	Agent  string // ... or, if Caller is empty, the agent's (GSI2)
	Limit  int
	Cursor string
}

// List returns a page of executions, newest first, and the next page's
// cursor ("" after the last).
func (s *Store) List(ctx context.Context, f Filter) ([]Execution, string, error) {
	q := store.Query{Limit: f.Limit, Cursor: f.Cursor, Descending: true}
	switch {
	case f.Caller != "":
		q.Index, q.PK = store.Index1, store.CallerPartition(f.Caller)
	case f.Agent != "":
		q.Index, q.PK = store.Index2, store.AgentPartition(f.Agent)
	default:
		return nil, "", agentgate.Errorf(agentgate.EINVALID, "a caller or an agent is required")
	}
	q.SKPrefix = "EXEC#"
	page, err := s.store.Query(ctx, q)
	if err != nil {
		return nil, "", err
	}
	out := make([]Execution, 0, len(page.Items))
	for _, it := range page.Items {
		e, err := decode(it)
		if err != nil {
			return nil, "", err
		}
		out = append(out, e)
	}
	return out, page.Next, nil
}

func (s *Store) item(e Execution) (store.Item, error) {
	data, err := json.Marshal(e)
	if err != nil {
		return store.Item{}, err
	}
	at := store.SortTime(e.CreatedAt)
	return store.Item{
		Key: e.Ref.key(), Kind: "execution", Data: data,
		Index1:    store.ExecutionByCaller(e.Caller, at, e.Ref.String()),
		Index2:    store.ExecutionByAgent(e.Agent, at, e.Ref.String()),
		ExpiresAt: e.CreatedAt.Add(s.retention),
	}, nil
}

func decode(it store.Item) (Execution, error) {
	var e Execution
	if err := json.Unmarshal(it.Data, &e); err != nil {
		return Execution{}, fmt.Errorf("decoding execution %s: %w", it.PK, err)
	}
	return e, nil
}

// clip cuts s to at most MaxText bytes, on a rune boundary.
func clip(s string) string {
	if len(s) <= MaxText {
		return s
	}
	cut := MaxText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}
