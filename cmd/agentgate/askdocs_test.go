package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/app/apptest"
	"github.com/agentgate/agentgate/pkg/askproxy"
	"github.com/agentgate/agentgate/pkg/mcpserver"
)

// TestServeAnswersDocsQuestionsOffline: `agentgate serve` with no
// configuration and no network answers a question about agentgate's own
// docs with citations, on the public /ask/mcp, on the main MCP server
// (same tool) and at the built-in Q&A's own route.
func TestServeAnswersDocsQuestionsOffline(t *testing.T) {
	base, banner := startServe(t, nil, "--data", filepath.Join(t.TempDir(), "agentgate.db"))
	key := strings.TrimSpace(banner[len(banner)-1][strings.LastIndex(banner[len(banner)-1], ":")+1:])
	for _, ep := range []struct {
		name, url string
		hc        *http.Client
	}{
		{"public /ask/mcp", base + askproxy.MCPPath, nil},
		{"main /mcp", base + mcpserver.Endpoint, apptest.Bearer(key)},
	} {
		t.Run(ep.name, func(t *testing.T) {
			c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
			cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ep.url, HTTPClient: ep.hc}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: askproxy.AskDocsTool,
				Arguments: map[string]any{"question": "How do I run agentgate locally?"}})
			if err != nil || res.IsError {
				t.Fatalf("ask_docs: %v %+v", err, res)
			}
			var out askproxy.AskOutput
			data, _ := json.Marshal(res.StructuredContent)
			json.Unmarshal(data, &out)
			if len(out.Citations) == 0 || !strings.Contains(out.Answer, "agentgate serve") {
				t.Errorf("answer %+v", out)
			}
		})
	}

	resp, err := http.Post(base+askproxy.QAPath, "application/json", strings.NewReader(`{"question":"How do I revoke an API key?"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var raw map[string]json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&raw); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %d %v", askproxy.QAPath, resp.StatusCode, err)
	}
	id, err := strconv.ParseUint(string(raw["session_id"]), 10, 64)
	if err != nil || id <= 1<<53 || !bytes.Contains(raw["state"], []byte("SUCCEEDED")) || len(raw["citations"]) < 3 {
		t.Errorf("built-in Q&A answered %s", raw)
	}
}
