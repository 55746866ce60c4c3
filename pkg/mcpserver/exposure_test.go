package mcpserver

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgate/agentgate/pkg/store/storetest"
)

// TestExposureCopy: an instance's copy of the exposure set is read once for
// all the requests that want it at the same time, used without a read
// while younger than ExposureRefresh, and kept through a failed read,
// which is tried again a quarter of ExposureRefresh later.
func TestExposureCopy(t *testing.T) {
	var (
		mu    sync.Mutex
		now   = storetest.Epoch
		reads atomic.Int64
		fail  atomic.Bool
		names = []string{"sample-echo"}
	)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	release := make(chan struct{})
	e := &exposure{reserved: ToolNames, every: ExposureRefresh, now: clock,
		read: func(ctx context.Context) ([]string, error) {
			reads.Add(1)
			<-release
			if fail.Load() {
				return nil, errors.New("table down")
			}
			return names, nil
		}}
	if _, fresh := e.current(); fresh {
		t.Fatal("a copy never read is fresh")
	}
	var wg sync.WaitGroup
	sets := make([]*exposureSet, 20)
	for i := range sets {
		wg.Go(func() { sets[i] = e.refresh(t.Context()) })
	}
	time.Sleep(50 * time.Millisecond) // let them all wait on the one read
	close(release)
	wg.Wait()
	if reads.Load() != 1 {
		t.Errorf("%d reads for 20 concurrent requests, want 1", reads.Load())
	}
	for _, set := range sets {
		if set.tools["sample-echo"] != "chat_with_sample_echo" {
			t.Fatalf("set %+v", set)
		}
	}
	advance(ExposureRefresh - time.Millisecond)
	if set, fresh := e.current(); !fresh || set != sets[0] {
		t.Error("the copy is not used while young")
	}
	advance(time.Millisecond)
	if _, fresh := e.current(); fresh {
		t.Error("the copy is used at ExposureRefresh")
	}

	fail.Store(true)
	if set := e.refresh(t.Context()); set.tools["sample-echo"] == "" {
		t.Errorf("a failed read dropped the last copy: %+v", set)
	}
	if _, fresh := e.current(); !fresh {
		t.Error("a failed read is retried at once")
	}
	advance(ExposureRefresh / 4)
	if _, fresh := e.current(); fresh {
		t.Error("a failed read is not retried after a quarter of ExposureRefresh")
	}
	fail.Store(false)
	names = nil
	if set := e.refresh(t.Context()); len(set.tools) != 0 || reads.Load() != 3 {
		t.Errorf("after the table is back: %+v, %d reads", set, reads.Load())
	}
}
