package inputschema

import (
	"strconv"
	"strings"
)

// The keywords whose values hold subschemas, by the shape of the value, in
// draft 2020-12 and draft-07 (additionalItems, definitions, and items as a
// list). Check walks them to give each problem its place.
var (
	oneSchema = set("additionalProperties", "propertyNames", "items", "contains", "not", "if", "then", "else",
		"unevaluatedItems", "unevaluatedProperties", "additionalItems", "contentSchema")
	schemaMap  = set("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
	schemaList = set("allOf", "anyOf", "oneOf", "prefixItems", "items")
)

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// subschemas returns the subschemas in v, the value of keyword kw, by the
// pointer segments that lead to them from the keyword ("" for the value
// itself, "/name" in a map, "/0" in a list), and v's shape: v with each
// subschema replaced by true, to validate the keyword without them. A value
// of another shape than kw's (a list for properties) has no subschemas,
// and its shape is itself.
func subschemas(kw string, v any) (children map[string]any, shape any) {
	switch v := v.(type) {
	case map[string]any:
		if oneSchema[kw] {
			return map[string]any{"": v}, true
		}
		if schemaMap[kw] {
			children = make(map[string]any, len(v))
			trues := make(map[string]any, len(v))
			for k, s := range v {
				children["/"+escape(k)] = s
				trues[k] = true
			}
			return children, trues
		}
	case []any:
		if schemaList[kw] {
			children = make(map[string]any, len(v))
			trues := make([]any, len(v))
			for i, s := range v {
				children["/"+strconv.Itoa(i)] = s
				trues[i] = true
			}
			return children, trues
		}
	}
	return nil, v
}

// escape escapes a JSON pointer segment (RFC 6901).
func escape(seg string) string {
	return strings.ReplaceAll(strings.ReplaceAll(seg, "~", "~0"), "/", "~1")
}

// lookup returns the value at pointer (RFC 6901) in doc.
func lookup(doc any, pointer string) (any, bool) {
	if pointer == "" {
		return doc, true
	}
	if !strings.HasPrefix(pointer, "/") {
		return nil, false
	}
	v := doc
	for _, seg := range strings.Split(pointer[1:], "/") {
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		switch node := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = node[seg]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(node) {
				return nil, false
			}
			v = node[i]
		default:
			return nil, false
		}
	}
	return v, true
}
