package delivery

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/delivery/sender/https"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/pausing"
)

// benchHandler builds a handler as main does, on the memory store and a
// fake SQS, with JSON logs and EMF metrics written to io.Discard.
func benchHandler(b *testing.B, url, secret string, client https.Doer, opts ...func(*laneOptions)) *Handler {
	b.Helper()
	hs := newHarness(b, url, secret, append([]func(*laneOptions){func(o *laneOptions) {
		o.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
		o.Metrics = metrics.NewRecorder(metrics.NewEMF(io.Discard))
		o.Now, o.Random = time.Now, nil
		if client != nil {
			o.Client = client
		}
	}}, opts...)...)
	return hs.h
}

// batches prepares n batches of size events with unique ids.
func batches(n, size int, prefix string) []events.SQSEvent {
	out := make([]events.SQSEvent, n)
	for i := range out {
		for j := range size {
			out[i].Records = append(out[i].Records, sqsRecord(fmt.Sprintf("%s-%d-%d", prefix, i, j), 1))
		}
	}
	return out
}

// BenchmarkBatch delivers batches to a loopback subscriber that answers
// after 100 ms. Concurrent delivery keeps a batch of 10 close to the cost of
// one: the budget is /10 ≤ 1.5 × /1.
func BenchmarkBatch(b *testing.B) {
	secret := newSecret(b)
	sub := newSubscriber(b, secret, func(string) reply { return reply{status: http.StatusOK, delay: 100 * time.Millisecond} })
	for _, size := range []int{1, 10} {
		b.Run(fmt.Sprint(size), func(b *testing.B) {
			h := benchHandler(b, sub.URL, secret, nil)
			// Warm the connections, as a warm function has them.
			h.Handle(context.Background(), batches(1, size, "warm")[0])
			evs := batches(b.N, size, fmt.Sprintf("b%d-%d", size, b.N))
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				resp, _ := h.Handle(context.Background(), evs[i])
				if len(resp.BatchItemFailures) != 0 {
					b.Fatalf("failures: %v", resp.BatchItemFailures)
				}
			}
		})
	}
}

// instantDoer answers 200 at once without a network: the handler's own
// cost, alone.
type instantDoer struct{}

func (instantDoer) Do(req *http.Request) (*http.Response, error) {
	_, _ = io.Copy(io.Discard, req.Body)
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(`{"ok":true}`))}, nil
}

// BenchmarkDeliveryCPU measures one delivery (parse, sign, claim, POST,
// record, log, metrics) with the memory store: through a fake transport
// (our code alone) and to an instant loopback subscriber (adds the HTTP
// client and, in this same process, the server). cpu-ns/op is the process's
// user+system CPU time per delivery.
func BenchmarkDeliveryCPU(b *testing.B) {
	secret := newSecret(b)
	sub := newSubscriber(b, secret, nil)
	for _, tc := range []struct {
		name   string
		client https.Doer
	}{{"fake-transport", instantDoer{}}, {"loopback", nil}} {
		b.Run(tc.name, func(b *testing.B) {
			h := benchHandler(b, sub.URL, secret, tc.client)
			b.ReportMetric(deliveryCPU(b, h, "c-"+tc.name), "cpu-ns/op")
		})
	}
}

// deliveryCPU delivers b.N one-message batches through h after one warm-up
// delivery and returns the process CPU per delivery, in nanoseconds.
func deliveryCPU(b *testing.B, h *Handler, prefix string) float64 {
	b.Helper()
	h.Handle(context.Background(), batches(1, 1, "warm")[0])
	evs := batches(b.N, 1, fmt.Sprintf("%s-%d", prefix, b.N))
	b.ReportAllocs()
	before := cpuTime()
	b.ResetTimer()
	for i := range b.N {
		resp, _ := h.Handle(context.Background(), evs[i])
		if len(resp.BatchItemFailures) != 0 {
			b.Fatalf("failures: %v", resp.BatchItemFailures)
		}
	}
	b.StopTimer()
	return float64(cpuTime()-before) / float64(b.N)
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// slowLanes is the memory lane store with the round trip of a DynamoDB
// call added to each call.
type slowLanes struct {
	*pausing.Memory
	rtt time.Duration
}

func (s slowLanes) Count(ctx context.Context, dest string, t pausing.Tally, at time.Time, w time.Duration) (pausing.State, error) {
	time.Sleep(s.rtt)
	return s.Memory.Count(ctx, dest, t, at, w)
}

func (s slowLanes) Get(ctx context.Context, dest string) (pausing.State, error) {
	time.Sleep(s.rtt)
	return s.Memory.Get(ctx, dest)
}

// PauseBudget is what counting a lane's attempts may add to a batch's wall
// time: one lane write after the batch.
const PauseBudget = 1.1

// BenchmarkPauseCounting delivers the same batches of 10, in turn, with a
// lane that does not pause and with one that counts every batch on a
// store answering in 5 ms (a DynamoDB UpdateItem's round trip), to a
// loopback subscriber answering after 100 ms. The budget: the counting
// lane's median batch takes at most PauseBudget × the plain one's.
func BenchmarkPauseCounting(b *testing.B) {
	secret := newSecret(b)
	sub := newSubscriber(b, secret, func(string) reply { return reply{status: http.StatusOK, delay: 100 * time.Millisecond} })
	plain := benchHandler(b, sub.URL, secret, nil)
	lanes := slowLanes{Memory: pausing.NewMemory(), rtt: 5 * time.Millisecond}
	counting := benchHandler(b, sub.URL, secret, nil, func(o *laneOptions) {
		o.Destination.Pause = &config.Pause{}
		policy, _ := pausing.RuleFor(o.Destination)
		l, err := pausing.New(pausing.Options{Destination: o.Destination.Name, Rule: policy, Store: lanes, Switch: &pausing.MemorySwitch{}})
		if err != nil {
			b.Fatal(err)
		}
		o.Lane, o.Requeue = l, &fakeRequeue{}
	})
	for _, h := range []*Handler{plain, counting} {
		h.Handle(context.Background(), batches(1, 10, "warm")[0])
	}
	evs := map[*Handler][]events.SQSEvent{plain: batches(b.N, 10, fmt.Sprintf("p-%d", b.N)), counting: batches(b.N, 10, fmt.Sprintf("c-%d", b.N))}
	spent := map[*Handler][]time.Duration{}
	b.ResetTimer()
	for i := range b.N {
		for _, h := range []*Handler{plain, counting} {
			start := time.Now()
			resp, _ := h.Handle(context.Background(), evs[h][i])
			spent[h] = append(spent[h], time.Since(start))
			if len(resp.BatchItemFailures) != 0 {
				b.Fatalf("failures: %v", resp.BatchItemFailures)
			}
		}
	}
	b.StopTimer()
	// Medians: a stall of the shared machine in one batch does not count.
	median := func(d []time.Duration) time.Duration { slices.Sort(d); return d[len(d)/2] }
	p, c := median(spent[plain]), median(spent[counting])
	ratio := float64(c) / float64(p)
	b.ReportMetric(float64(p.Microseconds())/1000, "plain-ms/batch")
	b.ReportMetric(float64(c.Microseconds())/1000, "counting-ms/batch")
	b.ReportMetric(ratio, "ratio")
	if b.N >= 5 && ratio > PauseBudget {
		b.Errorf("a counting lane's batch takes %.2f× a plain one's; budget %.2f×", ratio, PauseBudget)
	}
}
