package inputschema

import (
	"slices"
	"strings"
	"testing"
)

// TestValidate: values valid and invalid against a compiled schema, with
// the problem each gets.
func TestValidate(t *testing.T) {
	t.Parallel()
	s, err := Compile(doc(t, `{
		"type": "object",
		"properties": {
			"seconds": {"type": "integer", "minimum": 1, "maximum": 20},
			"city": {"type": "string", "minLength": 2, "pattern": "^[A-Z]"},
			"ratio": {"type": "number", "exclusiveMaximum": 0.5},
			"stops": {"type": "array", "items": {"$ref": "#/$defs/stop"}}
		},
		"required": ["city"],
		"additionalProperties": false,
		"$defs": {"stop": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []any{
		map[string]any{"city": "Paris"},
		map[string]any{"city": "Oslo", "seconds": 20, "ratio": 0.25, "stops": []any{map[string]any{"name": "a"}}},
		map[string]any{"city": "Rome", "seconds": 3.0}, // 3.0 is an integer in JSON
		map[string]any{"city": "Nice", "stops": []string{}},
	} {
		if got := s.Validate(v); got != nil {
			t.Errorf("Validate(%v) = %q, want valid", v, got)
		}
	}
	for _, tc := range []struct {
		value any
		want  string
	}{
		{map[string]any{"city": "Paris", "seconds": 100}, "at schema '/properties/seconds': maximum: 100 is greater than 20"},
		{map[string]any{"city": "Paris", "seconds": 0}, "at schema '/properties/seconds': minimum: 0 is less than 1"},
		{map[string]any{"city": "Paris", "seconds": 1.5}, `at schema '/properties/seconds': type: 1.5 has type "number", want "integer"`},
		{map[string]any{"city": "Paris", "ratio": 0.5}, "at schema '/properties/ratio': exclusiveMaximum: 0.5 is greater than or equal to 0.5"},
		{map[string]any{"city": "paris"}, `at schema '/properties/city': pattern: "paris" does not match regular expression "^[A-Z]"`},
		{map[string]any{"city": "P"}, `at schema '/properties/city': minLength: "P" contains 1 Unicode code points, fewer than 2`},
		{map[string]any{"seconds": 5}, `required: missing properties: ["city"]`},
		{map[string]any{"city": "Paris", "minutes": 1}, `unexpected additional properties ["minutes"]`},
		{map[string]any{"city": "Paris", "stops": []any{map[string]any{}}}, `at schema '/$defs/stop': required: missing properties: ["name"]`},
		{"Paris", `type: Paris has type "string", want "object"`},
		{nil, `type: null has type "null", want "object"`},
		{map[string]any{"city": func() {}}, "not JSON: json: unsupported type: func()"},
	} {
		if got := s.Validate(tc.value); !slices.Equal(got, []string{tc.want}) {
			t.Errorf("Validate(%#v) = %q, want %q", tc.value, got, tc.want)
		}
	}
}

// TestCompile: Compile refuses what cannot be validated, and nothing it
// refuses reads a file or fetches a URL.
func TestCompile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		schema map[string]any
		want   string
	}{
		{doc(t, `{"$ref":"https://example.com/schema.json"}`), "loading https://example.com/schema.json: outside the schema"},
		{doc(t, `{"$ref":"#/nope"}`), `JSON Pointer "/nope"`},
		{doc(t, `{"pattern":"("}`), "pattern: error parsing regexp"},
		{doc(t, `{"type":5}`), `invalid value for "type"`},
		{doc(t, `{"$schema":"http://json-schema.org/draft-04/schema#"}`), "unsupported $schema"},
		{map[string]any{"enum": []any{map[any]any{1: "one"}}}, "not JSON"},
	} {
		if _, err := Compile(tc.schema); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Compile(%v) = %v, want an error with %q", tc.schema, err, tc.want)
		}
	}
	// What only the meta-schema catches compiles: Check is the gate.
	s, err := Compile(doc(t, `{"type":"strin"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Validate("x"); !slices.Equal(got, []string{`type: x has type "string", want "strin"`}) {
		t.Errorf("against an unknown type: %q", got)
	}
}
