package execution_test

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/execution"
	"github.com/agentgate/agentgate/pkg/store"
	"github.com/agentgate/agentgate/pkg/store/dynamo/dynalite"
	"github.com/agentgate/agentgate/pkg/store/storetest"
	"github.com/agentgate/agentgate/pkg/store/teststores"
)

func TestMain(m *testing.M) {
	code := m.Run()
	dynalite.Stop()
	os.Exit(code)
}

func newExec(caller, agent, id string) execution.Execution {
	return execution.Execution{
		Ref:   execution.Ref{Origin: execution.OriginA2A, Scope: agent, ID: id},
		Agent: agent, Caller: caller, RemoteTaskID: id, State: a2a.TaskStateSubmitted,
	}
}

func TestCreateGetUpdate(t *testing.T) {
	teststores.ForEach(t, func(t *testing.T, st store.Store, clock *storetest.Clock) {
		s := execution.New(st, clock.Now)
		e, err := s.Create(t.Context(), newExec("alice", "echo", "t-1"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Create(t.Context(), newExec("alice", "echo", "t-1")); agentgate.ErrorCode(err) != agentgate.ECONFLICT {
			t.Errorf("second create: %v, want conflict", err)
		}
		got, err := s.Get(t.Context(), e.Ref)
		if err != nil || got.Caller != "alice" || got.State != a2a.TaskStateSubmitted || !got.CreatedAt.Equal(clock.Now()) {
			t.Fatalf("get: %+v, %v", got, err)
		}
		clock.Advance(time.Second)
		done, err := s.Update(t.Context(), e.Ref, func(x *execution.Execution) bool {
			x.State, x.Text, x.Caller = a2a.TaskStateCompleted, "hello", "mallory"
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		if done.Caller != "alice" || !done.FinishedAt.Equal(clock.Now()) || done.Text != "hello" {
			t.Errorf("after update: %+v; the caller must not change and FinishedAt must be set", done)
		}
		// A terminal state is final.
		back, err := s.Update(t.Context(), e.Ref, func(x *execution.Execution) bool { x.State = a2a.TaskStateWorking; return true })
		if err != nil || back.State != a2a.TaskStateCompleted {
			t.Errorf("moving back: state %s, %v; want completed", back.State, err)
		}
		if _, err := s.Get(t.Context(), execution.Ref{Origin: "a2a", Scope: "echo", ID: "nope"}); agentgate.ErrorCode(err) != agentgate.ENOTFOUND {
			t.Errorf("unknown ref: %v", err)
		}
	})
}

// TestFinishedAtIsTheAgents: an execution ends when the agent says it did,
// not when agentgate happened to poll; an agent clock that is off cannot put
// the end before the start or in the future.
func TestFinishedAtIsTheAgents(t *testing.T) {
	teststores.ForEach(t, func(t *testing.T, st store.Store, clock *storetest.Clock) {
		s := execution.New(st, clock.Now)
		start := clock.Now()
		for _, tc := range []struct {
			name   string
			agent  time.Time // the agent's status time; zero: none given
			want   time.Time
			create bool // created already finished rather than updated
		}{
			{"agent's time", start.Add(3 * time.Second), start.Add(3 * time.Second), false},
			{"no time given", time.Time{}, start.Add(10 * time.Second), false},
			{"agent clock ahead", start.Add(time.Hour), start.Add(10 * time.Second), false},
			{"agent clock behind", start.Add(-time.Hour), start, false},
			{"finished on creation", start.Add(-time.Hour), start, true},
		} {
			clock.Advance(-clock.Now().Sub(start)) // back to start
			e := newExec("alice", "echo", tc.name)
			if tc.create {
				e.State, e.FinishedAt = a2a.TaskStateCompleted, tc.agent
			}
			e, err := s.Create(t.Context(), e)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.create {
				clock.Advance(10 * time.Second) // agentgate polls 10 s after the start
				if e, err = s.Update(t.Context(), e.Ref, func(x *execution.Execution) bool {
					x.State, x.FinishedAt = a2a.TaskStateCompleted, tc.agent
					return true
				}); err != nil {
					t.Fatal(err)
				}
			}
			got, err := s.Get(t.Context(), e.Ref)
			if err != nil || !got.FinishedAt.Equal(tc.want) || !e.FinishedAt.Equal(tc.want) {
				t.Errorf("%s: finishedAt %v (returned %v), %v; want %v", tc.name, got.FinishedAt, e.FinishedAt, err, tc.want)
			}
		}
	})
}

// TestRunningCountsEachEndOnce: 8 instances see one task end at once; the
// agent's running count drops by one.
func TestRunningCountsEachEndOnce(t *testing.T) {
	teststores.ForEach(t, func(t *testing.T, st store.Store, clock *storetest.Clock) {
		s := execution.New(st, clock.Now)
		for i := range 3 {
			if _, err := s.Create(t.Context(), newExec("alice", "echo", fmt.Sprint("t-", i))); err != nil {
				t.Fatal(err)
			}
		}
		finished := newExec("alice", "echo", "t-done")
		finished.State = a2a.TaskStateCompleted
		if _, err := s.Create(t.Context(), finished); err != nil {
			t.Fatal(err)
		}
		if n, err := s.Running(t.Context(), "echo"); err != nil || n != 3 {
			t.Fatalf("running = %d, %v; want 3", n, err)
		}
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				_, err := s.Update(t.Context(), execution.Ref{Origin: "a2a", Scope: "echo", ID: "t-0"}, func(x *execution.Execution) bool {
					x.State = a2a.TaskStateFailed
					return true
				})
				if err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if n, _ := s.Running(t.Context(), "echo"); n != 2 {
			t.Errorf("running = %d after one task ended, want 2", n)
		}
		if n, _ := s.Running(t.Context(), "other"); n != 0 {
			t.Errorf("an agent without executions runs %d", n)
		}
	})
}

func TestListNewestFirstByCallerAndAgent(t *testing.T) {
	teststores.ForEach(t, func(t *testing.T, st store.Store, clock *storetest.Clock) {
		s := execution.New(st, clock.Now)
		for i, c := range []struct{ caller, agent string }{{"alice", "echo"}, {"bob", "echo"}, {"alice", "other"}, {"alice", "echo"}} {
			clock.Advance(1500 * time.Millisecond) // mixes whole and half seconds, which RFC3339Nano would misorder
			if _, err := s.Create(t.Context(), newExec(c.caller, c.agent, fmt.Sprint("t-", i))); err != nil {
				t.Fatal(err)
			}
		}
		ids := func(f execution.Filter) string {
			var all []string
			for {
				page, next, err := s.List(t.Context(), f)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range page {
					all = append(all, e.ID)
				}
				if next == "" {
					return strings.Join(all, ",")
				}
				f.Cursor = next
			}
		}
		if got := ids(execution.Filter{Caller: "alice", Limit: 1}); got != "t-3,t-2,t-0" {
			t.Errorf("alice's executions: %s", got)
		}
		if got := ids(execution.Filter{Agent: "echo", Limit: 2}); got != "t-3,t-1,t-0" {
			t.Errorf("echo's executions: %s", got)
		}
		if _, _, err := s.List(t.Context(), execution.Filter{}); agentgate.ErrorCode(err) != agentgate.EINVALID {
			t.Errorf("an unfiltered list: %v", err)
		}
	})
}

func TestTextIsClipped(t *testing.T) {
	teststores.ForEach(t, func(t *testing.T, st store.Store, clock *storetest.Clock) {
		s := execution.New(st, clock.Now)
		e := newExec("alice", "echo", "t-big")
		e.Text = strings.Repeat("é", execution.MaxText) // 2 bytes each
		created, err := s.Create(t.Context(), e)
		if err != nil {
			t.Fatal(err)
		}
		if len(created.Text) > execution.MaxText || !strings.HasSuffix(created.Text, "é") {
			t.Errorf("clipped to %d bytes, ending %q", len(created.Text), created.Text[len(created.Text)-2:])
		}
	})
}

// TestUpdateFromStaleRecord: an update from a record someone changed since
// it was read reads it again and applies the change to the new state.
func TestUpdateFromStaleRecord(t *testing.T) {
	teststores.ForEach(t, func(t *testing.T, st store.Store, clock *storetest.Clock) {
		s := execution.New(st, clock.Now)
		e, err := s.Create(t.Context(), newExec("alice", "echo", "t-stale"))
		if err != nil {
			t.Fatal(err)
		}
		read, err := s.Get(t.Context(), e.Ref)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Update(t.Context(), e.Ref, func(x *execution.Execution) bool { x.Text = "changed meanwhile"; return true }); err != nil {
			t.Fatal(err)
		}
		calls := 0
		got, err := s.UpdateFrom(t.Context(), read, func(x *execution.Execution) bool {
			calls++
			x.State = a2a.TaskStateWorking
			return true
		})
		if err != nil || got.Text != "changed meanwhile" || got.State != a2a.TaskStateWorking || calls != 2 {
			t.Errorf("update from a stale read: %+v, %v, change called %d times (want 2: stale, then fresh)", got, err, calls)
		}
		// From a fresh read, one attempt.
		calls = 0
		if _, err := s.UpdateFrom(t.Context(), got, func(x *execution.Execution) bool { calls++; return true }); err != nil || calls != 1 {
			t.Errorf("update from a fresh record: %v, change called %d times", err, calls)
		}
	})
}
