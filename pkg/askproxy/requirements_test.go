package askproxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRequirementsNeverFailAlone: the guide when it can be fetched; on any
// failure the quick reference, the guide's URL and why, never an error
// alone; through the MCP tool too.
func TestRequirementsNeverFailAlone(t *testing.T) {
	guide := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/guide":
			w.Header().Set("Content-Type", "text/markdown")
			io.WriteString(w, "# Agent guide\nSpeak A2A.")
		case "/redirect":
			http.Redirect(w, r, "/guide", http.StatusFound)
		case "/html-error":
			http.Error(w, "down", http.StatusServiceUnavailable)
		case "/binary":
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write([]byte{0, 1, 2})
		case "/big":
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, strings.Repeat("x", MaxGuideBytes+1))
		}
	}))
	t.Cleanup(guide.Close)
	if out := (GuideFetcher{URL: guide.URL + "/guide"}).Fetch(t.Context()); out.Source != "guide" || !strings.Contains(out.Guide, "Speak A2A") {
		t.Fatalf("guide: %+v", out)
	}
	for path, why := range map[string]string{
		"/redirect": "HTTP 302", "/html-error": "HTTP 503", "/binary": "not text", "/big": "over", "": "",
	} {
		url := guide.URL + path
		if path == "" {
			url = "http://127.0.0.1:1/unreachable"
			why = "could not be reached"
		}
		out := (GuideFetcher{URL: url}).Fetch(t.Context())
		if out.Source != "quick-reference" || out.Guide != QuickReference || out.URL != url || !strings.Contains(out.Fallback, why) {
			t.Errorf("%s: %+v, want the quick reference because %q", path, out, why)
		}
	}

	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	AddRequirements(srv, GuideFetcher{URL: guide.URL + "/html-error"})
	h := httptest.NewServer(Handler(srv))
	t.Cleanup(h.Close)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: h.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: RequirementsTool, Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("tool: %+v, %v", res, err)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, "quick reference") || !strings.Contains(text, guide.URL+"/html-error") {
		t.Errorf("tool text %q", text)
	}
}
