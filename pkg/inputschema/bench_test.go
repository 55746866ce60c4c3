package inputschema

import "testing"

// benchSchema is an input schema of the size templates give.
const benchSchema = `{
	"type": "object",
	"properties": {
		"city": {"type": "string", "minLength": 1, "pattern": "^[A-Z]"},
		"days": {"type": "integer", "minimum": 1, "maximum": 14},
		"units": {"enum": ["metric", "imperial"]},
		"stops": {"type": "array", "items": {"$ref": "#/$defs/stop"}}
	},
	"required": ["city"],
	"additionalProperties": false,
	"$defs": {"stop": {"type": "object", "properties": {"name": {"type": "string"}}}}
}`

// BenchmarkCheck: "first" is the first Check in a process, which resolves
// the draft 2020-12 meta-schema; "warm" is every later one.
func BenchmarkCheck(b *testing.B) {
	schema := doc(b, benchSchema)
	b.Run("first", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if p := check(schema, resolveMetaschema); p != nil {
				b.Fatal(p)
			}
		}
	})
	b.Run("warm", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if p := Check(schema); p != nil {
				b.Fatal(p)
			}
		}
	})
}

// BenchmarkValidate: what run_playbook does with a playbook's input.
func BenchmarkValidate(b *testing.B) {
	schema := doc(b, benchSchema)
	input := map[string]any{"city": "Paris", "days": 3, "stops": []any{map[string]any{"name": "Louvre"}}}
	b.ReportAllocs()
	for b.Loop() {
		s, err := Compile(schema)
		if err != nil {
			b.Fatal(err)
		}
		if p := s.Validate(input); p != nil {
			b.Fatal(p)
		}
	}
}
