package agent

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"golang.org/x/mod/semver"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/inputschema"
)

// Problem is one thing wrong with a template: where (a path into the
// template such as capabilities[2].name, or a YAML line) and what.
type Problem struct {
	Path    string `json:"path,omitempty"`
	Message string `json:"message"`
}

func (p Problem) String() string {
	if p.Path == "" {
		return p.Message
	}
	return p.Path + ": " + p.Message
}

// ValidationError lists every problem of a template, so that its author can
// fix them in one round rather than one per attempt. Take the list with
// errors.As to show a problem a line; the error also unwraps to an
// agentgate.EINVALID error whose message lists them all, which is what the
// HTTP edge shows.
type ValidationError struct {
	Problems []Problem
}

func (e *ValidationError) Error() string {
	msgs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		msgs[i] = p.String()
	}
	return "invalid agent template: " + strings.Join(msgs, "; ")
}

func (e *ValidationError) Unwrap() error {
	return &agentgate.Error{Code: agentgate.EINVALID, Message: e.Error()}
}

func invalid(ps ...Problem) error { return &ValidationError{Problems: ps} }

// ValidName reports whether name is one an agent may have: a name that is
// not is no agent's, and needs no table read to say so.
func ValidName(name string) bool { return isSlug(name) }

// Validate checks t and reports every problem it finds, as a
// *ValidationError.
func (t *Template) Validate() error {
	var c checker
	c.slug("name", t.Name)
	c.text("description", t.Description)
	if c.text("version", t.Version) && !isSemver(t.Version) {
		c.add("version", "must be a semantic version like 1.2.3")
	}
	c.url("endpoint", t.Endpoint, true)
	if t.Provider != nil {
		c.text("provider.organization", t.Provider.Organization)
		c.url("provider.url", t.Provider.URL, false)
	}
	c.url("documentation_url", t.DocumentationURL, false)
	c.url("icon_url", t.IconURL, false)
	c.texts("tags", t.Tags, false)

	c.list("capabilities", len(t.Capabilities), true)
	skills := map[string]string{} // slug: the capability that has it
	for i, cp := range t.Capabilities {
		path := fmt.Sprintf("capabilities[%d]", i)
		if c.text(path+".name", cp.Name) {
			if slug := Slug(cp.Name); slug == "" {
				c.add(path+".name", "must contain an ASCII letter or digit")
			} else {
				c.unique(path, "slug", slug, skills)
			}
		}
		c.text(path+".description", cp.Description)
		c.texts(path+".use_cases", cp.UseCases, true)
	}

	c.list("playbooks", len(t.Playbooks), false)
	playbooks := map[string]string{} // name: the playbook that has it
	for i, pb := range t.Playbooks {
		path := fmt.Sprintf("playbooks[%d]", i)
		if c.slug(path+".name", pb.Name) {
			c.unique(path, "name", pb.Name, playbooks)
		}
		c.text(path+".description", pb.Description)
		if pb.InputSchema != nil {
			c.schema(path+".input_schema", pb.InputSchema)
		}
	}

	// The fields are bounded one by one, but JSON escapes can make the
	// stored form larger than the YAML.
	if data, err := json.Marshal(t); err == nil && len(data) > MaxTemplateSize {
		c.add("", "larger than %d bytes as JSON", MaxTemplateSize)
	}
	return c.err()
}

// checker collects problems. Its checks return whether the value passed, so
// that a check that builds on another runs only on a well-formed value.
type checker struct{ problems []Problem }

func (c *checker) add(path, format string, args ...any) {
	c.problems = append(c.problems, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
}

func (c *checker) err() error {
	if len(c.problems) == 0 {
		return nil
	}
	return invalid(c.problems...)
}

// text checks a required string.
func (c *checker) text(path, s string) bool {
	switch {
	case strings.TrimSpace(s) == "":
		c.add(path, "required")
	case len(s) > MaxStringLen:
		c.add(path, "longer than %d bytes", MaxStringLen)
	default:
		return true
	}
	return false
}

// list checks a list's length.
func (c *checker) list(path string, n int, required bool) {
	switch {
	case n == 0 && required:
		c.add(path, "required")
	case n > MaxListLen:
		c.add(path, "more than %d entries", MaxListLen)
	}
}

// texts checks a list of strings, none of which may be empty.
func (c *checker) texts(path string, ss []string, required bool) {
	c.list(path, len(ss), required)
	for i, s := range ss {
		c.text(fmt.Sprintf("%s[%d]", path, i), s)
	}
}

func (c *checker) slug(path, s string) bool {
	switch {
	case s == "":
		c.add(path, "required")
	case !isSlug(s):
		c.add(path, "must be 1 to 63 lower-case letters, digits and hyphens, starting with a letter or digit")
	default:
		return true
	}
	return false
}

// unique checks that no earlier entry of a list has the same key; seen maps
// each key to the entry that has it.
func (c *checker) unique(path, what, key string, seen map[string]string) {
	if first, ok := seen[key]; ok {
		c.add(path+".name", "%s %q is already used by %s", what, key, first)
		return
	}
	seen[key] = path
}

// url checks an absolute http(s) URL. One with credentials is refused: a
// template is shown to whoever may see the agent's card.
func (c *checker) url(path, s string, required bool) {
	if s == "" {
		if required {
			c.add(path, "required")
		}
		return
	}
	if len(s) > MaxStringLen {
		c.add(path, "longer than %d bytes", MaxStringLen)
		return
	}
	u, err := url.Parse(s)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		c.add(path, "must be an absolute http(s) URL")
	case u.User != nil:
		c.add(path, "must not contain credentials")
	}
}

// schema checks that s is a JSON Schema (inputschema.Check), a problem for
// each thing wrong with it.
func (c *checker) schema(path string, s map[string]any) {
	for _, msg := range inputschema.Check(s) {
		c.add(path, "does not compile: %s", msg)
	}
}

// isSemver reports whether v is a full semantic version: MAJOR.MINOR.PATCH,
// with an optional pre-release and build. x/mod/semver wants a leading "v"
// and also takes the shorthands v1 and v1.2, which Canonical completes; so v
// is full if its canonical form, which drops the build, is v without it.
func isSemver(v string) bool {
	core, _, _ := strings.Cut(v, "+")
	return semver.Canonical("v"+v) == "v"+core
}
