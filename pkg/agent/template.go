// Package agent is the agent registry: the template an agent's author writes
// (template.yaml: who the agent is, where its A2A endpoint lives, what it can
// do) and the records that registering it leaves in the table.
//
// A template is data from outside, imported by an operator today and maybe
// uploaded over HTTP tomorrow, so Parse is strict (an unknown field is an
// error, not a silently ignored typo) and Validate bounds every size, so that
// no template can outgrow a DynamoDB item.
package agent

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"gopkg.in/yaml.v3"
)

// Template is an agent's own template.yaml. Its JSON form, with the same
// field names, is what the registry stores.
type Template struct {
	// Name identifies the agent: a slug, since it is a URL path segment and
	// part of the agent's key in the table.
	Name        string `yaml:"name" json:"name"`
	Description string `yaml:"description" json:"description"`
	// Version is the agent's semantic version, like 1.2.3.
	Version string `yaml:"version" json:"version"`
	// Endpoint is the absolute http(s) URL of the agent's A2A JSON-RPC
	// endpoint, where the front door forwards calls.
	Endpoint         string    `yaml:"endpoint" json:"endpoint"`
	Provider         *Provider `yaml:"provider,omitempty" json:"provider,omitempty"`
	DocumentationURL string    `yaml:"documentation_url,omitempty" json:"documentation_url,omitempty"`
	IconURL          string    `yaml:"icon_url,omitempty" json:"icon_url,omitempty"`
	Tags             []string  `yaml:"tags,omitempty" json:"tags,omitempty"`
	// PublicCard opts the agent into the unauthenticated public card route.
	PublicCard   bool         `yaml:"public_card,omitempty" json:"public_card,omitempty"`
	Capabilities []Capability `yaml:"capabilities" json:"capabilities"`
	Playbooks    []Playbook   `yaml:"playbooks,omitempty" json:"playbooks,omitempty"`
}

// Provider is the organization that runs the agent.
type Provider struct {
	Organization string `yaml:"organization" json:"organization"`
	URL          string `yaml:"url,omitempty" json:"url,omitempty"`
}

// Capability is something the agent can do; it becomes a skill of the agent
// card, whose id is the Slug of the capability's name.
type Capability struct {
	Name        string   `yaml:"name" json:"name"`
	Description string   `yaml:"description" json:"description"`
	UseCases    []string `yaml:"use_cases" json:"use_cases"`
}

// Playbook is a named procedure the agent runs on request.
type Playbook struct {
	// Name is a slug, unique within the agent: callers name the playbook
	// to run by it.
	Name          string `yaml:"name" json:"name"`
	Description   string `yaml:"description" json:"description"`
	UserInvocable bool   `yaml:"user_invocable,omitempty" json:"user_invocable,omitempty"`
	Automation    bool   `yaml:"automation,omitempty" json:"automation,omitempty"`
	// InputSchema, if set, is the JSON Schema of the playbook's input.
	InputSchema map[string]any `yaml:"input_schema,omitempty" json:"input_schema,omitempty"`
}

// Size bounds. MaxTemplateSize applies both to the YAML that Parse reads and
// to the JSON that the registry stores, which keeps an agent's record well
// under DynamoDB's 400 KB item limit whatever the template holds.
const (
	MaxTemplateSize = 256 << 10
	MaxListLen      = 100  // capabilities, playbooks, tags, use cases of a capability
	MaxStringLen    = 2048 // bytes, of every string but the input schemas
)

// Parse decodes a template from YAML, strictly: one document, no unknown
// or duplicate fields. Its problems are a *ValidationError, each with the
// line where YAML found it. Parse does not Validate the template:
// Registry.Import does, and a caller that only checks calls Validate.
func Parse(data []byte) (*Template, error) {
	if len(data) > MaxTemplateSize {
		return nil, invalid(Problem{Message: fmt.Sprintf("larger than %d bytes", MaxTemplateSize)})
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var t Template
	if err := dec.Decode(&t); errors.Is(err, io.EOF) {
		return nil, invalid(Problem{Message: "empty template"})
	} else if err != nil {
		return nil, yamlError(err)
	}
	if err := dec.Decode(new(yaml.Node)); !errors.Is(err, io.EOF) {
		return nil, invalid(Problem{Message: "more than one YAML document"})
	}
	return &t, nil
}

// yamlError turns a YAML decoding error into problems, one per error YAML
// reports, with the line as the path: "line 7: field tgas not found in type
// agent.Template" becomes {line 7, field tgas not found in type agent.Template}.
func yamlError(err error) error {
	msgs := []string{strings.TrimPrefix(err.Error(), "yaml: ")}
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs = te.Errors
	}
	ps := make([]Problem, len(msgs))
	for i, m := range msgs {
		ps[i].Message = m
		if line, rest, ok := strings.Cut(m, ": "); ok && strings.HasPrefix(line, "line ") {
			ps[i] = Problem{Path: line, Message: rest}
		}
	}
	return invalid(ps...)
}

// Slug returns name as an identifier: lower-case ASCII letters and digits,
// every other run of characters one hyphen, none at either end. "Echo
// Text!" is "echo-text". A capability's slug is its skill id on the card.
func Slug(name string) string {
	words := strings.FieldsFunc(strings.ToLower(name), func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < '0' || r > '9')
	})
	return strings.Join(words, "-")
}
