package replayguard_test

import (
	"strings"
	"testing"

	"github.com/hookfan/hookfan/shared/replayguard"
	"github.com/hookfan/hookfan/shared/replayguard/replayguardtest"
)

func TestMemoryProtocol(t *testing.T) {
	replayguardtest.Run(t, replayguard.NewMemory(), replayguardtest.Options{Concurrent: true})
}

// TestKey: a key names its source, never holds the material, and differs
// with the source and the material; it holds no '#', so no deliver role's
// "<destination>#*" condition matches it.
func TestKey(t *testing.T) {
	k := replayguard.Key("github", []byte("signature bytes"))
	const wantLen = len("replay:github:") + 64
	if !strings.HasPrefix(k, replayguard.KeyPrefix+"github:") || len(k) != wantLen {
		t.Errorf("Key = %q, want %q + 64 hex digits", k, replayguard.KeyPrefix+"github:")
	}
	if strings.Contains(k, "signature") || strings.Contains(k, "#") {
		t.Errorf("Key = %q holds the material or a '#'", k)
	}
	if k != replayguard.Key("github", []byte("signature bytes")) {
		t.Error("Key is not deterministic")
	}
	for _, other := range []string{replayguard.Key("github2", []byte("signature bytes")), replayguard.Key("github", []byte("signature byteS"))} {
		if other == k {
			t.Errorf("another source or material gives the same key %q", k)
		}
	}
	// The source name is hashed with a separator: ("ab", "c…") and ("a", "bc…") differ.
	if strings.TrimPrefix(replayguard.Key("ab", []byte("c")), "replay:ab:") == strings.TrimPrefix(replayguard.Key("a", []byte("bc")), "replay:a:") {
		t.Error("the digest does not separate the source from the material")
	}
}
