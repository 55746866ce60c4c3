package docsqa

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxPassageChars bounds a passage. A whole long section would match a
// question by the sheer number of its words and bury the one paragraph that
// answers it; pieces of about a screen each keep an answer on topic.
const maxPassageChars = 1500

// A passage is the unit of retrieval and of citation: a Markdown section, or
// one piece of a long one.
type passage struct {
	path    string // the file in the docs, e.g. "README.md"
	title   string // the file and its heading path, e.g. "README.md › Running locally"
	heading string // the section's own heading ("" before the file's first)
	anchor  string // the heading's GitHub anchor ("" for none)
	text    string // the section's body, without its heading line
	quote   string // what an answer quotes of text
	excerpt string // what a citation shows of text: its start, as plain text
}

// newPassage is a passage of text, with what answers show of it prepared
// once, when the index is built, not on every answer.
func newPassage(path string, sec section, text string) passage {
	return passage{
		path: path, title: sec.title, heading: sec.heading, anchor: sec.anchor, text: text,
		quote:   clipWords(text, maxQuoteChars),
		excerpt: clipWords(plain(text), maxCitationChars),
	}
}

// section is a heading and the lines under it, up to the next heading.
type section struct {
	title, heading, anchor string
	body                   []string
}

// splitMarkdown cuts one Markdown file into passages: one per section (a
// heading of level 1 to 4 and what follows it), a long section cut further
// at blank lines. A "#" line inside a fenced code block is code (a shell
// comment, say), not a heading. A section with no body yields nothing.
func splitMarkdown(path, src string) []passage {
	var out []passage
	for _, sec := range sections(path, src) {
		body := strings.TrimSpace(strings.Join(sec.body, "\n"))
		if body == "" {
			continue
		}
		for _, piece := range chunk(body, maxPassageChars) {
			out = append(out, newPassage(path, sec, piece))
		}
	}
	return out
}

// sections reads src line by line, keeping the path of open headings for
// titles and GitHub's anchor of each heading.
func sections(path, src string) []section {
	type open struct {
		level int
		text  string
	}
	var (
		stack   []open
		fence   fenceRun
		slugs   = map[string]int{}
		cur     = section{title: path}
		out     []section
		inFence bool
	)
	for line := range strings.Lines(src) {
		line = strings.TrimRight(line, "\r\n")
		if inFence {
			if f, ok := parseFence(line); ok && f.closes(fence) {
				inFence = false
			}
			cur.body = append(cur.body, line)
			continue
		}
		if f, ok := parseFence(line); ok {
			fence, inFence = f, true
			cur.body = append(cur.body, line)
			continue
		}
		level, text, ok := parseHeading(line)
		if !ok {
			cur.body = append(cur.body, line)
			continue
		}
		out = append(out, cur)
		for len(stack) > 0 && stack[len(stack)-1].level >= level {
			stack = stack[:len(stack)-1]
		}
		stack = append(stack, open{level, text})
		// The document's title (its level-1 heading) says nothing a
		// subsection's title needs: "README.md › Running locally".
		names := make([]string, 0, len(stack)+1)
		names = append(names, path)
		for i, h := range stack {
			if i == 0 && h.level == 1 && len(stack) > 1 {
				continue
			}
			names = append(names, h.text)
		}
		cur = section{title: strings.Join(names, " › "), heading: text, anchor: uniqueAnchor(slugs, text)}
	}
	return append(out, cur)
}

// parseHeading reads an ATX heading of level 1 to 4 ("## Running locally",
// closing hashes allowed). Deeper headings are too small to stand alone and
// stay in their section's text; so does "#hashtag", which is no heading.
func parseHeading(line string) (level int, text string, ok bool) {
	line, ok = trimIndent(line)
	if !ok {
		return 0, "", false
	}
	level = len(line) - len(strings.TrimLeft(line, "#"))
	rest := line[level:]
	if level == 0 || level > 4 || (rest != "" && rest[0] != ' ' && rest[0] != '\t') {
		return 0, "", false
	}
	text = strings.TrimSpace(rest)
	if t := strings.TrimRight(text, "#"); t == "" || strings.HasSuffix(t, " ") || strings.HasSuffix(t, "\t") {
		text = strings.TrimSpace(t)
	}
	return level, text, true
}

// fenceRun is the marker of a fenced code block: ``` or ~~~, three or more.
type fenceRun struct {
	char byte
	n    int
	info string // what follows the marker
}

// parseFence reads a line that starts with a fence marker.
func parseFence(line string) (fenceRun, bool) {
	line, ok := trimIndent(line)
	if !ok || len(line) < 3 || (line[0] != '`' && line[0] != '~') {
		return fenceRun{}, false
	}
	rest := strings.TrimLeft(line, line[:1])
	f := fenceRun{char: line[0], n: len(line) - len(rest), info: strings.TrimSpace(rest)}
	return f, f.n >= 3
}

// closes says whether f, met inside the block that opened, ends it: the
// same character, at least as many, and nothing after.
func (f fenceRun) closes(opened fenceRun) bool {
	return f.char == opened.char && f.n >= opened.n && f.info == ""
}

// trimIndent drops the up to three spaces of indent a heading or a fence may
// have; four or more make the line indented code (ok false).
func trimIndent(line string) (string, bool) {
	trimmed := strings.TrimLeft(line, " ")
	return trimmed, len(line)-len(trimmed) < 4
}

// anchor is the fragment GitHub gives a heading: lower-case, spaces to '-',
// punctuation dropped except '-' and '_' ("Agents, cards and the A2A front
// door" -> "agents-cards-and-the-a2a-front-door"), so a citation lands on the
// section in the rendered file.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// uniqueAnchor is anchor as GitHub numbers repeats within one file: the
// second "Examples" is "examples-1". seen counts the file's anchors so far.
func uniqueAnchor(seen map[string]int, heading string) string {
	a := anchor(heading)
	n := seen[a]
	seen[a]++
	if n > 0 {
		return a + "-" + strconv.Itoa(n)
	}
	return a
}

// chunk cuts text into pieces of at most max characters at the coarsest
// boundary that works: blank lines, then line ends (a long table), then
// spaces. A single word longer than max stays whole.
func chunk(text string, max int) []string {
	return pack(text, max, []string{"\n\n", "\n", " "})
}

// pack splits text at seps[0], cuts each part that is still too long at the
// finer separators, and joins neighbouring parts again as long as they fit.
func pack(text string, max int, seps []string) []string {
	if utf8.RuneCountInString(text) <= max || len(seps) == 0 {
		return []string{text}
	}
	sep := seps[0]
	var (
		out []string
		cur strings.Builder
		n   int // characters in cur
	)
	for part := range strings.SplitSeq(text, sep) {
		if strings.TrimSpace(part) == "" {
			continue
		}
		for _, piece := range pack(strings.Trim(part, "\n"), max, seps[1:]) {
			m := utf8.RuneCountInString(piece)
			if n > 0 && n+len(sep)+m > max {
				out = append(out, cur.String())
				cur.Reset()
				n = 0
			}
			if n > 0 {
				cur.WriteString(sep)
				n += len(sep)
			}
			cur.WriteString(piece)
			n += m
		}
	}
	if n > 0 {
		out = append(out, cur.String())
	}
	return out
}

// plain is Markdown text as one line of plain text, for a citation's
// excerpt: links reduced to their text; code, emphasis and table marks and
// list bullets dropped; whitespace collapsed.
func plain(md string) string {
	md = markdownLink.ReplaceAllString(md, "$1")
	md = markdownMarks.Replace(md)
	words := slices.DeleteFunc(strings.Fields(md), func(w string) bool { return strings.Trim(w, "-:") == "" })
	return strings.Join(words, " ")
}

// markdownLink is a link, "[text](target)".
var markdownLink = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)

// markdownMarks drops code and emphasis marks and turns table cell borders
// into spaces.
var markdownMarks = strings.NewReplacer("`", "", "**", "", "|", " ")

// clipWords cuts s to about n characters, at a word boundary, marking the
// cut with an ellipsis.
func clipWords(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	cut := 0
	for range n {
		_, size := utf8.DecodeRuneInString(s[cut:])
		cut += size
	}
	head := s[:cut]
	if next, _ := utf8.DecodeRuneInString(s[cut:]); !unicode.IsSpace(next) {
		// Mid-word: back up to the last space, unless that loses over half.
		if i := strings.LastIndexFunc(head, unicode.IsSpace); i > len(head)/2 {
			head = head[:i]
		}
	}
	return strings.TrimRightFunc(head, unicode.IsSpace) + "…"
}
