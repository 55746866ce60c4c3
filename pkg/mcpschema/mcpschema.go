// Package mcpschema registers typed MCP tools with schemas every client reads.
package mcpschema

import (
	"encoding/json"
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
//
// The schemas are given to the SDK as their JSON, encoded once here: the
// SDK reads them (for tools/list, and for the parameter headers of every
// 2026-07-28 tools/call) by marshaling whatever the tool holds, and a
// *jsonschema.Schema is marshaled field by field through reflection, on
// every call. It still validates inputs and results against them, having
// decoded them once, when the tool is added.
func AddTool[In, Out any](srv *mcp.Server, t *mcp.Tool, h mcp.ToolHandlerFor[In, Out]) {
	t.InputSchema = encoded(For[In]())
	t.OutputSchema = encoded(For[Out]())
	mcp.AddTool(srv, t, h)
}

// encoded is s as JSON. s is one of the tools' own inferred schemas, so a
// failure is a programming error caught by every test that builds a server.
func encoded(s *jsonschema.Schema) json.RawMessage {
	data, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("mcpschema: encoding a schema: %v", err))
	}
	return data
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
