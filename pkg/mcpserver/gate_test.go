package mcpserver

import (
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agentgate/agentgate/pkg/mcpschema"
)

// TestRefusalFitsEveryWorkTool: the refusal pkg/mcpsession sends when a consent
// goes unanswered is dispatch_task's ({"dispatched": false, "reason"}),
// whatever the tool; it must be valid against the output schema of every
// tool that hands work to an agent, which clients check (the TypeScript
// SDK refuses a result that does not fit).
func TestRefusalFitsEveryWorkTool(t *testing.T) {
	res := result(DispatchOutput{Reason: "no answer"})
	data, err := json.Marshal(DispatchOutput{Reason: "no answer"})
	if err != nil || !res.IsError {
		t.Fatal(err)
	}
	var refusal map[string]any
	if err := json.Unmarshal(data, &refusal); err != nil {
		t.Fatal(err)
	}
	for name, schema := range map[string]*jsonschema.Schema{
		dispatchTool:       mcpschema.For[DispatchOutput](),
		askTool:            mcpschema.For[ChatOutput](),
		"chat_with_<slug>": mcpschema.For[ChatOutput](),
		runPlaybookTool:    mcpschema.For[PlaybookOutput](),
	} {
		resolved, err := schema.Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := resolved.Validate(refusal); err != nil {
			t.Errorf("%s: %s does not fit its output schema: %v", name, data, err)
		}
	}
}
