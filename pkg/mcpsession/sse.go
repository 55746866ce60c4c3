package mcpsession

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// startSSE answers with an event stream, never cached: its events are the
// caller's, and a keep-alive's id must reach the client new.
func startSSE(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache, no-store")
	w.WriteHeader(http.StatusOK)
}

// writeEvent writes one SSE event and flushes it. data nil is an empty
// event (a keep-alive).
func writeEvent(w http.ResponseWriter, id string, retry time.Duration, data []byte) {
	var b strings.Builder
	b.WriteString("id: " + id + "\n")
	if retry > 0 {
		b.WriteString("retry: " + strconv.FormatInt(retry.Milliseconds(), 10) + "\n")
	}
	b.WriteString("data: ")
	b.Write(data)
	b.WriteString("\n\n")
	io.WriteString(w, b.String())
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}
