package agentcard

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The v0.3 schema's AgentCard, compiled once.
var cardSchemaV03 = sync.OnceValues(func() (*jsonschema.Schema, error) {
	return compileSchema("testdata/a2a/a2a-v0.3.0.schema.json", "#/definitions/AgentCard")
})

func checkCardV03(t *testing.T, data []byte) {
	t.Helper()
	sch, err := cardSchemaV03()
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("not a valid v0.3 card: %v\n%s", err, data)
	}
}

func TestFormFor(t *testing.T) {
	for version, want := range map[string]Form{
		"": FormV03, "0.3": FormV03, "0.3.0": FormV03, "0.2.5": FormV03, "nonsense": FormV03,
		"1.0": FormV1, "1.0.0": FormV1, " 1.0 ": FormV1, "1": FormV1, "2.1": FormV1,
	} {
		if got := FormFor(version); got != want {
			t.Errorf("FormFor(%q) = %v, want %v", version, got, want)
		}
	}
}

// TestEveryExampleCardIsAValidV03Card: a client that does not say it speaks
// v1.0 gets the form v0.3 clients read, valid against the v0.3 schema,
// with the v0.3 fields where those clients look, and every capability
// said (a v0.3 client reads a missing "streaming" as maybe).
func TestEveryExampleCardIsAValidV03Card(t *testing.T) {
	f := newFixture(t)
	for _, a := range f.agents {
		name := a.Template.Name
		t.Run(name, func(t *testing.T) {
			for _, version := range []string{"", "0.3"} {
				resp, body := f.get(t, CardPath(name), VersionHeader, version)
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("status %d: %s", resp.StatusCode, body)
				}
				checkCardV03(t, body)
				if checkCard(body) == nil {
					t.Error("the v0.3 form passes the strict v1.0 schema: it is the v1.0 card")
				}
				var card struct {
					URL                 string `json:"url"`
					PreferredTransport  string `json:"preferredTransport"`
					ProtocolVersion     string `json:"protocolVersion"`
					Capabilities        map[string]any
					Security            []map[string][]string
					SecuritySchemes     map[string]map[string]any
					SupportedInterfaces []map[string]string
				}
				if err := json.Unmarshal(body, &card); err != nil {
					t.Fatal(err)
				}
				frontDoor := f.srv.URL + FrontDoorPath(name)
				if card.URL != frontDoor || card.PreferredTransport != "JSONRPC" || card.ProtocolVersion != "0.3" {
					t.Errorf("url %q, preferredTransport %q, protocolVersion %q; want the front door, JSONRPC, 0.3",
						card.URL, card.PreferredTransport, card.ProtocolVersion)
				}
				for _, c := range []string{"streaming", "pushNotifications"} {
					if v, ok := card.Capabilities[c].(bool); !ok || v {
						t.Errorf("capabilities.%s = %v, want false, said", c, card.Capabilities[c])
					}
				}
				if len(card.Security) != 1 || card.Security[0]["bearerAuth"] == nil {
					t.Errorf("security = %v, want bearerAuth", card.Security)
				}
				if b := card.SecuritySchemes["bearerAuth"]; b["type"] != "http" || b["scheme"] != "Bearer" {
					t.Errorf("securitySchemes.bearerAuth = %v, want a v0.3 http bearer scheme", b)
				}
				if len(card.SupportedInterfaces) != 2 {
					t.Errorf("supportedInterfaces = %v, want the v1.0 list as well", card.SupportedInterfaces)
				}
				if bytes.Contains(body, []byte(`\u003c`)) {
					t.Error("the card escapes < for HTML")
				}
			}
		})
	}
}

// TestFormsAreCachedApart: each form has its own ETag, so that a cache or
// a client holding one form never gets a 304 for the other; the answer
// varies on the version for every card.
func TestFormsAreCachedApart(t *testing.T) {
	f := newFixture(t)
	for _, path := range []string{CardPath("sample-echo"), PublicCardPath("sample-echo"), SiblingCardPath("sample-echo")} {
		v1, v1Body := f.get(t, path)
		v03, v03Body := f.get(t, path, VersionHeader, "")
		if v1.StatusCode != 200 || v03.StatusCode != 200 || bytes.Equal(v1Body, v03Body) {
			t.Fatalf("%s: %d and %d, the same body: %v", path, v1.StatusCode, v03.StatusCode, bytes.Equal(v1Body, v03Body))
		}
		if v1.Header.Get("ETag") == v03.Header.Get("ETag") {
			t.Errorf("%s: one ETag for both forms", path)
		}
		if !slices.Contains(v03.Header.Values("Vary"), VersionHeader) {
			t.Errorf("%s: Vary %q", path, v03.Header.Values("Vary"))
		}
		if resp, _ := f.get(t, path, VersionHeader, "", "If-None-Match", v1.Header.Get("ETag")); resp.StatusCode != 200 {
			t.Errorf("%s: the v1.0 card's ETag matched the v0.3 form: %d", path, resp.StatusCode)
		}
		if resp, _ := f.get(t, path, VersionHeader, "", "If-None-Match", v03.Header.Get("ETag")); resp.StatusCode != 304 {
			t.Errorf("%s: revalidating the v0.3 form: %d, want 304", path, resp.StatusCode)
		}
		if err := checkCard(v1Body); err != nil {
			t.Errorf("%s: the v1.0 card: %v", path, err)
		}
	}
}

// TestSiblingCardPath: a client given the interface URL, which has no
// trailing slash, resolves ".well-known/agent-card.json" against it to a
// sibling of the front door; the public card is there too, and a hidden
// agent is as absent there as at the other public path.
func TestSiblingCardPath(t *testing.T) {
	f := newFixture(t)
	frontDoor := f.srv.URL + FrontDoorPath("sample-echo")
	if got := resolveRef(t, frontDoor, ".well-known/agent-card.json"); got != f.srv.URL+SiblingCardPath("sample-echo") {
		t.Fatalf("relative resolution lands on %s, not %s", got, SiblingCardPath("sample-echo"))
	}
	_, public := f.get(t, PublicCardPath("sample-echo"))
	resp, sibling := f.get(t, SiblingCardPath("sample-echo"))
	if resp.StatusCode != 200 || !bytes.Equal(public, sibling) || resp.Header.Get("Cache-Control") != "public, max-age=300" {
		t.Errorf("sibling path: %d, Cache-Control %q, the public card: %v", resp.StatusCode, resp.Header.Get("Cache-Control"), bytes.Equal(public, sibling))
	}
	hidden, hiddenBody := f.get(t, SiblingCardPath("sample-minimal"))
	_, otherBody := f.get(t, PublicCardPath("sample-minimal"))
	if hidden.StatusCode != 404 || !bytes.Equal(hiddenBody, otherBody) {
		t.Errorf("a hidden agent at the sibling path: %d %s", hidden.StatusCode, hiddenBody)
	}
}

// TestBothFormsParse: Parse, the card parser agentgate gives a2a-go
// clients, and a2a-go's own v0.3 parser read the v0.3 form into the same
// card as the v1.0 form.
func TestBothFormsParse(t *testing.T) {
	f := newFixture(t)
	_, v1Body := f.get(t, CardPath("sample-echo"))
	_, v03Body := f.get(t, CardPath("sample-echo"), VersionHeader, "")
	want, err := Parse(v1Body)
	if err != nil {
		t.Fatal(err)
	}
	for name, parse := range map[string]func([]byte) (any, error){
		"Parse": func(b []byte) (any, error) { return Parse(b) },
		"a2av0": func(b []byte) (any, error) { return a2av0.NewAgentCardParser()(b) },
	} {
		got, err := parse(v03Body)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// No scopes read as [] from one form and as null from the other:
		// the same requirement.
		if c, ok := got.(*a2a.AgentCard); ok && len(c.SecurityRequirements) == 1 && len(c.SecurityRequirements[0][BearerAuth]) == 0 {
			c.SecurityRequirements = want.SecurityRequirements
		}
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(want)
		if !bytes.Equal(gj, wj) {
			t.Errorf("%s of the v0.3 form:\n%s\nthe v1.0 card:\n%s", name, gj, wj)
		}
	}
}

func resolveRef(t *testing.T, base, ref string) string {
	t.Helper()
	b, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	r, err := url.Parse(ref)
	if err != nil {
		t.Fatal(err)
	}
	return b.ResolveReference(r).String()
}

// richCard is a card with what Build never sets: every kind of security
// scheme, an additional v0.3 interface, skill security, an extension.
func richCard() *a2a.AgentCard {
	return &a2a.AgentCard{
		Name: "rich", Description: "d", Version: "1",
		SupportedInterfaces: []*a2a.AgentInterface{
			{URL: "https://x/a2a", ProtocolBinding: ProtocolBinding, ProtocolVersion: ProtocolVersion},
			{URL: "https://x/a2a", ProtocolBinding: ProtocolBinding, ProtocolVersion: ProtocolVersionV03},
			{URL: "https://x/rest", ProtocolBinding: a2a.TransportProtocolHTTPJSON, ProtocolVersion: ProtocolVersionV03},
		},
		Capabilities: a2a.AgentCapabilities{Streaming: true, Extensions: []a2a.AgentExtension{{URI: "urn:x", Required: true}}},
		SecuritySchemes: a2a.NamedSecuritySchemes{
			"bearer": a2a.HTTPAuthSecurityScheme{Scheme: "Bearer", BearerFormat: "JWT"},
			"key":    a2a.APIKeySecurityScheme{Name: "X-Key", Location: a2a.APIKeySecuritySchemeLocationHeader},
			"mtls":   a2a.MutualTLSSecurityScheme{Description: "m"},
			"oidc":   a2a.OpenIDConnectSecurityScheme{OpenIDConnectURL: "https://x/.well-known/openid-configuration"},
			"oauth": a2a.OAuth2SecurityScheme{Flows: a2a.ClientCredentialsOAuthFlow{
				TokenURL: "https://x/token", Scopes: map[string]string{"read": "r"}}},
		},
		SecurityRequirements: a2a.SecurityRequirementsOptions{{"bearer": {}}, {"oauth": {"read"}}},
		DefaultInputModes:    []string{MediaText}, DefaultOutputModes: []string{MediaText},
		Skills: []a2a.AgentSkill{{ID: "s", Name: "s", Description: "s", Tags: []string{"t"},
			SecurityRequirements: a2a.SecurityRequirementsOptions{{"key": {}}}}},
	}
}

// TestFormsAgreeWithA2AGo cross-checks the forms with a2a-go's own v0.3
// compatibility package (a2av0, linked by tests only): its parser reads
// our v0.3 form, and ours its producer's, into the card both came from,
// and both read the v1.0 card (Marshal) the same.
func TestFormsAgreeWithA2AGo(t *testing.T) {
	for _, card := range []*a2a.AgentCard{richCard(), Build(newFixture(t).agent(t, "sample-echo"), "https://api.example.com/a2a")} {
		want := jsonOf(t, card)
		ours, err := MarshalForm(card, FormV03)
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := a2av0.NewStaticAgentCardProducer(card).(a2asrv.AgentCardJSONProducer).CardJSON(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		v1, err := Marshal(card)
		if err != nil {
			t.Fatal(err)
		}
		for name, read := range map[string]func() (*a2a.AgentCard, error){
			"a2av0 of our v0.3 form": func() (*a2a.AgentCard, error) { return a2av0.NewAgentCardParser()(ours) },
			"Parse of a2av0's form":  func() (*a2a.AgentCard, error) { return Parse(theirs) },
			"Parse of our v0.3 form": func() (*a2a.AgentCard, error) { return Parse(ours) },
			"Parse of the v1.0 card": func() (*a2a.AgentCard, error) { return Parse(v1) },
		} {
			got, err := read()
			if err != nil {
				t.Errorf("%s %s: %v", card.Name, name, err)
				continue
			}
			if j := jsonOf(t, got); j != want {
				t.Errorf("%s %s:\n%s\nwant\n%s", card.Name, name, j, want)
			}
		}
		checkCardV03(t, ours)
		if err := checkCard(v1); err != nil {
			t.Errorf("%s: the v1.0 card: %v", card.Name, err)
		}
	}
}

// TestV03CardWithoutV1Fields: a plain v0.3 card, without the v1.0 fields
// of FormV03, reads as the v1.0 card it describes.
func TestV03CardWithoutV1Fields(t *testing.T) {
	card, err := Parse([]byte(`{"name":"x","description":"d","version":"1","url":"https://x/a2a","preferredTransport":"JSONRPC","protocolVersion":"0.3.0",` +
		`"additionalInterfaces":[{"url":"https://x/a2a","transport":"JSONRPC"},{"url":"https://x/grpc","transport":"GRPC"}],` +
		`"capabilities":{"streaming":true},"supportsAuthenticatedExtendedCard":true,` +
		`"securitySchemes":{"k":{"type":"apiKey","in":"query","name":"key"}},"security":[{"k":[]}],` +
		`"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[{"id":"a","name":"a","description":"a","tags":["a"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"supportedInterfaces":[{"url":"https://x/a2a","protocolBinding":"JSONRPC","protocolVersion":"0.3.0"},{"url":"https://x/grpc","protocolBinding":"GRPC","protocolVersion":"0.3.0"}],` +
		`"capabilities":{"streaming":true,"extendedAgentCard":true},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"description":"d","name":"x",` +
		`"securityRequirements":[{"schemes":{"k":[]}}],"securitySchemes":{"k":{"apiKeySecurityScheme":{"location":"query","name":"key"}}},` +
		`"skills":[{"description":"a","id":"a","name":"a","tags":["a"]}],"version":"1"}`
	if got := jsonOf(t, card); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
