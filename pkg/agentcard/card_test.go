package agentcard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentgate/agentgate/pkg/agent"
	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/store"
	"github.com/agentgate/agentgate/pkg/store/embedded"
	"github.com/agentgate/agentgate/pkg/web"
)

const (
	examplesDir = "../../examples/agents"
	schemaFile  = "testdata/a2a/agent-card-v1.0.schema.json"
	owner       = "alice"
)

// fixture is a registry with the example agents, and the card routes on a
// test server.
type fixture struct {
	reg    *agent.Registry
	srv    *httptest.Server
	agents []agent.Agent
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	st, err := embedded.Open(filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return newFixtureOn(t, st)
}

func newFixtureOn(t *testing.T, st store.Store) *fixture {
	t.Helper()
	reg := agent.NewRegistry(st, nil)
	results, err := reg.ImportDir(t.Context(), owner, examplesDir)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{reg: reg}
	for _, r := range results {
		f.agents = append(f.agents, r.Agent)
	}
	if len(f.agents) < 2 {
		t.Fatalf("%d example agents, want at least 2", len(f.agents))
	}
	f.srv = httptest.NewServer(cardRoutes(reg))
	t.Cleanup(f.srv.Close)
	return f
}

// cardRoutes serves the card routes of the function's route table on reg,
// without the security chain.
func cardRoutes(reg *agent.Registry) http.Handler {
	mux := http.NewServeMux()
	for _, rt := range Routes(nil, reg, nil, "") {
		if _, card := rt.Handler.(*CardHandler); card {
			mux.Handle(rt.Pattern(), rt.Handler)
		}
	}
	return mux
}

// get requests path on the test server, as a v1.0 client (A2A-Version:
// 1.0) unless the headers, name, value pairs, say otherwise, and returns
// the response with its body read.
func (f *fixture) get(t *testing.T, path string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, f.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(VersionHeader, ProtocolVersion)
	for i := 0; i+1 < len(header); i += 2 {
		if http.CanonicalHeaderKey(header[i]) == http.CanonicalHeaderKey(VersionHeader) {
			req.Header.Del(VersionHeader)
		}
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i+1] != "" {
			req.Header.Add(header[i], header[i+1])
		}
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func (f *fixture) agent(t *testing.T, name string) agent.Agent {
	t.Helper()
	for _, a := range f.agents {
		if a.Template.Name == name {
			return a
		}
	}
	t.Fatalf("no example agent %q", name)
	return agent.Agent{}
}

// The v1.0 card schema, compiled once.
var cardSchema = sync.OnceValues(func() (*jsonschema.Schema, error) { return compileSchema(schemaFile, "") })

// compileSchema compiles the JSON Schema in file, at the JSON pointer
// fragment ("" for its root).
func compileSchema(file, fragment string) (*jsonschema.Schema, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	url := "https://agentgate.test/" + filepath.Base(file)
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url + fragment)
}

// checkCard reports whether data is a valid A2A v1.0 card: valid against
// the JSON Schema and, since the schema has no "required" lists, holding
// what the spec (a2a.proto, section 5.7) requires.
func checkCard(data []byte) error {
	sch, err := cardSchema()
	if err != nil {
		return fmt.Errorf("loading the schema: %w", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	var errs []error
	if err := sch.Validate(inst); err != nil {
		errs = append(errs, fmt.Errorf("schema: %w", err))
	}
	var c map[string]any
	if err := json.Unmarshal(data, &c); err != nil {
		return errors.Join(append(errs, err)...)
	}
	problem := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	str := func(obj map[string]any, path, field string) {
		if s, ok := obj[field].(string); !ok || s == "" {
			problem("%s%s: required, a non-empty string", path, field)
		}
	}
	list := func(obj map[string]any, path, field string) []any {
		l, ok := obj[field].([]any)
		if !ok || len(l) == 0 {
			problem("%s%s: required, a non-empty array", path, field)
		}
		return l
	}
	for _, field := range []string{"name", "description", "version"} {
		str(c, "", field)
	}
	for i, it := range list(c, "", "supportedInterfaces") {
		path := fmt.Sprintf("supportedInterfaces[%d].", i)
		m, _ := it.(map[string]any)
		for _, field := range []string{"url", "protocolBinding", "protocolVersion"} {
			str(m, path, field)
		}
	}
	if _, ok := c["capabilities"].(map[string]any); !ok {
		problem("capabilities: required, an object")
	}
	list(c, "", "defaultInputModes")
	list(c, "", "defaultOutputModes")
	for i, it := range list(c, "", "skills") {
		path := fmt.Sprintf("skills[%d].", i)
		m, _ := it.(map[string]any)
		for _, field := range []string{"id", "name", "description"} {
			str(m, path, field)
		}
		list(m, path, "tags")
	}
	return errors.Join(errs...)
}

func TestEveryExampleCardIsAValidV1Card(t *testing.T) {
	f := newFixture(t)
	for _, a := range f.agents {
		name := a.Template.Name
		t.Run(name, func(t *testing.T) {
			resp, body := f.get(t, CardPath(name))
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			if err := checkCard(body); err != nil {
				t.Fatalf("invalid card: %v\n%s", err, body)
			}

			var card struct {
				Name                 string
				Description          string
				Version              string
				SupportedInterfaces  []map[string]string
				Capabilities         map[string]any
				SecuritySchemes      map[string]map[string]map[string]string
				SecurityRequirements json.RawMessage
				DefaultInputModes    []string
				DefaultOutputModes   []string
				Skills               []struct {
					ID, Name, Description string
					Tags, Examples        []string
				}
			}
			if err := json.Unmarshal(body, &card); err != nil {
				t.Fatal(err)
			}
			tm := a.Template
			if card.Name != tm.Name || card.Description != tm.Description || card.Version != tm.Version {
				t.Errorf("name, description, version = %q, %q, %q; want the template's", card.Name, card.Description, card.Version)
			}
			// The front door, once per protocol version it speaks.
			for i, version := range []string{"1.0", "0.3"} {
				want := map[string]string{"url": f.srv.URL + FrontDoorPath(name), "protocolBinding": "JSONRPC", "protocolVersion": version}
				if len(card.SupportedInterfaces) != 2 || !mapsEqual(card.SupportedInterfaces[i], want) {
					t.Errorf("supportedInterfaces = %v, want %v at %d", card.SupportedInterfaces, want, i)
				}
			}
			if s, _ := card.Capabilities["streaming"].(bool); s {
				t.Error("capabilities.streaming is true; the front door does not stream")
			}
			if got := string(card.SecurityRequirements); got != `[{"schemes":{"bearerAuth":{"list":[]}}}]` {
				t.Errorf("securityRequirements = %s", got)
			}
			bearer := card.SecuritySchemes["bearerAuth"]["httpAuthSecurityScheme"]
			if bearer["scheme"] != "Bearer" || !strings.Contains(bearer["description"], "API key") || !strings.Contains(bearer["description"], "JWT") {
				t.Errorf("securitySchemes.bearerAuth = %v", card.SecuritySchemes["bearerAuth"])
			}
			if len(card.SecuritySchemes) != 1 {
				t.Errorf("securitySchemes = %v, want bearerAuth only", card.SecuritySchemes)
			}
			if !slices.Equal(card.DefaultInputModes, []string{"text/plain"}) || !slices.Equal(card.DefaultOutputModes, []string{"text/plain"}) {
				t.Errorf("modes = %v, %v", card.DefaultInputModes, card.DefaultOutputModes)
			}
			wantTags := tm.Tags
			if len(wantTags) == 0 {
				wantTags = []string{tm.Name}
			}
			if len(card.Skills) != len(tm.Capabilities) {
				t.Fatalf("%d skills, want %d (one per capability)", len(card.Skills), len(tm.Capabilities))
			}
			for i, s := range card.Skills {
				cp := tm.Capabilities[i]
				if s.ID != agent.Slug(cp.Name) || s.Name != cp.Name || s.Description != cp.Description {
					t.Errorf("skill %d = %q %q %q, want the capability %q with id %q", i, s.ID, s.Name, s.Description, cp.Name, agent.Slug(cp.Name))
				}
				if !slices.Equal(s.Examples, cp.UseCases) {
					t.Errorf("skill %s examples = %q, want the use cases %q", s.ID, s.Examples, cp.UseCases)
				}
				if !slices.Equal(s.Tags, wantTags) {
					t.Errorf("skill %s tags = %q, want %q", s.ID, s.Tags, wantTags)
				}
			}
		})
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// echoCard is the sample-echo example's card with its front door at
// https://api.example.com: the exact bytes, so that a change of field
// order, whitespace or content (and so of every card's ETag) is noticed.
const echoCard = `{"name":"sample-echo",` +
	`"description":"A deterministic sample agent that echoes, reverses and counts text, for trying agentgate out and for its tests.",` +
	`"supportedInterfaces":[{"url":"https://api.example.com/api/agents/sample-echo/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"},` +
	`{"url":"https://api.example.com/api/agents/sample-echo/a2a","protocolBinding":"JSONRPC","protocolVersion":"0.3"}],` +
	`"provider":{"url":"https://github.com/agentgate/agentgate","organization":"agentgate"},` +
	`"version":"1.0.0",` +
	`"capabilities":{"streaming":false,"pushNotifications":false,"extendedAgentCard":false},` +
	`"securitySchemes":{"bearerAuth":{"httpAuthSecurityScheme":{"description":"An agentgate API key or a JWT issued for agentgate, sent as Authorization: Bearer <token>.","scheme":"Bearer"}}},` +
	`"securityRequirements":[{"schemes":{"bearerAuth":{"list":[]}}}],` +
	`"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],` +
	`"skills":[` +
	`{"id":"echo-text","name":"Echo text","description":"Returns the text it is sent, unchanged.","tags":["sample","text","testing"],"examples":["Check that a call goes through agentgate to the agent and back.","Measure the front door's overhead with a trivial task."]},` +
	`{"id":"reverse-text","name":"Reverse text","description":"Returns the text with its characters in reverse order.","tags":["sample","text","testing"],"examples":["Tell an answer from an echo in a test."]},` +
	`{"id":"count-words","name":"Count words","description":"Returns the number of words in the text.","tags":["sample","text","testing"],"examples":["Count the words of a draft."]}]}`

func TestMarshalIsExactAndStable(t *testing.T) {
	f := newFixture(t)
	a := f.agent(t, "sample-echo")
	for range 20 { // map order varies from run to run; the bytes must not
		got, err := Marshal(Build(a, "https://api.example.com"+FrontDoorPath("sample-echo")))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != echoCard {
			t.Fatalf("card:\n%s\nwant:\n%s", got, echoCard)
		}
	}
	if err := checkCard([]byte(echoCard)); err != nil {
		t.Fatal(err)
	}
}

func TestConfiguredBaseURL(t *testing.T) {
	f := newFixture(t)
	h := &CardHandler{Registry: f.reg, BaseURL: "https://api.example.com/"}
	req := httptest.NewRequest(http.MethodGet, CardPath("sample-echo"), nil)
	req.Header.Set(VersionHeader, "1.0")
	req.SetPathValue("name", "sample-echo")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || rec.Body.String() != echoCard {
		t.Fatalf("status %d, card:\n%s\nwant:\n%s", rec.Code, rec.Body, echoCard)
	}
}

func TestCheckCardBites(t *testing.T) {
	if err := checkCard([]byte(echoCard)); err != nil {
		t.Fatalf("the valid card fails: %v", err)
	}
	edit := func(change func(c map[string]any)) []byte {
		var c map[string]any
		if err := json.Unmarshal([]byte(echoCard), &c); err != nil {
			t.Fatal(err)
		}
		change(c)
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	bad := map[string][]byte{
		"v0.3 top-level url": edit(func(c map[string]any) { c["url"] = "https://api.example.com/a2a" }),
		"v0.3 protocolVersion": edit(func(c map[string]any) {
			c["protocolVersion"] = "0.3.0"
		}),
		"empty skills":    edit(func(c map[string]any) { c["skills"] = []any{} }),
		"no skills":       edit(func(c map[string]any) { delete(c, "skills") }),
		"no version":      edit(func(c map[string]any) { delete(c, "version") }),
		"no capabilities": edit(func(c map[string]any) { delete(c, "capabilities") }),
		"no interfaces":   edit(func(c map[string]any) { c["supportedInterfaces"] = []any{} }),
		"interface without binding": edit(func(c map[string]any) {
			delete(c["supportedInterfaces"].([]any)[0].(map[string]any), "protocolBinding")
		}),
		"skill without tags": edit(func(c map[string]any) {
			c["skills"].([]any)[1].(map[string]any)["tags"] = []any{}
		}),
		// The shape encoding/json of a2a-go's a2a.AgentCard writes.
		"a2a-go securityRequirements": edit(func(c map[string]any) {
			c["securityRequirements"] = []any{map[string]any{"schemes": map[string]any{"bearerAuth": []any{}}}}
		}),
		"v0.3 http scheme": edit(func(c map[string]any) {
			c["securitySchemes"] = map[string]any{"bearerAuth": map[string]any{"type": "http", "scheme": "bearer"}}
		}),
	}
	for name, card := range bad {
		if err := checkCard(card); err == nil {
			t.Errorf("%s: accepted:\n%s", name, card)
		} else {
			t.Logf("%s: %v", name, strings.ReplaceAll(err.Error(), "\n", " "))
		}
	}
}

func TestETagAndConditionalRequests(t *testing.T) {
	f := newFixture(t)
	path := CardPath("sample-echo")
	resp1, body1 := f.get(t, path)
	resp2, body2 := f.get(t, path)
	etag := resp1.Header.Get("ETag")
	if resp1.StatusCode != http.StatusOK || etag == "" {
		t.Fatalf("status %d, ETag %q", resp1.StatusCode, etag)
	}
	if !strings.HasPrefix(etag, `"`) || !strings.HasSuffix(etag, `"`) || strings.HasPrefix(etag, "W/") {
		t.Errorf("ETag %s is not a strong entity tag", etag)
	}
	if resp2.Header.Get("ETag") != etag || !bytes.Equal(body1, body2) {
		t.Errorf("second response: ETag %s, want %s; same body: %v", resp2.Header.Get("ETag"), etag, bytes.Equal(body1, body2))
	}
	if cc := resp1.Header.Get("Cache-Control"); cc != "private, max-age=300" {
		t.Errorf("Cache-Control %q", cc)
	}
	if v := resp1.Header.Values("Vary"); !slices.Equal(v, []string{VersionHeader, "Authorization"}) {
		t.Errorf("Vary %q, want the version and the credentials", v)
	}

	for _, inm := range []string{etag, "W/" + etag, `"other", ` + etag, `"other",W/` + etag, "*"} {
		resp, body := f.get(t, path, "If-None-Match", inm)
		if resp.StatusCode != http.StatusNotModified || len(body) != 0 {
			t.Errorf("If-None-Match: %s: status %d, %d body bytes; want 304, none", inm, resp.StatusCode, len(body))
			continue
		}
		if resp.Header.Get("ETag") != etag || resp.Header.Get("Cache-Control") != "private, max-age=300" {
			t.Errorf("If-None-Match: %s: 304 with ETag %q, Cache-Control %q", inm, resp.Header.Get("ETag"), resp.Header.Get("Cache-Control"))
		}
	}
	// Two headers count as one list.
	if resp, _ := f.get(t, path, "If-None-Match", `"other"`, "If-None-Match", etag); resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match in two headers: status %d, want 304", resp.StatusCode)
	}
	for _, inm := range []string{`"other"`, strings.Trim(etag, `"`), `"` + etag + `"`} {
		if resp, body := f.get(t, path, "If-None-Match", inm); resp.StatusCode != http.StatusOK || !bytes.Equal(body, body1) {
			t.Errorf("If-None-Match: %s: status %d, want 200 with the card", inm, resp.StatusCode)
		}
	}

	// Another agent, another ETag.
	if resp, _ := f.get(t, CardPath("sample-minimal")); resp.Header.Get("ETag") == etag {
		t.Error("two agents' cards have one ETag")
	}
}

func TestTemplateChangeChangesETag(t *testing.T) {
	f := newFixture(t)
	path := CardPath("sample-minimal")
	before, body := f.get(t, path)
	tmpl := f.agent(t, "sample-minimal").Template
	tmpl.Description = "The minimal sample agent, described anew."
	if _, res, err := f.reg.Import(t.Context(), owner, &tmpl); err != nil || res != agent.Updated {
		t.Fatalf("re-import: %v, %v", res, err)
	}
	after, body2 := f.get(t, path)
	if after.Header.Get("ETag") == before.Header.Get("ETag") {
		t.Fatalf("ETag %s did not change with the template", before.Header.Get("ETag"))
	}
	if !bytes.Contains(body2, []byte("described anew")) || bytes.Equal(body, body2) {
		t.Fatalf("the card did not change: %s", body2)
	}
	// The old ETag no longer matches.
	if resp, _ := f.get(t, path, "If-None-Match", before.Header.Get("ETag")); resp.StatusCode != http.StatusOK {
		t.Fatalf("stale If-None-Match: status %d, want 200", resp.StatusCode)
	}
}

func TestUnknownAgentIs404JSON(t *testing.T) {
	f := newFixture(t)
	for _, path := range []string{CardPath("nobody"), PublicCardPath("nobody")} {
		resp, body := f.get(t, path)
		var e web.ErrorBody
		if err := json.Unmarshal(body, &e); err != nil {
			t.Fatalf("%s: body %q: %v", path, body, err)
		}
		if resp.StatusCode != http.StatusNotFound || e.Error.Code != agentgate.ENOTFOUND || e.Error.Message == "" {
			t.Errorf("%s: %d %s", path, resp.StatusCode, body)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s: Content-Type %q", path, ct)
		}
		if resp.Header.Get("ETag") != "" || resp.Header.Get("Cache-Control") != "" {
			t.Errorf("%s: a 404 with ETag %q, Cache-Control %q", path, resp.Header.Get("ETag"), resp.Header.Get("Cache-Control"))
		}
	}
}

func TestPublicCard(t *testing.T) {
	f := newFixture(t)
	if !f.agent(t, "sample-echo").Template.PublicCard || f.agent(t, "sample-minimal").Template.PublicCard {
		t.Fatal("the examples changed: sample-echo should have public_card, sample-minimal not")
	}
	resp, body := f.get(t, PublicCardPath("sample-echo"))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("public card: status %d: %s", resp.StatusCode, body)
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "public, max-age=300" {
		t.Errorf("Cache-Control %q", cc)
	}
	if v := resp.Header.Values("Vary"); !slices.Equal(v, []string{VersionHeader}) {
		t.Errorf("Vary %q on the public card, want the version only", v)
	}
	if err := checkCard(body); err != nil {
		t.Fatal(err)
	}
	private, privateBody := f.get(t, CardPath("sample-echo"))
	if !bytes.Equal(body, privateBody) || private.Header.Get("ETag") != resp.Header.Get("ETag") {
		t.Error("the public card differs from the authenticated one")
	}
	if resp, _ := f.get(t, PublicCardPath("sample-echo"), "If-None-Match", resp.Header.Get("ETag")); resp.StatusCode != http.StatusNotModified ||
		resp.Header.Get("Cache-Control") != "public, max-age=300" {
		t.Errorf("public revalidation: %d, Cache-Control %q", resp.StatusCode, resp.Header.Get("Cache-Control"))
	}

	// A hidden agent is answered exactly as a missing one: compare with
	// the 404 of a missing agent of the same name, on a registry that
	// does not have it, since the name is the one request-specific part.
	hidden, hiddenBody := f.get(t, PublicCardPath("sample-minimal"))
	empty := emptyRegistryServer(t)
	missing, missingBody := empty.get(t, PublicCardPath("sample-minimal"))
	if hidden.StatusCode != http.StatusNotFound || missing.StatusCode != http.StatusNotFound {
		t.Fatalf("hidden %d, missing %d; want 404 both", hidden.StatusCode, missing.StatusCode)
	}
	if !bytes.Equal(hiddenBody, missingBody) {
		t.Errorf("hidden agent's 404:\n%s\nmissing agent's 404:\n%s", hiddenBody, missingBody)
	}
	for _, h := range []string{"Content-Type", "Content-Length", "ETag", "Cache-Control", "Vary"} {
		if hidden.Header.Get(h) != missing.Header.Get(h) {
			t.Errorf("%s: hidden %q, missing %q", h, hidden.Header.Get(h), missing.Header.Get(h))
		}
	}
	// And the hidden agent's authenticated card is there.
	if resp, _ := f.get(t, CardPath("sample-minimal")); resp.StatusCode != http.StatusOK {
		t.Errorf("sample-minimal's authenticated card: status %d", resp.StatusCode)
	}
}

// emptyRegistryServer serves the card routes on a registry with no agents.
func emptyRegistryServer(t *testing.T) *fixture {
	t.Helper()
	st, err := embedded.Open(filepath.Join(t.TempDir(), "empty"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	reg := agent.NewRegistry(st, nil)
	f := &fixture{reg: reg, srv: httptest.NewServer(cardRoutes(reg))}
	t.Cleanup(f.srv.Close)
	return f
}

// failingStore fails every read, as DynamoDB does when it is unreachable.
type failingStore struct {
	store.Store
	fail bool
}

func (s *failingStore) Get(ctx context.Context, key store.Key) (store.Item, error) {
	if s.fail {
		return store.Item{}, fmt.Errorf("dynamodb: connection refused: %w", store.ErrUnavailable)
	}
	return s.Store.Get(ctx, key)
}

func TestStoreFailureIs503(t *testing.T) {
	st, err := embedded.Open(filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	fs := &failingStore{Store: st}
	f := newFixtureOn(t, fs)
	fs.fail = true
	for _, path := range []string{CardPath("sample-echo"), PublicCardPath("sample-echo")} {
		resp, body := f.get(t, path)
		var e web.ErrorBody
		if err := json.Unmarshal(body, &e); err != nil || resp.StatusCode != http.StatusServiceUnavailable || e.Error.Code != agentgate.EUNAVAILABLE {
			t.Errorf("%s: %d %s, want 503 %s", path, resp.StatusCode, body, agentgate.EUNAVAILABLE)
		}
		if strings.Contains(string(body), "connection refused") {
			t.Errorf("%s: the cause reached the caller: %s", path, body)
		}
	}
}

func TestResolve(t *testing.T) {
	f := newFixture(t)
	name := "sample-echo"
	card, err := Resolve(t.Context(), f.srv.Client(), f.srv.URL+CardPath(name), http.Header{"Authorization": {"Bearer test"}})
	if err != nil {
		t.Fatal(err)
	}
	frontDoor := f.srv.URL + FrontDoorPath(name)
	if len(card.SupportedInterfaces) != 2 || card.SupportedInterfaces[0].URL != frontDoor ||
		card.SupportedInterfaces[0].ProtocolBinding != a2a.TransportProtocolJSONRPC || card.SupportedInterfaces[0].ProtocolVersion != "1.0" {
		t.Fatalf("supportedInterfaces = %+v, want the front door %s", card.SupportedInterfaces, frontDoor)
	}
	tm := f.agent(t, name).Template
	if card.Name != name || card.Version != tm.Version || len(card.Skills) != len(tm.Capabilities) {
		t.Fatalf("card %s %s with %d skills", card.Name, card.Version, len(card.Skills))
	}
	for i, s := range card.Skills {
		if cp := tm.Capabilities[i]; s.ID != agent.Slug(cp.Name) || s.Name != cp.Name || !slices.Equal(s.Examples, cp.UseCases) {
			t.Errorf("skill %d = %+v", i, s)
		}
	}
	if card.Capabilities.Streaming {
		t.Error("streaming")
	}
	bearer, ok := card.SecuritySchemes["bearerAuth"].(a2a.HTTPAuthSecurityScheme)
	if !ok || bearer.Scheme != "Bearer" {
		t.Errorf("securitySchemes = %#v", card.SecuritySchemes)
	}
	if len(card.SecurityRequirements) != 1 || len(card.SecurityRequirements[0]) != 1 {
		t.Errorf("securityRequirements = %#v", card.SecurityRequirements)
	} else if scopes, ok := card.SecurityRequirements[0]["bearerAuth"]; !ok || len(scopes) != 0 {
		t.Errorf("securityRequirements = %#v, want bearerAuth with no scopes", card.SecurityRequirements)
	}

	// The card is what a2a-go needs to make a client of the front door.
	client, err := a2aclient.NewFromCard(t.Context(), card)
	if err != nil {
		t.Fatalf("a2aclient.NewFromCard: %v", err)
	}
	client.Destroy()

	// The public card resolves too.
	if _, err := Resolve(t.Context(), nil, f.srv.URL+PublicCardPath(name), nil); err != nil {
		t.Fatalf("public card: %v", err)
	}
}

func TestResolveErrors(t *testing.T) {
	f := newFixture(t)
	_, err := Resolve(t.Context(), nil, f.srv.URL+CardPath("nobody"), nil)
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != http.StatusNotFound || !strings.Contains(err.Error(), agentgate.ENOTFOUND) {
		t.Errorf("missing card: %v", err)
	}

	serve := func(contentType, body string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", contentType)
			io.WriteString(w, body)
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	cases := []struct {
		name, contentType, body, want string
	}{
		{"html", "text/html", "<html></html>", "Content-Type"},
		{"not json", "application/json", "{", "parsing"},
		{"v0.3 card", "application/json", `{"name":"x","description":"d","version":"1","url":"https://x/a2a","protocolVersion":"0.3.0","capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[{"id":"a","name":"a","description":"a","tags":["a"]}]}`, "supported interfaces"},
		{"too large", "application/json", `{"name":"` + strings.Repeat("x", MaxCardSize) + `"}`, "larger than"},
	}
	for _, c := range cases {
		_, err := Resolve(t.Context(), nil, serve(c.contentType, c.body), nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
		}
	}
	// Unknown fields, say of a later v1.x, are no error.
	withExtra := strings.Replace(echoCard, `{"name":`, `{"somethingNew":{"a":1},"name":`, 1)
	if _, err := Resolve(t.Context(), nil, serve("application/json; charset=utf-8", withExtra), nil); err != nil {
		t.Errorf("card with an unknown field: %v", err)
	}
}

// TestA2AGoJSONInteropTrap documents why Resolve exists: a2a-go v2.3.1's
// encoding/json form of a card (what its card resolver parses, and what its
// servers write) is not the spec's, in securityRequirements.
func TestA2AGoJSONInteropTrap(t *testing.T) {
	// a2a-go's default parser refuses our spec-correct card...
	var card a2a.AgentCard
	err := json.Unmarshal([]byte(echoCard), &card)
	if err == nil {
		t.Fatal("a2a-go's encoding/json now reads the spec's securityRequirements: Resolve may be replaceable by its resolver")
	}
	t.Logf("encoding/json into a2a.AgentCard: %v", err)
	// ...and the protojson form with the empty list left out, too.
	plain := strings.Replace(echoCard, `{"bearerAuth":{"list":[]}}`, `{"bearerAuth":{}}`, 1)
	if err := checkCard([]byte(plain)); err != nil {
		t.Fatalf("the {} form should be spec-valid: %v", err)
	}
	if err := json.Unmarshal([]byte(plain), &card); err == nil {
		t.Error("a2a-go's encoding/json reads the {} form")
	}

	// What a2a-go writes instead is not a valid v1.0 card: a scope list
	// as a bare array, `{"bearerAuth":[]}` for the card Parse read, or
	// `{"bearerAuth":null}` for a nil list.
	parsed, err := Parse([]byte(echoCard))
	if err != nil {
		t.Fatal(err)
	}
	written, err := json.Marshal(parsed)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(written, []byte(`"securityRequirements":[{"schemes":{"bearerAuth":[]}}]`)) {
		t.Errorf("a2a-go wrote securityRequirements differently: %s", written)
	}
	if err := checkCard(written); err == nil {
		t.Error("a2a-go's encoding/json form passes the v1.0 check")
	}
	parsed.SecurityRequirements[0]["bearerAuth"] = nil
	if written, err = json.Marshal(parsed); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(written, []byte(`"securityRequirements":[{"schemes":{"bearerAuth":null}}]`)) {
		t.Errorf("a2a-go wrote securityRequirements differently: %s", written)
	}
	if err := checkCard(written); err == nil {
		t.Error("a2a-go's encoding/json form passes the v1.0 check")
	}
	// Marshal writes the spec's form whichever a2a-go's card holds.
	if ours, err := Marshal(parsed); err != nil || string(ours) != echoCard {
		t.Errorf("Marshal of the parsed card: %v\n%s\nwant\n%s", err, ours, echoCard)
	}
}
