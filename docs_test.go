package agentgate

import (
	"io/fs"
	"testing"
)

func TestDocsEmbedsTheMarkdown(t *testing.T) {
	for _, name := range []string{"README.md", "docs/architecture.md"} {
		data, err := fs.ReadFile(Docs, name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(data) == 0 {
			t.Errorf("%s is empty", name)
		}
	}
}
