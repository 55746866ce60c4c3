// Package agentgate holds the project's own documentation, embedded, for the
// built-in docs Q&A (pkg/docsqa). It lives at the module root because
// go:embed cannot reach files above the embedding package's directory.
package agentgate

import "embed"

// Docs is README.md and docs/*.md as they were when the binary was built, so
// the docs Q&A answers from the docs of the code it runs with.
//
//go:embed README.md docs/*.md
var Docs embed.FS
