package connector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/agentgate/agentgate/pkg/agent"
	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/apikey"
	"github.com/agentgate/agentgate/pkg/store"
)

// The changes an owner makes. Each is a compare-and-set on the one record it
// changes, retried when a concurrent change wins the race; a change that
// spans records (a key and the configuration naming it, the configuration
// and the exposure set) undoes its first write when its second fails, and
// orders its writes so that what a failure leaves behind can never reach
// more than before: a key is refused until the configuration names it, an
// agent leaves the exposure set before anything else of it goes.

// update applies fn to a's configuration and writes it by compare-and-set,
// retrying a lost race. It returns the configuration before and after.
func (s *Service) update(ctx context.Context, a agent.Agent, fn func(c *Config) error) (before, after Config, err error) {
	name := a.Template.Name
	for {
		c, version, err := s.config(ctx, a, true)
		if err != nil {
			return Config{}, Config{}, err
		}
		before = c
		before.ExposedPlaybooks = slices.Clone(c.ExposedPlaybooks)
		if err := fn(&c); err != nil {
			return Config{}, Config{}, err
		}
		data, err := json.Marshal(c)
		if err != nil {
			return Config{}, Config{}, err
		}
		it := store.Item{Key: store.ConnectorKey(name), Kind: "connector", Data: data, Version: version}
		if version == 0 {
			_, err = s.store.Create(ctx, it)
		} else {
			_, err = s.store.Update(ctx, it)
		}
		if errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound) {
			continue // changed, created or deleted concurrently: look again
		}
		if err != nil {
			return Config{}, Config{}, err
		}
		return before, c, nil
	}
}

// ConfigChange is a change of a connector's configuration, as PUT
// /api/agents/{name}/connector takes it.
type ConfigChange struct {
	Enabled *bool // nil: unchanged
	// SetPlaybooks says whether ExposedPlaybooks changes: to nil (every
	// user_invocable playbook) or to exactly the names listed.
	SetPlaybooks     bool
	ExposedPlaybooks []string
}

// CheckPlaybooks refuses a playbook selection that names a playbook a's
// template does not have or does not mark user_invocable, or one twice,
// naming each problem by its index.
func CheckPlaybooks(a agent.Agent, names []string) error {
	var problems []string
	seen := map[string]bool{}
	for i, n := range names {
		at := fmt.Sprintf("exposed_playbooks[%d]", i)
		i := slices.IndexFunc(a.Template.Playbooks, func(p agent.Playbook) bool { return p.Name == n })
		switch {
		case seen[n]:
			problems = append(problems, fmt.Sprintf("%s: %q is listed twice", at, n))
		case i < 0:
			problems = append(problems, fmt.Sprintf("%s: agent %q has no playbook %q", at, a.Template.Name, n))
		case !a.Template.Playbooks[i].UserInvocable:
			problems = append(problems, fmt.Sprintf("%s: playbook %q is not user_invocable, so it cannot be exposed", at, n))
		}
		seen[n] = true
	}
	if len(problems) > 0 {
		return agentgate.Errorf(agentgate.EINVALID, "%s", strings.Join(problems, "; "))
	}
	return nil
}

// Configure changes a's connector configuration.
func (s *Service) Configure(ctx context.Context, a agent.Agent, ch ConfigChange) (Config, error) {
	if ch.SetPlaybooks && ch.ExposedPlaybooks != nil {
		if err := CheckPlaybooks(a, ch.ExposedPlaybooks); err != nil {
			return Config{}, err
		}
	}
	_, c, err := s.update(ctx, a, func(c *Config) error {
		if ch.Enabled != nil {
			c.Enabled = *ch.Enabled
		}
		if ch.SetPlaybooks {
			c.ExposedPlaybooks = slices.Clone(ch.ExposedPlaybooks)
		}
		return nil
	})
	if err != nil {
		return Config{}, err
	}
	return c, s.stillThere(ctx, a)
}

// MintKey issues the one connector-scope key of agent a, owned by a's
// owner, and makes it the connector's current key; it enables the
// connector. A previous key is revoked at once: it is refused from the
// moment the configuration names the new one, and its record says revoked
// right after. The returned secret is the only copy there will be.
func (s *Service) MintKey(ctx context.Context, a agent.Agent) (apikey.Created, Config, error) {
	name := a.Template.Name
	created, err := s.keys.Create(ctx, apikey.NewKey{Owner: a.Owner, Name: "connector " + name,
		Scope: agentgate.ScopeConnector, Agent: name})
	if err != nil {
		return apikey.Created{}, Config{}, err
	}
	before, c, err := s.update(ctx, a, func(c *Config) error {
		c.KeyID, c.KeyPrefix, c.KeyCreatedAt, c.Enabled = created.ID, created.Prefix, created.CreatedAt, true
		return nil
	})
	if err != nil {
		// The new key was never current, so it reached nothing: revoke it
		// so that it never will.
		s.revokeKey(context.WithoutCancel(ctx), created.ID)
		return apikey.Created{}, Config{}, err
	}
	if before.KeyID != "" && before.KeyID != created.ID {
		s.revokeKey(context.WithoutCancel(ctx), before.KeyID)
	}
	if err := s.stillThere(ctx, a); err != nil {
		s.revokeKey(context.WithoutCancel(ctx), created.ID)
		return apikey.Created{}, Config{}, err
	}
	return created, c, nil
}

// RevokeKey revokes a's connector key (every connector-scope key bound to
// a, should a race have left more than one) and clears it from the
// configuration. Revoking when there is none is not an error.
func (s *Service) RevokeKey(ctx context.Context, a agent.Agent) (Config, error) {
	_, c, err := s.update(ctx, a, func(c *Config) error {
		c.KeyID, c.KeyPrefix, c.KeyCreatedAt = "", "", time.Time{}
		return nil
	})
	if err != nil {
		return Config{}, err
	}
	return c, s.revokeAll(ctx, a.Template.Name)
}

// keyRecord is what the connector reads of an API key's record (package
// apikey writes it; never its hash).
type keyRecord struct {
	ID        string     `json:"id"`
	Owner     string     `json:"owner"`
	Agent     string     `json:"agent"`
	CreatedAt time.Time  `json:"createdAt"`
	RevokedAt *time.Time `json:"revokedAt"`
}

// KeyInfo is what the owner sees of the connector's current key.
type KeyInfo struct {
	Prefix     string     `json:"prefix"`
	CreatedAt  time.Time  `json:"createdAt"`
	LastUsedAt *time.Time `json:"lastUsedAt"`
	UseCount   int64      `json:"useCount"`
}

// Key returns c's current key as its owner may see it, or nil when there is
// none (or it was revoked by other means).
func (s *Service) Key(ctx context.Context, c Config) (*KeyInfo, error) {
	if c.KeyID == "" {
		return nil, nil
	}
	it, err := s.store.Get(ctx, store.APIKeyKey(c.KeyID))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var rec keyRecord
	if err := json.Unmarshal(it.Data, &rec); err != nil {
		return nil, fmt.Errorf("decoding API key %s: %w", it.PK, err)
	}
	if rec.RevokedAt != nil {
		return nil, nil
	}
	k := &KeyInfo{Prefix: apikey.DisplayPrefix(rec.ID), CreatedAt: rec.CreatedAt, UseCount: it.Count}
	if !it.CountedAt.IsZero() {
		t := it.CountedAt.UTC()
		k.LastUsedAt = &t
	}
	return k, nil
}

// revokeKey revokes key id for its owner, logging (never returning) a
// failure: it is called where the key is already refused, to make its
// record say so.
func (s *Service) revokeKey(ctx context.Context, id string) {
	it, err := s.store.Get(ctx, store.APIKeyKey(id))
	if err == nil {
		var rec keyRecord
		if err = json.Unmarshal(it.Data, &rec); err == nil {
			_, err = s.keys.Revoke(ctx, rec.Owner, id)
		}
	}
	if err != nil && !errors.Is(err, store.ErrNotFound) && agentgate.ErrorCode(err) != agentgate.ENOTFOUND {
		slog.WarnContext(ctx, "connector: revoking a replaced key failed; it is refused all the same", "key_id", id, "err", err)
	}
}

// revokeAll revokes every live connector-scope key bound to agent name (the
// keys' GSI2 partition CONNECTOR#<agent>).
func (s *Service) revokeAll(ctx context.Context, name string) error {
	for cursor := ""; ; {
		page, err := s.store.Query(ctx, store.Query{Index: store.Index2, PK: store.ConnectorPartition(name),
			Limit: store.MaxLimit, Cursor: cursor})
		if err != nil {
			return err
		}
		for _, it := range page.Items {
			var rec keyRecord
			if err := json.Unmarshal(it.Data, &rec); err != nil {
				return fmt.Errorf("decoding API key %s: %w", it.PK, err)
			}
			if rec.RevokedAt != nil || rec.Agent != name {
				continue
			}
			if _, err := s.keys.Revoke(ctx, rec.Owner, rec.ID); err != nil && agentgate.ErrorCode(err) != agentgate.ENOTFOUND {
				return err
			}
		}
		if cursor = page.Next; cursor == "" {
			return nil
		}
	}
}

// editExposure changes the exposure set by compare-and-set; edit returns the
// new list (kept sorted and without duplicates here).
func (s *Service) editExposure(ctx context.Context, edit func([]string) []string) ([]string, error) {
	for {
		e, version, err := s.exposure(ctx)
		if err != nil {
			return nil, err
		}
		next := edit(slices.Clone(e.Agents))
		slices.Sort(next)
		next = slices.Compact(next)
		if slices.Equal(next, e.Agents) {
			return next, nil
		}
		if next == nil {
			next = []string{}
		}
		data, err := json.Marshal(exposure{Agents: next})
		if err != nil {
			return nil, err
		}
		it := store.Item{Key: store.ExposureKey(), Kind: "exposure", Data: data, Version: version}
		if version == 0 {
			_, err = s.store.Create(ctx, it)
		} else {
			_, err = s.store.Update(ctx, it)
		}
		if errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return next, nil
	}
}

func without(list []string, name string) []string {
	return slices.DeleteFunc(list, func(n string) bool { return n == name })
}

// CheckExposable refuses the system agent, which is never an MCP tool.
func (s *Service) CheckExposable(name string) error {
	if s.systemAgent != "" && name == s.systemAgent {
		return agentgate.Errorf(agentgate.EFORBIDDEN, "agent %q is the system agent: its MCP exposure cannot be read or changed", name)
	}
	return nil
}

// Exposure says whether agent name is exposed as an MCP tool and, if it
// is, the tool's name.
func (s *Service) Exposure(ctx context.Context, name string) (exposed bool, tool string, err error) {
	tools, err := s.Tools(ctx)
	if err != nil {
		return false, "", err
	}
	tool, exposed = tools[name]
	return exposed, tool, nil
}

// SetExposed exposes agent a as an MCP tool to every user-scope caller, or
// stops. It updates a's configuration and the exposure set, which is what
// the MCP server reads; when one write fails, the other is undone. It
// returns the tool's name ("" when not exposed).
func (s *Service) SetExposed(ctx context.Context, a agent.Agent, exposed bool) (string, error) {
	name := a.Template.Name
	if err := s.CheckExposable(name); err != nil {
		return "", err
	}
	// The exposure set is shared by every agent and knows nothing of
	// registrations: make sure a is the registered agent before touching
	// it, and again after (stillThere).
	if err := s.same(ctx, a); err != nil {
		return "", err
	}
	set := func(v bool) error {
		_, _, err := s.update(ctx, a, func(c *Config) error { c.MCPExposed = v; return nil })
		return err
	}
	if exposed {
		// The configuration first: a failure after it leaves an agent that
		// its owner sees exposed and the MCP server does not, never the
		// reverse.
		if err := set(true); err != nil {
			return "", err
		}
		if _, err := s.editExposure(ctx, func(l []string) []string { return append(l, name) }); err != nil {
			s.undo(ctx, "exposing", name, func(ctx context.Context) error {
				_, _, err := s.update(ctx, a, func(c *Config) error { c.MCPExposed = false; return nil })
				return err
			})
			return "", err
		}
	} else {
		if _, err := s.editExposure(ctx, func(l []string) []string { return without(l, name) }); err != nil {
			return "", err
		}
		if err := set(false); err != nil {
			s.undo(ctx, "hiding", name, func(ctx context.Context) error {
				_, err := s.editExposure(ctx, func(l []string) []string { return append(l, name) })
				return err
			})
			return "", err
		}
	}
	if err := s.stillThere(ctx, a); err != nil {
		return "", err
	}
	_, tool, err := s.Exposure(ctx, name)
	return tool, err
}

// undo runs a compensating write past the request's cancellation, logging
// a failure.
func (s *Service) undo(ctx context.Context, what, name string, fn func(context.Context) error) {
	if err := fn(context.WithoutCancel(ctx)); err != nil {
		slog.ErrorContext(ctx, "connector: undoing a half-done change failed", "change", what, "agent", name, "err", err)
	}
}

// purge removes everything of agent name but its record: its place in the
// exposure set first (so the MCP tool goes before anything else), its
// connector keys, its connector configuration. Each step is idempotent.
func (s *Service) purge(ctx context.Context, name string) error {
	if _, err := s.editExposure(ctx, func(l []string) []string { return without(l, name) }); err != nil {
		return err
	}
	if err := s.revokeAll(ctx, name); err != nil {
		return err
	}
	return s.store.Delete(ctx, store.ConnectorKey(name))
}

// same refuses a stale a: ENOTFOUND if the agent is gone, ECONFLICT if it
// was registered anew since a was read.
func (s *Service) same(ctx context.Context, a agent.Agent) error {
	cur, err := s.agents.Get(ctx, a.Template.Name)
	if err != nil {
		return err
	}
	if !cur.CreatedAt.Equal(a.CreatedAt) || cur.Owner != a.Owner {
		return agentgate.Errorf(agentgate.ECONFLICT, "agent %q was deleted and registered anew meanwhile; nothing was changed", a.Template.Name)
	}
	return nil
}

// stillThere undoes what a change just wrote for agent a if a has been
// deleted (or deleted and registered anew) meanwhile, so that a change
// racing a deletion cannot leave an exposure, a key or a configuration
// behind for the name: the deletion purges before and after removing the
// record, and the change looks after writing.
func (s *Service) stillThere(ctx context.Context, a agent.Agent) error {
	cur, err := s.agents.Get(ctx, a.Template.Name)
	if err == nil && cur.CreatedAt.Equal(a.CreatedAt) && cur.Owner == a.Owner {
		return nil
	}
	if err != nil && agentgate.ErrorCode(err) != agentgate.ENOTFOUND {
		return err
	}
	if err == nil {
		return agentgate.Errorf(agentgate.ECONFLICT, "agent %q was deleted and registered anew meanwhile; nothing was changed", a.Template.Name)
	}
	if perr := s.purge(context.WithoutCancel(ctx), a.Template.Name); perr != nil {
		return perr
	}
	return agentgate.Errorf(agentgate.ENOTFOUND, "no agent %q: it was deleted meanwhile", a.Template.Name)
}

// Register registers template t for owner, as `agentgate agents import`
// does (the same validation, the same endpoint check): a name that belongs
// to someone else is ECONFLICT; the same template again writes nothing. A
// name registered anew starts fresh: whatever a racing change left of a
// deleted agent of that name (connector, keys, exposure) is removed first.
func (s *Service) Register(ctx context.Context, owner string, t *agent.Template) (agent.Agent, agent.ImportResult, error) {
	if err := t.Validate(); err != nil {
		return agent.Agent{}, "", err
	}
	if _, err := s.agents.Get(ctx, t.Name); agentgate.ErrorCode(err) == agentgate.ENOTFOUND {
		if err := s.purge(ctx, t.Name); err != nil {
			return agent.Agent{}, "", err
		}
	} else if err != nil {
		return agent.Agent{}, "", err
	}
	a, res, err := s.agents.Import(ctx, owner, t)
	if agentgate.ErrorCode(err) == agentgate.EFORBIDDEN {
		return agent.Agent{}, "", agentgate.Wrap(agentgate.ECONFLICT, err, fmt.Sprintf("agent %q belongs to another owner; choose another name", t.Name))
	}
	return a, res, err
}

// Delete removes agent a and everything of it: its MCP exposure, its
// connector keys, its connector configuration, then its record (its card
// and front door), in that order, so that a failure part way leaves the
// agent registered with less reach, never more, and a retry finishes the
// job. Everything holds on the next request on every instance.
func (s *Service) Delete(ctx context.Context, a agent.Agent) error {
	name := a.Template.Name
	if err := s.purge(ctx, name); err != nil {
		return err
	}
	if err := s.agents.Delete(ctx, name); err != nil {
		return err
	}
	// A change that raced the deletion may have written after the purge;
	// it also checks after its own write (stillThere), so one of the two
	// sees the other.
	return s.purge(ctx, name)
}

// Owned returns owner's agents, in name order.
func (s *Service) Owned(ctx context.Context, owner string) ([]agent.Agent, error) {
	var out []agent.Agent
	for cursor := ""; ; {
		agents, next, err := s.agents.List(ctx, cursor, store.MaxLimit)
		if err != nil {
			return nil, err
		}
		for _, a := range agents {
			if a.Owner == owner {
				out = append(out, a)
			}
		}
		if cursor = next; cursor == "" {
			return out, nil
		}
	}
}
