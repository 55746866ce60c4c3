package agentcard

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentgate/agentgate/pkg/agent"
	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/web"
)

// FrontDoorPath is the path of an agent's A2A JSON-RPC front door, the one
// interface its card announces. The name is escaped because it is a path
// segment; registered names are slugs, so in practice it is unchanged.
func FrontDoorPath(name string) string {
	return "/api/agents/" + url.PathEscape(name) + "/a2a"
}

// CardPath is the path of an agent's card for authenticated callers.
func CardPath(name string) string { return FrontDoorPath(name) + "/agent-card" }

// wellKnownCard is where A2A clients look for a card below a base URL.
const wellKnownCard = "/.well-known/agent-card.json"

// PublicCardPath is the path of an agent's public card, in the well-known
// location below its front door (the A2A convention), so that a client
// given the front door's URL as a base finds the card where it looks.
func PublicCardPath(name string) string { return FrontDoorPath(name) + wellKnownCard }

// SiblingCardPath serves the same public card where a client lands that
// resolves the well-known path relative to the front door's URL, which
// has no trailing slash: RFC 3986 resolution replaces its last segment,
// so ".well-known/agent-card.json" against /api/agents/{name}/a2a is
// /api/agents/{name}/.well-known/agent-card.json (@a2a-js/sdk 1.x does
// this).
func SiblingCardPath(name string) string {
	return "/api/agents/" + url.PathEscape(name) + wellKnownCard
}

// The values every card announces.
const (
	// ProtocolBinding and ProtocolVersion describe the front door: A2A
	// over JSON-RPC, whatever binding the agent itself speaks behind it, in
	// both generations (ProtocolVersionV03 for the installed base of v0.3
	// clients); the method a request calls decides which it speaks.
	ProtocolBinding    = "JSONRPC"
	ProtocolVersion    = "1.0"
	ProtocolVersionV03 = "0.3"
	// BearerAuth is the name of the card's one security scheme.
	BearerAuth = "bearerAuth"
	// MediaText is the one input and output mode: the front door and the
	// MCP tools share one contract, text in and text out, and a template
	// has no way yet to declare other media types. Announcing
	// application/json would invite data parts nothing here promises to
	// handle.
	MediaText = "text/plain"
)

// bearerDescription tells a caller which tokens the front door takes.
const bearerDescription = "An agentgate API key or a JWT issued for agentgate, sent as Authorization: Bearer <token>."

// Build returns the A2A v1.0 card of agent a, whose front door is at
// frontDoorURL (an absolute URL: base URL + FrontDoorPath).
//
// The card announces agentgate's front door, never the agent's own
// endpoint: callers go through the door (authentication, rate limits,
// dedup), and the endpoint may not even be reachable from outside.
//
// Skills are the template's capabilities. A skill's tags, which the spec
// requires to be non-empty, are the template's tags or, when it has none,
// the agent's name. They are not padded with the skill's slug: that is
// already the skill's id, and tags are for keyword search across agents.
//
// Capabilities are all false, and the card says so rather than leaving
// them out (Marshal and MarshalForm write every one): the front door
// answers SendMessage only (no streaming, no push notifications, no
// extended card), and saying so spares clients a guess.
func Build(a agent.Agent, frontDoorURL string) *a2a.AgentCard {
	t := a.Template
	tags := t.Tags
	if len(tags) == 0 {
		tags = []string{t.Name}
	}
	c := &a2a.AgentCard{
		Name:        t.Name,
		Description: t.Description,
		Version:     t.Version,
		SupportedInterfaces: []*a2a.AgentInterface{
			{URL: frontDoorURL, ProtocolBinding: ProtocolBinding, ProtocolVersion: ProtocolVersion},
			{URL: frontDoorURL, ProtocolBinding: ProtocolBinding, ProtocolVersion: ProtocolVersionV03},
		},
		SecuritySchemes: a2a.NamedSecuritySchemes{
			BearerAuth: a2a.HTTPAuthSecurityScheme{Scheme: "Bearer", Description: bearerDescription},
		},
		SecurityRequirements: a2a.SecurityRequirementsOptions{{BearerAuth: a2a.SecuritySchemeScopes{}}},
		DefaultInputModes:    []string{MediaText},
		DefaultOutputModes:   []string{MediaText},
		DocumentationURL:     t.DocumentationURL,
		IconURL:              t.IconURL,
	}
	if p := t.Provider; p != nil {
		c.Provider = &a2a.AgentProvider{Org: p.Organization, URL: p.URL}
	}
	for _, cp := range t.Capabilities {
		c.Skills = append(c.Skills, a2a.AgentSkill{
			ID:          agent.Slug(cp.Name),
			Name:        cp.Name,
			Description: cp.Description,
			Tags:        append([]string(nil), tags...),
			Examples:    append([]string(nil), cp.UseCases...),
		})
	}
	return c
}

// Marshal returns c as the A2A v1.0 spec writes a card (its JSON is the
// ProtoJSON of the spec's types): the spec's field order, compact,
// byte-stable, unset fields left out, "<" and "&" as they are. The ETag is
// computed from these bytes.
//
// a2a-go's encoding/json form of its card differs from the spec in two
// places, fixed here (see specCard): a security requirement's scopes are
// a bare array there, {"schemes":{"bearerAuth":[]}}, where the spec wraps
// them, {"schemes":{"bearerAuth":{"list":[]}}}; and a false capability is
// left out there, where this card says every one, since a client reads a
// missing one as "maybe". Its fields are also in another order, which
// would change every card's bytes and ETag for nothing.
func Marshal(c *a2a.AgentCard) ([]byte, error) {
	sc, err := toSpecCard(c)
	if err != nil {
		return nil, err
	}
	return marshalCompact(sc)
}

// marshalCompact returns v as compact JSON without HTML escaping.
func marshalCompact(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("marshaling agent card: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// DefaultMaxAge is how long a client may cache a card: long enough to spare
// the table a read per call, short enough that a template change shows
// soon. A client that revalidates with If-None-Match pays only a 304.
const DefaultMaxAge = 5 * time.Minute

// CardHandler serves agents' cards:
//
//	GET /api/agents/{name}/a2a/agent-card (Public false)
//	GET /api/agents/{name}/a2a/.well-known/agent-card.json (Public true)
//	GET /api/agents/{name}/.well-known/agent-card.json (Public true)
//
// It does no authentication: on the private route the security chain in
// front of it does. On the public route it serves only the cards of agents
// whose template sets public_card, and answers for any other agent exactly
// as for one that does not exist, so that the public route does not reveal
// which agents exist.
type CardHandler struct {
	Registry *agent.Registry
	// BaseURL is the API's configured public base URL; "" derives it from
	// the request (web.BaseURL).
	BaseURL string
	// Public marks the handler of the unauthenticated well-known route.
	Public bool
	// MaxAge is the cards' Cache-Control max-age; 0 means DefaultMaxAge.
	MaxAge time.Duration
}

func (h *CardHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	a, err := h.Registry.Get(r.Context(), name)
	if agentgate.ErrorCode(err) == agentgate.ENOTFOUND || (err == nil && h.Public && !a.Template.PublicCard) {
		// One error for both, built here rather than taken from the
		// registry, so that a hidden agent's 404 is byte for byte a
		// missing one's.
		web.WriteError(w, r, agentgate.Errorf(agentgate.ENOTFOUND, "no agent %q", name))
		return
	} else if err != nil {
		web.WriteError(w, r, err)
		return
	}
	body, err := MarshalForm(Build(a, strings.TrimSuffix(web.BaseURL(r, h.BaseURL), "/")+FrontDoorPath(name)),
		FormFor(r.Header.Get(VersionHeader)))
	if err != nil {
		web.WriteError(w, r, err)
		return
	}
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:16]) + `"`

	hd := w.Header()
	hd.Set("ETag", etag)
	// The form depends on the client's protocol version: a cache must
	// keep one per version.
	hd.Add("Vary", VersionHeader)
	maxAge := strconv.Itoa(int(cmp.Or(h.MaxAge, DefaultMaxAge) / time.Second))
	if h.Public {
		hd.Set("Cache-Control", "public, max-age="+maxAge)
	} else {
		// The private card is only for the caller who authenticated: no
		// shared cache may keep it, and a private cache must key it on
		// the credentials too.
		hd.Set("Cache-Control", "private, max-age="+maxAge)
		hd.Add("Vary", "Authorization")
	}
	if etagMatches(r.Header.Values("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	hd.Set("Content-Type", "application/json")
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	w.Write(body)
}

// etagMatches reports whether an If-None-Match header (its values, each a
// comma-separated list) matches etag. It uses the weak comparison RFC 9110
// prescribes for If-None-Match: W/"x" matches "x". "*" matches any current
// representation, and there is one.
func etagMatches(values []string, etag string) bool {
	for _, v := range values {
		for tag := range strings.SplitSeq(v, ",") {
			tag = strings.TrimSpace(tag)
			if tag == "*" || strings.TrimPrefix(tag, "W/") == etag {
				return true
			}
		}
	}
	return false
}
