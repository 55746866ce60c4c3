package agentcard

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// The A2A v1.0 card as the spec writes it (the ProtoJSON of its types),
// for Marshal and Parse: a2a-go's own types with their JSON wherever it is
// the spec's, and these views where it is not. The fields are in the
// spec's order (its field numbers, which ProtoJSON follows).

type specCard struct {
	Name                 string                         `json:"name"`
	Description          string                         `json:"description"`
	SupportedInterfaces  []*a2a.AgentInterface          `json:"supportedInterfaces,omitempty"`
	Provider             *specProvider                  `json:"provider,omitempty"`
	Version              string                         `json:"version"`
	DocumentationURL     string                         `json:"documentationUrl,omitempty"`
	Capabilities         specCapabilities               `json:"capabilities"`
	SecuritySchemes      map[a2a.SecuritySchemeName]any `json:"securitySchemes,omitempty"`
	SecurityRequirements []specRequirement              `json:"securityRequirements,omitempty"`
	DefaultInputModes    []string                       `json:"defaultInputModes,omitempty"`
	DefaultOutputModes   []string                       `json:"defaultOutputModes,omitempty"`
	Skills               []specSkill                    `json:"skills,omitempty"`
	Signatures           []specSignature                `json:"signatures,omitempty"`
	IconURL              string                         `json:"iconUrl,omitempty"`
}

type specProvider struct {
	URL          string `json:"url"`
	Organization string `json:"organization"`
}

// specCapabilities says every capability, false ones too: a2a-go leaves a
// false one out, and a client reads a missing one as "maybe".
type specCapabilities struct {
	Streaming         bool            `json:"streaming"`
	PushNotifications bool            `json:"pushNotifications"`
	Extensions        []specExtension `json:"extensions,omitempty"`
	ExtendedAgentCard bool            `json:"extendedAgentCard"`
}

type specExtension struct {
	URI         string         `json:"uri,omitempty"`
	Description string         `json:"description,omitempty"`
	Required    bool           `json:"required,omitempty"`
	Params      map[string]any `json:"params,omitempty"`
}

type specSkill struct {
	ID                   string            `json:"id"`
	Name                 string            `json:"name"`
	Description          string            `json:"description"`
	Tags                 []string          `json:"tags,omitempty"`
	Examples             []string          `json:"examples,omitempty"`
	InputModes           []string          `json:"inputModes,omitempty"`
	OutputModes          []string          `json:"outputModes,omitempty"`
	SecurityRequirements []specRequirement `json:"securityRequirements,omitempty"`
}

type specSignature struct {
	Protected string         `json:"protected"`
	Signature string         `json:"signature"`
	Header    map[string]any `json:"header,omitempty"`
}

type specHTTPAuth struct {
	Description  string `json:"description,omitempty"`
	Scheme       string `json:"scheme"`
	BearerFormat string `json:"bearerFormat,omitempty"`
}

// specRequirement is a security requirement as the spec writes it, each
// scheme's scopes wrapped in {"list":[...]}, where a2a-go writes and reads
// a bare array.
type specRequirement struct {
	Schemes map[a2a.SecuritySchemeName]specScopes `json:"schemes"`
}

// specScopes is a StringList: {"list":[...]}, always written with its
// list, [] for none, so that a client reading .list without protobuf gets
// an array. It reads the spec's forms, {"list":[...]} and {} (ProtoJSON
// leaves an empty list out), and a2a-go's bare array.
type specScopes []string

func (s specScopes) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		List []string `json:"list"`
	}{append([]string{}, s...)})
}

func (s *specScopes) UnmarshalJSON(b []byte) error {
	if b = bytes.TrimSpace(b); len(b) > 0 && b[0] == '[' {
		return json.Unmarshal(b, (*[]string)(s))
	}
	var l struct {
		List []string `json:"list"`
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return err
	}
	*s = l.List
	return nil
}

func toSpecRequirements(reqs a2a.SecurityRequirementsOptions) []specRequirement {
	var out []specRequirement
	for _, r := range reqs {
		sr := specRequirement{Schemes: map[a2a.SecuritySchemeName]specScopes{}}
		for name, scopes := range r {
			sr.Schemes[name] = specScopes(scopes)
		}
		out = append(out, sr)
	}
	return out
}

func fromSpecRequirements(reqs []specRequirement) a2a.SecurityRequirementsOptions {
	var out a2a.SecurityRequirementsOptions
	for _, r := range reqs {
		ar := a2a.SecurityRequirements{}
		for name, scopes := range r.Schemes {
			ar[name] = a2a.SecuritySchemeScopes(scopes)
		}
		out = append(out, ar)
	}
	return out
}

// toSpecCard is c in the spec's JSON form. Its security schemes are
// a2a-go's JSON, the spec's but for the order of an HTTP scheme's fields.
func toSpecCard(c *a2a.AgentCard) (*specCard, error) {
	sc := &specCard{
		Name: c.Name, Description: c.Description, SupportedInterfaces: c.SupportedInterfaces,
		Version: c.Version, DocumentationURL: c.DocumentationURL,
		Capabilities: specCapabilities{
			Streaming: c.Capabilities.Streaming, PushNotifications: c.Capabilities.PushNotifications,
			ExtendedAgentCard: c.Capabilities.ExtendedAgentCard,
		},
		SecurityRequirements: toSpecRequirements(c.SecurityRequirements),
		DefaultInputModes:    c.DefaultInputModes, DefaultOutputModes: c.DefaultOutputModes,
		IconURL: c.IconURL,
	}
	if p := c.Provider; p != nil {
		sc.Provider = &specProvider{URL: p.URL, Organization: p.Org}
	}
	for _, e := range c.Capabilities.Extensions {
		sc.Capabilities.Extensions = append(sc.Capabilities.Extensions, specExtension{e.URI, e.Description, e.Required, e.Params})
	}
	if len(c.SecuritySchemes) > 0 {
		sc.SecuritySchemes = map[a2a.SecuritySchemeName]any{}
	}
	for name, scheme := range c.SecuritySchemes {
		if h, ok := scheme.(a2a.HTTPAuthSecurityScheme); ok {
			sc.SecuritySchemes[name] = map[string]specHTTPAuth{"httpAuthSecurityScheme": {h.Description, h.Scheme, h.BearerFormat}}
			continue
		}
		b, err := json.Marshal(a2a.NamedSecuritySchemes{name: scheme})
		if err != nil {
			return nil, fmt.Errorf("marshaling agent card: %w", err)
		}
		var one map[a2a.SecuritySchemeName]json.RawMessage
		if err := json.Unmarshal(b, &one); err != nil {
			return nil, fmt.Errorf("marshaling agent card: %w", err)
		}
		sc.SecuritySchemes[name] = one[name]
	}
	for _, s := range c.Skills {
		sc.Skills = append(sc.Skills, specSkill{
			ID: s.ID, Name: s.Name, Description: s.Description, Tags: s.Tags, Examples: s.Examples,
			InputModes: s.InputModes, OutputModes: s.OutputModes,
			SecurityRequirements: toSpecRequirements(s.SecurityRequirements),
		})
	}
	for _, s := range c.Signatures {
		sc.Signatures = append(sc.Signatures, specSignature{Protected: s.Protected, Signature: s.Signature, Header: s.Header})
	}
	return sc, nil
}

// specReadCard reads a v1.0 card: a2a-go's card type, with the security
// requirements (the card's and its skills') read in the spec's form.
type specReadCard struct {
	a2a.AgentCard
	SecurityRequirements []specRequirement `json:"securityRequirements"`
	Skills               []struct {
		a2a.AgentSkill
		SecurityRequirements []specRequirement `json:"securityRequirements"`
	} `json:"skills"`
}

// parseV1 reads data as a v1.0 card (see specReadCard). A card that is not
// such JSON is an error; so is one without a field the spec requires.
func parseV1(data []byte) (*a2a.AgentCard, error) {
	var rc specReadCard
	if err := json.Unmarshal(data, &rc); err != nil {
		return nil, err
	}
	card := rc.AgentCard
	card.SecurityRequirements = fromSpecRequirements(rc.SecurityRequirements)
	card.Skills = nil
	for _, s := range rc.Skills {
		s.AgentSkill.SecurityRequirements = fromSpecRequirements(s.SecurityRequirements)
		card.Skills = append(card.Skills, s.AgentSkill)
	}
	return &card, nil
}
