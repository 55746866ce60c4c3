// Package teststores runs a test on each of agentgate's stores: the embedded
// one and DynamoDB (dynalite), so that every service built on the store is
// tested on both, each on a fresh table with a controllable clock.
//
// A package that uses it stops dynalite in its TestMain:
//
//	func TestMain(m *testing.M) { code := m.Run(); dynalite.Stop(); os.Exit(code) }
package teststores

import (
	"path/filepath"
	"testing"

	"github.com/agentgate/agentgate/pkg/store"
	"github.com/agentgate/agentgate/pkg/store/dynamo/dynalite"
	"github.com/agentgate/agentgate/pkg/store/embedded"
	"github.com/agentgate/agentgate/pkg/store/storetest"
)

// Embedded opens a fresh embedded store in t's temporary directory, on clock.
func Embedded(t testing.TB, clock *storetest.Clock) store.Store {
	t.Helper()
	st, err := embedded.Open(filepath.Join(t.TempDir(), "agentgate.db"), embedded.WithClock(clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// Dynamo opens a fresh table on the shared dynalite server, on clock. With
// CI=true a missing dynalite fails the test; elsewhere it skips it.
func Dynamo(t testing.TB, clock *storetest.Clock) store.Store {
	t.Helper()
	return dynalite.Start(t).Store(t, clock.Now)
}

// ForEach runs fn as a subtest per store, each on a fresh store and clock.
func ForEach(t *testing.T, fn func(t *testing.T, st store.Store, clock *storetest.Clock)) {
	for _, s := range []struct {
		name string
		open func(testing.TB, *storetest.Clock) store.Store
	}{{"embedded", Embedded}, {"dynamodb", Dynamo}} {
		t.Run(s.name, func(t *testing.T) {
			clock := storetest.NewClock()
			fn(t, s.open(t, clock), clock)
		})
	}
}
