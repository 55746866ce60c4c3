package askproxy

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAskMCPOnStdio: `agentgate ask-mcp`, the real binary, serves the same
// two tools on stdio to the go-sdk client (2026-07-28 and 2025-11-25) and to
// the TypeScript SDK client, with the built-in Q&A and no network; stdout
// carries MCP messages only, the logs go to stderr.
func TestAskMCPOnStdio(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "agentgate")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "github.com/agentgate/agentgate/cmd/agentgate")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run("go-sdk "+version, func(t *testing.T) {
			cmd := exec.Command(bin, "ask-mcp")
			cmd.Env = append(os.Environ(), "LOG_LEVEL=debug")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
			cs, err := c.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatalf("connect: %v\nstderr: %s", err, stderr.String())
			}
			if got := cs.InitializeResult().ProtocolVersion; got != version {
				t.Errorf("negotiated %s", got)
			}
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: AskDocsTool, Arguments: map[string]any{"question": "How do I run the tests?"}})
			if err != nil || res.IsError {
				t.Fatalf("ask_docs: %v %+v\nstderr: %s", err, res, stderr.String())
			}
			var out AskOutput
			data, _ := json.Marshal(res.StructuredContent)
			json.Unmarshal(data, &out)
			bigSession(t, out.SessionID)
			if len(out.Citations) == 0 || !strings.Contains(out.Answer, "make test") {
				t.Errorf("answer %+v", out)
			}
			req, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: RequirementsTool, Arguments: map[string]any{}})
			if err != nil || req.IsError || !strings.Contains(req.Content[0].(*mcp.TextContent).Text, "quick reference") {
				t.Errorf("get_agent_requirements: %v %+v", err, req)
			}
			if err := cs.Close(); err != nil {
				t.Errorf("close: %v\nstderr: %s", err, stderr.String())
			}
		})
	}
	t.Run("typescript", func(t *testing.T) {
		runTSAsk(t, "MCP_COMMAND="+bin, "MCP_ARGS=ask-mcp")
	})
}
