package message_test

import (
	"strings"
	"testing"

	"github.com/hookfan/hookfan/shared/message"
)

func TestValidReplayID(t *testing.T) {
	for _, ok := range []string{"rpl_1", "rpl_20260501T130000Z_a1b2c3", "rpl_" + strings.Repeat("x", 60), "rpl_A-b_9"} {
		if !message.ValidReplayID(ok) {
			t.Errorf("ValidReplayID(%q) = false, want true", ok)
		}
	}
	for _, bad := range []string{"", "rpl_", "replay_1", "rpl_" + strings.Repeat("x", 61), "rpl_a.b", "rpl_a b", "rpl_é", "RPL_1"} {
		if message.ValidReplayID(bad) {
			t.Errorf("ValidReplayID(%q) = true, want false", bad)
		}
	}
}
