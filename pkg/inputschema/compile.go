package inputschema

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"

	"github.com/google/jsonschema-go/jsonschema"
)

// Schema is a compiled input schema, ready to validate values.
type Schema struct{ resolved *jsonschema.Resolved }

// Compile prepares schema to validate values. It checks less than Check
// (not the meta-schema: a misspelt type name compiles, and then no value
// is valid against it), so that running a playbook never loads the
// meta-schemas; the schemas it compiles are ones Check passed when their
// template was registered.
func Compile(schema map[string]any) (*Schema, error) {
	data, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if _, err := draft(schema); err != nil {
		return nil, err
	}
	r, err := resolve(data)
	if err != nil {
		return nil, err
	}
	return &Schema{r}, nil
}

// resolve unmarshals a schema given as JSON and resolves its references,
// none of which may reach outside it.
func resolve(data []byte) (*jsonschema.Resolved, error) {
	s := new(jsonschema.Schema)
	if err := json.Unmarshal(data, s); err != nil {
		return nil, err
	}
	return s.Resolve(&jsonschema.ResolveOptions{Loader: refuse})
}

// errOutside is what a $ref to another document gets.
var errOutside = errors.New("outside the schema: a $ref must point within it, such as #/$defs/name")

// refuse is the Loader of every input schema: the library's default would
// also refuse, but says only that no loader was passed.
func refuse(*url.URL) (*jsonschema.Schema, error) { return nil, errOutside }

// Validate returns every problem of value against s, as leaf messages (the
// library stops at the first, so there is usually one). value is a JSON
// value; it goes through encoding/json first, so that what is validated is
// what will be sent.
func (s *Schema) Validate(value any) []string {
	data, err := json.Marshal(value)
	if err != nil {
		return []string{"not JSON: " + err.Error()}
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return []string{"not JSON: " + err.Error()}
	}
	err = s.resolved.Validate(v)
	if err == nil {
		return nil
	}
	// The library knows where in the schema it failed, not where in the
	// value: "at schema '/properties/seconds'" is the property's schema.
	msgs, where := leaves(err)
	if where != "" {
		for i, m := range msgs {
			msgs[i] = "at schema '" + where + "': " + m
		}
	}
	return msgs
}
