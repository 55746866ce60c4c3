package docsqa

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io/fs"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"
)

// start is the fixed clock's first reading.
var start = time.Date(2001, 9, 9, 1, 46, 40, 0, time.UTC)

// clock is a fixed clock that a test moves.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: start} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// keyDocs are docs where a follow-up needs its context: "revoke" alone is
// about certificates, after a question about API keys it is about keys.
var keyDocs = fstest.MapFS{
	"keys.md": {Data: []byte(`# API keys

API keys authenticate callers.

## Create a key

` + "`POST /api/keys`" + ` creates an API key and shows its secret, ` + "`agk_<id>_<secret>`" + `, once. Keys are stored hashed.

## Revoke a key

` + "`DELETE /api/keys/{id}`" + ` revokes a key at once.
`)},
	"certs.md": {Data: []byte(`# Certificates

## Revoke a certificate

To revoke a certificate, ask the certificate authority to revoke it. Revoking is final: a revoked
certificate stays revoked.
`)},
}

// newTestService is a Service over docs on a fixed clock.
func newTestService(docs fs.FS, opts Options) (*Service, *clock) {
	c := newClock()
	opts.Now = c.Now
	return New(docs, opts), c
}

// mustAsk asks and requires an answer.
func mustAsk(t *testing.T, s *Service, question, sessionID string) Response {
	t.Helper()
	r := s.Ask(question, sessionID)
	if r.State != StateSucceeded || r.Answer == "" || r.Message != "" {
		t.Fatalf("Ask(%q, %q) = %+v", question, sessionID, r)
	}
	return r
}

// idText is a session id as a client sends it back.
func idText(r Response) string { return strconv.FormatUint(r.SessionID, 10) }

func TestAskAnswersWithTheBestPassagesAndCitations(t *testing.T) {
	s, _ := newTestService(keyDocs, Options{BaseURL: "https://example.com/docs/"})
	r := mustAsk(t, s, "How do I create an API key?", "")
	if !strings.HasPrefix(r.Answer, "**keys.md › Create a key**\n`POST /api/keys` creates an API key") {
		t.Errorf("answer starts %.80q, want the Create a key section under its title", r.Answer)
	}
	if len(r.Citations) == 0 || len(r.Citations) > maxAnswerPassages {
		t.Fatalf("%d citations", len(r.Citations))
	}
	want := Citation{
		Title: "keys.md › Create a key",
		URL:   "https://example.com/docs/keys.md#create-a-key",
		Text:  "POST /api/keys creates an API key and shows its secret, agk_<id>_<secret>, once. Keys are stored hashed.",
	}
	if r.Citations[0] != want {
		t.Errorf("first citation %+v, want %+v", r.Citations[0], want)
	}
	// One citation per quoted passage, in the answer's order.
	for _, c := range r.Citations {
		if !strings.Contains(r.Answer, "**"+c.Title+"**\n") {
			t.Errorf("citation %q is not quoted in the answer", c.Title)
		}
	}
	if n := strings.Count(r.Answer, "**\n"); n != len(r.Citations) {
		t.Errorf("%d passages quoted, %d citations", n, len(r.Citations))
	}
}

func TestAskQuotesAtMostThreePassagesAndClipsThem(t *testing.T) {
	docs := fstest.MapFS{}
	for i := range 5 {
		docs["f"+strconv.Itoa(i)+".md"] = &fstest.MapFile{Data: []byte("## Widgets\n\n" + strings.Repeat("widget gadget sprocket ", 70) + "\n")}
	}
	s, _ := newTestService(docs, Options{})
	r := mustAsk(t, s, "widgets", "")
	if len(r.Citations) != maxAnswerPassages {
		t.Errorf("%d citations for five equal matches, want %d", len(r.Citations), maxAnswerPassages)
	}
	for part := range strings.SplitSeq(r.Answer, "\n\n") {
		_, text, _ := strings.Cut(part, "\n")
		if !strings.HasSuffix(text, "…") || len([]rune(text)) > maxQuoteChars+1 {
			t.Errorf("a quoted passage of %d characters, want clipped to %d with …", len([]rune(text)), maxQuoteChars)
		}
	}
	for _, c := range r.Citations {
		if len([]rune(c.Text)) > maxCitationChars+1 || !strings.HasSuffix(c.Text, "…") {
			t.Errorf("citation text %q, want clipped to %d with …", c.Text, maxCitationChars)
		}
	}
	// A passage far below the best is left out.
	weak := fstest.MapFS{
		"strong.md": {Data: []byte("## Widgets\n\nwidget widget widget gadget\n")},
		"weak.md":   {Data: []byte("## Other\n\nA long text that mentions a widget once among many other words about entirely different matters and subjects.\n")},
	}
	s, _ = newTestService(weak, Options{})
	if r := mustAsk(t, s, "widgets gadgets", ""); len(r.Citations) != 1 || r.Citations[0].Title != "strong.md › Widgets" {
		t.Errorf("citations %+v, want only the strong match", r.Citations)
	}
}

func TestAskNothingMatches(t *testing.T) {
	s, _ := newTestService(keyDocs, Options{})
	for _, q := range []string{"kubernetes helm chart", "how is it?", "?!"} {
		r := mustAsk(t, s, q, "")
		if r.Answer != nothingMatches || r.Citations != nil || r.SessionID < minSessionID {
			t.Errorf("%q: %+v, want the nothing-matches answer in a session", q, r)
		}
	}
}

func TestAskRefusesEmptyAndOverlongQuestions(t *testing.T) {
	s, _ := newTestService(keyDocs, Options{})
	for _, q := range []string{"", "  \n\t", strings.Repeat("é", MaxQuestionChars+1)} {
		r := s.Ask(q, "")
		if r.State != StateFailed || r.Message == "" || r.Answer != "" || r.SessionID != 0 {
			t.Errorf("Ask(%.20q) = %+v, want FAILED with a message", q, r)
		}
	}
	if r := s.Ask(strings.Repeat("é", MaxQuestionChars), ""); r.State != StateSucceeded {
		t.Errorf("a question of exactly %d characters: %+v", MaxQuestionChars, r)
	}
}

func TestFollowUpUsesThePreviousQuestionsTerms(t *testing.T) {
	s, _ := newTestService(keyDocs, Options{})
	const followUp = "and how do I revoke it?"
	if r := mustAsk(t, s, followUp, ""); r.Citations[0].Title != "certs.md › Revoke a certificate" {
		t.Fatalf("on its own the follow-up should be about certificates, got %q", r.Citations[0].Title)
	}
	first := mustAsk(t, s, "How do I create an API key?", "")
	r := mustAsk(t, s, followUp, idText(first))
	if r.SessionID != first.SessionID {
		t.Fatalf("the follow-up got session %d, want %d", r.SessionID, first.SessionID)
	}
	if r.Citations[0].Title != "keys.md › Revoke a key" {
		t.Errorf("in the session the follow-up's best passage is %q, want keys.md › Revoke a key", r.Citations[0].Title)
	}
	// Only the previous question carries over: after the follow-up, the
	// session is about revoking, and a new topic is its own.
	if r := mustAsk(t, s, "certificate authority", idText(first)); r.Citations[0].Title != "certs.md › Revoke a certificate" {
		t.Errorf("a new topic: best %q", r.Citations[0].Title)
	}
	// A question without terms of its own keeps the session's topic.
	second := mustAsk(t, s, "How do I create an API key?", "")
	mustAsk(t, s, "what is it?", idText(second))
	if r := mustAsk(t, s, followUp, idText(second)); r.Citations[0].Title != "keys.md › Revoke a key" {
		t.Errorf("after a question without terms, best %q", r.Citations[0].Title)
	}
}

// sessionIDToken finds the session id's token in a JSON body.
var sessionIDToken = regexp.MustCompile(`"session_id":([^,}]*)`)

func TestSessionIDsAreIntegersAboveTwoTo53(t *testing.T) {
	s, _ := newTestService(keyDocs, Options{})
	seen := map[uint64]bool{}
	for range 50 {
		r := mustAsk(t, s, "API key", "")
		if r.SessionID < minSessionID {
			t.Fatalf("session id %d is not above 2^53", r.SessionID)
		}
		if seen[r.SessionID] {
			t.Fatalf("session id %d twice", r.SessionID)
		}
		seen[r.SessionID] = true
		data, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		m := sessionIDToken.FindSubmatch(data)
		if m == nil || !regexp.MustCompile(`^[1-9][0-9]*$`).Match(m[1]) {
			t.Fatalf("session_id is not a JSON integer in %s", data)
		}
		if got, err := strconv.ParseUint(string(m[1]), 10, 64); err != nil || got != r.SessionID {
			t.Fatalf("session_id %s parses as %d (%v), want %d", m[1], got, err, r.SessionID)
		}
	}
}

func TestSessionIDsAreDrawnUniformlyAboveTwoTo53(t *testing.T) {
	var src bytes.Buffer
	for _, v := range []uint64{0, 1 << 53, minSessionID, minSessionID, 1<<64 - 1} {
		binary.Write(&src, binary.BigEndian, v)
	}
	s, _ := newTestService(keyDocs, Options{Random: &src})
	// Draws at or below 2^53 are refused, as is an id already taken.
	if r := mustAsk(t, s, "key", ""); r.SessionID != minSessionID {
		t.Errorf("first id %d, want %d", r.SessionID, uint64(minSessionID))
	}
	if r := mustAsk(t, s, "key", ""); r.SessionID != 1<<64-1 {
		t.Errorf("second id %d, want 2^64-1", r.SessionID)
	}
	// A source that runs dry is a failure that says so, not a hang.
	if r := s.Ask("key", ""); r.State != StateFailed || !strings.Contains(r.Message, "random") {
		t.Errorf("with no randomness left: %+v", r)
	}
	// The random source only matters for new sessions.
	if r := mustAsk(t, s, "key", "18446744073709551615"); r.SessionID != 1<<64-1 {
		t.Errorf("continuing session 2^64-1 got %d", r.SessionID)
	}
}

func TestUnknownExpiredOrMalformedIDsStartNewSessions(t *testing.T) {
	s, c := newTestService(keyDocs, Options{SessionTTL: time.Hour})
	first := mustAsk(t, s, "How do I create an API key?", "")
	id := idText(first)
	for _, bad := range []string{
		strconv.FormatUint(first.SessionID+1, 10), // unknown
		"42",               // below our range
		"9007199254740993", // 2^53+1: in range, never issued here
		"0" + id,           // another spelling of a known id
		"+" + id, id + ".0", id + "e0", " " + id, "-" + id,
		"18446744073709551616",    // 2^64
		"99999999999999999999999", // beyond uint64
		"garbage", "null", "{}",
	} {
		r := mustAsk(t, s, "and how do I revoke it?", bad)
		if r.SessionID == first.SessionID || r.SessionID < minSessionID || idText(r) == bad {
			t.Errorf("id %q: session %d, want a new one", bad, r.SessionID)
		}
		if r.Citations[0].Title != "certs.md › Revoke a certificate" {
			t.Errorf("id %q: the new session carried context (%q)", bad, r.Citations[0].Title)
		}
	}
	// Idle just under the TTL: the session goes on, and its clock restarts.
	c.Advance(time.Hour - time.Second)
	if r := mustAsk(t, s, "API key", id); r.SessionID != first.SessionID {
		t.Fatalf("after %s idle: session %d, want %d", time.Hour-time.Second, r.SessionID, first.SessionID)
	}
	c.Advance(time.Hour - time.Second)
	if r := mustAsk(t, s, "API key", id); r.SessionID != first.SessionID {
		t.Fatalf("the session expired although it was used")
	}
	// Idle for the TTL: forgotten.
	c.Advance(time.Hour)
	r := mustAsk(t, s, "and how do I revoke it?", id)
	if r.SessionID == first.SessionID {
		t.Fatal("an expired session went on")
	}
	if r.Citations[0].Title != "certs.md › Revoke a certificate" {
		t.Errorf("the expired session's context carried over: %q", r.Citations[0].Title)
	}
}

func TestLeastRecentlyUsedSessionIsDropped(t *testing.T) {
	s, _ := newTestService(keyDocs, Options{MaxSessions: 2})
	a := mustAsk(t, s, "key", "")
	b := mustAsk(t, s, "key", "")
	mustAsk(t, s, "key", idText(a)) // a is now used more recently than b
	c := mustAsk(t, s, "key", "")   // over the bound: b goes
	if r := mustAsk(t, s, "key", idText(a)); r.SessionID != a.SessionID {
		t.Errorf("the recently used session was dropped")
	}
	if r := mustAsk(t, s, "key", idText(c)); r.SessionID != c.SessionID {
		t.Errorf("the newest session was dropped")
	}
	if r := mustAsk(t, s, "key", idText(b)); r.SessionID == b.SessionID {
		t.Errorf("the least recently used session was kept beyond MaxSessions")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.sessions) != 2 || s.lru.Len() != 2 {
		t.Errorf("%d sessions (%d in the LRU list), want 2", len(s.sessions), s.lru.Len())
	}
}

func TestExpiredSessionsAreForgotten(t *testing.T) {
	s, c := newTestService(keyDocs, Options{})
	for range 10 {
		mustAsk(t, s, "key", "")
	}
	c.Advance(DefaultSessionTTL)
	mustAsk(t, s, "key", "")
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.sessions) != 1 {
		t.Errorf("%d sessions kept, want only the live one", len(s.sessions))
	}
}

func TestConcurrentAsksOnSharedSessions(t *testing.T) {
	s, c := newTestService(keyDocs, Options{})
	ids := make([]string, 4)
	for i := range ids {
		ids[i] = idText(mustAsk(t, s, "API key", ""))
	}
	questions := []string{"How do I create an API key?", "and how do I revoke it?", "certificate", "what?"}
	var wg sync.WaitGroup
	var failures atomic.Int32
	for g := range 32 {
		wg.Go(func() {
			for i := range 20 {
				id := ids[(g+i)%len(ids)]
				r := s.Ask(questions[(g*i)%len(questions)], id)
				if r.State != StateSucceeded || idText(r) != id {
					failures.Add(1)
				}
				c.Advance(time.Millisecond)
			}
		})
	}
	wg.Wait()
	if n := failures.Load(); n != 0 {
		t.Errorf("%d of %d answers failed or left their session", n, 32*20)
	}
}

// countingFS counts the files opened in an FS.
type countingFS struct {
	fs.FS
	opens atomic.Int32
}

func (c *countingFS) Open(name string) (fs.File, error) {
	c.opens.Add(1)
	return c.FS.Open(name)
}

func TestIndexIsBuiltOnceOnTheFirstQuestion(t *testing.T) {
	docs := &countingFS{FS: keyDocs}
	s, _ := newTestService(docs, Options{})
	if n := docs.opens.Load(); n != 0 {
		t.Fatalf("New opened %d files", n)
	}
	mustAsk(t, s, "key", "")
	after := docs.opens.Load()
	if after == 0 {
		t.Fatal("the first question read no docs")
	}
	mustAsk(t, s, "certificate", "")
	if n := docs.opens.Load(); n != after {
		t.Errorf("the second question opened %d more files", n-after)
	}
}

// brokenFS fails every open.
type brokenFS struct{}

func (brokenFS) Open(string) (fs.File, error) { return nil, fs.ErrPermission }

func TestUnreadableDocsFailEveryQuestion(t *testing.T) {
	s, _ := newTestService(brokenFS{}, Options{})
	for range 2 {
		r := s.Ask("API key", "")
		if r.State != StateFailed || !strings.Contains(r.Message, "docs could not be read") || r.Answer != "" {
			t.Errorf("Ask over unreadable docs = %+v", r)
		}
	}
	if _, err := s.ask("API key", ""); err == nil || errors.Is(err, errQuestion) {
		t.Errorf("the failure is %v, want the service's, not the question's", err)
	}
}
