package embedded

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/pkg/agentgate"
	"github.com/agentgate/agentgate/pkg/store"
	"github.com/agentgate/agentgate/pkg/store/storetest"
)

func open(tb testing.TB, path string, opts ...Option) *Store {
	tb.Helper()
	s, err := Open(path, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

func newStore(tb testing.TB, clock func() time.Time) store.Store {
	return open(tb, filepath.Join(tb.TempDir(), "agentgate.db"), WithClock(clock))
}

func TestContract(t *testing.T) { storetest.Run(t, newStore) }

func BenchmarkStore(b *testing.B) { storetest.Bench(b, newStore) }

func TestPersistsAcrossReopen(t *testing.T) {
	ctx := context.Background()
	clock := storetest.NewClock()
	path := filepath.Join(t.TempDir(), "not", "yet", "there", "agentgate.db")
	in := store.Item{
		Key:       store.Key{PK: "P", SK: "S"},
		Kind:      "thing",
		Data:      []byte(`{"a":1}`),
		Index1:    store.IndexKey{PK: "I1", SK: "x"},
		Index2:    store.IndexKey{PK: "I2", SK: "y"},
		ExpiresAt: clock.Now().Add(time.Hour),
	}

	s := open(t, path, WithClock(clock.Now))
	if _, err := s.Create(ctx, in); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(ctx, in.Key, 3, store.AddOptions{}); err != nil {
		t.Fatal(err)
	}
	before, err := s.Get(ctx, in.Key)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = open(t, path, WithClock(clock.Now))
	after, err := s.Get(ctx, in.Key)
	if err != nil {
		t.Fatal(err)
	}
	if after.Key != in.Key || after.Kind != in.Kind || string(after.Data) != string(in.Data) ||
		after.Index1 != in.Index1 || after.Index2 != in.Index2 || !after.ExpiresAt.Equal(in.ExpiresAt) ||
		after.Version != 1 || after.Count != 3 || !after.CountedAt.Equal(before.CountedAt) {
		t.Fatalf("after reopen: %+v, before: %+v", after, before)
	}
	for _, q := range []store.Query{{Index: store.Index1, PK: "I1"}, {Index: store.Index2, PK: "I2"}} {
		page, err := s.Query(ctx, q)
		if err != nil || len(page.Items) != 1 || page.Items[0].Key != in.Key {
			t.Fatalf("index %d after reopen: %+v, %v", q.Index, page, err)
		}
	}
	if n, err := s.Add(ctx, in.Key, 1, store.AddOptions{MustExist: true}); err != nil || n != 4 {
		t.Fatalf("Add after reopen = %d, %v; want 4", n, err)
	}
}

func TestClosedStoreIsUnavailable(t *testing.T) {
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "agentgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	k := store.Key{PK: "P", SK: "S"}
	it := store.Item{Key: k, Version: 1}
	ops := map[string]func() error{
		"Get":    func() error { _, err := s.Get(ctx, k); return err },
		"Create": func() error { _, err := s.Create(ctx, it); return err },
		"Put":    func() error { _, err := s.Put(ctx, it); return err },
		"Update": func() error { _, err := s.Update(ctx, it); return err },
		"Delete": func() error { return s.Delete(ctx, k) },
		"Query":  func() error { _, err := s.Query(ctx, store.Query{PK: "P"}); return err },
		"Add":    func() error { _, err := s.Add(ctx, k, 1, store.AddOptions{}); return err },
	}
	for name, op := range ops {
		err := op()
		if !errors.Is(err, store.ErrUnavailable) || agentgate.ErrorCode(err) != agentgate.EUNAVAILABLE {
			t.Errorf("%s on a closed store: %v, want ErrUnavailable", name, err)
		}
	}
}

func TestSecondOpenFailsClearly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agentgate.db")
	open(t, path)
	began := time.Now()
	s, err := Open(path)
	if err == nil {
		s.Close()
		t.Fatal("second Open of a file in use succeeded")
	}
	if !strings.Contains(err.Error(), "store file is in use by another process") {
		t.Fatalf("second Open: %v", err)
	}
	if d := time.Since(began); d > 5*lockTimeout {
		t.Fatalf("second Open took %v to fail", d)
	}
}

// TestKeyEncoding checks the cases the contract suite cannot tell apart from
// a naive separator: sort keys that are prefixes of one another or contain
// 0x00, partitions whose names extend one another, and cursors that belong
// elsewhere.
func TestKeyEncoding(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, time.Now)
	sks := []string{"a", "a\x00", "a\x00b", "a\x01", "ab", "b", "\xff"}
	for _, pk := range []string{"P", "P\x00", "P\x00\x01", "Pa"} {
		for _, sk := range slices.Backward(sks) {
			_, err := s.Create(ctx, store.Item{Key: store.Key{PK: pk, SK: sk}, Index1: store.IndexKey{PK: "I", SK: sk}})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	list := func(q store.Query) []string {
		t.Helper()
		var out []string
		for {
			page, err := s.Query(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range page.Items {
				if it.PK != q.PK {
					t.Fatalf("partition %q returned an item of %q", q.PK, it.PK)
				}
				out = append(out, it.SK)
			}
			if page.Next == "" {
				return out
			}
			q.Cursor = page.Next
		}
	}
	if got := list(store.Query{PK: "P\x00", Limit: 2}); !slices.Equal(got, sks) {
		t.Fatalf("ascending = %q, want %q", got, sks)
	}
	rev := slices.Clone(sks)
	slices.Reverse(rev)
	if got := list(store.Query{PK: "P\x00", Limit: 3, Descending: true}); !slices.Equal(got, rev) {
		t.Fatalf("descending = %q, want %q", got, rev)
	}
	if got, want := list(store.Query{PK: "P\x00", SKPrefix: "a\x00"}), []string{"a\x00", "a\x00b"}; !slices.Equal(got, want) {
		t.Fatalf("prefix a\\x00 = %q, want %q", got, want)
	}

	// A cursor names a position in one partition, prefix and index only.
	page, err := s.Query(ctx, store.Query{PK: "P", Limit: 1})
	if err != nil || page.Next == "" {
		t.Fatalf("first page: %+v, %v", page, err)
	}
	for name, q := range map[string]store.Query{
		"other partition": {PK: "Pa", Cursor: page.Next},
		"other prefix":    {PK: "P", SKPrefix: "b", Cursor: page.Next},
		"index":           {Index: store.Index1, PK: "P", Cursor: page.Next},
	} {
		if _, err := s.Query(ctx, q); !errors.Is(err, store.ErrBadCursor) {
			t.Errorf("%s: %v, want ErrBadCursor", name, err)
		}
	}
}

// TestCursorOutlivesItsItem checks that a page's cursor still resumes in
// place when the item it ended on is deleted before the next page is read.
func TestCursorOutlivesItsItem(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, time.Now)
	for _, sk := range []string{"1", "2", "3"} {
		if _, err := s.Create(ctx, store.Item{Key: store.Key{PK: "P", SK: sk}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		desc      bool
		first, at string
	}{{false, "1", "2"}, {true, "3", "2"}} {
		page, err := s.Query(ctx, store.Query{PK: "P", Limit: 1, Descending: tc.desc})
		if err != nil || len(page.Items) != 1 || page.Items[0].SK != tc.first {
			t.Fatalf("first page (descending %v): %+v, %v", tc.desc, page, err)
		}
		if err := s.Delete(ctx, page.Items[0].Key); err != nil {
			t.Fatal(err)
		}
		page, err = s.Query(ctx, store.Query{PK: "P", Limit: 1, Descending: tc.desc, Cursor: page.Next})
		if err != nil || len(page.Items) != 1 || page.Items[0].SK != tc.at {
			t.Fatalf("page after deleting the cursor's item (descending %v): %+v, %v", tc.desc, page, err)
		}
	}
}
