package docsqa

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
)

// MaxBodyBytes caps a request body: a question of MaxQuestionChars, each
// character up to 4 bytes and JSON-escaped, fits with room to spare.
const MaxBodyBytes = 64 << 10

// ServeHTTP serves the upstream contract. A request must be a POST (405, with
// Allow), declare application/json or nothing (415), have a body of at most
// MaxBodyBytes (413) that is a JSON object with a "question" string of at
// most MaxQuestionChars characters (400). Every error is a JSON body,
// {"state":"FAILED","message":"..."}, that says what is wrong; an answer is
// 200 with the Response.
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeFailure(w, http.StatusMethodNotAllowed, "use POST with a JSON body")
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			writeFailure(w, http.StatusUnsupportedMediaType, "the body must be application/json")
			return
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			writeFailure(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the body is over %d bytes", MaxBodyBytes))
			return
		}
		writeFailure(w, http.StatusBadRequest, "the body could not be read")
		return
	}
	var req struct {
		Question  *string         `json:"question"`
		SessionID json.RawMessage `json:"session_id"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeFailure(w, http.StatusBadRequest, `the body must be a JSON object with a "question" string`)
		return
	}
	if req.Question == nil {
		writeFailure(w, http.StatusBadRequest, `"question" is required`)
		return
	}
	resp, err := s.ask(*req.Question, sessionText(req.SessionID))
	switch {
	case errors.Is(err, errQuestion):
		writeJSON(w, http.StatusBadRequest, resp)
	case err != nil:
		writeJSON(w, http.StatusInternalServerError, resp)
	default:
		writeJSON(w, http.StatusOK, resp)
	}
}

// sessionText is a request's session_id as Ask takes it: a string's
// contents, or any other token as written, never through a float64 (which
// would round our ids). A token that is not an id starts a new session.
func sessionText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return ""
		}
		return s
	}
	if string(raw) == "null" {
		return ""
	}
	return string(raw)
}

// writeFailure answers a request the service refuses.
func writeFailure(w http.ResponseWriter, status int, message string) {
	writeJSON(w, status, failed(message))
}

// writeJSON answers with r as JSON. Answers quote the docs, so HTML
// characters are left as they are rather than escaped.
func writeJSON(w http.ResponseWriter, status int, r Response) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		// A Response is strings and numbers: it always encodes.
		panic(err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}
