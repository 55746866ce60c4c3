package connector_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/pkg/app/apptest"
	"github.com/agentgate/agentgate/pkg/store"
)

// TestOwnerFlow walks an owner through the whole API over HTTP, on two
// instances of one table: register, configure, mint, use the key, expose,
// regenerate, revoke, delete, register anew.
func TestOwnerFlow(t *testing.T) {
	for _, backend := range apptest.Backends {
		t.Run(backend, func(t *testing.T) {
			s := apptest.New(t, backend, nil)
			one, two := s.Serve(), s.Serve()
			alice, bob := s.Key("alice", user), s.Key("bob", user)

			// Register: 201, then the same template again changes
			// nothing, a change updates, another owner's name is 409.
			a := want(t, "register", register(t, s, one, alice, "my-echo", false), http.StatusCreated)
			if a.body["result"] != "created" || a.body["owner"] != "alice" || a.body["mcp_exposed"] != false || a.body["tool"] != nil {
				t.Fatalf("registered: %s", a.raw)
			}
			if a.header.Get("Cache-Control") != "no-store" {
				t.Errorf("Cache-Control %q", a.header.Get("Cache-Control"))
			}
			it, _ := s.Deps.Store.Get(t.Context(), store.AgentKey("my-echo"))
			a = want(t, "register again", register(t, s, two, alice, "my-echo", false), http.StatusOK)
			if a.body["result"] != "unchanged" {
				t.Fatalf("again: %s", a.raw)
			}
			if again, _ := s.Deps.Store.Get(t.Context(), store.AgentKey("my-echo")); again.Version != it.Version {
				t.Errorf("an unchanged registration wrote the record: version %d -> %d", it.Version, again.Version)
			}
			changed := strings.Replace(echoTemplate(t, s, "my-echo", false), "version: 1.0.0", "version: 1.0.1", 1)
			a = want(t, "register a change", call(t, one, alice, "POST", "/api/agents", changed, "application/yaml"), http.StatusOK)
			if a.body["result"] != "updated" {
				t.Fatalf("changed: %s", a.raw)
			}
			a = want(t, "bob takes alice's name", register(t, s, one, bob, "my-echo", false), http.StatusConflict)
			if !strings.Contains(a.message(), "my-echo") {
				t.Errorf("409 message %q", a.message())
			}

			// Listing: alice's own agents only.
			a = want(t, "list", call(t, one, alice, "GET", "/api/agents", nil), http.StatusOK)
			var list struct {
				Agents []struct {
					Name       string  `json:"name"`
					MCPExposed bool    `json:"mcp_exposed"`
					Tool       *string `json:"tool"`
				} `json:"agents"`
			}
			a.decode(t, &list)
			if len(list.Agents) != 1 || list.Agents[0].Name != "my-echo" || list.Agents[0].MCPExposed || list.Agents[0].Tool != nil {
				t.Fatalf("alice's agents: %s", a.raw)
			}
			a = want(t, "bob's list", call(t, one, bob, "GET", "/api/agents", nil), http.StatusOK)
			if string(a.raw) != "{\"agents\":[]}\n" {
				t.Errorf("bob's agents: %s", a.raw)
			}
			want(t, "get", call(t, two, alice, "GET", "/api/agents/my-echo", nil), http.StatusOK)

			// Others: 404 on an agent they cannot see, 403 on one they can.
			want(t, "bob gets a private agent", call(t, one, bob, "GET", "/api/agents/my-echo", nil), http.StatusNotFound)
			want(t, "bob gets a public one", call(t, one, bob, "GET", "/api/agents/sample-echo", nil), http.StatusForbidden)
			want(t, "unknown", call(t, one, alice, "GET", "/api/agents/nope", nil), http.StatusNotFound)

			// The connector, before anything: disabled, every
			// user_invocable playbook, no key, the derived URL.
			a = want(t, "connector", call(t, one, alice, "GET", "/api/agents/my-echo/connector", nil), http.StatusOK)
			if a.body["enabled"] != false || a.body["exposed_playbooks"] != nil || a.body["key"] != nil ||
				a.body["mcp_url"] != one+"/mcp" || a.body["mcp_url_source"] != "derived" || a.body["agent"] != "my-echo" {
				t.Fatalf("fresh connector: %s", a.raw)
			}

			// Playbook selection: a bad one is refused whole, naming each
			// problem; nothing changes.
			a = want(t, "bad playbooks", call(t, one, alice, "PUT", "/api/agents/my-echo/connector",
				map[string]any{"enabled": true, "exposed_playbooks": []string{"echo", "missing", "fail", "echo"}}), http.StatusBadRequest)
			for _, part := range []string{`exposed_playbooks[1]: agent "my-echo" has no playbook "missing"`, `exposed_playbooks[2]: playbook "fail" is not user_invocable`, `exposed_playbooks[3]: "echo" is listed twice`} {
				if !strings.Contains(a.message(), part) {
					t.Errorf("400 %q lacks %q", a.message(), part)
				}
			}
			want(t, "not a list", call(t, one, alice, "PUT", "/api/agents/my-echo/connector", `{"exposed_playbooks": "echo"}`), http.StatusBadRequest)
			want(t, "unknown field", call(t, one, alice, "PUT", "/api/agents/my-echo/connector", `{"enable": true}`), http.StatusBadRequest)
			a = want(t, "after refusals", call(t, one, alice, "GET", "/api/agents/my-echo/connector", nil), http.StatusOK)
			if a.body["enabled"] != false || a.body["exposed_playbooks"] != nil {
				t.Fatalf("a refused change changed the connector: %s", a.raw)
			}
			a = want(t, "select none", call(t, one, alice, "PUT", "/api/agents/my-echo/connector", `{"exposed_playbooks": []}`), http.StatusOK)
			if got, ok := a.body["exposed_playbooks"].([]any); !ok || len(got) != 0 {
				t.Fatalf("none selected: %s", a.raw)
			}
			a = want(t, "no playbooks", call(t, one, alice, "GET", "/api/agents/my-echo/connector/playbooks", nil), http.StatusOK)
			if string(a.raw) != "{\"playbooks\":[]}\n" {
				t.Fatalf("none exposed: %s", a.raw)
			}
			a = want(t, "select", call(t, one, alice, "PUT", "/api/agents/my-echo/connector",
				map[string]any{"exposed_playbooks": []string{"slow", "reverse"}}), http.StatusOK)
			if got := a.body["exposed_playbooks"]; len(got.([]any)) != 2 || a.body["enabled"] != false {
				t.Fatalf("selected: %s", a.raw)
			}
			a = want(t, "playbooks", call(t, two, alice, "GET", "/api/agents/my-echo/connector/playbooks", nil), http.StatusOK)
			var pbs struct {
				Playbooks []struct {
					Name        string         `json:"name"`
					Description string         `json:"description"`
					InputSchema map[string]any `json:"input_schema"`
					Automation  bool           `json:"automation"`
				} `json:"playbooks"`
			}
			a.decode(t, &pbs)
			if len(pbs.Playbooks) != 2 || pbs.Playbooks[0].Name != "reverse" || pbs.Playbooks[1].Name != "slow" ||
				pbs.Playbooks[1].InputSchema["type"] != "object" || !pbs.Playbooks[1].Automation || pbs.Playbooks[0].InputSchema != nil {
				t.Fatalf("playbooks in template order, the exposed ones only: %s", a.raw)
			}

			// Mint: the key once, no-store; it enables the connector.
			key1, a := mint(t, one, alice, "my-echo")
			if a.header.Get("Cache-Control") != "no-store" || a.body["prefix"] == "" || a.body["snippets"] == nil {
				t.Fatalf("minted: %v %s", a.header, a.raw)
			}
			a = want(t, "connector after mint", call(t, two, alice, "GET", "/api/agents/my-echo/connector", nil), http.StatusOK)
			k, _ := a.body["key"].(map[string]any)
			if a.body["enabled"] != true || k == nil || !strings.HasPrefix(key1, k["prefix"].(string)+"_") || k["useCount"] != 0.0 || k["lastUsedAt"] != nil {
				t.Fatalf("connector after mint: %s", a.raw)
			}
			if strings.Contains(string(a.raw), key1) {
				t.Fatal("the secret shows after the mint")
			}

			// The key: its agent's playbooks and chat, on any instance.
			want(t, "key reads playbooks", call(t, two, key1, "GET", "/api/agents/my-echo/connector/playbooks", nil), http.StatusOK)
			a = want(t, "key chats", call(t, two, key1, "POST", "/api/agents/my-echo/chat", map[string]any{"message": "reverse stressed"}), http.StatusOK)
			if a.body["reply"] != "desserts" || a.body["status"] != "completed" || a.body["task_id"] == "" || a.body["context_id"] == "" {
				t.Fatalf("chat: %s", a.raw)
			}
			a = want(t, "next turn", call(t, one, alice, "POST", "/api/agents/my-echo/chat",
				map[string]any{"message": "echo again", "context_id": a.body["context_id"]}), http.StatusOK)
			if a.body["reply"] != "again" {
				t.Fatalf("owner's chat: %s", a.raw)
			}
			a = want(t, "connector after use", call(t, one, alice, "GET", "/api/agents/my-echo/connector", nil), http.StatusOK)
			// Key uses are written at most once a minute per key and
			// instance (the first at once): the second may still be waiting.
			if k := a.body["key"].(map[string]any); (k["useCount"] != 1.0 && k["useCount"] != 2.0) || k["lastUsedAt"] == nil {
				t.Errorf("key use: %s", a.raw)
			}
			want(t, "bad chat", call(t, one, key1, "POST", "/api/agents/my-echo/chat", map[string]any{"message": " "}), http.StatusBadRequest)
			want(t, "key on another agent", call(t, one, key1, "POST", "/api/agents/sample-echo/chat", map[string]any{"message": "echo"}), http.StatusForbidden)
			want(t, "key on the owner API", call(t, one, key1, "GET", "/api/agents/my-echo/connector", nil), http.StatusForbidden)
			want(t, "bob chats", call(t, one, bob, "POST", "/api/agents/my-echo/chat", map[string]any{"message": "echo"}), http.StatusNotFound)

			// Disabled, the key reaches nothing; enabled, again.
			want(t, "disable", call(t, one, alice, "PUT", "/api/agents/my-echo/connector", map[string]any{"enabled": false}), http.StatusOK)
			want(t, "disabled playbooks", call(t, two, key1, "GET", "/api/agents/my-echo/connector/playbooks", nil), http.StatusForbidden)
			want(t, "disabled chat", call(t, two, key1, "POST", "/api/agents/my-echo/chat", map[string]any{"message": "echo"}), http.StatusForbidden)
			a = want(t, "enable, all playbooks", call(t, one, alice, "PUT", "/api/agents/my-echo/connector", `{"enabled": true, "exposed_playbooks": null}`), http.StatusOK)
			if a.body["exposed_playbooks"] != nil || a.body["enabled"] != true {
				t.Fatalf("enabled: %s", a.raw)
			}
			a = want(t, "all playbooks", call(t, two, key1, "GET", "/api/agents/my-echo/connector/playbooks", nil), http.StatusOK)
			a.decode(t, &pbs)
			if len(pbs.Playbooks) != 4 {
				t.Errorf("every user_invocable playbook: %s", a.raw)
			}

			// Exposure, seen on the other instance.
			a = want(t, "expose", call(t, one, alice, "PUT", "/api/agents/my-echo/mcp-exposed", map[string]any{"exposed": true}), http.StatusOK)
			if a.body["exposed"] != true || a.body["tool"] != "chat_with_my_echo" {
				t.Fatalf("exposed: %s", a.raw)
			}
			a = want(t, "exposure elsewhere", call(t, two, alice, "GET", "/api/agents/my-echo/mcp-exposed", nil), http.StatusOK)
			if a.body["exposed"] != true || a.body["tool"] != "chat_with_my_echo" {
				t.Fatalf("exposure on another instance: %s", a.raw)
			}
			if names, err := s.Deps.Connector.Exposed(t.Context()); err != nil || !slices.Equal(names, []string{"my-echo"}) {
				t.Fatalf("Exposed() = %v, %v", names, err)
			}
			a = want(t, "list exposed", call(t, two, alice, "GET", "/api/agents/my-echo", nil), http.StatusOK)
			if a.body["mcp_exposed"] != true || a.body["tool"] != "chat_with_my_echo" {
				t.Fatalf("agent after exposure: %s", a.raw)
			}
			want(t, "bob on an exposed agent", call(t, one, bob, "GET", "/api/agents/my-echo", nil), http.StatusForbidden)
			want(t, "bob exposes", call(t, one, bob, "PUT", "/api/agents/my-echo/mcp-exposed", map[string]any{"exposed": false}), http.StatusForbidden)
			want(t, "exposed missing", call(t, one, alice, "PUT", "/api/agents/my-echo/mcp-exposed", `{}`), http.StatusBadRequest)

			// Regenerate: the old key is refused at once, on the other
			// instance; the new one works there.
			key2, _ := mint(t, one, alice, "my-echo")
			a = call(t, two, key1, "GET", "/api/agents/my-echo/connector/playbooks", nil)
			if a.status != http.StatusUnauthorized {
				t.Fatalf("the replaced key: %d %s, want 401", a.status, a.raw)
			}
			want(t, "the new key", call(t, two, key2, "GET", "/api/agents/my-echo/connector/playbooks", nil), http.StatusOK)

			// Revoke: refused at once; no key shows.
			want(t, "revoke", call(t, one, alice, "DELETE", "/api/agents/my-echo/connector/key", nil), http.StatusOK)
			want(t, "revoked key", call(t, two, key2, "GET", "/api/agents/my-echo/connector/playbooks", nil), http.StatusUnauthorized)
			a = want(t, "connector after revoke", call(t, two, alice, "GET", "/api/agents/my-echo/connector", nil), http.StatusOK)
			if a.body["key"] != nil {
				t.Fatalf("after revoke: %s", a.raw)
			}
			want(t, "revoke again", call(t, one, alice, "DELETE", "/api/agents/my-echo/connector/key", nil), http.StatusOK)

			// Delete: card, front door, connector, key and exposure stop on
			// the other instance.
			key3, _ := mint(t, one, alice, "my-echo")
			want(t, "card before", call(t, two, alice, "GET", "/api/agents/my-echo/a2a/agent-card", nil), http.StatusOK)
			want(t, "bob deletes", call(t, one, bob, "DELETE", "/api/agents/my-echo", nil), http.StatusForbidden)
			a = want(t, "delete", call(t, one, alice, "DELETE", "/api/agents/my-echo", nil), http.StatusOK)
			if a.body["deleted"] != true {
				t.Fatalf("deleted: %s", a.raw)
			}
			want(t, "card after", call(t, two, alice, "GET", "/api/agents/my-echo/a2a/agent-card", nil), http.StatusNotFound)
			want(t, "front door after", call(t, two, alice, "POST", "/api/agents/my-echo/a2a",
				`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"echo hi"}]}}}`), http.StatusNotFound)
			want(t, "connector after", call(t, two, alice, "GET", "/api/agents/my-echo/connector", nil), http.StatusNotFound)
			want(t, "key after", call(t, two, key3, "POST", "/api/agents/my-echo/chat", map[string]any{"message": "echo"}), http.StatusUnauthorized)
			want(t, "get after", call(t, two, alice, "GET", "/api/agents/my-echo", nil), http.StatusNotFound)
			if names, err := s.Deps.Connector.Exposed(t.Context()); err != nil || len(names) != 0 {
				t.Fatalf("Exposed() after delete = %v, %v", names, err)
			}
			if _, err := s.Deps.Store.Get(t.Context(), store.ConnectorKey("my-echo")); err == nil {
				t.Fatal("the connector configuration outlived its agent")
			}
			want(t, "delete again", call(t, one, alice, "DELETE", "/api/agents/my-echo", nil), http.StatusNotFound)

			// Registered anew, by someone else: a fresh start.
			want(t, "bob registers the name", register(t, s, two, bob, "my-echo", false), http.StatusCreated)
			a = want(t, "fresh connector", call(t, one, bob, "GET", "/api/agents/my-echo/connector", nil), http.StatusOK)
			if a.body["enabled"] != false || a.body["key"] != nil || a.body["exposed_playbooks"] != nil {
				t.Fatalf("re-registered connector: %s", a.raw)
			}
			a = want(t, "fresh exposure", call(t, one, bob, "GET", "/api/agents/my-echo/mcp-exposed", nil), http.StatusOK)
			if a.body["exposed"] != false || a.body["tool"] != nil {
				t.Fatalf("re-registered exposure: %s", a.raw)
			}
			want(t, "alice on bob's agent", call(t, one, alice, "GET", "/api/agents/my-echo", nil), http.StatusNotFound)
		})
	}
}
