package web

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/pkg/agentgate"
)

// serve runs h on req in a goroutine and returns its recorder once ServeHTTP
// returns, failing (instead of hanging) if it never does.
func serve(t *testing.T, h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() { defer close(done); h.ServeHTTP(rec, req) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("handler did not answer")
	}
	return rec
}

func publicRoute(h http.HandlerFunc) []Route {
	return []Route{{Method: "POST", Path: "/x", Handler: h, Public: true}}
}

func chained(c *Chain, h http.HandlerFunc) http.Handler {
	return SecurityHeaders(NewMux(c.Wrap(publicRoute(h))))
}

func TestDeadlineAnswersWhileTheHandlerIsStuck(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	h := chained(&Chain{Timeout: 50 * time.Millisecond}, func(w http.ResponseWriter, r *http.Request) {
		<-release // ignores its context: the deadline must answer anyway
		w.Write([]byte("too late"))
	})
	rec := serve(t, h, httptest.NewRequest("POST", "/x", nil))
	if got := readErrorBody(t, rec); rec.Code != http.StatusGatewayTimeout || got.Code != agentgate.ETIMEOUT {
		t.Fatalf("got %d %+v, want 504 %s", rec.Code, got, agentgate.ETIMEOUT)
	}
	if strings.Contains(rec.Body.String(), "too late") {
		t.Fatal("the late write reached the response")
	}
}

func TestDeadlineStaysInsideTheLambdaInvocation(t *testing.T) {
	// A Lambda invocation with 1.5 s left: the request must end a margin
	// before the invocation does, long before the 25 s default.
	parent, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	lambdaDeadline, _ := parent.Deadline()
	deadlines := make(chan time.Time, 1)
	h := chained(&Chain{}, func(w http.ResponseWriter, r *http.Request) {
		d, _ := r.Context().Deadline()
		deadlines <- d
		<-r.Context().Done()
	})
	rec := serve(t, h, httptest.NewRequest("POST", "/x", nil).WithContext(parent))
	if rec.Code != http.StatusGatewayTimeout {
		t.Fatalf("status %d, want 504", rec.Code)
	}
	got := <-deadlines
	if !got.Before(lambdaDeadline.Add(-lambdaMargin + time.Millisecond)) {
		t.Fatalf("request deadline %v is not %v before the invocation's %v", got, lambdaMargin, lambdaDeadline)
	}
	if DefaultTimeout >= 29*time.Second {
		t.Fatalf("DefaultTimeout %v is not below API Gateway's 29 s", DefaultTimeout)
	}
}

func TestDeadlineLetsAStreamThrough(t *testing.T) {
	h := chained(&Chain{Timeout: 50 * time.Millisecond}, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message\ndata: {}\n\n")
		if err := http.NewResponseController(w).Flush(); err != nil {
			t.Errorf("Flush through the chain: %v", err)
		}
		<-r.Context().Done() // the deadline cancels the stream's context
		if _, err := io.WriteString(w, "data: late\n\n"); err != http.ErrHandlerTimeout {
			t.Errorf("write after the deadline = %v, want ErrHandlerTimeout", err)
		}
	})
	rec := serve(t, h, httptest.NewRequest("POST", "/x", nil))
	if rec.Code != 200 || rec.Body.String() != "event: message\ndata: {}\n\n" || !rec.Flushed {
		t.Fatalf("stream: %d %q flushed=%v", rec.Code, rec.Body.String(), rec.Flushed)
	}
	if rec.Header().Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream lost its headers: %v", rec.Header())
	}
}

func TestPanicIsA500(t *testing.T) {
	h := chained(&Chain{}, func(w http.ResponseWriter, r *http.Request) { panic("boom") })
	rec := serve(t, h, httptest.NewRequest("POST", "/x", nil))
	if got := readErrorBody(t, rec); rec.Code != 500 || got.Message != "internal error" {
		t.Fatalf("got %d %+v", rec.Code, got)
	}
}

func TestBodyCap(t *testing.T) {
	var reached bool
	h := chained(&Chain{MaxBody: 16}, func(w http.ResponseWriter, r *http.Request) {
		reached = true
		var v map[string]any
		if err := DecodeJSON(r, &v); err != nil {
			WriteError(w, r, err)
			return
		}
		WriteJSON(w, 200, v)
	})
	big := `{"a":"0123456789abcdef"}`

	// Declared too large: refused before the handler runs.
	rec := serve(t, h, httptest.NewRequest("POST", "/x", strings.NewReader(big)))
	if got := readErrorBody(t, rec); rec.Code != 413 || got.Code != agentgate.ETOOLARGE || reached {
		t.Fatalf("declared oversize: %d %+v (handler reached: %v)", rec.Code, got, reached)
	}
	// Unknown length (chunked): refused when the handler reads past the cap.
	req := httptest.NewRequest("POST", "/x", io.MultiReader(strings.NewReader(big)))
	req.ContentLength = -1
	rec = serve(t, h, req)
	if got := readErrorBody(t, rec); rec.Code != 413 || got.Code != agentgate.ETOOLARGE {
		t.Fatalf("streamed oversize: %d %+v", rec.Code, got)
	}
	rec = serve(t, h, httptest.NewRequest("POST", "/x", strings.NewReader(`{"a":1}`)))
	if rec.Code != 200 {
		t.Fatalf("small body: %d %s", rec.Code, rec.Body)
	}
}

func TestSecurityHeadersOnEveryAnswer(t *testing.T) {
	h := chained(&Chain{}, func(w http.ResponseWriter, r *http.Request) { WriteJSON(w, 200, "ok") })
	for _, req := range []*http.Request{
		httptest.NewRequest("POST", "/x", nil),      // a route
		httptest.NewRequest("GET", "/nowhere", nil), // the mux's 404
		httptest.NewRequest("GET", "/x", nil),       // the mux's 405
	} {
		rec := serve(t, h, req)
		for k, v := range map[string]string{
			"X-Content-Type-Options":    "nosniff",
			"X-Frame-Options":           "DENY",
			"Referrer-Policy":           "no-referrer",
			"Strict-Transport-Security": "max-age=63072000; includeSubDomains",
			"Content-Security-Policy":   "default-src 'none'; frame-ancestors 'none'",
		} {
			if got := rec.Header().Get(k); got != v {
				t.Errorf("%s %s: %s = %q, want %q", req.Method, req.URL.Path, k, got, v)
			}
		}
	}
}

func TestDecodeJSONSaysWhatIsWrong(t *testing.T) {
	for body, want := range map[string]string{
		``:                     "empty",
		`{"a":`:                "truncated",
		`{"a":1}{"b":2}`:       "after the JSON value",
		`{"name":1}`:           "name: want string",
		`{"nope":true}`:        `unknown field "nope"`,
		`{"name":"x"`:          "truncated",
		"{\"name\":\"x\"\x01}": "not valid JSON",
	} {
		var v struct {
			Name string `json:"name"`
			A    int    `json:"a"`
		}
		err := DecodeJSON(httptest.NewRequest("POST", "/", strings.NewReader(body)), &v)
		if agentgate.ErrorCode(err) != agentgate.EINVALID || !strings.Contains(agentgate.ErrorMessage(err), want) {
			t.Errorf("DecodeJSON(%q) = %v, want EINVALID mentioning %q", body, err, want)
		}
	}
	req := httptest.NewRequest("POST", "/", strings.NewReader(`{}`))
	req.Header.Set("Content-Type", "text/plain")
	if err := DecodeJSON(req, &struct{}{}); !strings.Contains(agentgate.ErrorMessage(err), "Content-Type") {
		t.Errorf("text/plain body: %v", err)
	}
}

// TestEmptyAnswerWritesNoBody: a 202 or 204 without a body is passed on
// without a Write call: the Lambda adapter's writer sniffs a Content-Type
// even from an empty write (text/plain for a 204).
func TestEmptyAnswerWritesNoBody(t *testing.T) {
	h := chained(&Chain{}, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) })
	w := &writeCounter{ResponseRecorder: httptest.NewRecorder()}
	h.ServeHTTP(w, httptest.NewRequest("POST", "/x", nil))
	if w.Code != http.StatusAccepted || w.writes != 0 {
		t.Errorf("status %d after %d Write calls: want 202 and none", w.Code, w.writes)
	}
}

type writeCounter struct {
	*httptest.ResponseRecorder
	writes int
}

func (w *writeCounter) Write(b []byte) (int, error) {
	w.writes++
	return w.ResponseRecorder.Write(b)
}
