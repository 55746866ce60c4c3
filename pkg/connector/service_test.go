package connector_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentgate/agentgate/pkg/agent"
	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/apikey"
	"github.com/agentgate/agentgate/pkg/connector"
	"github.com/agentgate/agentgate/pkg/store"
	"github.com/agentgate/agentgate/pkg/store/storetest"
	"github.com/agentgate/agentgate/pkg/store/teststores"
)

// domain is the connector service on one store, on the store's clock.
type domain struct {
	st    store.Store
	clock *storetest.Clock
	reg   *agent.Registry
	keys  *apikey.Service
	svc   *connector.Service
}

func forEachStore(t *testing.T, fn func(t *testing.T, d *domain)) {
	teststores.ForEach(t, func(t *testing.T, st store.Store, clock *storetest.Clock) {
		d := &domain{st: st, clock: clock, reg: agent.NewRegistry(st, clock.Now), keys: apikey.NewService(st, clock.Now)}
		d.svc = d.instance()
		fn(t, d)
	})
}

// instance is another instance's service on the same table.
func (d *domain) instance() *connector.Service {
	return connector.NewService(connector.Options{Store: d.st, Agents: agent.NewRegistry(d.st, d.clock.Now),
		Keys: apikey.NewService(d.st, d.clock.Now), Now: d.clock.Now, SystemAgent: "system", ReservedTools: []string{"dispatch_task"}})
}

func tmpl(name string, public bool) *agent.Template {
	return &agent.Template{Name: name, Description: "An agent.", Version: "1.0.0", Endpoint: "https://example.com/" + name,
		PublicCard:   public,
		Capabilities: []agent.Capability{{Name: "Things", Description: "Does things.", UseCases: []string{"Do a thing"}}},
		Playbooks: []agent.Playbook{
			{Name: "one", Description: "First.", UserInvocable: true},
			{Name: "internal", Description: "Not for users."},
			{Name: "two", Description: "Second.", UserInvocable: true, Automation: true},
		}}
}

func (d *domain) register(t *testing.T, owner, name string, public bool) agent.Agent {
	t.Helper()
	a, res, err := d.svc.Register(t.Context(), owner, tmpl(name, public))
	if err != nil || res != agent.Created {
		t.Fatalf("Register(%s): %v, %v", name, res, err)
	}
	return a
}

func TestPlaybooks(t *testing.T) {
	a := agent.Agent{Template: *tmpl("x", false)}
	names := func(ps []agent.Playbook) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.Name)
		}
		return out
	}
	for _, c := range []struct {
		exposed []string
		want    []string
	}{
		{nil, []string{"one", "two"}},
		{[]string{}, nil},
		{[]string{"two", "one"}, []string{"one", "two"}}, // template order
		{[]string{"two", "internal", "gone"}, []string{"two"}},
	} {
		if got := names(connector.Playbooks(a, connector.Config{ExposedPlaybooks: c.exposed})); !slices.Equal(got, c.want) {
			t.Errorf("Playbooks(%q) = %q, want %q", c.exposed, got, c.want)
		}
	}
	if err := connector.CheckPlaybooks(a, []string{"one", "internal", "nope", "one"}); agentgate.ErrorCode(err) != agentgate.EINVALID {
		t.Fatalf("CheckPlaybooks: %v", err)
	}
}

// TestAuthorize is who reaches an agent through the domain API, as the MCP
// server asks it on every request of a connector key.
func TestAuthorize(t *testing.T) {
	forEachStore(t, func(t *testing.T, d *domain) {
		ctx := t.Context()
		mine := d.register(t, "alice", "mine", false)
		d.register(t, "alice", "public", true)
		alice := agentgate.Principal{Subject: "alice", Scope: agentgate.ScopeUser}
		bob := agentgate.Principal{Subject: "bob", Scope: agentgate.ScopeUser}

		if a, c, err := d.svc.Get(ctx, "mine"); err != nil || a.Owner != "alice" || c.Agent != "mine" || c.Enabled || c.KeyID != "" || c.ExposedPlaybooks != nil {
			t.Fatalf("Get of a fresh agent: %+v %+v %v", a, c, err)
		}
		if _, _, err := d.svc.Get(ctx, "nope"); agentgate.ErrorCode(err) != agentgate.ENOTFOUND {
			t.Fatalf("Get(nope): %v", err)
		}
		for _, c := range []struct {
			p    agentgate.Principal
			name string
			code string
		}{
			{alice, "mine", ""}, {bob, "mine", agentgate.ENOTFOUND}, {bob, "public", agentgate.EFORBIDDEN}, {bob, "nope", agentgate.ENOTFOUND},
		} {
			if _, _, err := d.svc.Authorize(ctx, c.p, c.name, true); agentgate.ErrorCode(err) != c.code {
				t.Errorf("Authorize(%s, %s) = %v, want %q", c.p.Subject, c.name, err, c.code)
			}
		}

		created, _, err := d.svc.MintKey(ctx, mine)
		if err != nil {
			t.Fatal(err)
		}
		key, err := d.keys.Authenticate(ctx, created.Key)
		if err != nil {
			t.Fatal(err)
		}
		other := d.instance()
		if a, c, err := other.ForConnectorKey(ctx, key); err != nil || a.Template.Name != "mine" || !c.Enabled || c.KeyID != key.KeyID {
			t.Fatalf("ForConnectorKey: %+v %+v %v", a, c, err)
		}
		if _, _, err := other.Authorize(ctx, key, "mine", false); agentgate.ErrorCode(err) != agentgate.EFORBIDDEN {
			t.Errorf("a connector key on an owner-only action: %v", err)
		}
		if _, _, err := other.Authorize(ctx, key, "public", true); agentgate.ErrorCode(err) != agentgate.EFORBIDDEN {
			t.Errorf("a connector key on another agent: %v", err)
		}
		if _, _, err := other.ForConnectorKey(ctx, alice); agentgate.ErrorCode(err) != agentgate.EFORBIDDEN {
			t.Errorf("ForConnectorKey(user): %v", err)
		}

		// Disabled: refused; enabled again: through.
		off, on := false, true
		if _, err := d.svc.Configure(ctx, mine, connector.ConfigChange{Enabled: &off}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := other.ForConnectorKey(ctx, key); agentgate.ErrorCode(err) != agentgate.EFORBIDDEN {
			t.Errorf("disabled: %v", err)
		}
		if _, err := d.svc.Configure(ctx, mine, connector.ConfigChange{Enabled: &on}); err != nil {
			t.Fatal(err)
		}
		// Replaced: refused even before its record says revoked (the
		// principal was authenticated before the regeneration).
		if _, _, err := d.svc.MintKey(ctx, mine); err != nil {
			t.Fatal(err)
		}
		if _, _, err := other.ForConnectorKey(ctx, key); agentgate.ErrorCode(err) != agentgate.EFORBIDDEN {
			t.Errorf("replaced: %v", err)
		}
		if _, err := d.keys.Authenticate(ctx, created.Key); agentgate.ErrorCode(err) != agentgate.EUNAUTHORIZED {
			t.Errorf("the replaced key authenticates: %v", err)
		}
		// Its agent deleted: refused.
		if err := d.svc.Delete(ctx, mine); err != nil {
			t.Fatal(err)
		}
		if _, _, err := other.ForConnectorKey(ctx, key); agentgate.ErrorCode(err) != agentgate.EFORBIDDEN {
			t.Errorf("agent deleted: %v", err)
		}
	})
}

// TestExposureSet: one small record, changed by compare-and-set from many
// instances at once, read whole by each.
func TestExposureSet(t *testing.T) {
	forEachStore(t, func(t *testing.T, d *domain) {
		ctx := t.Context()
		var agents []agent.Agent
		for i := range 8 {
			agents = append(agents, d.register(t, "alice", fmt.Sprintf("agent-%d", i), false))
		}
		d.register(t, "alice", "system", false)
		var wg sync.WaitGroup
		for _, a := range agents {
			svc := d.instance()
			wg.Go(func() {
				if _, err := svc.SetExposed(ctx, a, true); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		names, err := d.instance().Exposed(ctx)
		if err != nil || len(names) != len(agents) || !slices.IsSorted(names) {
			t.Fatalf("Exposed() = %v, %v; want all %d, sorted", names, err, len(agents))
		}
		tools, err := d.svc.Tools(ctx)
		if err != nil || tools["agent-3"] != "chat_with_agent_3" || len(tools) != len(agents) {
			t.Fatalf("Tools() = %v, %v", tools, err)
		}
		// Hidden concurrently, half of them; the others stay.
		for _, a := range agents[:4] {
			svc := d.instance()
			wg.Go(func() {
				if _, err := svc.SetExposed(ctx, a, false); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if names, _ := d.svc.Exposed(ctx); !slices.Equal(names, []string{"agent-4", "agent-5", "agent-6", "agent-7"}) {
			t.Fatalf("after hiding half: %v", names)
		}
		if _, c, _ := d.svc.Get(ctx, "agent-1"); c.MCPExposed {
			t.Error("a hidden agent's configuration says exposed")
		}
		if _, c, _ := d.svc.Get(ctx, "agent-5"); !c.MCPExposed {
			t.Error("an exposed agent's configuration says hidden")
		}
		// One read of one item.
		it, err := d.st.Get(ctx, store.ExposureKey())
		if err != nil || len(it.Data) > 200 {
			t.Errorf("the exposure set: %s, %v", it.Data, err)
		}
		sys, _ := d.reg.Get(ctx, "system")
		if _, err := d.svc.SetExposed(ctx, sys, true); agentgate.ErrorCode(err) != agentgate.EFORBIDDEN {
			t.Errorf("exposing the system agent: %v", err)
		}
		// A deleted agent leaves the set; an exposure racing the deletion
		// does not outlive it.
		if err := d.svc.Delete(ctx, agents[5]); err != nil {
			t.Fatal(err)
		}
		if _, err := d.svc.SetExposed(ctx, agents[5], true); agentgate.ErrorCode(err) != agentgate.ENOTFOUND {
			t.Errorf("exposing a deleted agent (read before its deletion): %v", err)
		}
		if names, _ := d.svc.Exposed(ctx); slices.Contains(names, "agent-5") {
			t.Errorf("a deleted agent is exposed: %v", names)
		}
	})
}

// TestDeleteRacesChanges: changes made with an agent read before its
// deletion (another instance's request in flight) leave nothing behind, and
// the name registered anew starts fresh.
func TestDeleteRacesChanges(t *testing.T) {
	forEachStore(t, func(t *testing.T, d *domain) {
		ctx := t.Context()
		a := d.register(t, "alice", "racy", false)
		if err := d.svc.Delete(ctx, a); err != nil {
			t.Fatal(err)
		}
		late := d.instance()
		if _, _, err := late.MintKey(ctx, a); agentgate.ErrorCode(err) != agentgate.ENOTFOUND {
			t.Errorf("mint after deletion: %v", err)
		}
		on := true
		if _, err := late.Configure(ctx, a, connector.ConfigChange{Enabled: &on}); agentgate.ErrorCode(err) != agentgate.ENOTFOUND {
			t.Errorf("configure after deletion: %v", err)
		}
		if _, err := d.st.Get(ctx, store.ConnectorKey("racy")); err == nil {
			t.Error("a configuration outlived the agent")
		}
		page, err := d.st.Query(ctx, store.Query{Index: store.Index2, PK: store.ConnectorPartition("racy")})
		if err != nil {
			t.Fatal(err)
		}
		infos, _, _ := d.keys.List(ctx, "alice", "", 0)
		for _, k := range infos {
			if !k.Revoked {
				t.Errorf("a key outlived the agent: %+v (of %d)", k, len(page.Items))
			}
		}
		// Registered anew a minute later by bob: nothing of alice's.
		d.clock.Advance(time.Minute)
		b := d.register(t, "bob", "racy", false)
		if _, c, err := d.svc.Get(ctx, "racy"); err != nil || c.Enabled || c.KeyID != "" || c.MCPExposed {
			t.Fatalf("fresh: %+v, %v", c, err)
		}
		// A change still holding alice's agent does not touch bob's.
		if _, err := late.Configure(ctx, a, connector.ConfigChange{Enabled: &on}); agentgate.ErrorCode(err) != agentgate.ECONFLICT {
			t.Errorf("a change for the old agent on the new one: %v", err)
		}
		if _, _, err := late.MintKey(ctx, a); agentgate.ErrorCode(err) != agentgate.ECONFLICT {
			t.Errorf("a mint for the old agent on the new one: %v", err)
		}
		if _, err := late.SetExposed(ctx, a, true); agentgate.ErrorCode(err) != agentgate.ECONFLICT {
			t.Errorf("an exposure for the old agent on the new one: %v", err)
		}
		if _, c, err := d.svc.Get(ctx, "racy"); err != nil || c.Enabled || c.KeyID != "" || c.MCPExposed || !c.Generation.Equal(b.CreatedAt) {
			t.Fatalf("the new agent's connector after stale changes: %+v, %v", c, err)
		}
		if names, _ := d.svc.Exposed(ctx); len(names) != 0 {
			t.Errorf("exposed: %v", names)
		}
		infos, _, _ = d.keys.List(ctx, "alice", "", 0)
		for _, k := range infos {
			if !k.Revoked {
				t.Errorf("a stale mint left a live key: %+v", k)
			}
		}
		// The new owner's own changes go through.
		if _, err := d.svc.Configure(ctx, b, connector.ConfigChange{Enabled: &on}); err != nil {
			t.Fatal(err)
		}
		if _, c, _ := d.svc.Get(ctx, "racy"); !c.Enabled {
			t.Errorf("bob's change: %+v", c)
		}
	})
}
