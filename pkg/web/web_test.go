package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/logging"
)

func readErrorBody(t *testing.T, rec *httptest.ResponseRecorder) ErrorDetail {
	t.Helper()
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type = %q, want application/json", ct)
	}
	var body ErrorBody
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("error body is not JSON: %v: %q", err, rec.Body.String())
	}
	return body.Error
}

func TestMuxAnswersJSONForUnroutedRequests(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		WriteJSON(w, 200, map[string]string{"name": r.PathValue("name")})
	})
	mux := NewMux([]Route{
		{Method: http.MethodGet, Path: "/api/agents/{name}", Handler: ok},
		{Method: http.MethodPost, Path: "/api/agents/{name}", Handler: ok},
		{Path: "/any", Handler: ok},
	})
	tests := []struct {
		method, path string
		status       int
		code, allow  string
	}{
		{"GET", "/api/agents/echo", 200, "", ""},
		{"PATCH", "/any", 200, "", ""},
		{"GET", "/nowhere", 404, agentgate.ENOTFOUND, ""},
		{"DELETE", "/api/agents/echo", 405, "method_not_allowed", "GET, HEAD, POST"},
	}
	for _, tc := range tests {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
		if rec.Code != tc.status {
			t.Errorf("%s %s: status %d, want %d", tc.method, tc.path, rec.Code, tc.status)
			continue
		}
		if tc.code == "" {
			continue
		}
		if got := readErrorBody(t, rec); got.Code != tc.code || !strings.Contains(got.Message, tc.path) {
			t.Errorf("%s %s: error %+v, want code %q naming the path", tc.method, tc.path, got, tc.code)
		}
		if got := rec.Header().Get("Allow"); got != tc.allow {
			t.Errorf("%s %s: Allow %q, want %q", tc.method, tc.path, got, tc.allow)
		}
	}
}

func TestWriteErrorMapsCodesAndHidesInternals(t *testing.T) {
	tests := []struct {
		err     error
		status  int
		message string
	}{
		{agentgate.Errorf(agentgate.EINVALID, "agentId: required"), 400, "agentId: required"},
		{agentgate.Errorf(agentgate.ENOTFOUND, "no agent %q", "x"), 404, `no agent "x"`},
		{agentgate.Wrap(agentgate.EUNAVAILABLE, errors.New("dial tcp 10.0.0.1: refused"), "the store is unavailable"), 503, "the store is unavailable"},
		{errors.New("nil pointer somewhere secret"), 500, "internal error"},
	}
	for _, tc := range tests {
		rec := httptest.NewRecorder()
		WriteError(rec, httptest.NewRequest("GET", "/", nil), tc.err)
		got := readErrorBody(t, rec)
		if rec.Code != tc.status || got.Message != tc.message {
			t.Errorf("WriteError(%v) = %d %q, want %d %q", tc.err, rec.Code, got.Message, tc.status, tc.message)
		}
		if strings.Contains(rec.Body.String(), "10.0.0.1") || strings.Contains(rec.Body.String(), "secret") {
			t.Errorf("response leaked an internal cause: %s", rec.Body.String())
		}
	}
}

func TestNotImplementedIs501(t *testing.T) {
	rec := httptest.NewRecorder()
	NotImplemented("chat").ServeHTTP(rec, httptest.NewRequest("POST", "/api/agents/a/chat", nil))
	if got := readErrorBody(t, rec); rec.Code != 501 || got.Code != agentgate.ENOTIMPL || !strings.Contains(got.Message, "chat") {
		t.Fatalf("got %d %+v", rec.Code, got)
	}
}

func TestRequestLogGivesEveryRequestAnID(t *testing.T) {
	var buf bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(logging.New(&buf, slog.LevelInfo))
	t.Cleanup(func() { slog.SetDefault(prev) })

	h := RequestLog("mcp", Health("mcp", "test"))
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/health/mcp?token=abc", nil)
	h.ServeHTTP(rec, req)
	id := rec.Header().Get("X-Request-Id")
	if rec.Code != 200 || len(id) != 24 {
		t.Fatalf("status %d, X-Request-Id %q", rec.Code, id)
	}
	// A request id set upstream (the Lambda adapter) is kept.
	rec2 := httptest.NewRecorder()
	h.ServeHTTP(rec2, req.WithContext(logging.WithRequestID(req.Context(), "lambda-req-1")))
	if got := rec2.Header().Get("X-Request-Id"); got != "lambda-req-1" {
		t.Fatalf("X-Request-Id = %q, want the upstream id", got)
	}

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want one access-log line per request, got %q", buf.String())
	}
	var rec1 map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &rec1); err != nil {
		t.Fatal(err)
	}
	if rec1["request_id"] != id || rec1["path"] != "/health/mcp" || rec1["status"] != float64(200) || rec1["function"] != "mcp" {
		t.Fatalf("access log record %v", rec1)
	}
	if strings.Contains(buf.String(), "token=abc") {
		t.Fatal("the access log wrote the query string")
	}
}
