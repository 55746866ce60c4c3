// Package inputschema checks the JSON Schemas that agent templates give as
// playbook input schemas, and validates playbook inputs against them.
//
// It wraps github.com/google/jsonschema-go, which the MCP SDK already links,
// rather than a library that compiles its meta-schemas at package init: every
// Lambda bootstrap that registers or runs playbooks would pay that at every
// cold start. Here the meta-schemas (embedded, see metaschema/README.md) are
// resolved the first time a schema is checked, once per process, and only
// Check needs them: Compile and Validate, which run_playbook uses, never do.
//
// No schema may reach outside itself: there is no loader, so a $ref to a
// file or URL is a problem, never a read or a fetch.
//
// Problems are short messages, one per leaf of the library's error, with the
// JSON pointer into the schema where one is known: "at '/properties/city/
// pattern': error parsing regexp: missing closing ): `(`".
package inputschema
