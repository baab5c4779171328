package transform

import (
	"context"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// peakHeap samples the Go heap (live and not yet swept objects) every
// 200 µs while run runs and returns the highest sample.
func peakHeap(run func()) uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Microsecond):
			}
		}
	}()
	run()
	close(stop)
	<-done
	return peak.Load()
}

// BenchmarkTransformBounds runs each hostile case (the five first),
// and the 4.5 MB bodies of
// tiny values, one and ten at once with the deployed budget (128 MB, 10
// events at once), beside an ordinary small transform, reporting the
// peak Go heap (peak-heap-MiB; the bound is half the function's memory,
// 64 MiB).
func BenchmarkTransformBounds(b *testing.B) {
	type tcase struct {
		name, expr string
		body       []byte
	}
	cases := []tcase{{"ordinary", `{text: "paid \(.amount / 100) \(.currency | ascii_upcase)", id}`, []byte(`{"id":"evt_1","amount":2000,"currency":"usd"}`)}}
	for _, h := range hostile {
		cases = append(cases, tcase{h.name, h.expr, []byte(`{}`)})
	}
	cases = append(cases, tcase{"4.5MB objects", `length`, tinyValues(4_500_000, "{}")}, tcase{"4.5MB zeros", `length`, tinyValues(4_500_000, "0")})
	for _, c := range cases {
		p, err := Compile(c.expr, WithBudget(Budget(DefaultMemoryMB, DefaultConcurrency)))
		if err != nil {
			b.Fatal(err)
		}
		for _, n := range []int{1, 10} {
			b.Run(c.name+"/"+map[int]string{1: "one", 10: "ten"}[n], func(b *testing.B) {
				var peak uint64
				for b.Loop() {
					peak = max(peak, peakHeap(func() {
						var wg sync.WaitGroup
						for range n {
							wg.Add(1)
							go func() { defer wg.Done(); p.Apply(context.Background(), c.body) }()
						}
						wg.Wait()
					}))
				}
				b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			})
		}
	}
}
