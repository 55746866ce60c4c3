package docsqa

import (
	"cmp"
	"io/fs"
	"math"
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// BM25's parameters, the usual ones: k1 saturates a term's repeats, b
// discounts long passages.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// headingWeight is how many times a section's heading counts: a heading
// names what its section is about, where a body mentions things in passing.
const headingWeight = 2

// An index ranks the passages of the docs for a query with BM25.
type index struct {
	passages []passage
	postings map[string][]posting // term -> the passages that have it
	norm     []float64            // per passage: k1 * (1 - b + b*length/average length)
}

// posting is a term's frequency in one passage.
type posting struct {
	passage int
	tf      float64
}

// queryTerm is a term of a query and its weight: 1 for the question's own
// terms, less for those carried over from the session.
type queryTerm struct {
	term   string
	weight float64
}

// hit is a passage that matches a query, and its score.
type hit struct {
	passage int
	score   float64
}

// buildIndex reads every *.md file of docs.
func buildIndex(docs fs.FS) (*index, error) {
	var ps []passage
	err := fs.WalkDir(docs, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Ext(name) != ".md" {
			return err
		}
		src, err := fs.ReadFile(docs, name)
		if err != nil {
			return err
		}
		ps = append(ps, splitMarkdown(name, string(src))...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return newIndex(ps), nil
}

// newIndex counts the terms of each passage, its heading's headingWeight
// times.
func newIndex(ps []passage) *index {
	ix := &index{passages: ps, postings: map[string][]posting{}, norm: make([]float64, len(ps))}
	lengths := make([]float64, len(ps))
	var total float64
	for i, p := range ps {
		tf := map[string]float64{}
		for _, t := range terms(p.text) {
			tf[t]++
		}
		for _, t := range terms(p.heading) {
			tf[t] += headingWeight
		}
		for t, n := range tf {
			ix.postings[t] = append(ix.postings[t], posting{i, n})
			lengths[i] += n
		}
		total += lengths[i]
	}
	avg := max(total/float64(max(len(ps), 1)), 1)
	for i, n := range lengths {
		ix.norm[i] = bm25K1 * (1 - bm25B + bm25B*n/avg)
	}
	return ix
}

// search returns the passages that match q, best first (ties in the docs'
// order, so an answer does not change from one run to the next).
func (ix *index) search(q []queryTerm) []hit {
	scores := make([]float64, len(ix.passages))
	n := float64(len(ix.passages))
	for _, qt := range q {
		list := ix.postings[qt.term]
		df := float64(len(list))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, p := range list {
			scores[p.passage] += qt.weight * idf * p.tf * (bm25K1 + 1) / (p.tf + ix.norm[p.passage])
		}
	}
	var hits []hit
	for i, s := range scores {
		if s > 0 {
			hits = append(hits, hit{i, s})
		}
	}
	slices.SortFunc(hits, func(a, b hit) int {
		return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.passage, b.passage))
	})
	return hits
}

// newQuery weighs a question's own terms 1 and the previous question's
// terms followUpWeight, so that a follow-up ("and how do I revoke it?") is
// read in the context of what it follows without that context outweighing
// what it asks. Terms are in a fixed order, so scores add up the same way
// every time.
func newQuery(own, previous []string) []queryTerm {
	w := map[string]float64{}
	for _, t := range previous {
		w[t] = followUpWeight
	}
	for _, t := range own {
		w[t] = 1
	}
	q := make([]queryTerm, 0, len(w))
	for t, weight := range w {
		q = append(q, queryTerm{t, weight})
	}
	slices.SortFunc(q, func(a, b queryTerm) int { return strings.Compare(a.term, b.term) })
	return q
}

// followUpWeight is the weight of a session's earlier terms in a follow-up.
const followUpWeight = 0.5

// terms is the index terms of text: lower-cased words (letters, digits and
// underscores), stemmed, without stopwords and single characters. A word
// with underscores is also its parts, so "dispatch_task" is found by
// "dispatch task" and by "dispatch_task".
func terms(text string) []string {
	var out []string
	for _, word := range strings.FieldsFunc(text, func(r rune) bool {
		return r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		word = strings.ToLower(strings.Trim(word, "_"))
		out = appendTerm(out, word)
		if strings.Contains(word, "_") {
			for part := range strings.SplitSeq(word, "_") {
				out = appendTerm(out, part)
			}
		}
	}
	return out
}

// uniqueTerms is terms without repeats, in order of first appearance.
func uniqueTerms(text string) []string {
	ts := terms(text)
	seen := make(map[string]bool, len(ts))
	return slices.DeleteFunc(ts, func(t string) bool {
		dup := seen[t]
		seen[t] = true
		return dup
	})
}

// appendTerm appends word's stem, unless word says nothing on its own.
func appendTerm(dst []string, word string) []string {
	if utf8.RuneCountInString(word) < 2 || stopwords[word] {
		return dst
	}
	return append(dst, stem(word))
}

// stopwords are the words of a question that say how it is asked, not what
// about. Negations and particles ("not", "off", "up") stay: "what is not
// built yet" and "turn off" mean something.
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for w := range strings.FieldsSeq(`about am an and any are as at be because been being both but by can
		could did do does doing each for from had has have having he her here his how if in into is it its
		itself just me my of on once only or our ours she should so some such than that the their them then
		there these they this those through to too very was we were what when where which while who whom why
		will with would you your yours`) {
		m[w] = true
	}
	return m
}()

// stem strips the common English inflections, the same way for documents and
// questions, so that "keys" finds "key", "running" "run" and "revoked"
// "revoke". It is deliberately light: it only has to map a word's forms onto
// one term, not find linguistic roots, and a wrong merge costs more than a
// missed one.
func stem(w string) string {
	if len(w) <= 3 {
		return w
	}
	// Plurals and third persons: policies, addresses, keys (not status,
	// access or analysis).
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:len(w)-1]
	}
	// Verb forms: running, revoked (not string, need).
	for _, suffix := range []string{"ing", "ed"} {
		if strings.HasSuffix(w, suffix) {
			w = trimVerbSuffix(w, suffix)
			break
		}
	}
	// A final e, so that "revoke" meets "revoked" and "revoking", and
	// "cache" meets "caches".
	if len(w) > 3 && w[len(w)-1] == 'e' {
		w = w[:len(w)-1]
	}
	return w
}

// trimVerbSuffix drops suffix when what is left is a word (three letters or
// more, with a vowel), and undoubles a final consonant: running -> run, but
// calling -> call and passing -> pass.
func trimVerbSuffix(w, suffix string) string {
	s := w[:len(w)-len(suffix)]
	if len(s) < 3 || !strings.ContainsAny(s, "aeiouy") {
		return w
	}
	if last := s[len(s)-1]; last == s[len(s)-2] && !strings.ContainsRune("aeioulsz", rune(last)) {
		s = s[:len(s)-1]
	}
	return s
}
