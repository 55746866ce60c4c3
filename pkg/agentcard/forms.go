package agentcard

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	a2av03 "github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/v2/a2a"
)

// VersionHeader is the request header in which an A2A client names the
// protocol version it speaks (A2A v1.0, "Service parameters").
const VersionHeader = "A2A-Version"

// Form is one of the JSON forms a card is served in.
type Form int

const (
	// FormV03 is the form v0.3 clients read: the v1.0 card with the v0.3
	// fields added where those clients look for them (url,
	// preferredTransport, protocolVersion, additionalInterfaces, security,
	// and security schemes with their v0.3 "type"): the union form a2a-go's
	// own v0.3 compatibility producer writes, written here from a2a-go's
	// v0.3 card type. It is valid against the v0.3
	// schema, and every v1.0 field is there too, for a v1.0 client that
	// does not say its version; but the v1.0 schema, which allows no
	// unknown field, rejects it.
	FormV03 Form = iota
	// FormV1 is the A2A v1.0 card (Marshal), valid against the strict
	// v1.0 schema.
	FormV1
)

// FormFor picks the card form for a request's A2A-Version header. A
// client that names version 1.0 or later gets the v1.0 card. One that
// names none is taken for a v0.3 client, as the A2A v1.0 specification
// tells servers to take a request without the header: @a2a-js/sdk 0.3 and
// the ADK built on it send none, while @a2a-js/sdk 1.x and
// agentcard.Resolve send "1.0".
func FormFor(version string) Form {
	major, _, _ := strings.Cut(strings.TrimSpace(version), ".")
	if n, err := strconv.Atoi(major); err == nil && n >= 1 {
		return FormV1
	}
	return FormV03
}

// MarshalForm returns c, as Build made it, in form f: compact JSON, the
// same bytes for the same card (its ETag depends on them).
func MarshalForm(c *a2a.AgentCard, f Form) ([]byte, error) {
	if f == FormV1 {
		return Marshal(c)
	}
	v03, err := cardToV03(c)
	if err != nil {
		return nil, fmt.Errorf("converting agent card: %w", err)
	}
	fields, err := decodeObject(v03)
	if err != nil {
		return nil, fmt.Errorf("marshaling the v0.3 agent card: %w", err)
	}
	// The v1.0 fields are added, in a2a-go's JSON, as a2a-go's v0.3
	// compatibility producer writes them: a v1.0 client that does not say
	// its version finds its fields too.
	fields["supportedInterfaces"] = c.SupportedInterfaces
	if len(c.SecurityRequirements) > 0 {
		fields["securityRequirements"] = c.SecurityRequirements
	}
	// Each security scheme also as a2a-go writes v1.0's, under the key
	// its v0.3 parser reads it from ("http" for an HTTP scheme).
	schemes, _ := fields["securitySchemes"].(map[string]any)
	for name, scheme := range c.SecuritySchemes {
		if s, ok := schemes[string(name)].(map[string]any); ok {
			s[v03SchemeKey(scheme)] = scheme
		}
	}
	// a2a-go's card types leave false capabilities out, and a v0.3 client
	// reads a missing one as "maybe": the ADK streams unless streaming is
	// false. The capabilities are written as the v1.0 card has them,
	// every one said.
	caps := map[string]any{
		"streaming": c.Capabilities.Streaming, "pushNotifications": c.Capabilities.PushNotifications,
		"extendedAgentCard": c.Capabilities.ExtendedAgentCard,
	}
	if len(c.Capabilities.Extensions) > 0 {
		caps["extensions"] = c.Capabilities.Extensions
	}
	fields["capabilities"] = caps
	// Decoded again, so that every object's keys, the added ones' too, are
	// sorted; compact: the same bytes every time; "<token>" as it is, not
	// escaped for HTML.
	sorted, err := decodeObject(fields)
	if err != nil {
		return nil, fmt.Errorf("marshaling the v0.3 agent card: %w", err)
	}
	return marshalCompact(sorted)
}

// decodeObject returns v's JSON object decoded as maps, its numbers kept
// as written.
func decodeObject(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var fields map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&fields); err != nil {
		return nil, err
	}
	return fields, nil
}

// v03SchemeKey is the key under which a2a-go's v0.3 form carries a
// security scheme in its v1.0 JSON.
func v03SchemeKey(s a2a.SecurityScheme) string {
	switch s.(type) {
	case a2a.HTTPAuthSecurityScheme:
		return "http"
	case a2a.APIKeySecurityScheme:
		return "apiKey"
	case a2a.MutualTLSSecurityScheme:
		return "mutualTLS"
	case a2a.OpenIDConnectSecurityScheme:
		return "openIdConnect"
	}
	return "oauth2"
}

// cardToV03 converts a v1.0 card to v0.3's card: its first v0.3 interface
// is the card's url and preferred transport, its other v0.3 interfaces the
// additional ones (a v0.3 client can speak to no v1.0 interface).
func cardToV03(c *a2a.AgentCard) (*a2av03.AgentCard, error) {
	out := &a2av03.AgentCard{
		Name: c.Name, Description: c.Description, Version: c.Version,
		DocumentationURL: c.DocumentationURL, IconURL: c.IconURL,
		DefaultInputModes: c.DefaultInputModes, DefaultOutputModes: c.DefaultOutputModes,
		Capabilities:                      a2av03.AgentCapabilities{Streaming: c.Capabilities.Streaming, PushNotifications: c.Capabilities.PushNotifications},
		SupportsAuthenticatedExtendedCard: c.Capabilities.ExtendedAgentCard,
		Security:                          securityToV03(c.SecurityRequirements),
	}
	for _, in := range c.SupportedInterfaces {
		if in == nil || !isV03(in.ProtocolVersion) {
			continue
		}
		if out.URL == "" {
			out.URL, out.PreferredTransport, out.ProtocolVersion = in.URL, a2av03.TransportProtocol(in.ProtocolBinding), string(in.ProtocolVersion)
			continue
		}
		out.AdditionalInterfaces = append(out.AdditionalInterfaces, a2av03.AgentInterface{URL: in.URL, Transport: a2av03.TransportProtocol(in.ProtocolBinding)})
	}
	if out.URL == "" {
		return nil, fmt.Errorf("no interface of protocol version %s", ProtocolVersionV03)
	}
	if err := sameJSON([2]any{c.Provider, &out.Provider}, [2]any{c.Capabilities.Extensions, &out.Capabilities.Extensions},
		[2]any{c.Skills, &out.Skills}, [2]any{c.Signatures, &out.Signatures}); err != nil {
		return nil, err
	}
	for i, s := range c.Skills {
		out.Skills[i].Security = securityToV03(s.SecurityRequirements)
	}
	schemes, err := convertSchemes[a2a.SecuritySchemeName, a2av03.SecuritySchemeName](c.SecuritySchemes, schemeToV03)
	out.SecuritySchemes = schemes
	return out, err
}

// convertSchemes converts each of a card's security schemes with conv.
func convertSchemes[KF, KT ~string, F, T any](in map[KF]F, conv func(F) (T, error)) (map[KT]T, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := make(map[KT]T, len(in))
	for name, scheme := range in {
		s, err := conv(scheme)
		if err != nil {
			return nil, fmt.Errorf("security scheme %s: %w", name, err)
		}
		out[KT(name)] = s
	}
	return out, nil
}

// sameJSON sets each pair's second value, a pointer, from its first
// through JSON: for the parts of a card whose JSON is the same in both
// generations (provider, extensions, signatures, skills but for their
// security).
func sameJSON(pairs ...[2]any) error {
	for _, p := range pairs {
		b, err := json.Marshal(p[0])
		if err == nil {
			err = json.Unmarshal(b, p[1])
		}
		if err != nil {
			return fmt.Errorf("converting agent card: %w", err)
		}
	}
	return nil
}

// isV03 reports whether v names protocol version 0.3, with or without a
// patch number.
func isV03(v a2a.ProtocolVersion) bool {
	return v == ProtocolVersionV03 || strings.HasPrefix(string(v), ProtocolVersionV03+".")
}

// securityToV03 converts security requirements; no scopes are [], never
// null, in v0.3 as in v1.0.
func securityToV03(reqs a2a.SecurityRequirementsOptions) []a2av03.SecurityRequirements {
	var out []a2av03.SecurityRequirements
	for _, r := range reqs {
		or := a2av03.SecurityRequirements{}
		for name, scopes := range r {
			or[a2av03.SecuritySchemeName(name)] = append(a2av03.SecuritySchemeScopes{}, scopes...)
		}
		out = append(out, or)
	}
	return out
}

func securityFromV03(reqs []a2av03.SecurityRequirements) a2a.SecurityRequirementsOptions {
	var out a2a.SecurityRequirementsOptions
	for _, r := range reqs {
		ar := a2a.SecurityRequirements{}
		for name, scopes := range r {
			ar[a2a.SecuritySchemeName(name)] = a2a.SecuritySchemeScopes(scopes)
		}
		out = append(out, ar)
	}
	return out
}

// schemeToV03 converts a security scheme to v0.3. A scheme's JSON is the
// same in both generations (a2a-go's v0.3 types add the "type" as they are
// written), but for an API key's location, "in" in v0.3.
func schemeToV03(s a2a.SecurityScheme) (a2av03.SecurityScheme, error) {
	switch s := s.(type) {
	case a2a.APIKeySecurityScheme:
		return a2av03.APIKeySecurityScheme{Name: s.Name, In: a2av03.APIKeySecuritySchemeIn(s.Location), Description: s.Description}, nil
	case a2a.HTTPAuthSecurityScheme:
		return viaJSON[a2av03.HTTPAuthSecurityScheme](s)
	case a2a.MutualTLSSecurityScheme:
		return viaJSON[a2av03.MutualTLSSecurityScheme](s)
	case a2a.OpenIDConnectSecurityScheme:
		return viaJSON[a2av03.OpenIDConnectSecurityScheme](s)
	case a2a.OAuth2SecurityScheme:
		return viaJSON[a2av03.OAuth2SecurityScheme](s)
	}
	return nil, fmt.Errorf("scheme %T has no v0.3 form", s)
}

// schemeFromV03 converts a v0.3 security scheme to v1.0 (see schemeToV03).
func schemeFromV03(s a2av03.SecurityScheme) (a2a.SecurityScheme, error) {
	switch s := s.(type) {
	case a2av03.APIKeySecurityScheme:
		return a2a.APIKeySecurityScheme{Name: s.Name, Location: a2a.APIKeySecuritySchemeLocation(s.In), Description: s.Description}, nil
	case a2av03.HTTPAuthSecurityScheme:
		return viaJSON[a2a.HTTPAuthSecurityScheme](s)
	case a2av03.MutualTLSSecurityScheme:
		return viaJSON[a2a.MutualTLSSecurityScheme](s)
	case a2av03.OpenIDConnectSecurityScheme:
		return viaJSON[a2a.OpenIDConnectSecurityScheme](s)
	case a2av03.OAuth2SecurityScheme:
		return viaJSON[a2a.OAuth2SecurityScheme](s)
	}
	return nil, fmt.Errorf("scheme %T has no v1.0 form", s)
}

// viaJSON is from converted to T through JSON (see sameJSON).
func viaJSON[T any](from any) (T, error) {
	var to T
	err := sameJSON([2]any{from, &to})
	return to, err
}

// v03ReadCard reads a v0.3 card, and the v1.0 fields of FormV03 where
// they are there: they say what the v0.3 fields cannot (the v1.0
// interfaces, the extended card capability).
type v03ReadCard struct {
	a2av03.AgentCard
	SupportedInterfaces  []*a2a.AgentInterface `json:"supportedInterfaces"`
	SecurityRequirements []specRequirement     `json:"securityRequirements"`
	Capabilities         struct {
		a2av03.AgentCapabilities
		ExtendedAgentCard bool `json:"extendedAgentCard"`
	} `json:"capabilities"`
}

// parseV03 reads a v0.3 card (any, or FormV03) as a v1.0 card.
func parseV03(data []byte) (*a2a.AgentCard, error) {
	var rc v03ReadCard
	if err := json.Unmarshal(data, &rc); err != nil {
		return nil, err
	}
	v := &rc.AgentCard
	caps := rc.Capabilities.AgentCapabilities
	c := &a2a.AgentCard{
		Name: v.Name, Description: v.Description, Version: v.Version,
		DocumentationURL: v.DocumentationURL, IconURL: v.IconURL,
		DefaultInputModes: v.DefaultInputModes, DefaultOutputModes: v.DefaultOutputModes,
		Capabilities: a2a.AgentCapabilities{
			Streaming: caps.Streaming, PushNotifications: caps.PushNotifications,
			ExtendedAgentCard: rc.Capabilities.ExtendedAgentCard || v.SupportsAuthenticatedExtendedCard,
		},
		SupportedInterfaces:  rc.SupportedInterfaces,
		SecurityRequirements: fromSpecRequirements(rc.SecurityRequirements),
	}
	if len(c.SupportedInterfaces) == 0 {
		version := a2a.ProtocolVersion(cmp.Or(v.ProtocolVersion, ProtocolVersionV03))
		if v.URL != "" {
			c.SupportedInterfaces = append(c.SupportedInterfaces, &a2a.AgentInterface{URL: v.URL, ProtocolBinding: a2a.TransportProtocol(cmp.Or(string(v.PreferredTransport), ProtocolBinding)), ProtocolVersion: version})
		}
		for _, in := range v.AdditionalInterfaces {
			if in.URL != v.URL || in.Transport != v.PreferredTransport {
				c.SupportedInterfaces = append(c.SupportedInterfaces, &a2a.AgentInterface{URL: in.URL, ProtocolBinding: a2a.TransportProtocol(in.Transport), ProtocolVersion: version})
			}
		}
	}
	if len(c.SecurityRequirements) == 0 {
		c.SecurityRequirements = securityFromV03(v.Security)
	}
	if err := sameJSON([2]any{v.Provider, &c.Provider}, [2]any{caps.Extensions, &c.Capabilities.Extensions},
		[2]any{v.Skills, &c.Skills}, [2]any{v.Signatures, &c.Signatures}); err != nil {
		return nil, err
	}
	for i, s := range v.Skills {
		c.Skills[i].SecurityRequirements = securityFromV03(s.Security)
	}
	schemes, err := convertSchemes[a2av03.SecuritySchemeName, a2a.SecuritySchemeName](v.SecuritySchemes, schemeFromV03)
	if err != nil {
		return nil, err
	}
	c.SecuritySchemes = schemes
	return c, nil
}
