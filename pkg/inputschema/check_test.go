package inputschema

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// doc decodes a schema written as JSON.
func doc(t testing.TB, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return m
}

const typeNames = "[array boolean integer null number object string]"

// TestCheckBadSchemas: each schema gets exactly its problems, with the
// pointer to each.
func TestCheckBadSchemas(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, schema string
		want         []string
	}{
		{"unknown type name", `{"type":"strin"}`, []string{
			"at '/type': enum: strin does not equal any of: " + typeNames,
			`at '/type': type: strin has type "string", want "array"`,
		}},
		{"unknown type in a list", `{"type":["string","nope"]}`, []string{
			"at '/type': enum: [string nope] does not equal any of: " + typeNames,
			"at '/type': enum: nope does not equal any of: " + typeNames,
		}},
		{"type not a string", `{"type":5}`, []string{
			"at '/type': enum: 5 does not equal any of: " + typeNames,
			`at '/type': type: 5 has type "integer", want "array"`,
		}},
		{"required not a list", `{"required":"a"}`, []string{`at '/required': type: a has type "string", want "array"`}},
		{"negative minLength", `{"minLength":-1}`, []string{"at '/minLength': minimum: -1 is less than 0"}},
		{"fractional maxItems", `{"maxItems":1.5}`, []string{`at '/maxItems': type: 1.5 has type "number", want "integer"`}},
		{"enum not a list", `{"enum":5}`, []string{`at '/enum': type: 5 has type "integer", want "array"`}},
		{"empty anyOf", `{"anyOf":[]}`, []string{"at '/anyOf': minItems: array length 0 is less than 1"}},
		{"a property not a schema", `{"properties":{"a":5}}`, []string{
			`at '/properties/a': type: 5 has type "integer", want one of "object, boolean"`,
		}},
		{"every problem, deep down", `{"properties":{"a":{"properties":{"b":{"type":"nope","minimum":"x"}}}},"additionalProperties":{"maxLength":"3"}}`, []string{
			`at '/additionalProperties/maxLength': type: 3 has type "string", want "integer"`,
			`at '/properties/a/properties/b/minimum': type: x has type "string", want "number"`,
			"at '/properties/a/properties/b/type': enum: nope does not equal any of: " + typeNames,
			`at '/properties/a/properties/b/type': type: nope has type "string", want "array"`,
		}},
		{"in $defs and items", `{"$defs":{"a/b":{"type":"x"}},"items":{"minItems":-2}}`, []string{
			"at '/$defs/a~1b/type': enum: x does not equal any of: " + typeNames,
			`at '/$defs/a~1b/type': type: x has type "string", want "array"`,
			"at '/items/minItems': minimum: -2 is less than 0",
		}},
		{"items as a list is draft-07", `{"items":[{"type":"string"}]}`, []string{
			`at '/items': type: [true] has type "array", want one of "object, boolean"`,
		}},
		{"bad pattern", `{"properties":{"city":{"pattern":"("}}}`, []string{
			"at '/properties/city/pattern': error parsing regexp: missing closing ): `(`",
		}},
		{"bad patternProperties", `{"patternProperties":{"a(":{},"[":{}}}`, []string{
			"at '/patternProperties/[': error parsing regexp: missing closing ]: `[`",
			"at '/patternProperties/a(': error parsing regexp: missing closing ): `a(`",
		}},
		{"look-ahead is not RE2", `{"pattern":"a(?=b)"}`, []string{
			"at '/pattern': error parsing regexp: invalid or unsupported Perl syntax: `(?=`",
		}},
		{"$ref to nothing", `{"$ref":"#/nope"}`, []string{`at '/$ref': "#/nope" points to nothing in the schema`}},
		{"$ref to a missing $defs", `{"properties":{"a":{"$ref":"#/$defs/b"}},"$defs":{"c":{}}}`, []string{
			`at '/properties/a/$ref': "#/$defs/b" points to nothing in the schema`,
		}},
		{"remote $ref", `{"$ref":"https://example.com/schema.json"}`, []string{
			`at '/$ref': "https://example.com/schema.json" is outside the schema: a $ref must point within it, such as #/$defs/name`,
		}},
		{"file $ref", `{"properties":{"a":{"$ref":"file:///etc/passwd"}}}`, []string{
			`at '/properties/a/$ref': "file:///etc/passwd" is outside the schema: a $ref must point within it, such as #/$defs/name`,
		}},
		{"relative $ref", `{"$ref":"other.json#/a"}`, []string{
			`at '/$ref': "other.json#/a" is outside the schema: a $ref must point within it, such as #/$defs/name`,
		}},
		// With an $id, the library resolves refs itself: right, but with no
		// pointer.
		{"remote $ref under an $id", `{"$id":"https://x.example/s","$ref":"other.json"}`, []string{
			"outside the schema: a $ref must point within it, such as #/$defs/name",
		}},
		{"missing anchor", `{"$ref":"#foo"}`, []string{`no anchor "foo" in <anonymous schema>`}},
		{"draft-04", `{"$schema":"http://json-schema.org/draft-04/schema#","type":"string"}`, []string{
			`unsupported $schema "http://json-schema.org/draft-04/schema#"; use https://json-schema.org/draft/2020-12/schema`,
		}},
		{"2019-09", `{"$schema":"https://json-schema.org/draft/2019-09/schema"}`, []string{
			`unsupported $schema "https://json-schema.org/draft/2019-09/schema"; use https://json-schema.org/draft/2020-12/schema`,
		}},
		{"2020-12 spelt with a #", `{"$schema":"https://json-schema.org/draft/2020-12/schema#"}`, []string{
			`unsupported $schema "https://json-schema.org/draft/2020-12/schema#"; use https://json-schema.org/draft/2020-12/schema`,
		}},
		{"$schema not a string", `{"$schema":5}`, []string{`unsupported $schema 5; use https://json-schema.org/draft/2020-12/schema`}},
		{"draft-07 checked as draft-07", `{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"a":{"type":"x"}},"additionalItems":5}`, []string{
			`at '/additionalItems': type: 5 has type "integer", want one of "object, boolean"`,
			"at '/definitions/a/type': enum: x does not equal any of: " + typeNames,
			`at '/definitions/a/type': type: x has type "string", want "array"`,
		}},
		{"out of the library's range", `{"minLength":3000000000}`, []string{"integer is out of range"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Check(doc(t, tc.schema)); !slices.Equal(got, tc.want) {
				t.Errorf("Check(%s) =\n  %s\nwant\n  %s", tc.schema, strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
		})
	}
}

// TestCheckNotJSON: what YAML decodes but JSON cannot hold is one problem.
func TestCheckNotJSON(t *testing.T) {
	t.Parallel()
	for _, schema := range []map[string]any{
		{"enum": []any{map[any]any{1: "one"}}},
		{"type": "string", "minLength": func() {}},
	} {
		got := Check(schema)
		if len(got) != 1 || !strings.HasPrefix(got[0], "not JSON: json: unsupported") {
			t.Errorf("Check(%v) = %q, want one not-JSON problem", schema, got)
		}
	}
}

// TestCheckGoodSchemas: schemas as templates write them pass.
func TestCheckGoodSchemas(t *testing.T) {
	t.Parallel()
	for _, schema := range []string{
		`{}`,
		`{"type":"object","properties":{"city":{"type":"string","minLength":1,"pattern":"^[A-Z]"}},"required":["city"],"additionalProperties":false}`,
		`{"type":"object","properties":{"address":{"type":"object","properties":{"zip":{"type":"string","pattern":"^\\d{5}$"}},"required":["zip"]}}}`,
		`{"type":"array","items":{"type":"integer","minimum":0},"minItems":1,"uniqueItems":true}`,
		`{"prefixItems":[{"type":"string"},{"type":"number"}],"items":false}`,
		`{"$defs":{"point":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}}}},"type":"array","items":{"$ref":"#/$defs/point"}}`,
		`{"$defs":{"a/b":{"type":"string"}},"$ref":"#/$defs/a~1b"}`,
		`{"$ref":"#"}`,
		`{"$defs":{"s":{"$anchor":"street","type":"string"}},"properties":{"street":{"$ref":"#street"}}}`,
		`{"$id":"https://example.com/input","$defs":{"n":{"type":"number"}},"properties":{"n":{"$ref":"#/$defs/n"}}}`,
		`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":["string","null"],"enum":["a","b",null]}`,
		`{"anyOf":[{"type":"string"},{"type":"integer"}],"not":{"const":""},"if":{"type":"string"},"then":{"minLength":1},"else":true}`,
		`{"patternProperties":{"^x-":{"type":"string"}},"propertyNames":{"maxLength":20},"dependentRequired":{"a":["b"]}}`,
		`{"type":"string","format":"email","title":"Mail","description":"Who","default":"a@b.c","examples":["x@y.z"],"x-custom":{"any":"thing"}}`,
	} {
		if got := Check(doc(t, schema)); got != nil {
			t.Errorf("Check(%s) = %q, want no problem", schema, got)
		}
	}
}

// TestCheckDraft07: a schema that names draft-07 is checked and validated
// as draft-07, in either spelling of its URI; its forms are draft 2020-12
// problems without it.
func TestCheckDraft07(t *testing.T) {
	t.Parallel()
	const body = `"definitions":{"n":{"type":"number"}},"items":[{"type":"string"},{"$ref":"#/definitions/n"}],"additionalItems":false`
	for _, id := range []string{draft07, draft07Secure} {
		schema := doc(t, `{"$schema":"`+id+`",`+body+`}`)
		if got := Check(schema); got != nil {
			t.Fatalf("%s: Check = %q, want no problem", id, got)
		}
		s, err := Compile(schema)
		if err != nil {
			t.Fatalf("%s: Compile: %v", id, err)
		}
		if got := s.Validate([]any{"a", 1.5}); got != nil {
			t.Errorf("%s: valid tuple: %q", id, got)
		}
		for _, bad := range []any{[]any{"a", "b"}, []any{"a", 1, 2}} {
			if got := s.Validate(bad); len(got) != 1 {
				t.Errorf("%s: Validate(%v) = %q, want one problem", id, bad, got)
			}
		}
	}
	want := []string{`at '/items': type: [true true] has type "array", want one of "object, boolean"`}
	if got := Check(doc(t, `{`+body+`}`)); !slices.Equal(got, want) {
		t.Errorf("as 2020-12: %q, want %q", got, want)
	}
}
