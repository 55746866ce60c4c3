package inputschema

import (
	"encoding/json"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Check returns every problem of schema as a JSON Schema, a short message
// each, or nil when it has none. It checks, in order:
//   - that schema is JSON, and names a draft this package validates;
//   - the document against its draft's meta-schema (keyword types, type
//     names, non-negative lengths and the like), and its regular
//     expressions, in one walk;
//   - that each $ref points within it;
//   - then what google/jsonschema-go itself refuses when it resolves it.
//
// A later step runs only when the earlier ones found nothing, so that one
// mistake is reported once.
func Check(schema map[string]any) []string {
	return check(schema, func(id string) (*jsonschema.Resolved, error) { return metaschemas[id]() })
}

// check is Check with the meta-schema from metaschema.
func check(schema map[string]any, metaschema func(id string) (*jsonschema.Resolved, error)) []string {
	data, err := json.Marshal(schema)
	if err != nil { // YAML allows what JSON does not, such as .inf or a number as a key
		return []string{"not JSON: " + err.Error()}
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		return []string{"not JSON: " + err.Error()}
	}
	id, err := draft(doc)
	if err != nil {
		return []string{err.Error()}
	}
	meta, err := metaschema(id)
	if err != nil { // the embedded files are broken: no schema can be checked
		return []string{"cannot be checked: " + err.Error()}
	}
	c := checker{meta: meta, doc: doc}
	whole := c.meta.Validate(doc)
	c.node(doc, "", whole != nil)
	if whole != nil && len(c.problems) == 0 {
		// Only the keywords together fail: no pointer to give.
		c.problems, _ = leaves(whole)
	}
	if len(c.problems) == 0 && !c.hasID {
		c.checkRefs()
	}
	if len(c.problems) == 0 {
		if _, err := resolve(data); err != nil {
			c.problems, _ = leaves(err)
		}
	}
	return c.problems
}

// checker walks a schema document, a subschema (node) at a time.
type checker struct {
	meta     *jsonschema.Resolved
	doc      map[string]any
	problems []string
	hasID    bool  // some subschema has an $id, which moves the base of $refs
	refs     []ref // checked once the walk is done
}

// ref is a $ref keyword: its pointer and its value.
type ref struct{ pointer, value string }

func (c *checker) add(pointer, msg string) { c.problems = append(c.problems, at(pointer, msg)) }

// node checks v, the subschema at pointer. When the whole document failed
// its meta-schema (byKeyword), it validates each keyword of v on its own
// against the meta-schema, so that each problem has a pointer: the library
// stops at the first and says where it was in the meta-schema, not in the
// document. A keyword that holds subschemas is validated with each replaced
// by true, and each is a node of its own.
func (c *checker) node(v any, pointer string, byKeyword bool) {
	obj, ok := v.(map[string]any)
	if !ok {
		if _, ok := v.(bool); !ok && byKeyword {
			c.validate(v, pointer) // "type: 5 has type "integer", want one of "object, boolean""
		}
		return
	}
	for _, kw := range slices.Sorted(maps.Keys(obj)) {
		kwPointer := pointer + "/" + escape(kw)
		children, shape := subschemas(kw, obj[kw])
		if byKeyword {
			c.validate(map[string]any{kw: shape}, kwPointer)
		}
		for _, seg := range slices.Sorted(maps.Keys(children)) {
			c.node(children[seg], kwPointer+seg, byKeyword)
		}
		c.keyword(kw, obj[kw], kwPointer)
	}
}

// validate validates v, the value at pointer, against the meta-schema.
func (c *checker) validate(v any, pointer string) {
	if err := c.meta.Validate(v); err != nil {
		msgs, _ := leaves(err)
		for _, m := range msgs {
			c.add(pointer, m)
		}
	}
}

// keyword makes the checks the meta-schema cannot (it says a pattern is a
// string in "regex" format, which is an annotation) or that need the whole
// document.
func (c *checker) keyword(kw string, v any, pointer string) {
	switch kw {
	case "pattern":
		if s, ok := v.(string); ok {
			c.regexp(s, pointer)
		}
	case "patternProperties":
		if m, ok := v.(map[string]any); ok {
			for _, re := range slices.Sorted(maps.Keys(m)) {
				c.regexp(re, pointer+"/"+escape(re))
			}
		}
	case "$id":
		c.hasID = true
	case "$ref":
		if s, ok := v.(string); ok {
			c.refs = append(c.refs, ref{pointer, s})
		}
	}
}

// regexp checks re as google/jsonschema-go compiles it: as a Go regular
// expression (RE2), not ECMA 262 (no look-around, no back-references).
func (c *checker) regexp(re, pointer string) {
	if _, err := regexp.Compile(re); err != nil {
		c.add(pointer, err.Error())
	}
}

// checkRefs checks that each $ref points within the document, for the
// forms it knows, with a pointer to the $ref: "#" and "#/json/pointer" in a
// document with no $id (which would move the base a $ref resolves against).
// An anchor ("#name"), or any $ref in a document with an $id, is left to
// the library, whose message names no place.
func (c *checker) checkRefs() {
	for _, r := range c.refs {
		u, err := url.Parse(r.value)
		switch {
		case err != nil:
			c.add(r.pointer, err.Error())
		case u.Scheme != "" || u.Opaque != "" || u.Host != "" || u.Path != "" || u.RawQuery != "":
			c.add(r.pointer, strconv.Quote(r.value)+" is "+errOutside.Error())
		case u.Fragment != "" && !strings.HasPrefix(u.Fragment, "/"):
			// an anchor
		default:
			if _, ok := lookup(c.doc, u.Fragment); !ok {
				c.add(r.pointer, strconv.Quote(r.value)+" points to nothing in the schema")
			}
		}
	}
}
