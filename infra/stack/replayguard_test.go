package stack_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/replayguard"
)

// stringLike reports whether IAM's StringLike pattern (* any run, ? one
// character) matches s.
func stringLike(pattern, s string) bool {
	expr := regexp.QuoteMeta(pattern)
	expr = strings.NewReplacer(`\*`, ".*", `\?`, ".").Replace(expr)
	return regexp.MustCompile("^" + expr + "$").MatchString(s)
}

// TestReplayKeysOutsideEveryLane: a deliver role reaches the table's items
// whose keys match dedupe.Key(destination, "*"); no destination name —
// "replay" included — makes that pattern match a replay record's key, and
// ingest's pattern matches no delivery record's.
func TestReplayKeysOutsideEveryLane(t *testing.T) {
	replayKeys := []string{replayguard.Key("github", []byte("sig")), replayguard.Key("replay", []byte("sig")), replayguard.Key("a", nil)}
	for _, dest := range []string{"replay", "replay-github", "a", "orders", strings.Repeat("z", 64)} {
		for _, k := range replayKeys {
			if stringLike(dedupe.Key(dest, "*"), k) {
				t.Errorf("destination %q's key condition %q matches replay key %q", dest, dedupe.Key(dest, "*"), k)
			}
		}
		if stringLike(replayguard.KeyPrefix+"*", dedupe.Key(dest, "evt_0123")) {
			t.Errorf("ingest's key condition matches destination %q's record", dest)
		}
	}
	if !stringLike(dedupe.Key("orders", "*"), dedupe.Key("orders", "evt_1")) || !stringLike(replayguard.KeyPrefix+"*", replayKeys[0]) {
		t.Fatal("stringLike does not match what it must")
	}
}
