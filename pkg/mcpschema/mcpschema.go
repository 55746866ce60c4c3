// Package mcpschema registers typed MCP tools with schemas every client reads.
package mcpschema

import (
	"fmt"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// AddTool registers a typed tool as mcp.AddTool does, with its input and
// output schemas inferred from In and Out, less the "null" that inference
// adds to the type of every pointer, slice and map: `"type": ["null",
// "string"]` is valid JSON Schema, but clients that read tool schemas
// through an OpenAPI-like subset (the MCP inspector's --strict, several
// model APIs) reject a list of types. An optional field is marked by being
// left out of "required" (omitempty, omitzero), and the tools never write
// null, so the single type says all there is.
func AddTool[In, Out any](srv *mcp.Server, t *mcp.Tool, h mcp.ToolHandlerFor[In, Out]) {
	t.InputSchema = For[In]()
	t.OutputSchema = For[Out]()
	mcp.AddTool(srv, t, h)
}

// For is T's inferred schema with single types. T is one of the
// tools' own argument or result types, so a failure is a programming error
// caught by every test that builds the server.
func For[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("mcpschema: schema of %T: %v", *new(T), err))
	}
	singleTypes(s)
	return s
}

func singleTypes(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if types := slices.DeleteFunc(slices.Clone(s.Types), func(t string) bool { return t == "null" }); len(types) == 1 {
		s.Type, s.Types = types[0], nil
	}
	singleTypes(s.Items)
	singleTypes(s.AdditionalProperties)
	for _, m := range []map[string]*jsonschema.Schema{s.Properties, s.PatternProperties, s.Defs} {
		for _, c := range m {
			singleTypes(c)
		}
	}
	for _, l := range [][]*jsonschema.Schema{s.PrefixItems, s.AllOf, s.AnyOf, s.OneOf} {
		for _, c := range l {
			singleTypes(c)
		}
	}
}
