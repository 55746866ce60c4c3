// Package docsqa is agentgate's built-in docs Q&A service, the default
// upstream of the ask_docs tool (pkg/askproxy). It answers from the
// project's own Markdown docs, embedded in the binary (the agentgate package
// at the module root), so the answers match the code that runs.
//
// It retrieves, it does not generate: an answer is the few passages of the
// docs that match the question best (BM25 over sections cut at headings),
// each under its title, with a citation that links to its heading. So it
// needs no model, no network and no data beyond the binary, and an answer is
// exactly as right as the docs.
//
// It speaks the upstream contract of pkg/askproxy:
//
//	POST <endpoint>  {"question": "...", "session_id": <id>?}
//	200              {"state": "SUCCEEDED", "answer": "...", "session_id": <id>, "citations": [...]}
//
// A session carries a conversation: a follow-up is read with the terms of
// the question before it, so "and how do I revoke it?" after "how do I
// create an API key?" is about keys. Session ids are random integers above
// 2^53, on purpose: a client that decoded them as float64 would round them,
// so every answer checks that the client keeps them exact. An incoming id
// is never decoded as a float either. An id that is unknown, expired,
// malformed or out of range starts a new session with a new id, and the
// client, seeing the id change, warns that the earlier context was lost.
//
// Sessions live in this process's memory, forgotten after SessionTTL idle
// and beyond MaxSessions (least recently used first). On Lambda that is one
// instance: a follow-up that lands on another instance, or after a cold
// start, starts a new session, which is the contract's expired-session path
// above, not an error.
package docsqa

import (
	"container/list"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Defaults of Options.
const (
	// DefaultSessionTTL is how long an idle session is kept: long enough
	// for a conversation's pauses, short enough that memory is not kept
	// for conversations that ended.
	DefaultSessionTTL = 30 * time.Minute
	// DefaultMaxSessions bounds the sessions kept. A session is a few
	// terms, so this is well under a megabyte.
	DefaultMaxSessions = 10000
)

// MaxQuestionChars caps a question, the same limit as the askproxy client's,
// so anything the client sends is answered.
const MaxQuestionChars = 4000

// States of a Response.
const (
	StateSucceeded = "SUCCEEDED"
	StateFailed    = "FAILED"
)

// nothingMatches is the answer when no passage matches: an answer is never
// empty, and this one says how to ask better.
const nothingMatches = "Nothing in the agentgate docs matches that question. Try other words, for example a command, a route or a setting name."

// What an answer quotes.
const (
	maxAnswerPassages = 3    // passages in an answer
	relativeCutoff    = 0.35 // a passage scoring below this share of the best is left out
	maxQuoteChars     = 1200 // of a passage in the answer
	maxCitationChars  = 200  // of a passage in its citation
)

// minSessionID is the smallest session id: above 2^53, the largest integer
// below which every integer has an exact float64.
const minSessionID = 1<<53 + 1

// Options configure a Service. The zero value is the production setting.
type Options struct {
	// Now is the clock sessions expire by. nil: time.Now.
	Now func() time.Time
	// SessionTTL is the idle time after which a session is forgotten.
	// 0: DefaultSessionTTL.
	SessionTTL time.Duration
	// MaxSessions bounds the sessions kept; beyond it the least recently
	// used is dropped. 0: DefaultMaxSessions.
	MaxSessions int
	// BaseURL prefixes citation URLs, e.g.
	// "https://github.com/agentgate/agentgate/blob/main/". "": a citation's
	// URL is the file's path and anchor, "README.md#running-locally".
	BaseURL string
	// Random is the source of session ids. nil: crypto/rand, so ids cannot
	// be guessed. It is read under the service's lock, so it need not be
	// safe for concurrent use.
	Random io.Reader
}

// Response is the contract's answer body.
type Response struct {
	State     string     `json:"state"` // StateSucceeded, or StateFailed with Message
	Answer    string     `json:"answer,omitempty"`
	SessionID uint64     `json:"session_id,omitempty"` // marshals as an exact JSON integer
	Citations []Citation `json:"citations,omitempty"`
	Message   string     `json:"message,omitempty"`
}

// Citation is a passage an answer quotes: its title, a link to its heading
// and the start of its text.
type Citation struct {
	Title string `json:"title,omitempty"`
	URL   string `json:"url,omitempty"`
	Text  string `json:"text,omitempty"`
}

// Service answers questions over a set of Markdown docs. It is an
// http.Handler for the upstream contract (ServeHTTP).
type Service struct {
	docs fs.FS
	opts Options

	once   sync.Once
	idx    *index
	idxErr error

	mu       sync.Mutex
	sessions map[uint64]*list.Element // of *session
	lru      *list.List               // most recently used first
}

// session is what a conversation keeps between questions.
type session struct {
	id       uint64
	terms    []string // the previous question's terms
	lastUsed time.Time
}

// New returns a Q&A service over every *.md file in docs. The index is built
// lazily, once, on the first question, so a cold start does not pay for it;
// if docs cannot be read then, every Ask fails with a message saying so.
func New(docs fs.FS, opts Options) *Service {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.SessionTTL <= 0 {
		opts.SessionTTL = DefaultSessionTTL
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = DefaultMaxSessions
	}
	if opts.Random == nil {
		opts.Random = rand.Reader
	}
	return &Service{docs: docs, opts: opts, sessions: map[uint64]*list.Element{}, lru: list.New()}
}

// Ask answers question in the session sessionID ("", or one that is unknown,
// expired or malformed: a new session). Safe for concurrent use.
func (s *Service) Ask(question, sessionID string) Response {
	r, _ := s.ask(question, sessionID)
	return r
}

// errQuestion marks a failure that is the question's fault (HTTP 400), as
// opposed to the service's (500).
var errQuestion = errors.New("bad question")

// ask is Ask, with its failure's cause for the HTTP status: errQuestion or
// another error.
func (s *Service) ask(question, sessionID string) (Response, error) {
	if err := checkQuestion(question); err != nil {
		return failed(err.Error()), errQuestion
	}
	ix, err := s.index()
	if err != nil {
		return failed("the docs could not be read: " + err.Error()), err
	}
	own := uniqueTerms(question)
	id, previous, err := s.session(sessionID, own)
	if err != nil {
		return failed("no session could be started: " + err.Error()), err
	}
	r := s.answer(ix, ix.search(newQuery(own, previous)))
	r.SessionID = id
	return r, nil
}

// failed is a FAILED response.
func failed(message string) Response {
	return Response{State: StateFailed, Message: message}
}

// checkQuestion refuses a question that cannot be answered.
func checkQuestion(q string) error {
	switch n := utf8.RuneCountInString(q); {
	case strings.TrimSpace(q) == "":
		return errors.New("question is empty")
	case n > MaxQuestionChars:
		return fmt.Errorf("question is %d characters, over the limit of %d; ask something shorter", n, MaxQuestionChars)
	}
	return nil
}

// index is the docs' index, built on first use.
func (s *Service) index() (*index, error) {
	s.once.Do(func() { s.idx, s.idxErr = buildIndex(s.docs) })
	return s.idx, s.idxErr
}

// answer renders the best of hits: each passage under its title, and a
// citation per passage.
func (s *Service) answer(ix *index, hits []hit) Response {
	if len(hits) == 0 {
		return Response{State: StateSucceeded, Answer: nothingMatches}
	}
	var (
		parts []string
		cites []Citation
	)
	for i, h := range hits {
		if i == maxAnswerPassages || h.score < relativeCutoff*hits[0].score {
			break
		}
		p := ix.passages[h.passage]
		parts = append(parts, "**"+p.title+"**\n"+p.quote)
		cites = append(cites, Citation{Title: p.title, URL: s.url(p), Text: p.excerpt})
	}
	return Response{State: StateSucceeded, Answer: strings.Join(parts, "\n\n"), Citations: cites}
}

// url is where p is read: its file, at its heading.
func (s *Service) url(p passage) string {
	u := s.opts.BaseURL + p.path
	if p.anchor != "" {
		u += "#" + p.anchor
	}
	return u
}

// session finds the session idText names, or starts one, and records own as
// its terms. It returns the session's id and the terms of the question
// before. A question without terms of its own ("and then?") leaves the
// session's terms as they were, so the topic carries on.
func (s *Service) session(idText string, own []string) (uint64, []string, error) {
	now := s.opts.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropExpired(now)
	var sess *session
	if el, ok := s.sessions[parseID(idText)]; ok && !s.expired(el, now) {
		s.lru.MoveToFront(el)
		sess = el.Value.(*session)
	} else {
		id, err := s.newID()
		if err != nil {
			return 0, nil, err
		}
		sess = &session{id: id}
		s.sessions[id] = s.lru.PushFront(sess)
		for s.lru.Len() > s.opts.MaxSessions {
			s.remove(s.lru.Back())
		}
	}
	previous := sess.terms
	if len(own) > 0 {
		sess.terms = own
	}
	sess.lastUsed = now
	return sess.id, previous, nil
}

// dropExpired forgets the sessions idle for SessionTTL or longer, oldest
// first, so that memory follows the live conversations.
func (s *Service) dropExpired(now time.Time) {
	for el := s.lru.Back(); el != nil && s.expired(el, now); el = s.lru.Back() {
		s.remove(el)
	}
}

// expired says whether the session in el has been idle for SessionTTL.
func (s *Service) expired(el *list.Element, now time.Time) bool {
	return now.Sub(el.Value.(*session).lastUsed) >= s.opts.SessionTTL
}

// remove forgets the session in el.
func (s *Service) remove(el *list.Element) {
	delete(s.sessions, s.lru.Remove(el).(*session).id)
}

// parseID reads a session id as we write them: the decimal digits of an
// integer in [minSessionID, 2^64-1], without leading zeros (a client that
// sent another spelling would not recognise the canonical one it got back).
// Anything else is 0, which no session has.
func parseID(text string) uint64 {
	id, err := strconv.ParseUint(text, 10, 64)
	if err != nil || id < minSessionID || strings.HasPrefix(text, "0") {
		return 0
	}
	return id
}

// newIDAttempts bounds the draws for a session id. With a working source the
// first draw almost always fits (a draw is refused with probability 2^-11);
// the bound stops a broken one from spinning forever.
const newIDAttempts = 64

// newID draws an unused session id, uniformly in [minSessionID, 2^64-1]
// (rejecting draws below, so no id is likelier than another).
func (s *Service) newID() (uint64, error) {
	var b [8]byte
	for range newIDAttempts {
		if _, err := io.ReadFull(s.opts.Random, b[:]); err != nil {
			return 0, fmt.Errorf("the random source failed: %w", err)
		}
		id := binary.BigEndian.Uint64(b[:])
		if _, taken := s.sessions[id]; id >= minSessionID && !taken {
			return id, nil
		}
	}
	return 0, fmt.Errorf("the random source gave no usable id in %d draws", newIDAttempts)
}
