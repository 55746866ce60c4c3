package agent

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/store"
)

// Agent is a registered agent: its template, who registered it, and when.
type Agent struct {
	Template Template `json:"template"`
	Owner    string   `json:"owner"`
	// Digest is the hex SHA-256 of the template's JSON, by which a
	// re-import of the same template is told from a change.
	Digest    string    `json:"digest"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// ImportResult says what an import did.
type ImportResult string

const (
	Created   ImportResult = "created"
	Updated   ImportResult = "updated"
	Unchanged ImportResult = "unchanged" // the same template was registered already; nothing was written
)

// Registry keeps agents in the table, one record per agent, listed in the
// AllAgents partition of GSI1 in name order.
type Registry struct {
	store store.Store
	now   func() time.Time
	check func(ctx context.Context, endpoint string) error
}

// NewRegistry returns a Registry on st. now is the clock (nil: time.Now).
func NewRegistry(st store.Store, now func() time.Time) *Registry {
	if now == nil {
		now = time.Now
	}
	return &Registry{store: st, now: now}
}

// WithEndpointCheck makes Import refuse a template whose endpoint check
// refuses: agentgate calls agents' endpoints from inside its network, so
// which addresses they may have is a security decision (see package
// netguard). It returns r.
func (r *Registry) WithEndpointCheck(check func(ctx context.Context, endpoint string) error) *Registry {
	r.check = check
	return r
}

// Import registers t for owner. It is idempotent, so that importing a whole
// directory again is safe: a template identical to the registered one
// writes nothing. A changed template replaces the registered one, but only
// its owner's: an agent registered by someone else is EFORBIDDEN. Concurrent
// imports of one agent are safe: each write is conditional and a lost race
// is re-read and decided again.
func (r *Registry) Import(ctx context.Context, owner string, t *Template) (Agent, ImportResult, error) {
	if owner == "" {
		return Agent{}, "", agentgate.Errorf(agentgate.EINVALID, "owner: required")
	}
	if err := t.Validate(); err != nil {
		return Agent{}, "", err
	}
	if r.check != nil {
		if err := r.check(ctx, t.Endpoint); err != nil {
			return Agent{}, "", invalid(Problem{Path: "endpoint", Message: err.Error()})
		}
	}
	data, err := json.Marshal(t)
	if err != nil {
		return Agent{}, "", err
	}
	sum := sha256.Sum256(data)
	digest := hex.EncodeToString(sum[:])
	for {
		now := r.now().UTC().Truncate(time.Millisecond)
		it, err := r.store.Get(ctx, store.AgentKey(t.Name))
		if errors.Is(err, store.ErrNotFound) {
			a := Agent{Template: *t, Owner: owner, Digest: digest, CreatedAt: now, UpdatedAt: now}
			next, err := item(a)
			if err != nil {
				return Agent{}, "", err
			}
			if _, err := r.store.Create(ctx, next); errors.Is(err, store.ErrConflict) {
				continue // a concurrent import created it first: look again
			} else if err != nil {
				return Agent{}, "", err
			}
			return a, Created, nil
		} else if err != nil {
			return Agent{}, "", err
		}
		cur, err := decode(it)
		if err != nil {
			return Agent{}, "", err
		}
		if cur.Owner != owner {
			return Agent{}, "", agentgate.Errorf(agentgate.EFORBIDDEN, "agent %q belongs to another owner; choose another name", t.Name)
		}
		if cur.Digest == digest {
			return cur, Unchanged, nil
		}
		a := cur
		a.Template, a.Digest, a.UpdatedAt = *t, digest, now
		next, err := item(a)
		if err != nil {
			return Agent{}, "", err
		}
		next.Version = it.Version
		if _, err := r.store.Update(ctx, next); errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound) {
			continue // changed or deleted concurrently: look again
		} else if err != nil {
			return Agent{}, "", err
		}
		return a, Updated, nil
	}
}

// Get returns the agent called name. A name no template may have is no
// agent, answered without a table read (a long one would not even make a
// key) and without echoing it.
func (r *Registry) Get(ctx context.Context, name string) (Agent, error) {
	if !isSlug(name) {
		return Agent{}, agentgate.Errorf(agentgate.ENOTFOUND, "no agent by that name: agent names are 1 to 63 lower-case letters, digits and hyphens")
	}
	it, err := r.store.Get(ctx, store.AgentKey(name))
	if errors.Is(err, store.ErrNotFound) {
		return Agent{}, agentgate.Errorf(agentgate.ENOTFOUND, "no agent %q", name)
	} else if err != nil {
		return Agent{}, err
	}
	return decode(it)
}

// Delete removes the agent called name: its record, and with it its card
// and its front door, on the next request on every instance (nothing
// caches an agent). Deleting an absent agent is not an error. Who may
// delete is the caller's decision; what else belongs to the agent (its
// connector, keys and MCP exposure) is package connector's.
func (r *Registry) Delete(ctx context.Context, name string) error {
	if !isSlug(name) {
		return nil // no agent can have that name
	}
	return r.store.Delete(ctx, store.AgentKey(name))
}

// List returns a page of all agents, in name order, and the cursor of the
// next page ("" after the last).
func (r *Registry) List(ctx context.Context, cursor string, limit int) ([]Agent, string, error) {
	page, err := r.store.Query(ctx, store.Query{Index: store.Index1, PK: store.AllAgents, Limit: limit, Cursor: cursor})
	if err != nil {
		return nil, "", err
	}
	agents := make([]Agent, 0, len(page.Items))
	for _, it := range page.Items {
		a, err := decode(it)
		if err != nil {
			return nil, "", err
		}
		agents = append(agents, a)
	}
	return agents, page.Next, nil
}

func item(a Agent) (store.Item, error) {
	data, err := json.Marshal(a)
	if err != nil {
		return store.Item{}, err
	}
	return store.Item{Key: store.AgentKey(a.Template.Name), Kind: "agent", Data: data,
		Index1: store.AgentsIndex(a.Template.Name)}, nil
}

func decode(it store.Item) (Agent, error) {
	var a Agent
	dec := json.NewDecoder(bytes.NewReader(it.Data))
	dec.UseNumber() // an input schema keeps its numbers exactly as written
	if err := dec.Decode(&a); err != nil {
		return Agent{}, fmt.Errorf("decoding agent %s: %w", it.PK, err)
	}
	return a, nil
}
