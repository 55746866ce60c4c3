package connector_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/pkg/agent"
	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/app"
	"github.com/agentgate/agentgate/pkg/app/apptest"
	"github.com/agentgate/agentgate/pkg/connector"
	"github.com/agentgate/agentgate/pkg/store"
)

// shellSplit splits a command line as a POSIX shell does (quotes and
// backslashes; no expansion, which the snippets must not need).
func shellSplit(t *testing.T, line string) []string {
	t.Helper()
	var args []string
	var cur strings.Builder
	inArg := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			if inArg {
				args, inArg = append(args, cur.String()), false
				cur.Reset()
			}
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				t.Fatalf("unterminated ' in %s", line)
			}
			cur.WriteString(line[i+1 : i+1+j])
			i, inArg = i+1+j, true
		case c == '"':
			inArg = true
			for i++; ; i++ {
				if i >= len(line) {
					t.Fatalf("unterminated \" in %s", line)
				}
				if line[i] == '"' {
					break
				}
				if strings.ContainsRune("$`", rune(line[i])) {
					t.Fatalf("%s: an expansion in double quotes", line)
				}
				if line[i] == '\\' && i+1 < len(line) && strings.ContainsRune("\"\\$`", rune(line[i+1])) {
					i++
				}
				cur.WriteByte(line[i])
			}
		case c == '\\' && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
			inArg = true
		case strings.ContainsRune("$`;&|<>()*?[]#~", rune(c)):
			t.Fatalf("%s: unquoted shell metacharacter %q", line, c)
		default:
			cur.WriteByte(c)
			inArg = true
		}
	}
	if inArg {
		args = append(args, cur.String())
	}
	return args
}

// checkSnippets parses each snippet in its client's format and checks that
// it reaches url with key.
func checkSnippets(t *testing.T, raw json.RawMessage, name, url, key string) {
	t.Helper()
	var sn struct {
		ClaudeCode    string         `json:"claude_code"`
		MCPJSON       map[string]any `json:"mcp_json"`
		Cursor        map[string]any `json:"cursor"`
		ClaudeDesktop map[string]any `json:"claude_desktop"`
	}
	if err := json.Unmarshal(raw, &sn); err != nil {
		t.Fatalf("snippets %s: %v", raw, err)
	}
	// Claude Code's CLI: the command's arguments.
	wantArgs := []string{"claude", "mcp", "add", "--transport", "http", name, url, "--header", "Authorization: Bearer " + key}
	if got := shellSplit(t, sn.ClaudeCode); !slices.Equal(got, wantArgs) {
		t.Errorf("claude_code %s splits into %q, want %q", sn.ClaudeCode, got, wantArgs)
	}
	// The JSON files, whole: round-tripped through JSON as the clients
	// read them.
	server := func(file map[string]any, what string) map[string]any {
		servers, _ := file["mcpServers"].(map[string]any)
		if len(file) != 1 || len(servers) != 1 {
			t.Fatalf("%s: %v, want one object {mcpServers: {%s: ...}}", what, file, name)
		}
		s, _ := servers[name].(map[string]any)
		return s
	}
	headers := map[string]any{"Authorization": "Bearer " + key}
	for _, c := range []struct {
		what string
		got  map[string]any
		want map[string]any
	}{
		{".mcp.json", server(sn.MCPJSON, "mcp_json"), map[string]any{"type": "http", "url": url, "headers": headers}},
		{"cursor mcp.json", server(sn.Cursor, "cursor"), map[string]any{"url": url, "headers": headers}},
		{"claude_desktop_config.json", server(sn.ClaudeDesktop, "claude_desktop"), map[string]any{
			"command": "npx",
			"args":    []any{"-y", "mcp-remote", url, "--header", "Authorization:${AUTH_HEADER}"},
			"env":     map[string]any{"AUTH_HEADER": "Bearer " + key}}},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: server %v, want %v", c.what, c.got, c.want)
		}
	}
}

func TestSnippetsQuoteTheURL(t *testing.T) {
	for _, u := range []string{"https://gw.example.com/prod/mcp", "http://[::1]:8080/mcp", "https://x.example/a'b/$(id)/mcp", "https://h/a b;c/mcp"} {
		sn := connector.NewSnippets("sample-echo", u, "agk_abc_def")
		raw, err := json.Marshal(sn)
		if err != nil {
			t.Fatal(err)
		}
		checkSnippets(t, raw, "sample-echo", u, "agk_abc_def")
	}
}

// TestMCPURLSetting: admins set, read and clear the MCP URL; every answer
// that carries it says where it comes from; the snippets follow it.
func TestMCPURLSetting(t *testing.T) {
	for _, backend := range apptest.Backends {
		t.Run(backend, func(t *testing.T) {
			s := apptest.New(t, backend, map[string]string{"ADMIN_SUBJECTS": "root, admin2"})
			one, two := s.Serve(), s.Serve()
			root, admin2, owner := s.Key("root", user), s.Key("admin2", user), s.Key("owner", user)

			a := want(t, "derived", call(t, one, root, "GET", "/api/settings/mcp-url", nil), http.StatusOK)
			if a.body["url"] != one+"/mcp" || a.body["mcp_url_source"] != "derived" {
				t.Fatalf("derived: %s", a.raw)
			}
			for _, who := range []string{owner, s.Key("alice", user)} {
				want(t, "not an admin", call(t, one, who, "PUT", "/api/settings/mcp-url", map[string]any{"url": "https://ok.example/mcp"}), http.StatusForbidden)
				want(t, "not an admin reads", call(t, one, who, "GET", "/api/settings/mcp-url", nil), http.StatusForbidden)
			}
			for _, bad := range []string{"http://example.com/mcp", "https://example.com/api", "ftp://example.com/mcp",
				"https://user:pw@example.com/mcp", "https://example.com/mcp?x=1", "https://example.com/mcp#f", "/mcp",
				"https://example.com/mcp/", "not a url", "http://10.0.0.1/mcp"} {
				a := want(t, "bad "+bad, call(t, one, root, "PUT", "/api/settings/mcp-url", map[string]any{"url": bad}), http.StatusBadRequest)
				if !strings.Contains(a.message(), "https://") || !strings.Contains(a.message(), "/mcp") || !strings.HasPrefix(a.message(), "url: ") {
					t.Errorf("%q: %q does not state the rule", bad, a.message())
				}
			}
			want(t, "no url", call(t, one, root, "PUT", "/api/settings/mcp-url", `{}`), http.StatusBadRequest)
			a = want(t, "after refusals", call(t, two, root, "GET", "/api/settings/mcp-url", nil), http.StatusOK)
			if a.body["mcp_url_source"] != "derived" {
				t.Fatalf("a refused setting was kept: %s", a.raw)
			}
			for _, ok := range []string{"http://localhost:9999/mcp", "http://127.0.0.1/x/mcp", "https://gw.example.com/prod/mcp"} {
				a = want(t, "set "+ok, call(t, one, admin2, "PUT", "/api/settings/mcp-url", map[string]any{"url": ok}), http.StatusOK)
				if a.body["url"] != ok || a.body["mcp_url_source"] != "setting" {
					t.Fatalf("set: %s", a.raw)
				}
			}
			const set = "https://gw.example.com/prod/mcp"
			a = want(t, "elsewhere", call(t, two, root, "GET", "/api/settings/mcp-url", nil), http.StatusOK)
			if a.body["url"] != set || a.body["mcp_url_source"] != "setting" {
				t.Fatalf("on another instance: %s", a.raw)
			}

			// The connector and its snippets carry the setting.
			a = want(t, "connector", call(t, two, owner, "GET", "/api/agents/sample-echo/connector", nil), http.StatusOK)
			if a.body["mcp_url"] != set || a.body["mcp_url_source"] != "setting" {
				t.Fatalf("connector with the setting: %s", a.raw)
			}
			key, a := mint(t, two, owner, "sample-echo")
			var minted struct {
				Snippets json.RawMessage `json:"snippets"`
				Source   string          `json:"mcp_url_source"`
			}
			a.decode(t, &minted)
			checkSnippets(t, minted.Snippets, "sample-echo", set, key)

			// Cleared: derived again, from the request.
			a = want(t, "clear", call(t, one, root, "DELETE", "/api/settings/mcp-url", nil), http.StatusOK)
			if a.body["url"] != one+"/mcp" || a.body["mcp_url_source"] != "derived" {
				t.Fatalf("cleared: %s", a.raw)
			}
			key, a = mint(t, two, owner, "sample-echo")
			a.decode(t, &minted)
			if minted.Source != "derived" {
				t.Errorf("mint after clearing: %s", a.raw)
			}
			checkSnippets(t, minted.Snippets, "sample-echo", two+"/mcp", key)
		})
	}
}

func TestRegisterRefusesBadTemplates(t *testing.T) {
	s := apptest.New(t, "embedded", nil)
	base := s.Serve()
	alice := s.Key("alice", user)
	good := echoTemplate(t, s, "fine", false)

	for _, c := range []struct {
		what, ctype, body string
		status            int
		says              []string
	}{
		{"YAML, a typo", "application/yaml", strings.Replace(good, "tags:", "tgas:", 1), 400, []string{"tgas"}},
		{"YAML, every problem with its path", "application/yaml; charset=utf-8", "name: Bad Name\nversion: one\nendpoint: ftp://x\ncapabilities: []\n", 400,
			[]string{"name: must be", "description: required", "version: must be a semantic version", "endpoint: must be an absolute http(s) URL", "capabilities: required"}},
		{"JSON, every problem with its path", "application/json", `{"name":"ok-name","description":"d","version":"1.0.0","endpoint":"https://example.com/","capabilities":[{"name":"","description":"","use_cases":[]}],"playbooks":[{"name":"p","description":"d","input_schema":{"type":"nope"}}]}`, 400,
			[]string{"capabilities[0].name: required", "capabilities[0].description: required", "capabilities[0].use_cases: required", "playbooks[0].input_schema"}},
		{"JSON, an unknown field", "application/json", `{"name":"x","tgas":[]}`, 400, []string{`unknown field "tgas"`}},
		{"JSON, a wrong type", "application/json", `{"name":5}`, 400, []string{"name: want string"}},
		{"JSON, not JSON", "application/json", `name: x`, 400, []string{"not valid JSON"}},
		{"JSON, two values", "application/json", `{} {}`, 400, []string{"after the JSON object"}},
		{"empty", "application/yaml", "", 400, []string{"empty template"}},
		{"a form", "application/x-www-form-urlencoded", "name=x", 415, []string{"application/yaml or application/json"}},
		{"SSRF: the metadata service", "application/yaml", strings.Replace(good, "endpoint: "+sampleEndpoint(t, s), "endpoint: http://169.254.169.254/latest/", 1), 400, []string{"endpoint: "}},
	} {
		a := call(t, base, alice, "POST", "/api/agents", c.body, c.ctype)
		if a.status != c.status {
			t.Errorf("%s: %d %s, want %d", c.what, a.status, a.raw, c.status)
			continue
		}
		for _, part := range c.says {
			if !strings.Contains(a.message(), part) {
				t.Errorf("%s: %q does not say %q", c.what, a.message(), part)
			}
		}
	}
	// Every problem also comes as a list with its path.
	a := call(t, base, alice, "POST", "/api/agents", "name: Bad Name\nversion: one\nendpoint: ftp://x\ncapabilities: []\n", "application/yaml")
	var body struct {
		Problems []agent.Problem `json:"problems"`
	}
	a.decode(t, &body)
	var paths []string
	for _, p := range body.Problems {
		paths = append(paths, p.Path)
	}
	if !slices.Equal(paths, []string{"name", "description", "version", "endpoint", "capabilities"}) {
		t.Errorf("problems %s", a.raw)
	}
	if agents, _, err := s.Deps.Agents.List(t.Context(), "", 0); err != nil || len(agents) != 1 {
		t.Errorf("refused registrations stored agents: %v, %v", agents, err)
	}
	// The same template as JSON registers.
	tmpl, err := agent.Parse([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	want(t, "JSON", call(t, base, alice, "POST", "/api/agents", tmpl), http.StatusCreated)
	want(t, "JSON again", call(t, base, alice, "POST", "/api/agents", tmpl), http.StatusOK)
}

// The endpoint check is the registry's, as app.NewRegistry wires it: on a
// deployment whose agents must be public, a loopback agent is refused.
func TestRegisterChecksTheEndpoint(t *testing.T) {
	s := apptest.New(t, "embedded", nil)
	reg := app.NewRegistry(app.Config{Clock: s.Deps.Config.Clock}, s.Deps.Store) // AGENT_NETWORK=public
	svc := connector.NewService(connector.Options{Store: s.Deps.Store, Agents: reg, Keys: s.Deps.Keys})
	tmpl, err := agent.Parse([]byte(echoTemplate(t, s, "local-one", false)))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = svc.Register(t.Context(), "alice", tmpl)
	var ve *agent.ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) != 1 || ve.Problems[0].Path != "endpoint" {
		t.Fatalf("Register(loopback endpoint) = %v, want an endpoint problem", err)
	}
	if _, err := reg.Get(t.Context(), "local-one"); agentgate.ErrorCode(err) != agentgate.ENOTFOUND {
		t.Fatalf("the refused agent is registered: %v", err)
	}
}

func TestChatTimeout(t *testing.T) {
	s := apptest.New(t, "embedded", map[string]string{"REQUEST_TIMEOUT": "1500ms"})
	base := s.Serve()
	owner := s.Key("owner", user)
	a := want(t, "slow chat", call(t, base, owner, "POST", "/api/agents/sample-echo/chat", map[string]any{"message": "slow 5"}), http.StatusGatewayTimeout)
	if a.body["error"].(map[string]any)["code"] != agentgate.ETIMEOUT || !strings.Contains(a.message(), "its task ") || !strings.Contains(a.message(), "GetTask") {
		t.Fatalf("timeout: %s", a.raw)
	}
}

func TestSystemAgentIsNeverExposed(t *testing.T) {
	s := apptest.New(t, "embedded", map[string]string{"SYSTEM_AGENT": "sample-echo"})
	base := s.Serve()
	owner := s.Key("owner", user)
	for _, who := range []string{owner, s.Key("bob", user)} {
		want(t, "get", call(t, base, who, "GET", "/api/agents/sample-echo/mcp-exposed", nil), http.StatusForbidden)
		want(t, "put", call(t, base, who, "PUT", "/api/agents/sample-echo/mcp-exposed", map[string]any{"exposed": true}), http.StatusForbidden)
	}
	if names, err := s.Deps.Connector.Exposed(t.Context()); err != nil || len(names) != 0 {
		t.Fatalf("Exposed() = %v, %v", names, err)
	}
	// The rest of its connector is its owner's as usual.
	want(t, "connector", call(t, base, owner, "GET", "/api/agents/sample-echo/connector", nil), http.StatusOK)
}

func TestOnlyAnAdminRegistersTheSystemAgent(t *testing.T) {
	s := apptest.New(t, "embedded", map[string]string{"SYSTEM_AGENT": "docs", "ADMIN_SUBJECTS": "root"})
	base := s.Serve()
	a := want(t, "a user", register(t, s, base, s.Key("bob", user), "docs", false), http.StatusForbidden)
	if !strings.Contains(a.message(), "system agent") {
		t.Errorf("403 %q", a.message())
	}
	want(t, "an admin", register(t, s, base, s.Key("root", user), "docs", false), http.StatusCreated)
}

// failing makes chosen writes of a store fail, as an unavailable table does.
type failing struct {
	store.Store
	fail func(op string, k store.Key) bool
}

var errInjected = store.Unavailable(errors.New("injected failure"))

func (f failing) Create(ctx context.Context, it store.Item) (store.Item, error) {
	if f.fail("create", it.Key) {
		return store.Item{}, errInjected
	}
	return f.Store.Create(ctx, it)
}

func (f failing) Update(ctx context.Context, it store.Item) (store.Item, error) {
	if f.fail("update", it.Key) {
		return store.Item{}, errInjected
	}
	return f.Store.Update(ctx, it)
}

func (f failing) Delete(ctx context.Context, k store.Key) error {
	if f.fail("delete", k) {
		return errInjected
	}
	return f.Store.Delete(ctx, k)
}

// TestNothingHalfWritten: a change whose second write fails undoes its
// first; a deletion that fails part way has taken reach away, never left
// it, and a retry finishes it.
func TestNothingHalfWritten(t *testing.T) {
	for _, backend := range apptest.Backends {
		t.Run(backend, func(t *testing.T) {
			s := apptest.New(t, backend, nil)
			base := s.Serve()
			owner := s.Key("owner", user)
			broken := func(fail func(op string, k store.Key) bool) string {
				srv := httptest.NewServer(s.Wrap(func(st store.Store) store.Store { return failing{st, fail} }))
				t.Cleanup(srv.Close)
				return srv.URL
			}
			isKey := func(k store.Key) bool { return strings.HasPrefix(k.PK, "APIKEY#") }

			// Exposing: the exposure set cannot be written.
			noSet := broken(func(_ string, k store.Key) bool { return k == store.ExposureKey() })
			want(t, "expose", call(t, noSet, owner, "PUT", "/api/agents/sample-echo/mcp-exposed", map[string]any{"exposed": true}), http.StatusServiceUnavailable)
			if _, c, err := s.Deps.Connector.Get(t.Context(), "sample-echo"); err != nil || c.MCPExposed {
				t.Fatalf("after a failed exposure the configuration says exposed: %+v, %v", c, err)
			}
			a := want(t, "exposure", call(t, base, owner, "GET", "/api/agents/sample-echo/mcp-exposed", nil), http.StatusOK)
			if a.body["exposed"] != false {
				t.Fatalf("after a failed exposure: %s", a.raw)
			}

			// Minting: the configuration cannot be written; the new key,
			// never current, is revoked.
			noConfig := broken(func(_ string, k store.Key) bool { return k == store.ConnectorKey("sample-echo") })
			want(t, "mint", call(t, noConfig, owner, "POST", "/api/agents/sample-echo/connector/key", nil), http.StatusServiceUnavailable)
			keys, _, err := s.Deps.Keys.List(t.Context(), "owner", "", 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range keys {
				if k.Scope == agentgate.ScopeConnector && !k.Revoked {
					t.Errorf("a failed mint left a live connector key: %+v", k)
				}
			}

			// Deleting: the keys cannot be revoked. The exposure is gone,
			// the agent still registered; a retry finishes.
			key, _ := mint(t, base, owner, "sample-echo")
			want(t, "expose", call(t, base, owner, "PUT", "/api/agents/sample-echo/mcp-exposed", map[string]any{"exposed": true}), http.StatusOK)
			noRevoke := broken(func(op string, k store.Key) bool { return op == "update" && isKey(k) })
			want(t, "delete", call(t, noRevoke, owner, "DELETE", "/api/agents/sample-echo", nil), http.StatusServiceUnavailable)
			if names, _ := s.Deps.Connector.Exposed(t.Context()); len(names) != 0 {
				t.Errorf("a failed deletion left the exposure: %v", names)
			}
			want(t, "still registered", call(t, base, owner, "GET", "/api/agents/sample-echo", nil), http.StatusOK)
			want(t, "retry", call(t, base, owner, "DELETE", "/api/agents/sample-echo", nil), http.StatusOK)
			want(t, "key after", call(t, base, key, "GET", "/api/agents/sample-echo/connector/playbooks", nil), http.StatusUnauthorized)
		})
	}
}
