package live

import (
	"fmt"
	"testing"

	"github.com/tradenet/gateway/upstream"
)

// BenchmarkFanout delivers one transaction to n subscriptions (each with
// a filter that matches it), as the poller's fan-out does: the cost per
// subscription, and allocations independent of n.
func BenchmarkFanout(b *testing.B) {
	for _, n := range []int{1, 1000, 10_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			const buffer = 1024
			f := newFeed(Config{Buffer: buffer, MaxSubscriptions: n, Logger: quiet}, func(tx *upstream.Transaction) *upstream.Transaction { return tx })
			for i := range n {
				filter := testFilters[[]string{"all", "exclude", "submitter"}[i%3]]
				f.subs = append(f.subs, &subscriber[*upstream.Transaction]{f: f, filter: newFilter(filter), idx: i, ch: make(chan *upstream.Transaction, buffer)})
				f.reserved++
			}
			rows := make([]upstream.Transaction, 1)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if i%buffer == buffer-1 {
					b.StopTimer()
					for _, s := range f.subs {
						for len(s.ch) > 0 {
							<-s.ch
						}
					}
					b.StartTimer()
				}
				rows[0] = upstream.Transaction{Block: upstream.Uint64(i + 1), Submitter: "bb02", Type: "Cancel Order"}
				f.fanout(rows)
			}
			b.StopTimer()
			if len(f.subs) != n || f.delivered != uint64(b.N*n) {
				b.Fatalf("%d subscriptions left, %d delivered", len(f.subs), f.delivered)
			}
		})
	}
}
