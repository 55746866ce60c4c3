package docsqa

import (
	"slices"
	"testing"
	"testing/fstest"
)

func TestTermsSplitsUnderscoresDropsStopwordsAndStems(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"Call dispatch_task, then get_execution_result.", []string{"call", "dispatch_task", "dispatch", "task", "get_execution_result", "get", "execution", "result"}},
		{"What is a X of the API?", []string{"api"}},
		{"AGENT_NETWORK", []string{"agent_network", "agent", "network"}},
		{"_meta __", []string{"meta"}},
		{"Running the tests with keys", []string{"run", "test", "key"}},
		{"", nil},
	} {
		if got := terms(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("terms(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

func TestStemMergesInflectionsOnly(t *testing.T) {
	for word, want := range map[string]string{
		"keys": "key", "key": "key",
		"running": "run", "run": "run",
		"tests": "test", "testing": "test", "tested": "test",
		"revoke": "revok", "revoked": "revok", "revoking": "revok", "revokes": "revok",
		"policies": "policy", "policy": "policy",
		"addresses": "address", "address": "address",
		"calling": "call", "passing": "pass",
		"cache": "cach", "caches": "cach",
		// Not inflections: left alone.
		"string": "string", "status": "status", "access": "access", "analysis": "analysis", "need": "need", "use": "use",
	} {
		if got := stem(word); got != want {
			t.Errorf("stem(%q) = %q, want %q", word, got, want)
		}
	}
}

func TestUniqueTermsKeepsFirstOccurrenceOrder(t *testing.T) {
	got := uniqueTerms("keys, key and Keys: rotate the key")
	if want := []string{"key", "rotat"}; !slices.Equal(got, want) {
		t.Errorf("uniqueTerms = %q, want %q", got, want)
	}
}

// mustIndex indexes files for a test.
func mustIndex(t *testing.T, files fstest.MapFS) *index {
	t.Helper()
	ix, err := buildIndex(files)
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// best is the title of the passage that ranks first for question.
func best(t *testing.T, ix *index, question string) string {
	t.Helper()
	hits := ix.search(newQuery(uniqueTerms(question), nil))
	if len(hits) == 0 {
		t.Fatalf("%q matches nothing", question)
	}
	return ix.passages[hits[0].passage].title
}

func TestSearchRanksTheSectionAboutTheTermFirst(t *testing.T) {
	ix := mustIndex(t, fstest.MapFS{
		"ops.md": {Data: []byte(`# Operations

## Deploying

Run the deploy command. Secrets are read from the environment.

## Rotating secrets

To rotate a secret, write the new secret, wait for every instance to read it, then retire the old secret.
Rotation never stops serving.

## Logging

Logs are JSON lines.
`)},
		"notes.md": {Data: []byte("# Notes\n\nNothing about that here.\n")},
	})
	for question, want := range map[string]string{
		"How do I rotate secrets?": "ops.md › Rotating secrets",
		"what format are the logs": "ops.md › Logging",
		"deploy":                   "ops.md › Deploying",
	} {
		if got := best(t, ix, question); got != want {
			t.Errorf("%q: best passage %q, want %q", question, got, want)
		}
	}
	if hits := ix.search(newQuery(uniqueTerms("kubernetes"), nil)); len(hits) != 0 {
		t.Errorf("an unknown word matched %d passages", len(hits))
	}
}

func TestSearchWeighsHeadings(t *testing.T) {
	// The same body under two headings: the one that names the term wins.
	ix := mustIndex(t, fstest.MapFS{
		"a.md": {Data: []byte("## Events\n\nThe webhook fires on every event.\n")},
		"b.md": {Data: []byte("## Webhooks\n\nThe webhook fires on every event.\n")},
	})
	if got := best(t, ix, "webhook"); got != "b.md › Webhooks" {
		t.Errorf("best passage %q, want the one headed Webhooks", got)
	}
	// Without the heading weight they would tie, and a.md would come first.
	if got := best(t, ix, "event"); got != "a.md › Events" {
		t.Errorf("best passage %q, want the one headed Events", got)
	}
}

func TestSearchFindsUnderscoreNamesByTheirParts(t *testing.T) {
	ix := mustIndex(t, fstest.MapFS{
		"tools.md": {Data: []byte("## Tools\n\n`dispatch_task` hands work to an agent.\n\n## Other\n\nSomething else entirely.\n")},
	})
	for _, q := range []string{"dispatch_task", "dispatch a task", "What does dispatch_task do?"} {
		if got := best(t, ix, q); got != "tools.md › Tools" {
			t.Errorf("%q: best passage %q", q, got)
		}
	}
}

func TestNewQueryWeighsPreviousTermsLess(t *testing.T) {
	got := newQuery([]string{"revok", "key"}, []string{"creat", "api", "key"})
	want := []queryTerm{{"api", followUpWeight}, {"creat", followUpWeight}, {"key", 1}, {"revok", 1}}
	if !slices.Equal(got, want) {
		t.Errorf("newQuery = %v, want %v", got, want)
	}
}
