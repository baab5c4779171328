package replay_test

import (
	"strings"
	"testing"

	"github.com/hookfan/hookfan/shared/replay"
	"github.com/hookfan/hookfan/shared/replay/replaytest"
)

func TestMemoryProtocol(t *testing.T) {
	replaytest.Run(t, replay.NewMemory(), replaytest.Options{Concurrent: true})
}

// TestKey: a key names its source, never holds the material, and differs
// with the source and the material; it holds no '#', so no deliver role's
// "<destination>#*" condition matches it.
func TestKey(t *testing.T) {
	k := replay.Key("github", []byte("signature bytes"))
	const wantLen = len("replay:github:") + 64
	if !strings.HasPrefix(k, replay.KeyPrefix+"github:") || len(k) != wantLen {
		t.Errorf("Key = %q, want %q + 64 hex digits", k, replay.KeyPrefix+"github:")
	}
	if strings.Contains(k, "signature") || strings.Contains(k, "#") {
		t.Errorf("Key = %q holds the material or a '#'", k)
	}
	if k != replay.Key("github", []byte("signature bytes")) {
		t.Error("Key is not deterministic")
	}
	for _, other := range []string{replay.Key("github2", []byte("signature bytes")), replay.Key("github", []byte("signature byteS"))} {
		if other == k {
			t.Errorf("another source or material gives the same key %q", k)
		}
	}
	// The source name is hashed with a separator: ("ab", "c…") and ("a", "bc…") differ.
	if strings.TrimPrefix(replay.Key("ab", []byte("c")), "replay:ab:") == strings.TrimPrefix(replay.Key("a", []byte("bc")), "replay:a:") {
		t.Error("the digest does not separate the source from the material")
	}
}
