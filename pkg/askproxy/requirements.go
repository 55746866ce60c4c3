package askproxy

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/mcpschema"
)

// RequirementsTool is the name of the tool that tells an agent's author what
// agentgate needs of an agent.
const RequirementsTool = "get_agent_requirements"

// Limits of fetching the guide.
const (
	GuideTimeout  = 10 * time.Second
	MaxGuideBytes = 256 << 10
)

// QuickReference is what the tool answers when the guide cannot be fetched:
// the requirements in brief, so that the tool never answers with an error
// alone.
const QuickReference = `agentgate agent requirements (quick reference)

An agent is an A2A server that agentgate calls; agentgate is its front door.
- Protocol: A2A v1.0 over JSON-RPC at one HTTP(S) endpoint: SendMessage (agentgate sends with
  returnImmediately and follows the task), GetTask, CancelTask. Answer with a task (or a message).
- Messages: text parts in, text parts or text artifacts out (text/plain). At most 32 KiB of text per message.
- Template (template.yaml of the agent): name (a slug: lower-case letters, digits, hyphens), description,
  version, endpoint (the A2A URL), capabilities (name, description, use_cases: they become the card's skills),
  playbooks (name, description, user_invocable, automation, optional input_schema: the MCP connector's
  run_playbook), optional tags, provider, documentation_url, icon_url, public_card.
- Network: the endpoint must be reachable from agentgate and allowed by its AGENT_NETWORK policy (public
  addresses by default; never link-local or the instance metadata service). Redirects are not followed.
- Register it with POST /api/agents (YAML or JSON) or agentgate agents import.`

// GuideFetcher fetches the agent-compatibility guide at call time.
type GuideFetcher struct {
	URL  string
	HTTP *http.Client // nil: a client that follows no redirect
}

// RequirementsOutput is get_agent_requirements' result.
type RequirementsOutput struct {
	Guide    string `json:"guide"`
	Source   string `json:"source" jsonschema:"guide when fetched from url, quick-reference when the fetch failed"`
	URL      string `json:"url,omitempty"`
	Fallback string `json:"fallback_reason,omitempty"`
}

// Fetch returns the guide, or the quick reference and why the guide could
// not be had.
func (g GuideFetcher) Fetch(ctx context.Context) RequirementsOutput {
	text, err := g.fetch(ctx)
	if err != nil {
		return RequirementsOutput{Guide: QuickReference, Source: "quick-reference", URL: g.URL, Fallback: err.Error()}
	}
	return RequirementsOutput{Guide: text, Source: "guide", URL: g.URL}
}

func (g GuideFetcher) fetch(ctx context.Context) (string, error) {
	if g.URL == "" {
		return "", fmt.Errorf("no guide URL is configured")
	}
	ctx, cancel := context.WithTimeout(ctx, GuideTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.URL, nil)
	if err != nil {
		return "", fmt.Errorf("the guide URL is not valid")
	}
	hc := g.HTTP
	if hc == nil {
		hc = noRedirects
	}
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("the guide did not arrive within %s", GuideTimeout)
		}
		return "", fmt.Errorf("the guide could not be reached")
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("the guide's server answered HTTP %d", resp.StatusCode)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "" && !strings.HasPrefix(mt, "text/") {
		return "", fmt.Errorf("the guide is %s, not text", mt)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxGuideBytes+1))
	switch {
	case err != nil:
		return "", fmt.Errorf("the guide could not be read")
	case len(data) > MaxGuideBytes:
		return "", fmt.Errorf("the guide is over %d bytes", MaxGuideBytes)
	case !utf8.Valid(data) || strings.TrimSpace(string(data)) == "":
		return "", fmt.Errorf("the guide is empty or not text")
	}
	return string(data), nil
}

// AddRequirements registers get_agent_requirements on srv.
func AddRequirements(srv *mcp.Server, g GuideFetcher) {
	mcpschema.AddTool(srv, &mcp.Tool{
		Name:  RequirementsTool,
		Title: "What agentgate needs of an agent",
		Description: "Returns the guide to making an agent work with agentgate (protocol, template fields, network), " +
			"fetched now; if it cannot be fetched, a built-in quick reference and the guide's URL.",
		Annotations: &mcp.ToolAnnotations{Title: "What agentgate needs of an agent", ReadOnlyHint: true, OpenWorldHint: ptr(true)},
	}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, RequirementsOutput, error) {
		out := g.Fetch(ctx)
		text := out.Guide
		if out.Source != "guide" {
			text += "\n\nThe full guide could not be fetched (" + out.Fallback + ")"
			if out.URL != "" {
				text += "; it is at " + out.URL
			}
			text += "."
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, out, nil
	})
}
