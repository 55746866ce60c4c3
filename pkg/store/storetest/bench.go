package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/agentgate/agentgate/pkg/store"
)

// Bench measures the three operations every request path is built from: a
// get, a conditional create and a conditional (compare-and-set) update.
func Bench(b *testing.B, f Factory) {
	b.Run("Get", func(b *testing.B) {
		s := f(b, time.Now)
		mustCreate(b, s, store.Item{Key: key("bench"), Data: []byte(`{"state":"working"}`)})
		c := ctx(b)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.Get(c, key("bench")); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("CreateIfAbsent", func(b *testing.B) {
		s := f(b, time.Now)
		c := ctx(b)
		i := 0
		b.ReportAllocs()
		for b.Loop() {
			i++
			if _, err := s.Create(c, store.Item{Key: key(fmt.Sprint("c", i)), Data: []byte(`{"state":"working"}`), ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("UpdateCompareAndSet", func(b *testing.B) {
		s := f(b, time.Now)
		it := mustCreate(b, s, store.Item{Key: key("bench"), Data: []byte(`{"state":"working"}`)})
		c := ctx(b)
		b.ReportAllocs()
		for b.Loop() {
			var err error
			if it, err = s.Update(c, it); err != nil {
				b.Fatal(err)
			}
		}
	})
}
