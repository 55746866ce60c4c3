package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/pkg/agentgate"
)

// valid is a template with every field set, which passes Validate.
const valid = `
name: weather
description: Answers questions about the weather.
version: 1.2.3-beta.1+build.5
endpoint: https://agents.example.com/weather/a2a
provider:
  organization: Example Corp
  url: https://example.com
documentation_url: https://example.com/docs
icon_url: http://example.com/icon.png
tags: [weather, forecast]
public_card: true
capabilities:
  - name: Forecast
    description: Forecasts the weather.
    use_cases: [Plan a picnic]
  - name: Current conditions
    description: Reports the weather now.
    use_cases: [Decide on an umbrella, Dress for the day]
playbooks:
  - name: daily-briefing
    description: Sends the day's forecast.
    automation: true
    input_schema:
      type: object
      properties:
        city: {type: string, minLength: 1}
        days: {type: integer, minimum: 1, maximum: 7}
      required: [city]
  - name: alert
    description: Warns of storms.
    user_invocable: true
`

func mustParse(t *testing.T, src string) *Template {
	t.Helper()
	tmpl, err := Parse([]byte(src))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return tmpl
}

// problems returns the problems of err, failing unless err is a
// *ValidationError that is also an EINVALID error listing them all.
func problems(t *testing.T, err error) []string {
	t.Helper()
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error %v (%T) is not a *ValidationError", err, err)
	}
	if code := agentgate.ErrorCode(err); code != agentgate.EINVALID {
		t.Fatalf("code = %q, want %q", code, agentgate.EINVALID)
	}
	msg := agentgate.ErrorMessage(err)
	got := make([]string, len(ve.Problems))
	for i, p := range ve.Problems {
		got[i] = p.String()
		if !strings.Contains(msg, got[i]) {
			t.Errorf("message %q does not list problem %q", msg, got[i])
		}
	}
	return got
}

// wantProblems checks that err reports exactly the problems want, in order;
// a wanted problem may be a prefix of the reported one.
func wantProblems(t *testing.T, err error, want ...string) {
	t.Helper()
	got := problems(t, err)
	ok := len(got) == len(want)
	for i := 0; ok && i < len(want); i++ {
		ok = strings.HasPrefix(got[i], want[i])
	}
	if !ok {
		t.Fatalf("problems:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func TestValidateValid(t *testing.T) {
	tmpl := mustParse(t, valid)
	if err := tmpl.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if tmpl.Provider.Organization != "Example Corp" || !tmpl.PublicCard || tmpl.Playbooks[0].InputSchema["type"] != "object" ||
		len(tmpl.Capabilities[1].UseCases) != 2 || !tmpl.Playbooks[1].UserInvocable || !tmpl.Playbooks[0].Automation {
		t.Fatalf("Parse lost fields: %+v", tmpl)
	}
}

func TestValidateProblems(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Template)
		want []string
	}{
		{"five at once", func(t *Template) {
			t.Name = "Weather Bot"
			t.Description = ""
			t.Version = "1.2"
			t.Endpoint = "ftp://example.com/a2a"
			t.Capabilities[1].UseCases = nil
		}, []string{
			"name: must be 1 to 63 lower-case letters",
			"description: required",
			"version: must be a semantic version",
			"endpoint: must be an absolute http(s) URL",
			"capabilities[1].use_cases: required",
		}},
		{"empty template", func(t *Template) { *t = Template{} }, []string{
			"name: required", "description: required", "version: required", "endpoint: required", "capabilities: required",
		}},
		{"blank strings", func(t *Template) {
			t.Description = " \t"
			t.Tags = []string{"ok", ""}
			t.Capabilities[0].UseCases = []string{"  "}
			t.Playbooks[1].Description = "\n"
		}, []string{
			"description: required", "tags[1]: required", "capabilities[0].use_cases[0]: required", "playbooks[1].description: required",
		}},
		{"capability fields", func(t *Template) {
			t.Capabilities[0] = Capability{}
			t.Capabilities[1].Name = "日本語"
		}, []string{
			"capabilities[0].name: required", "capabilities[0].description: required", "capabilities[0].use_cases: required",
			"capabilities[1].name: must contain an ASCII letter or digit",
		}},
		{"duplicate capability slugs", func(t *Template) {
			t.Capabilities[0].Name = "Current Conditions!"
			t.Capabilities = append(t.Capabilities, Capability{Name: "current-conditions", Description: "d", UseCases: []string{"u"}})
		}, []string{
			`capabilities[1].name: slug "current-conditions" is already used by capabilities[0]`,
			`capabilities[2].name: slug "current-conditions" is already used by capabilities[0]`,
		}},
		{"playbook names", func(t *Template) {
			t.Playbooks[0].Name = "alert"
			t.Playbooks = append(t.Playbooks, Playbook{Name: "Daily Briefing", Description: "d"}, Playbook{Description: "d"})
		}, []string{
			`playbooks[1].name: name "alert" is already used by playbooks[0]`,
			"playbooks[2].name: must be 1 to 63 lower-case letters",
			"playbooks[3].name: required",
		}},
		{"input schema does not compile", func(t *Template) {
			t.Playbooks[0].InputSchema = map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"pattern": "("}}}
		}, []string{
			"playbooks[0].input_schema: does not compile: at '/properties/city/pattern': error parsing regexp: missing closing ): `(`",
		}},
		{"input schema reads no file", func(t *Template) {
			t.Playbooks[0].InputSchema = map[string]any{"$ref": "file:///etc/passwd"}
			t.Playbooks[1].InputSchema = map[string]any{"$ref": "https://example.com/schema.json"}
		}, []string{
			`playbooks[0].input_schema: does not compile: at '/$ref': "file:///etc/passwd" is outside the schema`,
			`playbooks[1].input_schema: does not compile: at '/$ref': "https://example.com/schema.json" is outside the schema`,
		}},
		{"input schema not JSON", func(t *Template) {
			t.Playbooks[0].InputSchema = map[string]any{"enum": []any{map[any]any{1: "one"}}}
		}, []string{"playbooks[0].input_schema: does not compile: not JSON"}},
		{"urls", func(t *Template) {
			t.Endpoint = "/a2a"
			t.Provider.URL = "example.com"
			t.DocumentationURL = "https://user:secret@example.com/docs"
			t.IconURL = "https://"
		}, []string{
			"endpoint: must be an absolute http(s) URL",
			"provider.url: must be an absolute http(s) URL",
			"documentation_url: must not contain credentials",
			"icon_url: must be an absolute http(s) URL",
		}},
		{"provider without organization", func(t *Template) { t.Provider.Organization = "" },
			[]string{"provider.organization: required"}},
		{"sizes", func(t *Template) {
			t.Description = strings.Repeat("d", MaxStringLen+1)
			t.Endpoint = "https://example.com/" + strings.Repeat("p", MaxStringLen)
			t.Tags = make([]string, MaxListLen+1)
			for i := range t.Tags {
				t.Tags[i] = "tag"
			}
		}, []string{
			"description: longer than 2048 bytes",
			"endpoint: longer than 2048 bytes",
			"tags: more than 100 entries",
		}},
		{"too large as JSON", func(t *Template) {
			// Every field is within bounds, but JSON writes '<' as \u003c.
			for i := len(t.Playbooks); i < MaxListLen; i++ {
				t.Playbooks = append(t.Playbooks, Playbook{Name: fmt.Sprintf("p%d", i), Description: strings.Repeat("<", MaxStringLen)})
			}
		}, []string{"larger than 262144 bytes as JSON"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmpl := mustParse(t, valid)
			tc.edit(tmpl)
			wantProblems(t, tmpl.Validate(), tc.want...)
		})
	}
}

func TestParseProblems(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"unknown fields with their lines", "name: x\ndescripton: typo\ncapabilities:\n  - name: a\n    usecases: [b]\n", []string{
			"line 2: field descripton not found",
			"line 5: field usecases not found",
		}},
		{"wrong type", "name: x\npublic_card: sure\n", []string{"line 2: cannot unmarshal !!str `sure` into bool"}},
		{"input schema not a mapping", "playbooks:\n  - name: p\n    input_schema: true\n", []string{"line 3: cannot unmarshal !!bool `true`"}},
		{"duplicate field", "name: x\nname: y\n", []string{`line 2: mapping key "name" already defined at line 1`}},
		{"syntax", "name: [x\n", []string{"line 1: did not find expected ',' or ']'"}},
		{"empty", "", []string{"empty template"}},
		{"comments only", "# nothing\n", []string{"empty template"}},
		{"two documents", "name: a\n---\nname: b\n", []string{"more than one YAML document"}},
		{"too large", "description: " + strings.Repeat("x", MaxTemplateSize), []string{"larger than 262144 bytes"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmpl, err := Parse([]byte(tc.src))
			if tmpl != nil {
				t.Errorf("Parse returned a template with its error")
			}
			wantProblems(t, err, tc.want...)
		})
	}
}

// Every example template is one an author could import as it is.
func TestExamplesValidate(t *testing.T) {
	files, err := filepath.Glob("../../examples/agents/*.yaml")
	if err != nil || len(files) < 2 {
		t.Fatalf("example templates: %v, %v", files, err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		tmpl, err := Parse(data)
		if err == nil {
			err = tmpl.Validate()
		}
		if err != nil {
			t.Errorf("%s: %v", file, err)
		}
	}
}

func TestSlug(t *testing.T) {
	for name, want := range map[string]string{
		"echo":                 "echo",
		"Echo Text":            "echo-text",
		"  --Word count!!  ":   "word-count",
		"HTTP/2 & gRPC":        "http-2-grpc",
		"café au lait":         "caf-au-lait",
		"v1.2.3":               "v1-2-3",
		"日本語":                  "",
		"already-a-slug-42":    "already-a-slug-42",
		"tabs\tand\nnewlines ": "tabs-and-newlines",
	} {
		if got := Slug(name); got != want {
			t.Errorf("Slug(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestIsSemver(t *testing.T) {
	for v, want := range map[string]bool{
		"1.2.3": true, "0.0.0": true, "1.2.3-rc.1": true, "1.2.3+build.7": true, "10.20.30-alpha+sha.1": true,
		"": false, "1": false, "1.2": false, "v1.2.3": false, "01.2.3": false, "1.2.3-": false, "1.2.3+": false, "1.2.3.4": false, " 1.2.3": false,
	} {
		if got := isSemver(v); got != want {
			t.Errorf("isSemver(%q) = %v, want %v", v, got, want)
		}
	}
}
