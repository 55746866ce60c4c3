package askproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// upstream serves handler and counts the requests it gets.
func upstream(t *testing.T, handler http.HandlerFunc) (*Client, *atomic.Int64) {
	t.Helper()
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		handler(w, r)
	}))
	t.Cleanup(srv.Close)
	return &Client{Endpoint: srv.URL, Timeout: 500 * time.Millisecond}, &calls
}

func answerJSON(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, body)
}

// TestSessionIDsSurviveByteForByte: an upstream session id larger than 2^53
// comes back as written and goes upstream again as the same integer token;
// a string id stays a string; a changed id is a lost context.
func TestSessionIDsSurviveByteForByte(t *testing.T) {
	const big = "123456789012345678901234567890"
	var got []string
	next := big
	c, calls := upstream(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got = append(got, string(body))
		answerJSON(w, fmt.Sprintf(`{"state":"SUCCEEDED","answer":"an answer","session_id":%s,"citations":[{"title":"README","url":"https://example.com/r"}]}`, next))
	})
	a, err := c.Ask(t.Context(), "what is agentgate?", "")
	if err != nil || a.SessionID != big || a.ContextLost || len(a.Citations) != 1 {
		t.Fatalf("first answer %+v, %v", a, err)
	}
	a, err = c.Ask(t.Context(), "and then?", a.SessionID)
	if err != nil || a.SessionID != big || a.ContextLost {
		t.Fatalf("follow-up %+v, %v", a, err)
	}
	if want := `{"question":"and then?","session_id":` + big + `}`; got[1] != want {
		t.Errorf("follow-up request %s, want %s", got[1], want)
	}
	next = big + "1" // the session expired upstream: a new one
	if a, err = c.Ask(t.Context(), "more?", big); err != nil || !a.ContextLost || a.SessionID != big+"1" {
		t.Errorf("changed session: %+v, %v; want the new id and context lost", a, err)
	}
	next = `"s-9007199254740993"`
	if a, err = c.Ask(t.Context(), "strings?", "s-9007199254740993"); err != nil || a.ContextLost || a.SessionID != "s-9007199254740993" {
		t.Errorf("string session: %+v, %v", a, err)
	}
	if want := `"session_id":"s-9007199254740993"`; !strings.Contains(got[3], want) {
		t.Errorf("string session sent as %s", got[3])
	}
	if calls.Load() != 4 {
		t.Errorf("%d upstream calls, want 4", calls.Load())
	}
}

// TestEachFailureSaysWhich: every way an upstream call fails is its own
// error, made once (no retry), within the deadline.
func TestEachFailureSaysWhich(t *testing.T) {
	for _, tc := range []struct {
		kind    string
		handler http.HandlerFunc
	}{
		{"timeout", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}},
		{"timeout", func(w http.ResponseWriter, r *http.Request) { // a slow trickle
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"state":"SUCCEEDED","answer":"`)
			for i := 0; i < 100 && r.Context().Err() == nil; i++ {
				io.WriteString(w, "x")
				w.(http.Flusher).Flush()
				time.Sleep(50 * time.Millisecond)
			}
		}},
		{"redirect", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/elsewhere", http.StatusFound) }},
		{"not-json", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html>maintenance</html>")
		}},
		{"not-json", func(w http.ResponseWriter, r *http.Request) { answerJSON(w, "<html>mislabelled</html>") }},
		{"status", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, `{"error":"boom"}`, http.StatusInternalServerError)
		}},
		{"state", func(w http.ResponseWriter, r *http.Request) {
			answerJSON(w, `{"state":"FAILED","message":"the index is rebuilding"}`)
		}},
		{"empty-answer", func(w http.ResponseWriter, r *http.Request) {
			answerJSON(w, `{"state":"SUCCEEDED","answer":"  ","session_id":1}`)
		}},
		{"too-large", func(w http.ResponseWriter, r *http.Request) {
			answerJSON(w, `{"state":"SUCCEEDED","answer":"`+strings.Repeat("x", MaxResponseBytes)+`"}`)
		}},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			c, calls := upstream(t, tc.handler)
			_, err := c.Ask(t.Context(), "why?", "")
			var ue *UpstreamError
			if !errors.As(err, &ue) || ue.Kind != tc.kind {
				t.Fatalf("error %v, want kind %s", err, tc.kind)
			}
			if strings.Contains(ue.Error(), "127.0.0.1") || strings.Contains(ue.Error(), "Go") {
				t.Errorf("the error leaks details: %v", ue)
			}
			if n := calls.Load(); n != 1 {
				t.Errorf("%d upstream calls, want exactly 1 (no retry)", n)
			}
		})
	}
}

func TestQuestionAndAnswerCaps(t *testing.T) {
	c, calls := upstream(t, func(w http.ResponseWriter, r *http.Request) {
		answerJSON(w, `{"state":"SUCCEEDED","answer":"`+strings.Repeat("é", MaxAnswerChars+10)+`","session_id":"s"}`)
	})
	for _, q := range []string{"", "   ", strings.Repeat("q", MaxQuestionChars+1)} {
		if _, err := c.Ask(t.Context(), q, ""); err == nil || !strings.HasPrefix(err.Error(), "question:") {
			t.Errorf("question of %d characters: %v", len(q), err)
		}
	}
	if calls.Load() != 0 {
		t.Fatalf("refused questions reached the upstream %d times", calls.Load())
	}
	a, err := c.Ask(context.Background(), strings.Repeat("q", MaxQuestionChars), "")
	if err != nil || !a.Truncated || !strings.HasSuffix(a.Answer, fmt.Sprintf("[answer truncated to %d characters]", MaxAnswerChars)) ||
		!strings.HasPrefix(a.Answer, strings.Repeat("é", MaxAnswerChars)+"\n") {
		t.Errorf("long answer: truncated %v, %d bytes, %v", a.Truncated, len(a.Answer), err)
	}
}

// FuzzParseAnswer: no upstream body makes ParseAnswer panic, and what it
// accepts is an answer.
func FuzzParseAnswer(f *testing.F) {
	for _, seed := range []string{
		`{"state":"SUCCEEDED","answer":"a","session_id":123456789012345678901234567890}`,
		`{"state":"SUCCEEDED","answer":"a","session_id":"s","citations":[{"title":"t","url":"u"}]}`,
		`{"state":"SUCCEEDED","answer":"a","session_id":1e400}`,
		`{"state":"SUCCEEDED","answer":"a","citations":"nope"}`,
		`{"state":"FAILED"}`, `{"state":"SUCCEEDED","answer":null}`, `[]`, `null`, `"x"`, ``, `{`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		a, err := ParseAnswer(body)
		if err == nil && strings.TrimSpace(a.Answer) == "" {
			t.Errorf("accepted %q with an empty answer", body)
		}
		var ue *UpstreamError
		if err != nil && !errors.As(err, &ue) {
			t.Errorf("error %v is not an UpstreamError", err)
		}
	})
}

// TestRequestDeadlineBoundsTheCall: when the request must end before the
// client's own timeout, the upstream call ends a margin before the request
// does, so the tool's timeout error is written in time (not the chain's
// 504), and says how long it waited.
func TestRequestDeadlineBoundsTheCall(t *testing.T) {
	// The handler never answers; it ends when the test does (a handler
	// that has not read the body is not told the client left).
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-done }))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(done) })
	ctx, cancel := context.WithTimeout(t.Context(), answerMargin+500*time.Millisecond)
	defer cancel()
	c := &Client{Endpoint: srv.URL, Timeout: DefaultTimeout}
	_, err := c.Ask(ctx, "slow?", "")
	var ue *UpstreamError
	if !errors.As(err, &ue) || ue.Kind != "timeout" || !regexp.MustCompile(`within [1-5]00ms$`).MatchString(ue.Detail) {
		t.Fatalf("error %v, want a timeout after at most 500ms", err)
	}
	if ctx.Err() != nil {
		t.Error("the call ran to the request's deadline, leaving no time to answer")
	}
}
