package docsqa

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// titles is the title of each passage.
func titles(ps []passage) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.title
	}
	return out
}

func TestSplitMarkdownBySectionsWithHeadingPaths(t *testing.T) {
	ps := splitMarkdown("guide.md", `Before any heading.

# Guide

Intro.

## Setup

Install it.

### On Linux ###

Use the package.

#### Details

Fine print.

##### Too deep to be a section

Stays in Details.

## Empty

## Use

Call it.
#hashtag is not a heading
`)
	want := []string{
		"guide.md",
		"guide.md › Guide",
		"guide.md › Setup",
		"guide.md › Setup › On Linux",
		"guide.md › Setup › On Linux › Details",
		"guide.md › Use",
	}
	if got := titles(ps); !slices.Equal(got, want) {
		t.Fatalf("titles %q, want %q", got, want)
	}
	if got := ps[4].text; !strings.Contains(got, "##### Too deep") || !strings.Contains(got, "Stays in Details.") {
		t.Errorf("a level-5 heading should stay in its section's text; Details is %q", got)
	}
	if got := ps[5].text; got != "Call it.\n#hashtag is not a heading" {
		t.Errorf("Use is %q", got)
	}
	if ps[3].heading != "On Linux" || ps[3].anchor != "on-linux" {
		t.Errorf("closing hashes kept: heading %q, anchor %q", ps[3].heading, ps[3].anchor)
	}
}

func TestSplitMarkdownIgnoresHeadingsInCodeFences(t *testing.T) {
	ps := splitMarkdown("doc.md", "# Doc\n\n## Real\n\n```sh\n# not a heading\n## neither\n```\n\n~~~~\n# nor this\n```\n# still code\n~~~~\n\n    # indented code\n\nText after.\n")
	if got := titles(ps); !slices.Equal(got, []string{"doc.md › Real"}) {
		t.Fatalf("titles %q, want only the real section", got)
	}
	for _, s := range []string{"# not a heading", "## neither", "# nor this", "# still code", "# indented code", "Text after."} {
		if !strings.Contains(ps[0].text, s) {
			t.Errorf("the section lost %q: %q", s, ps[0].text)
		}
	}
}

func TestSplitMarkdownCutsLongSectionsAtBlankLines(t *testing.T) {
	var paras []string
	for i := range 10 {
		paras = append(paras, fmt.Sprintf("Paragraph %d. %s", i, strings.Repeat("word ", 80)))
	}
	var table []string
	for i := range 40 {
		table = append(table, fmt.Sprintf("| row%d | %s |", i, strings.Repeat("cell ", 10)))
	}
	src := "# Doc\n\n## Long section\n\n" + strings.Join(paras, "\n\n") + "\n\n" + strings.Join(table, "\n") + "\n\n## Next\n\nShort.\n"
	ps := splitMarkdown("long.md", src)
	if len(ps) < 4 {
		t.Fatalf("%d passages, want the long section cut into several", len(ps))
	}
	var long []string
	for _, p := range ps[:len(ps)-1] {
		if p.title != "long.md › Long section" || p.anchor != "long-section" {
			t.Errorf("a piece is titled %q (#%s), want its section's title", p.title, p.anchor)
		}
		if n := utf8.RuneCountInString(p.text); n > maxPassageChars {
			t.Errorf("a piece has %d characters, over %d", n, maxPassageChars)
		}
		long = append(long, p.text)
	}
	// Nothing is lost or cut mid-paragraph, and table rows stay whole.
	joined := strings.Join(long, "\n")
	for _, s := range append(paras, table...) {
		if strings.Count(joined, s) != 1 {
			t.Errorf("%.30q... is not in exactly one piece", s)
		}
	}
	if last := ps[len(ps)-1]; last.title != "long.md › Next" || last.text != "Short." {
		t.Errorf("last passage %q: %q", last.title, last.text)
	}
}

func TestChunkFallsBackToSpacesForALongLine(t *testing.T) {
	line := strings.Repeat("abcd ", 100) // 500 characters, no line break
	pieces := chunk(strings.TrimSpace(line), 120)
	if len(pieces) < 4 {
		t.Fatalf("%d pieces", len(pieces))
	}
	for _, p := range pieces {
		if utf8.RuneCountInString(p) > 120 || strings.HasPrefix(p, " ") || strings.HasSuffix(p, " ") {
			t.Errorf("piece %q", p)
		}
	}
	if got := strings.Join(pieces, " "); got != strings.TrimSpace(line) {
		t.Errorf("pieces do not add up to the line")
	}
}

func TestAnchorIsGitHubs(t *testing.T) {
	for heading, want := range map[string]string{
		"Running locally":                                "running-locally",
		"Agents, cards and the A2A front door":           "agents-cards-and-the-a2a-front-door",
		"Owners: agents, connectors, chat, MCP exposure": "owners-agents-connectors-chat-mcp-exposure",
		"`AGENT_NETWORK` and `local`":                    "agent_network-and-local",
		"The docs Q&A":                                   "the-docs-qa",
		"Re-run (twice)":                                 "re-run-twice",
	} {
		if got := anchor(heading); got != want {
			t.Errorf("anchor(%q) = %q, want %q", heading, got, want)
		}
	}
	ps := splitMarkdown("x.md", "## Examples\n\na\n\n## Examples\n\nb\n\n## Examples\n\nc\n")
	var got []string
	for _, p := range ps {
		got = append(got, p.anchor)
	}
	if want := []string{"examples", "examples-1", "examples-2"}; !slices.Equal(got, want) {
		t.Errorf("repeated headings' anchors %q, want %q", got, want)
	}
}

func TestPlainAndClipWords(t *testing.T) {
	if got, want := plain("| `--addr` | **bold** [the docs](docs/a.md#x) |\n|---|---|\n- item"), "--addr bold the docs item"; got != want {
		t.Errorf("plain = %q, want %q", got, want)
	}
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"alpha beta gamma", 8, "alpha…"},       // mid-word: back to the space
		{"alpha beta gamma", 10, "alpha beta…"}, // at a word's end
		{"abcdefghijkl", 5, "abcde…"},           // one long word: cut inside
		{"äöü äöü äöü", 6, "äöü…"},              // characters, not bytes
	} {
		if got := clipWords(tc.s, tc.n); got != tc.want {
			t.Errorf("clipWords(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}
