package inputschema

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/url"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// The $schema values a schema may name, as google/jsonschema-go spells the
// drafts it validates (Resolved.Validate refuses any other spelling, such
// as draft 2020-12 with a trailing "#"). Without $schema a schema is draft
// 2020-12.
const (
	Draft2020     = "https://json-schema.org/draft/2020-12/schema"
	draft07       = "http://json-schema.org/draft-07/schema#"
	draft07Secure = "https://json-schema.org/draft-07/schema#"
)

// metaschemaFiles are the meta-schemas of the two drafts, copied from
// google/jsonschema-go (metaschema/README.md): the library ships them only
// in its tests' directory, and the server fetches nothing.
//
//go:embed metaschema/draft2020-12 metaschema/draft7
var metaschemaFiles embed.FS

// metaschemaFile maps a meta-schema's URI to its embedded file.
func metaschemaFile(uri *url.URL) (string, bool) {
	u := *uri
	u.Fragment = ""
	s := u.String()
	if rest, ok := strings.CutPrefix(s, "https://json-schema.org/draft/2020-12/"); ok {
		return "metaschema/draft2020-12/" + rest + ".json", true
	}
	if s == "http://json-schema.org/draft-07/schema" || s == "https://json-schema.org/draft-07/schema" {
		return "metaschema/draft7/schema.json", true
	}
	return "", false
}

// loadMetaschema is the Loader that resolves the meta-schemas' references
// to one another (the 2020-12 one is split into vocabularies).
func loadMetaschema(uri *url.URL) (*jsonschema.Schema, error) {
	name, ok := metaschemaFile(uri)
	if !ok {
		return nil, fmt.Errorf("no embedded meta-schema %s", uri)
	}
	data, err := fs.ReadFile(metaschemaFiles, name)
	if err != nil {
		return nil, err
	}
	s := new(jsonschema.Schema)
	if err := json.Unmarshal(data, s); err != nil {
		return nil, fmt.Errorf("meta-schema %s: %w", name, err)
	}
	return s, nil
}

// metaschemas are the resolved meta-schemas by $schema value, each
// resolved the first time a schema of its draft is checked and kept for the
// process: never at init, so that a cold start that checks no schema does
// not pay for them.
var metaschemas = func() map[string]func() (*jsonschema.Resolved, error) {
	d2020 := sync.OnceValues(func() (*jsonschema.Resolved, error) { return resolveMetaschema(Draft2020) })
	d07 := sync.OnceValues(func() (*jsonschema.Resolved, error) { return resolveMetaschema(draft07) })
	return map[string]func() (*jsonschema.Resolved, error){Draft2020: d2020, draft07: d07, draft07Secure: d07}
}()

// resolveMetaschema resolves the embedded meta-schema whose $id is id
// (BenchmarkCheck measures it).
func resolveMetaschema(id string) (*jsonschema.Resolved, error) {
	uri, err := url.Parse(id)
	if err != nil {
		return nil, err
	}
	s, err := loadMetaschema(uri)
	if err != nil {
		return nil, err
	}
	r, err := s.Resolve(&jsonschema.ResolveOptions{BaseURI: id, Loader: loadMetaschema})
	if err != nil {
		return nil, fmt.Errorf("resolving meta-schema %s: %w", id, err)
	}
	return r, nil
}

// draft returns the $schema value that names the draft of schema, the
// document's root: Draft2020 when it names none, or a problem when it names
// one this package does not validate.
func draft(schema map[string]any) (string, error) {
	v, ok := schema["$schema"]
	if !ok {
		return Draft2020, nil
	}
	switch v {
	case Draft2020, draft07, draft07Secure:
		return v.(string), nil
	}
	return "", fmt.Errorf("unsupported $schema %s; use %s", quote(v), Draft2020)
}

// quote renders a JSON value for a message.
func quote(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}
