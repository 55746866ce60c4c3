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

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

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
// Capabilities are all set, to false, rather than left out: the front door
// answers SendMessage only (no streaming, no push notifications, no
// extended card), and saying so spares clients a guess.
func Build(a agent.Agent, frontDoorURL string) *a2apb.AgentCard {
	t := a.Template
	tags := t.Tags
	if len(tags) == 0 {
		tags = []string{t.Name}
	}
	c := &a2apb.AgentCard{
		Name:        t.Name,
		Description: t.Description,
		Version:     t.Version,
		SupportedInterfaces: []*a2apb.AgentInterface{
			{Url: frontDoorURL, ProtocolBinding: ProtocolBinding, ProtocolVersion: ProtocolVersion},
			{Url: frontDoorURL, ProtocolBinding: ProtocolBinding, ProtocolVersion: ProtocolVersionV03},
		},
		Capabilities: &a2apb.AgentCapabilities{
			Streaming:         proto.Bool(false),
			PushNotifications: proto.Bool(false),
			ExtendedAgentCard: proto.Bool(false),
		},
		SecuritySchemes: map[string]*a2apb.SecurityScheme{
			BearerAuth: {Scheme: &a2apb.SecurityScheme_HttpAuthSecurityScheme{
				HttpAuthSecurityScheme: &a2apb.HTTPAuthSecurityScheme{
					Scheme:      "Bearer",
					Description: bearerDescription,
				},
			}},
		},
		SecurityRequirements: []*a2apb.SecurityRequirement{{
			Schemes: map[string]*a2apb.StringList{BearerAuth: {List: []string{}}},
		}},
		DefaultInputModes:  []string{MediaText},
		DefaultOutputModes: []string{MediaText},
	}
	if p := t.Provider; p != nil {
		c.Provider = &a2apb.AgentProvider{Organization: p.Organization, Url: p.URL}
	}
	if t.DocumentationURL != "" {
		c.DocumentationUrl = proto.String(t.DocumentationURL)
	}
	if t.IconURL != "" {
		c.IconUrl = proto.String(t.IconURL)
	}
	for _, cp := range t.Capabilities {
		c.Skills = append(c.Skills, &a2apb.AgentSkill{
			Id:          agent.Slug(cp.Name),
			Name:        cp.Name,
			Description: cp.Description,
			Tags:        append([]string(nil), tags...),
			Examples:    append([]string(nil), cp.UseCases...),
		})
	}
	return c
}

// Marshal returns c as ProtoJSON (camelCase names, unset fields left out),
// the JSON form of the A2A v1.0 spec, compact and byte-stable: protojson
// deliberately varies its whitespace from build to build, and the ETag is
// computed from these bytes.
//
// The card's securityRequirements are written with their empty scope lists
// kept, {"schemes":{"bearerAuth":{"list":[]}}}, where plain protojson writes
// {"bearerAuth":{}}. Both are valid ProtoJSON of the spec's types; the
// explicit form is chosen so that a client reading the scopes as .list,
// without protobuf, gets an array rather than nothing. Skills' own
// securityRequirements, which Build never sets, are left as protojson
// writes them.
func Marshal(c *a2apb.AgentCard) ([]byte, error) {
	opts := protojson.MarshalOptions{UseProtoNames: false, EmitUnpopulated: false}
	// Marshal the fields before and after securityRequirements apart, so
	// that the field order stays protojson's (the spec's) order.
	reqField := c.ProtoReflect().Descriptor().Fields().ByName("security_requirements")
	head, tail := &a2apb.AgentCard{}, &a2apb.AgentCard{}
	c.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.Index() < reqField.Index():
			head.ProtoReflect().Set(fd, v)
		case fd.Index() > reqField.Index():
			tail.ProtoReflect().Set(fd, v)
		}
		return true
	})
	headJSON, err := marshalCompact(opts, head)
	if err != nil {
		return nil, err
	}
	reqsJSON, err := marshalRequirements(c.GetSecurityRequirements())
	if err != nil {
		return nil, err
	}
	tailJSON, err := marshalCompact(opts, tail)
	if err != nil {
		return nil, err
	}
	return joinObjects(headJSON, reqsJSON, tailJSON), nil
}

// marshalRequirements returns `"securityRequirements":[...]`, with each
// requirement's unpopulated fields emitted (a requirement holds nothing but
// its map of scope lists, so only empty lists are affected), or nil if
// there are none.
func marshalRequirements(reqs []*a2apb.SecurityRequirement) ([]byte, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	opts := protojson.MarshalOptions{EmitUnpopulated: true}
	b := []byte(`{"securityRequirements":[`)
	for i, r := range reqs {
		rb, err := marshalCompact(opts, r)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, rb...)
	}
	return append(b, "]}"...), nil
}

// marshalCompact returns m as compact ProtoJSON.
func marshalCompact(opts protojson.MarshalOptions, m proto.Message) ([]byte, error) {
	b, err := opts.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("marshaling agent card: %w", err)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return nil, fmt.Errorf("compacting agent card JSON: %w", err)
	}
	return buf.Bytes(), nil
}

// joinObjects merges compact JSON objects into one, in order, skipping nil
// and empty ones.
func joinObjects(objs ...[]byte) []byte {
	out := []byte{'{'}
	for _, o := range objs {
		if len(o) <= 2 { // nil or {}
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, o[1:len(o)-1]...)
	}
	return append(out, '}')
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
