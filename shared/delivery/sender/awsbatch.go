package sender

import (
	"context"
	"sync"
	"time"
)

// What the AWS targets with a batch API share (SQS SendMessageBatch,
// EventBridge PutEvents): a batch of deliveries is cut into the calls the
// API takes, in order, and each call's answer is turned into one Result
// per entry.

// MaxCallsInFlight bounds the calls a batch makes at once when their
// order does not matter (a standard queue, a bus).
const MaxCallsInFlight = 4

// Chunks cuts entries of the given sizes, in order, into runs of at most
// maxEntries whose sizes add up to at most maxBytes: each run is one
// call. An entry larger than maxBytes on its own is a run of its own (the
// target refuses it as it would alone, and only it).
func Chunks(sizes []int, maxEntries, maxBytes int) [][]int {
	var out [][]int
	var run []int
	bytes := 0
	for i, n := range sizes {
		if len(run) > 0 && (len(run) == maxEntries || bytes+n > maxBytes) {
			out = append(out, run)
			run, bytes = nil, 0
		}
		run = append(run, i)
		bytes += n
	}
	if len(run) > 0 {
		out = append(out, run)
	}
	return out
}

// BatchCall is one call of a batch: it sends the entries at the given
// indexes and writes each one's Result into results[i]. A call that
// fails as a whole gives each of its entries the call's Result.
type BatchCall func(ctx context.Context, entries []int, results []Result)

// RunBatch makes the calls of chunks within timeout (the attempt's, as
// one Send has) and returns a Result per entry, n in all. With inOrder the
// calls go one after another, in order, and skip(entries) may first mark
// entries not to send (an ordered target's later events of a group that
// failed); otherwise up to MaxCallsInFlight at once.
func RunBatch(ctx context.Context, timeout time.Duration, n int, chunks [][]int, inOrder bool, skip func(entries []int, results []Result) []int, call BatchCall) []Result {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	results := make([]Result, n)
	if inOrder {
		for _, c := range chunks {
			if skip != nil {
				c = skip(c, results)
			}
			if len(c) > 0 {
				call(ctx, c, results)
			}
		}
		return results
	}
	var wg sync.WaitGroup
	slots := make(chan struct{}, MaxCallsInFlight)
	for _, c := range chunks {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			call(ctx, c, results) // each call writes only its own entries
		})
	}
	wg.Wait()
	return results
}

// Timed runs f and gives its outcome as Call does (200 on success, the
// AWS error otherwise), without a deadline of its own: RunBatch's bounds
// the batch.
func Timed(ctx context.Context, service string, f func(ctx context.Context) error) Result {
	start := time.Now()
	err := f(ctx)
	r := Result{Latency: time.Since(start), Status: 200}
	if err != nil {
		r.Status, r.Err = 0, targetError(service, err)
	}
	return r
}

// EntryFailed is the Result of an entry the target refused in an
// answer that succeeded as a whole: the entry's code and message, in the
// form a refused single call takes.
func EntryFailed(service, code, message string, latency time.Duration) Result {
	return Result{Err: &TargetError{Service: service, Code: code, Message: Clip(message, MaxErrorMessage)}, Latency: latency}
}
