package connector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/agentgate/agentgate/pkg/agent"
	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/apikey"
	"github.com/agentgate/agentgate/pkg/store"
)

// Config is an agent's connector configuration (stored at
// store.ConnectorKey(agent)). An agent without one has the zero Config: a
// disabled connector, no key, not exposed.
type Config struct {
	Agent   string `json:"agent"` // the agent's name
	Enabled bool   `json:"enabled"`
	// ExposedPlaybooks names the playbooks the connector offers; nil means
	// every user_invocable playbook of the agent's template.
	ExposedPlaybooks []string `json:"exposed_playbooks"`
	// KeyID is the public id of the agent's one current connector key (""
	// if none); only that key reaches the connector.
	KeyID        string    `json:"key_id,omitempty"`
	KeyPrefix    string    `json:"key_prefix,omitempty"`
	KeyCreatedAt time.Time `json:"key_created_at,omitzero"`
	// MCPExposed exposes the agent to every user-scope MCP caller as a
	// chat_with_<slug> tool. The exposure set (Service.Exposed) is what the
	// MCP server reads; this is the owner's side of the same fact.
	MCPExposed bool `json:"mcp_exposed,omitempty"`
	// Generation is the CreatedAt of the agent's registration this
	// configuration belongs to: a configuration left by a deleted agent of
	// the same name (a change that raced the deletion) is not the new
	// agent's, which starts fresh.
	Generation time.Time `json:"generation,omitzero"`
}

// Options configure a Service.
type Options struct {
	Store  store.Store
	Agents *agent.Registry
	Keys   *apikey.Service
	Now    func() time.Time // nil: time.Now
	// Admins are the subjects that may change deployment settings
	// (ADMIN_SUBJECTS).
	Admins []string
	// SystemAgent is the agent that can never be exposed as an MCP tool
	// (SYSTEM_AGENT); "" names none.
	SystemAgent string
	// ReservedTools are the MCP server's built-in tool names, which no
	// chat_with_ tool may take.
	ReservedTools []string
	// PublicBaseURL is the API's configured public base URL ("" derives
	// it from each request), from which the MCP URL is derived when no
	// setting names it.
	PublicBaseURL string
}

// Service is the connector domain: agents' connector configurations, their
// keys, MCP exposure and the MCP URL setting. Nothing in it caches: every
// answer is the table's as of the call, so a change made on one instance
// holds on the next request on every other.
type Service struct {
	store       store.Store
	agents      *agent.Registry
	keys        *apikey.Service
	now         func() time.Time
	admins      []string
	systemAgent string
	reserved    []string
	baseURL     string
}

// NewService returns a Service built from o.
func NewService(o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Service{store: o.Store, agents: o.Agents, keys: o.Keys, now: o.Now,
		admins: slices.Clone(o.Admins), systemAgent: o.SystemAgent,
		reserved: slices.Clone(o.ReservedTools), baseURL: o.PublicBaseURL}
}

// Get returns agent's connector configuration; an agent with none yet gets
// Config{Agent: name} (disabled). ENOTFOUND if the agent is not registered.
//
// The agent and its configuration are read concurrently: on Lambda a
// request's latency is its sequential store round trips, and every
// connector-key request asks this.
func (s *Service) Get(ctx context.Context, agentName string) (agent.Agent, Config, error) {
	var (
		a     agent.Agent
		aErr  error
		it    store.Item
		itErr error = store.ErrNotFound // a name no agent may have has no configuration either
		reads sync.WaitGroup
	)
	// Neither read cancels the other: the agent decides, and a request the
	// store is serving is left to finish.
	reads.Go(func() { a, aErr = s.agents.Get(ctx, agentName) })
	if agent.ValidName(agentName) {
		reads.Go(func() { it, itErr = s.store.Get(ctx, store.ConnectorKey(agentName)) })
	}
	reads.Wait()
	if aErr != nil {
		return agent.Agent{}, Config{}, aErr
	}
	c, _, err := s.decide(a, it, itErr, false)
	if err != nil {
		return agent.Agent{}, Config{}, err
	}
	return a, c, nil
}

// config reads a's configuration and the version of its record (0 when
// there is none yet). A configuration of an earlier registration of the
// name is none: a's is fresh. One of a later registration means a is
// stale (deleted and registered anew since it was read): ECONFLICT when
// strict, else fresh too.
func (s *Service) config(ctx context.Context, a agent.Agent, strict bool) (Config, int64, error) {
	it, err := s.store.Get(ctx, store.ConnectorKey(a.Template.Name))
	return s.decide(a, it, err, strict)
}

// decide is config for the record it (or the error err of reading it).
func (s *Service) decide(a agent.Agent, it store.Item, err error, strict bool) (Config, int64, error) {
	name := a.Template.Name
	fresh := Config{Agent: name, Generation: a.CreatedAt}
	if errors.Is(err, store.ErrNotFound) {
		return fresh, 0, nil
	} else if err != nil {
		return Config{}, 0, err
	}
	var c Config
	if err := json.Unmarshal(it.Data, &c); err != nil {
		return Config{}, 0, fmt.Errorf("decoding connector configuration %s: %w", it.PK, err)
	}
	c.Agent = name
	switch {
	case c.Generation.IsZero() || c.Generation.Equal(a.CreatedAt):
		c.Generation = a.CreatedAt
		return c, it.Version, nil
	case strict && c.Generation.After(a.CreatedAt):
		return Config{}, 0, agentgate.Errorf(agentgate.ECONFLICT, "agent %q was deleted and registered anew meanwhile; nothing was changed", name)
	}
	return fresh, it.Version, nil
}

// Playbooks returns the playbooks c exposes: ExposedPlaybooks, or when nil
// every user_invocable one, in template order. A listed name the template
// no longer has (or no longer marks user_invocable) is left out.
func Playbooks(a agent.Agent, c Config) []agent.Playbook {
	var out []agent.Playbook
	for _, p := range a.Template.Playbooks {
		if !p.UserInvocable {
			continue
		}
		if c.ExposedPlaybooks == nil || slices.Contains(c.ExposedPlaybooks, p.Name) {
			out = append(out, p)
		}
	}
	return out
}

// Authorize returns agent name and its configuration when p may act on it:
// its owner with a user credential, or, when connectorKey allows it, the
// agent's own connector key while that key is the connector's current key
// and the connector is enabled. Anyone else gets EFORBIDDEN on an agent
// they can see (a public card, or exposed as an MCP tool) and ENOTFOUND on
// one they cannot, as on an unknown agent; a connector key never reaches
// another agent (EFORBIDDEN).
func (s *Service) Authorize(ctx context.Context, p agentgate.Principal, name string, connectorKey bool) (agent.Agent, Config, error) {
	if p.Scope == agentgate.ScopeConnector && p.Agent != name {
		return agent.Agent{}, Config{}, agentgate.Errorf(agentgate.EFORBIDDEN, "this connector key reaches only agent %q", p.Agent)
	}
	a, c, err := s.Get(ctx, name)
	if err != nil {
		if p.Scope == agentgate.ScopeConnector && agentgate.ErrorCode(err) == agentgate.ENOTFOUND {
			return agent.Agent{}, Config{}, agentgate.Errorf(agentgate.EFORBIDDEN, "the agent of this connector key is gone")
		}
		return agent.Agent{}, Config{}, err
	}
	switch p.Scope {
	case agentgate.ScopeUser:
		if p.Subject != "" && a.Owner == p.Subject {
			return a, c, nil
		}
		if a.Template.PublicCard || c.MCPExposed {
			return agent.Agent{}, Config{}, agentgate.Errorf(agentgate.EFORBIDDEN, "only the owner of agent %q may do this", name)
		}
		return agent.Agent{}, Config{}, agentgate.Errorf(agentgate.ENOTFOUND, "no agent %q", name)
	case agentgate.ScopeConnector:
		switch {
		case !connectorKey:
			return agent.Agent{}, Config{}, agentgate.Errorf(agentgate.EFORBIDDEN, "a connector key cannot do this")
		case c.KeyID == "" || c.KeyID != p.KeyID:
			return agent.Agent{}, Config{}, agentgate.Errorf(agentgate.EFORBIDDEN, "this connector key has been replaced; use the agent's current connector key")
		case !c.Enabled:
			return agent.Agent{}, Config{}, agentgate.Errorf(agentgate.EFORBIDDEN, "the connector of agent %q is disabled", name)
		}
		return a, c, nil
	}
	return agent.Agent{}, Config{}, agentgate.Errorf(agentgate.EFORBIDDEN, "a %q credential cannot do this", p.Scope)
}

// ForConnectorKey is Authorize for a connector-scope principal on its own
// agent: what an MCP session of that key may reach, checked on each request.
func (s *Service) ForConnectorKey(ctx context.Context, p agentgate.Principal) (agent.Agent, Config, error) {
	if p.Scope != agentgate.ScopeConnector {
		return agent.Agent{}, Config{}, agentgate.Errorf(agentgate.EFORBIDDEN, "not a connector key")
	}
	return s.Authorize(ctx, p, p.Agent, true)
}

// exposure is the exposure set's record: the names of the exposed agents,
// sorted.
type exposure struct {
	Agents []string `json:"agents"`
}

// Exposed returns the names of the agents exposed as MCP tools, sorted, with
// one read of one small item (the exposure set, a single record updated by
// compare-and-set whenever an agent's exposure changes or it is deleted).
func (s *Service) Exposed(ctx context.Context) ([]string, error) {
	e, _, err := s.exposure(ctx)
	return e.Agents, err
}

func (s *Service) exposure(ctx context.Context) (exposure, int64, error) {
	it, err := s.store.Get(ctx, store.ExposureKey())
	if errors.Is(err, store.ErrNotFound) {
		return exposure{}, 0, nil
	} else if err != nil {
		return exposure{}, 0, err
	}
	var e exposure
	if err := json.Unmarshal(it.Data, &e); err != nil {
		return exposure{}, 0, fmt.Errorf("decoding the MCP exposure set: %w", err)
	}
	return e, it.Version, nil
}

// Tools maps each exposed agent to its chat_with_ tool name, with the
// service's reserved names: ToolNames over Exposed.
func (s *Service) Tools(ctx context.Context) (map[string]string, error) {
	names, err := s.Exposed(ctx)
	if err != nil {
		return nil, err
	}
	return ToolNames(names, s.reserved), nil
}

// Reserved returns the built-in tool names no chat_with_ tool may take.
func (s *Service) Reserved() []string { return slices.Clone(s.reserved) }
