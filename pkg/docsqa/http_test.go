package docsqa

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// serve sends body to s with method and contentType ("": none) and returns
// the recorded answer.
func serve(s http.Handler, method, contentType, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, "/", strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	return rec
}

// post is serve with POST, as the contract's client sends.
func post(s http.Handler, contentType, body string) *httptest.ResponseRecorder {
	return serve(s, http.MethodPost, contentType, body)
}

// decodeJSON reads a JSON answer into v, requiring the JSON content type.
func decodeJSON(t *testing.T, rec *httptest.ResponseRecorder, v any) {
	t.Helper()
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), v); err != nil {
		t.Fatalf("body %q: %v", rec.Body, err)
	}
}

func TestHandlerRefusesBadRequestsWithJSONErrors(t *testing.T) {
	s, _ := newTestService(keyDocs, Options{})
	for _, tc := range []struct {
		name        string
		method      string
		contentType string
		body        string
		status      int
		message     string
	}{
		{"GET", http.MethodGet, "", "", http.StatusMethodNotAllowed, "POST"},
		{"PUT", http.MethodPut, "application/json", `{"question":"key"}`, http.StatusMethodNotAllowed, "POST"},
		{"form", http.MethodPost, "application/x-www-form-urlencoded", "question=key", http.StatusUnsupportedMediaType, "application/json"},
		{"text", http.MethodPost, "text/plain", `{"question":"key"}`, http.StatusUnsupportedMediaType, "application/json"},
		{"malformed type", http.MethodPost, "application/json; =", `{"question":"key"}`, http.StatusUnsupportedMediaType, "application/json"},
		{"too large", http.MethodPost, "application/json", `{"question":"` + strings.Repeat("a", MaxBodyBytes) + `"}`, http.StatusRequestEntityTooLarge, "over 65536 bytes"},
		{"not JSON", http.MethodPost, "application/json", `question: key`, http.StatusBadRequest, "JSON object"},
		{"array", http.MethodPost, "application/json", `["key"]`, http.StatusBadRequest, "JSON object"},
		{"trailing data", http.MethodPost, "application/json", `{"question":"key"} {}`, http.StatusBadRequest, "JSON object"},
		{"empty body", http.MethodPost, "application/json", ``, http.StatusBadRequest, "JSON object"},
		{"missing question", http.MethodPost, "application/json", `{"session_id":1}`, http.StatusBadRequest, `"question" is required`},
		{"null question", http.MethodPost, "application/json", `{"question":null}`, http.StatusBadRequest, `"question" is required`},
		{"number question", http.MethodPost, "application/json", `{"question":42}`, http.StatusBadRequest, `"question" string`},
		{"blank question", http.MethodPost, "application/json", `{"question":"  "}`, http.StatusBadRequest, "question is empty"},
		{"over-long question", http.MethodPost, "", `{"question":"` + strings.Repeat("a", MaxQuestionChars+1) + `"}`, http.StatusBadRequest, "4001 characters, over the limit of 4000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := serve(s, tc.method, tc.contentType, tc.body)
			if rec.Code != tc.status {
				t.Errorf("status %d, want %d", rec.Code, tc.status)
			}
			if tc.status == http.StatusMethodNotAllowed && rec.Header().Get("Allow") != http.MethodPost {
				t.Errorf("Allow %q", rec.Header().Get("Allow"))
			}
			var got map[string]any
			decodeJSON(t, rec, &got)
			if len(got) != 2 || got["state"] != StateFailed || !strings.Contains(got["message"].(string), tc.message) {
				t.Errorf("body %v, want state FAILED and a message with %q", got, tc.message)
			}
		})
	}
}

func TestHandlerFailsWith500WhenTheDocsCannotBeRead(t *testing.T) {
	s, _ := newTestService(brokenFS{}, Options{})
	rec := post(s, "application/json", `{"question":"key"}`)
	var got Response
	decodeJSON(t, rec, &got)
	if rec.Code != http.StatusInternalServerError || got.State != StateFailed || got.Message == "" {
		t.Errorf("%d %+v", rec.Code, got)
	}
}

func TestHandlerAnswers(t *testing.T) {
	s, _ := newTestService(keyDocs, Options{})
	for _, ct := range []string{"application/json", "application/json; charset=utf-8", ""} {
		rec := post(s, ct, `{"question":"How do I create an API key?"}`)
		if rec.Code != http.StatusOK {
			t.Fatalf("Content-Type %q: status %d: %s", ct, rec.Code, rec.Body)
		}
		var got struct {
			State     string          `json:"state"`
			Answer    string          `json:"answer"`
			SessionID json.RawMessage `json:"session_id"`
			Citations []map[string]string
			Message   *string `json:"message"`
		}
		decodeJSON(t, rec, &got)
		if got.State != StateSucceeded || !strings.Contains(got.Answer, "POST /api/keys") || got.Message != nil {
			t.Errorf("body %s", rec.Body)
		}
		if !regexp.MustCompile(`^[1-9][0-9]*$`).Match(got.SessionID) {
			t.Errorf("session_id %s is not a JSON integer", got.SessionID)
		}
		if len(got.Citations) == 0 {
			t.Fatalf("no citations: %s", rec.Body)
		}
		for _, c := range got.Citations {
			if len(c) != 3 || c["title"] == "" || c["url"] == "" || c["text"] == "" {
				t.Errorf("citation %v, want title, url and text", c)
			}
		}
		if !strings.Contains(rec.Body.String(), "<id>") {
			t.Errorf("HTML characters were escaped: %s", rec.Body)
		}
	}
}

func TestHandlerContinuesSessionsGivenAsIntegersOrStrings(t *testing.T) {
	s, _ := newTestService(keyDocs, Options{})
	var first Response
	for _, spell := range []func(id string) string{
		func(id string) string { return id },
		func(id string) string { return `"` + id + `"` },
		func(id string) string { return " " + id + " " },
	} {
		decodeJSON(t, post(s, "application/json", `{"question":"How do I create an API key?"}`), &first)
		token := spell(strconv.FormatUint(first.SessionID, 10))
		var r Response
		decodeJSON(t, post(s, "application/json", `{"question":"and how do I revoke it?","session_id":`+token+`}`), &r)
		if r.SessionID != first.SessionID {
			t.Errorf("session_id %s: session %d, want %d", token, r.SessionID, first.SessionID)
		}
		if len(r.Citations) == 0 || r.Citations[0].Title != "keys.md › Revoke a key" {
			t.Errorf("session_id %s: the follow-up lost its context: %+v", token, r.Citations)
		}
	}
	id := strconv.FormatUint(first.SessionID, 10)
	for _, token := range []string{`null`, `"garbage"`, `1.5`, `{"id":1}`, `[` + id + `]`, `true`, `"` + id + `x"`} {
		rec := post(s, "application/json", `{"question":"and how do I revoke it?","session_id":`+token+`}`)
		var r Response
		decodeJSON(t, rec, &r)
		if rec.Code != http.StatusOK || r.SessionID == first.SessionID || r.SessionID < minSessionID {
			t.Errorf("session_id %s: %d, session %d, want a new session", token, rec.Code, r.SessionID)
		}
	}
}
