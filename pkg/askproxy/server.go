package askproxy

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/mcphttp"
	"github.com/agentgate/agentgate/pkg/mcpschema"
)

// Asker answers a docs question in a session ("" for a new one): the
// upstream Client, or anything that keeps its contract.
type Asker interface {
	Ask(ctx context.Context, question, sessionID string) (Answer, error)
}

// AskDocsTool is the tool's name, the same wherever it is registered.
const AskDocsTool = "ask_docs"

// AskInput is ask_docs' arguments.
type AskInput struct {
	Question  string `json:"question" jsonschema:"The question about the platform, self-contained. At most 4000 characters."`
	SessionID string `json:"session_id,omitempty" jsonschema:"Optional: the session_id of an earlier answer, to ask a follow-up in its context."`
}

// AskOutput is ask_docs' result.
type AskOutput struct {
	Answer    string     `json:"answer"`
	SessionID string     `json:"session_id" jsonschema:"Pass it back as session_id for a follow-up question."`
	Citations []Citation `json:"citations,omitempty" jsonschema:"The documents the answer rests on."`
	Warning   string     `json:"warning,omitempty"`
}

// contextLost is the warning of an answer given in a new session because
// the one asked for had expired upstream.
const contextLost = "The earlier session had expired: this answer starts a new one, without the earlier context. Use the new session_id from now on."

// NewServer returns an MCP server whose ask_docs tool asks asker. It asks
// nothing of the user and keeps no state, so it is served statelessly to
// every protocol version (Handler).
func NewServer(asker Asker, version string) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "agentgate-docs", Title: "agentgate docs", Version: version}, nil)
	AddAskDocs(srv, asker)
	return srv
}

// AddAskDocs registers ask_docs on srv: the one definition of the tool,
// for the public server and for agentgate's main MCP server alike.
func AddAskDocs(srv *mcp.Server, asker Asker) {
	mcpschema.AddTool(srv, &mcp.Tool{
		Name:  AskDocsTool,
		Title: "Ask the agentgate docs",
		Description: "Answers a question about agentgate from its documentation, with citations. " +
			"For a follow-up, pass the session_id of the previous answer.",
		Annotations: &mcp.ToolAnnotations{Title: "Ask the agentgate docs", ReadOnlyHint: true, OpenWorldHint: ptr(true)},
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in AskInput) (*mcp.CallToolResult, AskOutput, error) {
		a, err := asker.Ask(ctx, in.Question, in.SessionID)
		if err != nil {
			var ue *UpstreamError
			if errors.As(err, &ue) {
				slog.WarnContext(ctx, "ask_docs: upstream failed", "kind", ue.Kind, "detail", ue.Detail)
				return nil, AskOutput{}, errors.New("The docs Q&A service failed (" + ue.Kind + "): " + ue.Detail + ". Try again later.")
			}
			return nil, AskOutput{}, err // the question's own problem, in its words
		}
		out := AskOutput{Answer: a.Answer, SessionID: a.SessionID, Citations: a.Citations}
		text := a.Answer
		if a.ContextLost {
			out.Warning = contextLost
			text += "\n\n" + contextLost
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, out, nil
	})
}

func ptr[T any](v T) *T { return &v }

// Handler serves srv over Streamable HTTP without sessions, for every
// protocol version: any instance answers any request. Each message is
// checked, and the SDK's refusals reworded, as on agentgate's main MCP
// endpoint (mcphttp.Stateless).
func Handler(srv *mcp.Server) http.Handler {
	return LazyHandler(func() *mcp.Server { return srv })
}

// LazyHandler is Handler for the server srv returns, asked for on each
// request: with a sync.OnceValue, the server is built by the first
// request rather than at start, which keeps its tools' schema inference
// out of the function's cold start.
func LazyHandler(srv func() *mcp.Server) http.Handler {
	return mcphttp.Stateless{SDK: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv() }, &mcp.StreamableHTTPOptions{
		Stateless: true, JSONResponse: true,
		Logger: slog.New(slog.DiscardHandler),
	})}
}
