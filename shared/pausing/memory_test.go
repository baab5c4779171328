package pausing_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookfan/hookfan/shared/pausing"
	"github.com/hookfan/hookfan/shared/pausing/pausingtest"
)

func TestMemoryProtocol(t *testing.T) {
	var n atomic.Int64
	pausingtest.Store(t, pausing.NewMemory(), func() string { return fmt.Sprintf("dest-%d", n.Add(1)) })
}

// TestMemoryOnePauseWins: deliverers that decided from the same state race
// to pause; exactly one succeeds.
func TestMemoryOnePauseWins(t *testing.T) {
	m := pausing.NewMemory()
	var wins atomic.Int64
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			_, err := m.Pause(context.Background(), "d", pausing.PauseInput{At: time.Now(), ResumeBy: time.Now().Add(time.Hour), By: pausing.ByDeliverer})
			if err == nil {
				wins.Add(1)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Errorf("%d pauses succeeded, want 1", wins.Load())
	}
}

func TestMemorySwitch(t *testing.T) {
	ctx := context.Background()
	var s pausing.MemorySwitch
	if on, _ := s.Enabled(ctx); !on {
		t.Fatal("a new switch is off; want on")
	}
	_ = s.Disable(ctx)
	_ = s.Disable(ctx)
	if on, _ := s.Enabled(ctx); on {
		t.Error("on after Disable")
	}
	_ = s.Enable(ctx)
	if on, _ := s.Enabled(ctx); !on || s.Flips() != 2 {
		t.Errorf("after Enable: on %v, %d flips; want on, 2", on, s.Flips())
	}
}
