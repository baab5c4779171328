package sender

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestChunks: runs keep the entries' order, hold at most maxEntries and
// maxBytes, and an entry over maxBytes goes alone.
func TestChunks(t *testing.T) {
	tests := []struct {
		name  string
		sizes []int
		want  [][]int
	}{
		{"none", nil, nil},
		{"one", []int{5}, [][]int{{0}}},
		{"by count", []int{1, 1, 1, 1, 1, 1, 1}, [][]int{{0, 1, 2}, {3, 4, 5}, {6}}},
		{"by bytes, exactly full", []int{6, 4, 5, 5, 1}, [][]int{{0, 1}, {2, 3}, {4}}},
		{"by bytes, one over", []int{6, 5}, [][]int{{0}, {1}}},
		{"too large alone", []int{1, 11, 1}, [][]int{{0}, {1}, {2}}},
		{"too large first", []int{12, 3, 3}, [][]int{{0}, {1, 2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Chunks(tt.sizes, 3, 10)); diff != "" {
				t.Errorf("chunks of %v (-want +got):\n%s", tt.sizes, diff)
			}
		})
	}
}

// TestRunBatchInOrder: in order, each call starts after the one before
// ended and sees its results (skip may hold entries back); out of order,
// at most MaxCallsInFlight run at once and every entry gets its result.
func TestRunBatchInOrder(t *testing.T) {
	chunks := [][]int{{0, 1}, {2, 3}, {4}}
	var calls [][]int
	var sawBefore []int
	results := RunBatch(context.Background(), time.Second, 5, chunks, true, func(entries []int, results []Result) []int {
		done := 0
		for _, r := range results {
			if r.Status == 200 {
				done++
			}
		}
		sawBefore = append(sawBefore, done)
		if entries[0] == 4 {
			results[4] = Result{Err: errors.New("held"), Unsent: true}
			return nil
		}
		return entries
	}, func(_ context.Context, entries []int, results []Result) {
		calls = append(calls, entries)
		for _, i := range entries {
			results[i] = Result{Status: 200}
		}
	})
	if diff := cmp.Diff([][]int{{0, 1}, {2, 3}}, calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{0, 2, 4}, sawBefore); diff != "" {
		t.Errorf("results seen before each call (-want +got):\n%s", diff)
	}
	if !results[4].Unsent || results[3].Status != 200 {
		t.Errorf("results %+v", results)
	}
}

// TestRunBatchInFlight: unordered calls overlap, never more than
// MaxCallsInFlight, and every entry gets its call's result.
func TestRunBatchInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var chunks [][]int
		for i := range 10 {
			chunks = append(chunks, []int{i})
		}
		var mu sync.Mutex
		inFlight, most := 0, 0
		gate := make(chan struct{})
		done := make(chan []Result)
		go func() {
			done <- RunBatch(context.Background(), time.Minute, 10, chunks, false, nil, func(_ context.Context, entries []int, results []Result) {
				mu.Lock()
				inFlight++
				most = max(most, inFlight)
				mu.Unlock()
				<-gate
				mu.Lock()
				inFlight--
				mu.Unlock()
				results[entries[0]] = Result{Status: 200 + entries[0]}
			})
		}()
		synctest.Wait()
		mu.Lock()
		if inFlight != MaxCallsInFlight {
			t.Errorf("%d calls at once, want %d", inFlight, MaxCallsInFlight)
		}
		mu.Unlock()
		close(gate)
		results := <-done
		if most != MaxCallsInFlight {
			t.Errorf("at most %d calls at once, want %d", most, MaxCallsInFlight)
		}
		for i, r := range results {
			if r.Status != 200+i {
				t.Errorf("entry %d: %+v", i, r)
			}
		}
	})
}
