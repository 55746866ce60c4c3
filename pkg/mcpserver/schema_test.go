package mcpserver_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/app/apptest"
	"github.com/agentgate/agentgate/pkg/mcpserver"
)

// TestSchemasHaveSingleTypes: no tool schema, input or output, gives a list
// of types (`["null","string"]`), which clients reading schemas through an
// OpenAPI-like subset refuse; and the results still validate against them
// (the SDK checks every structured result against its output schema), with
// an execution's end time among them.
func TestSchemasHaveSingleTypes(t *testing.T) {
	s := apptest.New(t, "embedded", map[string]string{"REQUIRE_DISPATCH_CONSENT": "false"})
	cs := client(t, s.Serve(), s.Key("alice", agentgate.ScopeUser), mcpserver.Version20260728, nil, nil)
	tools, names := toolNames(t, cs)
	if len(names) != len(mcpserver.UserToolNames) {
		t.Fatalf("tools %v", names)
	}
	for _, tool := range tools.Tools {
		for kind, schema := range map[string]any{"input": tool.InputSchema, "output": tool.OutputSchema} {
			data, err := json.Marshal(schema)
			if err != nil || string(data) == "null" {
				t.Fatalf("%s %s schema %s, %v", tool.Name, kind, data, err)
			}
			var v any
			json.Unmarshal(data, &v)
			for _, where := range typeLists(v, "") {
				t.Errorf("%s %s schema: a list of types at %s", tool.Name, kind, where)
			}
		}
	}

	out, _ := dispatch(t, cs, map[string]any{"agentId": s.AgentID, "instruction": "echo one"})
	done := await(t, cs, out.TaskID)
	if done.FinishedAt.IsZero() || done.FinishedAt.Before(done.CreatedAt) || done.FinishedAt.After(done.UpdatedAt) {
		t.Errorf("finishedAt %v, want within [createdAt %v, updatedAt %v]", done.FinishedAt, done.CreatedAt, done.UpdatedAt)
	}
	for tool, want := range map[string]string{
		"list_recent_executions":     "1 task.",
		"get_agent_activity_summary": "1 task in the last 24h0m0s: 1 completed.",
	} {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", tool, err, res)
		}
		if got := res.Content[0].(*mcp.TextContent).Text; got != want {
			t.Errorf("%s says %q, want %q", tool, got, want)
		}
	}
}

// typeLists returns where in the schema v a "type" is a list.
func typeLists(v any, at string) []string {
	var found []string
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v["type"].([]any); ok {
			found = append(found, at+"/type")
		}
		for k, c := range v {
			found = append(found, typeLists(c, at+"/"+k)...)
		}
	case []any:
		for i, c := range v {
			found = append(found, typeLists(c, fmt.Sprintf("%s/%d", at, i))...)
		}
	}
	return found
}
