package app

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/pkg/agent"
	"github.com/agentgate/agentgate/pkg/sampleagent"
)

// TestForbiddenAgentEndpoints: an agent endpoint on a link-local address
// (the instance metadata service) is refused at registration, and a
// loopback endpoint is refused at dial time when loopback is not allowed,
// even though registration did not see it.
func TestForbiddenAgentEndpoints(t *testing.T) {
	st, _ := backends()[0].open(t)
	d := mustDeps(t, mustConfig(t, testEnv(nil)), st)
	tmpl, err := agent.ParseFile("../../examples/agents/minimal.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tmpl.Endpoint = "http://169.254.169.254/latest/meta-data/"
	_, _, err = d.Agents.Import(t.Context(), "owner", tmpl)
	if err == nil || !strings.Contains(err.Error(), "endpoint: destination 169.254.169.254 is not allowed: link-local address") {
		t.Fatalf("importing a metadata-service endpoint: %v", err)
	}

	// Registered without the check (as if DNS had pointed elsewhere then).
	sample := sampleagent.New(sampleagent.Options{})
	srv := httptest.NewServer(sample.Handler())
	defer srv.Close()
	tmpl.Endpoint = srv.URL + "/"
	if _, _, err := agent.NewRegistry(st, nil).Import(t.Context(), "owner", tmpl); err != nil {
		t.Fatal(err)
	}
	st2, err := d.Dispatch.Status(t.Context(), tmpl.Name)
	if err != nil {
		t.Fatal(err)
	}
	if st2.Reachable || !strings.Contains(st2.Reason, "not an allowed destination") {
		t.Errorf("status of a loopback agent without loopback allowed: %+v", st2)
	}
	if sample.Received() != 0 {
		t.Error("the agent was reached")
	}
}
