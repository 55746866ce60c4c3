package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/agent"
	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/connector"
	"github.com/agentgate/agentgate/pkg/dedup"
	"github.com/agentgate/agentgate/pkg/dispatch"
	"github.com/agentgate/agentgate/pkg/inputschema"
)

// A connector key's session offers its agent's exposed playbooks
// (connector.Playbooks: the connector's choice, or every user_invocable
// one): list_playbooks lists them, run_playbook runs one, through the
// consent gate and the one chat path, with the playbook's name in the A2A
// message's metadata ("playbook"), where the agent reads it.

const (
	listPlaybooksTool = "list_playbooks"
	runPlaybookTool   = "run_playbook"
)

// PlaybookView is a playbook as list_playbooks shows it.
type PlaybookView struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"input_schema,omitempty" jsonschema:"The JSON Schema of the playbook's input when it takes an object; without one, its input is text."`
	Automation  bool           `json:"automation,omitempty" jsonschema:"True when the playbook runs unattended."`
}

// ListPlaybooksOutput is list_playbooks' result.
type ListPlaybooksOutput struct {
	Agent     string         `json:"agent"`
	Playbooks []PlaybookView `json:"playbooks"`
}

// RunPlaybookInput is run_playbook's arguments.
type RunPlaybookInput struct {
	Name  string `json:"name" jsonschema:"The playbook to run, as list_playbooks names it."`
	Input any    `json:"input,omitempty" jsonschema:"The playbook's input: text, or, when the playbook declares an input_schema, a value valid against it (usually an object)."`
}

// PlaybookOutput is run_playbook's result: the agent's task and, when it
// finished within the call, its result (reply).
type PlaybookOutput struct {
	Playbook string `json:"playbook,omitempty"`
	Turn
}

func (o *PlaybookOutput) result() *mcp.CallToolResult { return o.text("playbook " + o.Playbook + ", ") }

func (s *Server) playbookTools() []toolDef {
	return []toolDef{
		{listPlaybooksTool, func(srv *mcp.Server) {
			addTool(srv, &mcp.Tool{
				Name:        listPlaybooksTool,
				Title:       "List the agent's playbooks",
				Description: "Lists the playbooks of this connector's agent that run_playbook may run: name, description, and the input schema of those that take an object.",
				Annotations: &mcp.ToolAnnotations{Title: "List the agent's playbooks", ReadOnlyHint: true, OpenWorldHint: ptr(false)},
			}, s.listPlaybooks)
		}},
		{runPlaybookTool, func(srv *mcp.Server) {
			addTool(srv, &mcp.Tool{
				Name:  runPlaybookTool,
				Title: "Run a playbook",
				Description: "Runs one of the agent's playbooks (list_playbooks lists them) on input, after the user approves it (if the user says no, " +
					"the result says so and nothing is sent). Returns the agent's task and, when it finishes within the call, its result.",
				Annotations: &mcp.ToolAnnotations{Title: "Run a playbook", DestructiveHint: ptr(true), OpenWorldHint: ptr(true)},
			}, s.runPlaybook)
		}},
		{askTool, s.askTool},
	}
}

// playbooks returns the connector key's agent and the playbooks it may run,
// as checked for this request (begin).
func (s *Server) playbooks(ctx context.Context, p agentgate.Principal) (agent.Agent, []agent.Playbook, error) {
	a, err := s.svc.Usable(ctx, p, p.Agent)
	if err != nil {
		return agent.Agent{}, nil, err
	}
	req := current(ctx)
	if req == nil || req.config == nil {
		return agent.Agent{}, nil, agentgate.Errorf(agentgate.EFORBIDDEN, "only a connector key runs playbooks")
	}
	return a, connector.Playbooks(a, *req.config), nil
}

func (s *Server) listPlaybooks(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, ListPlaybooksOutput, error) {
	a, pbs, err := s.playbooks(ctx, principal(ctx))
	if err != nil {
		return nil, ListPlaybooksOutput{}, toolError(err)
	}
	out := ListPlaybooksOutput{Agent: a.Template.Name, Playbooks: []PlaybookView{}}
	var b strings.Builder
	fmt.Fprintf(&b, "%s of agent %s.", count(len(pbs), "playbook"), a.Template.Name)
	for _, pb := range pbs {
		out.Playbooks = append(out.Playbooks, PlaybookView{Name: pb.Name, Description: pb.Description, InputSchema: pb.InputSchema, Automation: pb.Automation})
		input := "text"
		if pb.InputSchema != nil {
			input = "an object (see input_schema)"
		}
		fmt.Fprintf(&b, "\n- %s: %s Input: %s.", pb.Name, pb.Description, input)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: b.String()}}}, out, nil
}

func (s *Server) runPlaybook(ctx context.Context, req *mcp.CallToolRequest, in RunPlaybookInput) (*mcp.CallToolResult, PlaybookOutput, error) {
	p := principal(ctx)
	a, pbs, err := s.playbooks(ctx, p)
	if err != nil {
		return refusal[PlaybookOutput](ctx, p, runPlaybookTool, p.Agent, "", PlaybookOutput{}, "unknown_agent", agentgate.ErrorMessage(err))
	}
	i := slices.IndexFunc(pbs, func(pb agent.Playbook) bool { return pb.Name == in.Name })
	if i < 0 {
		// A name is echoed only once known to be one of the agent's.
		return refusal[PlaybookOutput](ctx, p, runPlaybookTool, p.Agent, "", PlaybookOutput{}, "unknown_playbook",
			"name: no such playbook of this agent; list_playbooks lists the ones you may run")
	}
	pb := pbs[i]
	base := PlaybookOutput{Playbook: pb.Name}
	text, metadata, err := playbookInput(pb, in.Input)
	if err == nil {
		err = dispatch.CheckChat(text, "")
	}
	if err != nil {
		return refusal[PlaybookOutput](ctx, p, runPlaybookTool, p.Agent, "", base, "invalid", agentgate.ErrorMessage(err))
	}
	claims, err := s.consentState(req, p, runPlaybookTool)
	if err != nil {
		return refusal[PlaybookOutput](ctx, p, runPlaybookTool, p.Agent, "", base, "bad_state", agentgate.ErrorMessage(err))
	}
	digest, err := dedup.Digest([]string{runPlaybookTool, a.Template.Name, pb.Name, text})
	if err != nil {
		return failure[PlaybookOutput](ctx, p, runPlaybookTool, p.Agent, "", base, err)
	}
	h := handing[PlaybookOutput, *PlaybookOutput]{
		tool: runPlaybookTool, agent: a.Template.Name, digest: digest, text: text, base: base,
		question: fmt.Sprintf("Run the playbook %q (%s) of the agent %q with this input?", pb.Name, pb.Description, a.Template.Name),
		do: func(ctx context.Context, once string) (PlaybookOutput, string, error) {
			t, outcome, err := s.turn(ctx, dispatch.Chat{Agent: a, Caller: p, Message: text, Metadata: metadata, MessageID: once, Claimed: once != ""})
			return PlaybookOutput{Playbook: pb.Name, Turn: t}, outcome, err
		},
	}
	return h.run(ctx, s, req, p, claims)
}

// playbookInput checks a run's input against playbook pb and returns the
// message's text and metadata. A playbook without an input schema takes
// text; one with a schema takes a value valid against it (nothing given is
// an empty object), sent as JSON text and, as given, in the metadata
// ("input").
func playbookInput(pb agent.Playbook, input any) (string, map[string]any, error) {
	metadata := map[string]any{"playbook": pb.Name}
	if pb.InputSchema == nil {
		switch v := input.(type) {
		case nil:
			return "", nil, agentgate.Errorf(agentgate.EINVALID, "input: required: the text the playbook works on")
		case string:
			return v, metadata, nil
		default:
			return "", nil, agentgate.Errorf(agentgate.EINVALID, "input: this playbook takes text, not %s", jsonType(v))
		}
	}
	if input == nil {
		input = map[string]any{}
	}
	if err := validateInput(pb.InputSchema, input); err != nil {
		return "", nil, err
	}
	metadata["input"] = input
	if s, ok := input.(string); ok {
		return s, metadata, nil
	}
	data, err := json.Marshal(input)
	if err != nil {
		return "", nil, agentgate.Wrap(agentgate.EINVALID, err, "input: not JSON")
	}
	return string(data), metadata, nil
}

// validateInput checks input against schema, a playbook's input_schema
// (draft 2020-12 unless it names draft-07; no $ref reaches outside it, as
// agent.Validate checked at registration).
func validateInput(schema map[string]any, input any) error {
	compiled, err := inputschema.Compile(schema)
	if err != nil {
		return agentgate.Wrap(agentgate.EINVALID, err, "input: the playbook's input_schema does not compile; tell the agent's owner")
	}
	if problems := compiled.Validate(input); len(problems) > 0 {
		return agentgate.Errorf(agentgate.EINVALID, "input: not valid against the playbook's input_schema: %s", strings.Join(problems, "; "))
	}
	return nil
}

// jsonType names the JSON type of a decoded value.
func jsonType(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case float64, json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "null"
}
