package dynamo_test

import (
	"context"
	"errors"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/agentgate/agentgate/pkg/store"
	"github.com/agentgate/agentgate/pkg/store/dynamo"
	"github.com/agentgate/agentgate/pkg/store/dynamo/dynalite"
	"github.com/agentgate/agentgate/pkg/store/storetest"
)

func TestMain(m *testing.M) {
	m.Run()
	dynalite.Stop()
}

func factory(tb testing.TB, clock func() time.Time) store.Store {
	return dynalite.Start(tb).Store(tb, clock)
}

func TestContract(t *testing.T) { storetest.Run(t, factory) }

func BenchmarkStore(b *testing.B) { storetest.Bench(b, factory) }

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// The contract only has Create replace an expired item; Put and Add reach
// one through their own fallback.
func TestWritesOverExpiredItemsStartAfresh(t *testing.T) {
	clock := storetest.NewClock()
	s := factory(t, clock.Now)
	k := store.Key{PK: "old", SK: "S"}
	// expire leaves an expired item at k with version 2 and count 5.
	expire := func() {
		t.Helper()
		it := store.Item{Key: k, Data: []byte(`1`), ExpiresAt: clock.Now().Add(time.Second), Index1: store.IndexKey{PK: "I", SK: "1"}}
		if _, err := s.Put(ctx(t), it); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Put(ctx(t), it); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Add(ctx(t), k, 5, store.AddOptions{}); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Second)
	}

	expire()
	got, err := s.Put(ctx(t), store.Item{Key: k, Data: []byte(`2`)})
	if err != nil || got.Version != 1 || got.Count != 0 || !got.Index1.IsZero() || !got.ExpiresAt.IsZero() {
		t.Fatalf("Put over an expired item = %+v, %v; want a fresh item at version 1", got, err)
	}
	if err := s.Delete(ctx(t), k); err != nil {
		t.Fatal(err)
	}

	expire()
	if n, err := s.Add(ctx(t), k, 2, store.AddOptions{}); err != nil || n != 2 {
		t.Fatalf("Add (no expiry) over an expired item = %d, %v; want 2", n, err)
	}
	if got, err := s.Get(ctx(t), k); err != nil || got.Version != 1 || got.Data != nil || !got.ExpiresAt.IsZero() || !got.Index1.IsZero() {
		t.Fatalf("counter that replaced an expired item = %+v, %v", got, err)
	}
}

func TestNoDataRoundTrips(t *testing.T) {
	s := factory(t, storetest.NewClock().Now)
	k := store.Key{PK: "empty", SK: "S"}
	if _, err := s.Create(ctx(t), store.Item{Key: k}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx(t), store.Item{Key: k}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(ctx(t), k); err != nil || len(got.Data) != 0 || got.Version != 2 {
		t.Fatalf("Get = %+v, %v; want no data at version 2", got, err)
	}
}

// An item that exists without an expiry keeps having none when Add is told
// the expiry of an item it would create.
func TestAddKeepsPermanentItemsPermanent(t *testing.T) {
	clock := storetest.NewClock()
	s := factory(t, clock.Now)
	k := store.Key{PK: "forever", SK: "S"}
	if _, err := s.Create(ctx(t), store.Item{Key: k, Data: []byte(`1`)}); err != nil {
		t.Fatal(err)
	}
	for want := int64(1); want <= 2; want++ {
		n, err := s.Add(ctx(t), k, 1, store.AddOptions{ExpiresAt: clock.Now().Add(time.Minute)})
		if err != nil || n != want {
			t.Fatalf("Add = %d, %v; want %d", n, err, want)
		}
	}
	got, err := s.Get(ctx(t), k)
	if err != nil || !got.ExpiresAt.IsZero() || got.Count != 2 || string(got.Data) != "1" {
		t.Fatalf("after Add: %+v, %v; want the record unchanged, count 2, no expiry", got, err)
	}
}

func TestQueryRejectsCursorOfAnotherQuery(t *testing.T) {
	s := factory(t, storetest.NewClock().Now)
	for _, sk := range []string{"a", "b"} {
		it := store.Item{Key: store.Key{PK: "P", SK: sk}, Data: []byte(`1`), Index1: store.IndexKey{PK: "I", SK: sk}}
		if _, err := s.Create(ctx(t), it); err != nil {
			t.Fatal(err)
		}
	}
	page, err := s.Query(ctx(t), store.Query{PK: "P", Limit: 1})
	if err != nil || page.Next == "" {
		t.Fatalf("first page: %+v, %v", page, err)
	}
	for name, q := range map[string]store.Query{
		"other index":     {Index: store.Index1, PK: "I", Cursor: page.Next},
		"other partition": {PK: "Q", Cursor: page.Next},
		"other prefix":    {PK: "P", SKPrefix: "b", Cursor: page.Next},
	} {
		if _, err := s.Query(ctx(t), q); !errors.Is(err, store.ErrBadCursor) {
			t.Errorf("%s: got %v, want ErrBadCursor", name, err)
		}
	}
	page, err = s.Query(ctx(t), store.Query{PK: "P", Limit: 1, Cursor: page.Next})
	if got := page.Items; err != nil || len(got) != 1 || got[0].SK != "b" {
		t.Fatalf("second page: %+v, %v", page, err)
	}
}

// unavailable checks that err reads as a store failure, never as an answer.
func unavailable(t *testing.T, op string, err error) {
	t.Helper()
	if !errors.Is(err, store.ErrUnavailable) || errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrConflict) {
		t.Fatalf("%s: got %v, want only ErrUnavailable", op, err)
	}
}

func TestUnreachableIsUnavailable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	client := dynamodb.New(dynamodb.Options{
		Region:           "us-east-1",
		BaseEndpoint:     aws.String(closed),
		Credentials:      credentials.NewStaticCredentialsProvider("x", "x", ""),
		RetryMaxAttempts: 1,
	})
	s := dynamo.New(client, "agentgate")

	c, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	begin := time.Now()
	_, err = s.Get(c, store.Key{PK: "P", SK: "S"})
	unavailable(t, "Get", err)
	if d := time.Since(begin); d > 2*time.Second {
		t.Fatalf("failing took %v", d)
	}
	_, err = s.Create(c, store.Item{Key: store.Key{PK: "P", SK: "S"}})
	unavailable(t, "Create", err)

	// A spent deadline is the store failing the request too, and keeps its
	// cause for whoever tells a timeout from an outage.
	past, cancel := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
	defer cancel()
	_, err = s.Get(past, store.Key{PK: "P", SK: "S"})
	unavailable(t, "Get past the deadline", err)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Get past the deadline: %v does not match context.DeadlineExceeded", err)
	}
}

func TestMissingTableIsUnavailable(t *testing.T) {
	s := dynamo.New(dynalite.Start(t).Client(), "no-such-table")
	_, err := s.Get(ctx(t), store.Key{PK: "P", SK: "S"})
	unavailable(t, "Get", err)
	var noTable *types.ResourceNotFoundException
	if !errors.As(err, &noTable) {
		t.Fatalf("Get: %v does not keep its cause", err)
	}
	_, err = s.Query(ctx(t), store.Query{PK: "P"})
	unavailable(t, "Query", err)
	_, err = s.Add(ctx(t), store.Key{PK: "P", SK: "S"}, 1, store.AddOptions{})
	unavailable(t, "Add", err)
}

func TestEnsureTable(t *testing.T) {
	srv := dynalite.Start(t)
	const table = "ensure-table"
	s, err := dynamo.Open(ctx(t), dynamo.Config{Table: table, Endpoint: srv.Endpoint()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Client().DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(table)})
	})
	for range 2 {
		if err := s.EnsureTable(ctx(t)); err != nil {
			t.Fatalf("EnsureTable: %v", err)
		}
	}
	out, err := srv.Client().DescribeTable(ctx(t), &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatal(err)
	}
	d := out.Table
	if d.TableStatus != types.TableStatusActive || d.BillingModeSummary == nil || d.BillingModeSummary.BillingMode != types.BillingModePayPerRequest {
		t.Errorf("table is %s, billing %+v; want ACTIVE and PAY_PER_REQUEST", d.TableStatus, d.BillingModeSummary)
	}
	if got, want := keys(d.KeySchema), []string{store.AttrPK + " HASH", store.AttrSK + " RANGE"}; !slices.Equal(got, want) {
		t.Errorf("key schema %v, want %v", got, want)
	}
	var attrs []string
	for _, a := range d.AttributeDefinitions {
		attrs = append(attrs, aws.ToString(a.AttributeName)+" "+string(a.AttributeType))
	}
	wantAttrs := []string{store.AttrPK + " S", store.AttrSK + " S"}
	for _, ix := range store.Indexes {
		wantAttrs = append(wantAttrs, ix.PK+" S", ix.SK+" S")
	}
	if slices.Sort(attrs); !slices.Equal(attrs, slices.Sorted(slices.Values(wantAttrs))) {
		t.Errorf("attribute definitions %v, want %v", attrs, wantAttrs)
	}
	if len(d.GlobalSecondaryIndexes) != len(store.Indexes) {
		t.Fatalf("%d indexes, want %d", len(d.GlobalSecondaryIndexes), len(store.Indexes))
	}
	for _, want := range store.Indexes {
		i := slices.IndexFunc(d.GlobalSecondaryIndexes, func(g types.GlobalSecondaryIndexDescription) bool {
			return aws.ToString(g.IndexName) == want.Name
		})
		if i < 0 {
			t.Errorf("no index %s", want.Name)
			continue
		}
		g := d.GlobalSecondaryIndexes[i]
		if got := keys(g.KeySchema); !slices.Equal(got, []string{want.PK + " HASH", want.SK + " RANGE"}) || g.Projection.ProjectionType != types.ProjectionTypeAll {
			t.Errorf("index %s: keys %v, projection %s", want.Name, got, g.Projection.ProjectionType)
		}
	}

	// The store Open returned works on the table EnsureTable made.
	k := store.Key{PK: "P", SK: "S"}
	if _, err := s.Create(ctx(t), store.Item{Key: k, Data: []byte(`1`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx(t), k); err != nil {
		t.Fatal(err)
	}
}

func keys(ks []types.KeySchemaElement) []string {
	var out []string
	for _, k := range ks {
		out = append(out, aws.ToString(k.AttributeName)+" "+string(k.KeyType))
	}
	return out
}

// TestAbortedRequestsLeaveDynaliteUp: callers whose contexts end while
// their requests are in flight (request deadlines do this) get their
// error, and the shared dynalite, which exits when a request on a table is
// aborted, stays up for the next caller.
func TestAbortedRequestsLeaveDynaliteUp(t *testing.T) {
	st := dynalite.Start(t).Store(t, time.Now)
	for i := range 300 {
		c, cancel := context.WithTimeout(t.Context(), time.Duration(i%7)*200*time.Microsecond)
		st.Get(c, store.Key{PK: "P", SK: "S"})
		cancel()
	}
	if _, err := st.Get(t.Context(), store.Key{PK: "P", SK: "S"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("after 300 aborted requests: %v, want not found from a live dynalite", err)
	}
}
