package askproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// The upstream contract: a docs Q&A service that agentgate's ask_docs tool
// is a protocol adapter over.
//
//	POST <endpoint>  {"question": "...", "session_id": <id>?}
//	200              {"state": "SUCCEEDED", "answer": "...", "session_id": <id>, "citations": [...]?}
//
// A session id is opaque. Upstream ids are integers larger than 2^53, which
// a float64 would round, so the client never decodes one as a number: it
// keeps the JSON token as written and sends it back the same way.

// Limits of one upstream call.
const (
	// DefaultTimeout is below API Gateway's 30 s, so a slow upstream is the
	// tool's clear error, not the gateway's 504.
	DefaultTimeout = 25 * time.Second
	// answerMargin is kept before the request's own deadline, so that an
	// upstream that runs out the clock is the tool's clear error, written
	// in time, rather than the chain's 504.
	answerMargin = time.Second
	// MaxResponseBytes bounds what is read of an upstream answer.
	MaxResponseBytes = 1 << 20
	// MaxAnswerChars caps the answer handed to the MCP client.
	MaxAnswerChars = 65536
	// MaxQuestionChars caps a question; a longer one is refused before any
	// upstream call.
	MaxQuestionChars = 4000
)

// Citation is a source an answer rests on.
type Citation struct {
	Title string `json:"title,omitempty"`
	URL   string `json:"url,omitempty"`
	Text  string `json:"text,omitempty"`
}

// Answer is an upstream answer, as ask_docs hands it on.
type Answer struct {
	Answer    string     `json:"answer"`
	SessionID string     `json:"session_id"`
	Citations []Citation `json:"citations,omitempty"`
	// Truncated says the answer was cut to MaxAnswerChars.
	Truncated bool `json:"truncated,omitempty"`
	// ContextLost says the upstream answered in another session than the
	// one asked for (it had expired): earlier context is gone.
	ContextLost bool `json:"context_lost,omitempty"`
}

// UpstreamError is a failed upstream call, told apart by Kind so that the
// tool can say which failure it was.
type UpstreamError struct {
	Kind   string // timeout, unreachable, redirect, status, not-json, state, empty-answer, too-large
	Detail string // for the caller: what happened, in agentgate's words
}

func (e *UpstreamError) Error() string { return "docs Q&A upstream: " + e.Detail }

// Client calls one upstream endpoint. It makes one attempt per question:
// a retry could double an answer's cost and wait past the caller's
// deadline, and the MCP client can ask again.
type Client struct {
	Endpoint string
	Timeout  time.Duration // 0: DefaultTimeout
	HTTP     *http.Client  // nil: a client that follows no redirect
}

// noRedirects is the default HTTP client: a redirect could take the
// question, and the upstream's trust, to another host.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// integerID is a session id the upstream gave as a JSON integer; it goes
// back as one.
var integerID = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)

// CheckQuestion refuses a question ask_docs does not send.
func CheckQuestion(question string) error {
	switch n := utf8.RuneCountInString(question); {
	case strings.TrimSpace(question) == "":
		return errors.New("question: required")
	case n > MaxQuestionChars:
		return fmt.Errorf("question: %d characters, over the limit of %d; ask something shorter", n, MaxQuestionChars)
	}
	return nil
}

// Ask sends question to the upstream, in the session sessionID ("" for a
// new one), and returns its answer or an *UpstreamError.
func (c *Client) Ask(ctx context.Context, question, sessionID string) (Answer, error) {
	if err := CheckQuestion(question); err != nil {
		return Answer{}, err
	}
	timeout := c.wait(ctx)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	body, err := requestBody(question, sessionID)
	if err != nil {
		return Answer{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Endpoint, bytes.NewReader(body))
	if err != nil {
		return Answer{}, &UpstreamError{Kind: "unreachable", Detail: "the endpoint is not a valid URL"}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	hc := c.HTTP
	if hc == nil {
		hc = noRedirects
	}
	resp, err := hc.Do(req)
	if err != nil {
		return Answer{}, transportError(ctx, timeout, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		return Answer{}, &UpstreamError{Kind: "redirect", Detail: fmt.Sprintf("it answered with a redirect (%d), which is not followed", resp.StatusCode)}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		return Answer{}, transportError(ctx, timeout, err)
	}
	if len(data) > MaxResponseBytes {
		return Answer{}, &UpstreamError{Kind: "too-large", Detail: fmt.Sprintf("its answer is over %d bytes", MaxResponseBytes)}
	}
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		return Answer{}, &UpstreamError{Kind: "status", Detail: fmt.Sprintf("it answered HTTP %d", resp.StatusCode)}
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "" && mt != "application/json" && !strings.HasSuffix(mt, "+json") {
		return Answer{}, &UpstreamError{Kind: "not-json", Detail: fmt.Sprintf("it answered %s, not JSON", mt)}
	}
	a, err := ParseAnswer(data)
	if err != nil {
		return Answer{}, err
	}
	a.ContextLost = sessionID != "" && a.SessionID != sessionID
	return a, nil
}

// wait is how long one call may take: the client's timeout, or less if
// the request must end sooner.
func (c *Client) wait(ctx context.Context) time.Duration {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if deadline, ok := ctx.Deadline(); ok {
		if left := time.Until(deadline) - answerMargin; left < timeout {
			timeout = max(left, 0).Truncate(100 * time.Millisecond)
		}
	}
	return timeout
}

// requestBody is the upstream request, with the session id sent as the
// token it came as: an integer as an integer, anything else as a string.
func requestBody(question, sessionID string) ([]byte, error) {
	req := struct {
		Question  string          `json:"question"`
		SessionID json.RawMessage `json:"session_id,omitempty"`
	}{Question: question}
	switch {
	case sessionID == "":
	case integerID.MatchString(sessionID):
		req.SessionID = json.RawMessage(sessionID)
	default:
		quoted, err := json.Marshal(sessionID)
		if err != nil {
			return nil, err
		}
		req.SessionID = quoted
	}
	return json.Marshal(req)
}

// ParseAnswer reads an upstream answer body. Every way it can be wrong is
// an *UpstreamError that says which; it never panics, whatever the body.
func ParseAnswer(data []byte) (Answer, error) {
	var raw struct {
		State     string          `json:"state"`
		Answer    *string         `json:"answer"`
		SessionID json.RawMessage `json:"session_id"`
		Citations json.RawMessage `json:"citations"`
		Message   string          `json:"message"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return Answer{}, &UpstreamError{Kind: "not-json", Detail: "its answer is not the JSON object the contract describes"}
	}
	if raw.State != "SUCCEEDED" {
		detail := fmt.Sprintf("it answered with state %.40q, not SUCCEEDED", raw.State)
		if raw.Message != "" {
			detail += ": " + clip(raw.Message, 200)
		}
		return Answer{}, &UpstreamError{Kind: "state", Detail: detail}
	}
	if raw.Answer == nil || strings.TrimSpace(*raw.Answer) == "" {
		return Answer{}, &UpstreamError{Kind: "empty-answer", Detail: "it succeeded with an empty answer"}
	}
	id, err := sessionToken(raw.SessionID)
	if err != nil {
		return Answer{}, err
	}
	a := Answer{Answer: *raw.Answer, SessionID: id}
	if len(raw.Citations) > 0 && string(raw.Citations) != "null" {
		// Citations are a courtesy: a malformed list is left out, the
		// answer stands.
		var cites []Citation
		if json.Unmarshal(raw.Citations, &cites) == nil {
			a.Citations = cites
		}
	}
	if utf8.RuneCountInString(a.Answer) > MaxAnswerChars {
		a.Answer, a.Truncated = clip(a.Answer, MaxAnswerChars), true
		a.Answer += fmt.Sprintf("\n\n[answer truncated to %d characters]", MaxAnswerChars)
	}
	return a, nil
}

// sessionToken is a session id as the text ask_docs hands on: a string's
// contents, or an integer's digits exactly as written.
func sessionToken(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", &UpstreamError{Kind: "not-json", Detail: "its session_id is not a valid string"}
		}
		return s, nil
	}
	if integerID.Match(raw) {
		return string(raw), nil
	}
	return "", &UpstreamError{Kind: "not-json", Detail: "its session_id is neither a string nor an integer"}
}

// transportError names a failed exchange: the deadline, or no answer.
func transportError(ctx context.Context, timeout time.Duration, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return &UpstreamError{Kind: "timeout", Detail: fmt.Sprintf("it did not answer within %s", timeout)}
	}
	return &UpstreamError{Kind: "unreachable", Detail: "it could not be reached"}
}

// clip cuts s to at most n characters.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n])
}
