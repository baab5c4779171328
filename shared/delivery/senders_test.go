package delivery

import (
	"context"
	"strings"
	"testing"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/delivery/sender"
)

// TestEverySenderIsRegistered: each AWS target kind of config's table has
// a sender here, which sends on the kind's API (MemoryTargets has them
// all), names the client it lacks without one, and needs no signing
// secret; the registry holds nothing but https and the kinds.
func TestEverySenderIsRegistered(t *testing.T) {
	kinds := config.TargetKinds()
	for _, k := range kinds {
		if _, ok := senders[k.Type]; !ok {
			t.Errorf("target kind %q has no sender (shared/delivery senders)", k.Type)
			continue
		}
		arn, _, _ := strings.Cut(k.Example, " ")
		d := config.Destination{Name: "orders", Type: k.Type, Target: arn, TimeoutSeconds: 2}
		f := &MemoryTargets{}
		s, err := newSender(d, senderParts{target: f})
		if err != nil {
			t.Errorf("%s: %v", k.Type, err)
			continue
		}
		if err := s.Prepare(context.Background()); err != nil {
			t.Errorf("%s: Prepare = %v, want nothing to read", k.Type, err)
		}
		if r := s.Send(context.Background(), sender.Delivery{ID: "evt_1", Source: "stripe", Type: "t", Body: []byte(`{}`), Timeout: d.Timeout()}); r.Verdict() != sender.Delivered {
			t.Errorf("%s: Send = %+v", k.Type, r)
		}
		if n := len(f.Sent) + len(f.Put) + len(f.Invoked); n != 1 {
			t.Errorf("%s: %d calls, want 1", k.Type, n)
		}
		if _, err := newSender(d, senderParts{}); err == nil || !strings.Contains(err.Error(), "client was given") {
			t.Errorf("%s without a client: %v", k.Type, err)
		}
	}
	for typ := range senders {
		if _, ok := config.LookupTargetKind(typ); !ok && typ != config.TypeHTTPS {
			t.Errorf("sender for %q, which is neither https nor a target kind", typ)
		}
	}
}
