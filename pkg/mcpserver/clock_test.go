package mcpserver_test

import (
	"testing"
	"time"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/app/apptest"
	"github.com/agentgate/agentgate/pkg/mcpserver"
	"github.com/agentgate/agentgate/pkg/store/storetest"
)

// TestFarFromTheWallClock runs the whole stack, both stores and both
// protocol generations, on a clock decades before and a century after the
// wall clock: key checks, sessions and their TTLs, consent state and
// records, dedup claims, execution records. Had any component stamped a
// time from the wall clock that another judges by the stack's clock (a
// session, consent or claim "expired" decades ago), a consented dispatch
// could not complete; and the records carry the stack's time.
func TestFarFromTheWallClock(t *testing.T) {
	for _, epoch := range []time.Time{storetest.Epoch, storetest.Epoch.AddDate(100, 0, 0)} {
		for _, backend := range apptest.Backends {
			for _, version := range []string{mcpserver.Version20260728, mcpserver.Version20251125} {
				t.Run(epoch.Format("2006")+"/"+backend+"/"+version, func(t *testing.T) { onClock(t, epoch, backend, version) })
			}
		}
	}
}

func onClock(t *testing.T, epoch time.Time, backend, version string) {
	start := time.Now()
	clock := func() time.Time { return epoch.Add(time.Since(start)) }
	s := apptest.NewOn(t, backend, nil, clock)
	cs := client(t, s.Serve(), s.Key("alice", agentgate.ScopeUser), version, approve, nil)
	out, res := dispatch(t, cs, map[string]any{"agentId": s.AgentID, "instruction": "reverse stressed"})
	if !out.Dispatched || res.IsError {
		t.Fatalf("dispatch: %+v %v", out, res.Content)
	}
	done := await(t, cs, out.TaskID)
	if done.Status != "completed" || done.Result != "desserts" {
		t.Fatalf("execution %+v, want completed", done)
	}
	for name, at := range map[string]time.Time{"createdAt": done.CreatedAt, "updatedAt": done.UpdatedAt, "finishedAt": done.FinishedAt} {
		if at.Before(epoch) || at.After(clock()) {
			t.Errorf("%s %v: not on the stack's clock (from %v)", name, at, epoch)
		}
	}
}
