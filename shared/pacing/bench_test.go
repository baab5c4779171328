package pacing_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/pacing"
)

// slowStore is the memory store with a DynamoDB UpdateItem's round trip
// (about 5 ms from a Lambda function in the table's region) added to
// each take, counting them.
type slowStore struct {
	*pacing.Memory
	rtt    time.Duration
	writes atomic.Int64
}

func (s *slowStore) Take(ctx context.Context, dest string, in pacing.TakeInput) (pacing.Grant, error) {
	s.writes.Add(1)
	if s.rtt > 0 {
		time.Sleep(s.rtt)
	}
	return s.Memory.Take(ctx, dest, in)
}

// WritesBudget is the most bucket writes per request a lane running at its
// rate may cost at 1000/s (leases of LeaseSpan's worth: 100 tokens).
const WritesBudget = 0.02

// BenchmarkTake measures what pacing adds to each request of a lane
// running at its rate (a clock that moves one interval per request, so no
// take waits): on the memory store (our code alone), and on one answering
// in 5 ms, at 5/s (a write per request) and 1000/s (a lease of 100). It
// reports the bucket writes per request and fails when the 1000/s lane
// takes more than WritesBudget.
func BenchmarkTake(b *testing.B) {
	for _, c := range []struct {
		name string
		rate int
		rtt  time.Duration
	}{
		{"memory/5-per-second", 5, 0},
		{"memory/1000-per-second", 1000, 0},
		{"5ms/5-per-second", 5, 5 * time.Millisecond},
		{"5ms/1000-per-second", 1000, 5 * time.Millisecond},
	} {
		b.Run(c.name, func(b *testing.B) {
			pace := config.Pace{N: c.rate, Per: time.Second, Burst: c.rate}
			store := &slowStore{Memory: pacing.NewMemory(), rtt: c.rtt}
			var clock atomic.Int64
			start := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
			step := time.Second / time.Duration(c.rate)
			p, err := pacing.New(pacing.Options{Destination: "d", Pace: pace, Store: store, Now: func() time.Time { return start.Add(time.Duration(clock.Load())) }})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				clock.Add(int64(step))
				_, wait, err := p.Take(ctx)
				if err != nil || wait != 0 {
					b.Fatalf("take at the rate: wait %v, %v", wait, err)
				}
			}
			b.StopTimer()
			writes := float64(store.writes.Load()) / float64(b.N)
			b.ReportMetric(writes, "writes/op")
			if c.rate == 1000 && b.N >= 1000 && writes > WritesBudget {
				b.Errorf("%s writes per request, over the budget of %v", fmt.Sprint(writes), WritesBudget)
			}
		})
	}
}
