package cost

import (
	"testing"

	"github.com/hookfan/hookfan/shared/config"
)

// TestEveryTargetKindIsPriced: each AWS target kind of config's table has
// its wait and its charge here, and a row on the page; nothing is priced
// that is not a kind.
func TestEveryTargetKindIsPriced(t *testing.T) {
	rows := map[string]bool{}
	for _, r := range Targets() {
		rows[r.Type] = true
	}
	for _, k := range config.TargetKinds() {
		c, ok := targetCosts[k.Type]
		if !ok || c.waitMs == nil || c.charge == nil {
			t.Errorf("target kind %q is not priced (infra/tools/cost targetCosts)", k.Type)
			continue
		}
		if !rows[k.Type] {
			t.Errorf("target kind %q has no row", k.Type)
		}
		if l := TargetCharge(Target{Type: k.Type}, million, 1); l.Item == "" || l.USD <= 0 || targetWaitMs(Target{Type: k.Type}) <= 0 {
			t.Errorf("target kind %q: charge %+v, wait %v ms", k.Type, l, targetWaitMs(Target{Type: k.Type}))
		}
	}
	for typ := range targetCosts {
		if _, ok := config.LookupTargetKind(typ); !ok {
			t.Errorf("priced %q, which is no target kind", typ)
		}
	}
}
