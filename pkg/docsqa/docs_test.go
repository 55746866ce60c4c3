// The tests over the real embedded docs and through the askproxy client are
// an external test package: they use only the exported API, as agentgate
// does, and stay free of an import cycle whichever way pkg/askproxy and
// pkg/docsqa come to depend on each other.
package docsqa_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	agentgatedocs "github.com/agentgate/agentgate"
	"github.com/agentgate/agentgate/pkg/askproxy"
	"github.com/agentgate/agentgate/pkg/docsqa"
)

// fixedNow is the tests' clock: sessions never expire during a test.
func fixedNow() time.Time { return time.Date(2001, 9, 9, 1, 46, 40, 0, time.UTC) }

// realDocs is the service over the docs embedded in the binary.
func realDocs() *docsqa.Service {
	return docsqa.New(agentgatedocs.Docs, docsqa.Options{Now: fixedNow})
}

// cites says whether r cites url.
func cites(r docsqa.Response, url string) bool {
	for _, c := range r.Citations {
		if c.URL == url {
			return true
		}
	}
	return false
}

func TestRealDocsAnswerQuestionsFromTheRightSections(t *testing.T) {
	s := realDocs()
	for _, tc := range []struct {
		question string
		url      string   // a section the answer must cite
		words    []string // and quote
	}{
		// The README's opening says how to run the tests.
		{"How do I run the tests?", "README.md#agentgate", []string{"make test", "race detector"}},
		// AGENT_NETWORK is a row of the Running locally table.
		{"What does AGENT_NETWORK do?", "README.md#running-locally", []string{"AGENT_NETWORK", "loopback"}},
		{"How do I create an API key?", "README.md#user-api-keys", []string{"POST /api/keys"}},
	} {
		r := s.Ask(tc.question, "")
		if r.State != docsqa.StateSucceeded {
			t.Fatalf("%q: %+v", tc.question, r)
		}
		if !cites(r, tc.url) {
			t.Errorf("%q: cites %+v, want %s", tc.question, r.Citations, tc.url)
		}
		for _, w := range tc.words {
			if !strings.Contains(r.Answer, w) {
				t.Errorf("%q: the answer does not say %q:\n%s", tc.question, w, r.Answer)
			}
		}
	}
}

func TestRealDocsFollowUp(t *testing.T) {
	s := realDocs()
	first := s.Ask("How do I create an API key?", "")
	r := s.Ask("and how do I revoke it?", strconv.FormatUint(first.SessionID, 10))
	if r.SessionID != first.SessionID || len(r.Citations) == 0 || r.Citations[0].URL != "README.md#user-api-keys" {
		t.Fatalf("the follow-up's citations %+v, want README.md#user-api-keys first", r.Citations)
	}
	if !strings.Contains(r.Answer, "DELETE /api/keys/{id}") {
		t.Errorf("the follow-up does not say how to revoke:\n%s", r.Answer)
	}
}

func TestThroughTheAskproxyClient(t *testing.T) {
	s := realDocs()
	var (
		mu      sync.Mutex
		lastRaw string // the last answer's body, as sent
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, r)
		mu.Lock()
		lastRaw = rec.Body.String()
		mu.Unlock()
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		io.Copy(w, rec.Body)
	}))
	defer srv.Close()
	rawID := func() string {
		mu.Lock()
		defer mu.Unlock()
		m := regexp.MustCompile(`"session_id":([0-9]+)[,}]`).FindStringSubmatch(lastRaw)
		if m == nil {
			t.Fatalf("no integer session_id in %s", lastRaw)
		}
		return m[1]
	}
	ctx := context.Background()
	c := askproxy.Client{Endpoint: srv.URL}

	first, err := c.Ask(ctx, "How do I create an API key?", "")
	if err != nil {
		t.Fatal(err)
	}
	if first.SessionID != rawID() {
		t.Errorf("the client has session %q, the body said %s", first.SessionID, rawID())
	}
	if id, err := strconv.ParseUint(first.SessionID, 10, 64); err != nil || id <= 1<<53 {
		t.Errorf("session id %q is not an integer above 2^53", first.SessionID)
	}
	if first.ContextLost || !strings.Contains(first.Answer, "POST /api/keys") || len(first.Citations) == 0 {
		t.Errorf("first answer %+v", first)
	}

	next, err := c.Ask(ctx, "and how do I revoke it?", first.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if next.SessionID != first.SessionID || next.ContextLost {
		t.Errorf("the follow-up is in session %q (context lost: %v), want %q", next.SessionID, next.ContextLost, first.SessionID)
	}
	if !strings.Contains(next.Answer, "DELETE /api/keys/{id}") {
		t.Errorf("the follow-up lost its topic:\n%s", next.Answer)
	}

	lost, err := c.Ask(ctx, "and how do I revoke it?", "garbage")
	if err != nil {
		t.Fatal(err)
	}
	if !lost.ContextLost || lost.SessionID == first.SessionID || lost.SessionID != rawID() {
		t.Errorf("a garbage session id: session %q, context lost %v", lost.SessionID, lost.ContextLost)
	}
}

// BenchmarkAsk is a follow-up question in a session over the real docs, the
// index already built.
func BenchmarkAsk(b *testing.B) {
	s := realDocs()
	id := strconv.FormatUint(s.Ask("How do I create an API key?", "").SessionID, 10)
	b.ReportAllocs()
	for b.Loop() {
		if r := s.Ask("and how do I revoke it?", id); r.State != docsqa.StateSucceeded {
			b.Fatal(r)
		}
	}
}

// BenchmarkFirstAsk is a new service's first question over the real docs:
// what a cold start pays, the index built on the way.
func BenchmarkFirstAsk(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if r := realDocs().Ask("How do I create an API key?", ""); r.State != docsqa.StateSucceeded {
			b.Fatal(r)
		}
	}
}
