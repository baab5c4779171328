package delivery

import (
	"fmt"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
)

// recordStore is the store in the contract's dedupe mode: a dedupe.Modal
// store is put in it; any other store keeps its own protocol, which must be
// the default lease. On a table without the time index, a
// dedupe.Indexable store is made to write no index key; any other store
// is refused there, since it would.
func recordStore(env Env, s Store) (Store, error) {
	if !env.Indexed() {
		u, ok := s.(dedupe.Indexable)
		if !ok {
			return s, fmt.Errorf("deliver %s: dedupe.timeIndex false asks for a store that can leave the index out (dedupe.DynamoDB or dedupe.Memory), not %T", env.Destination.Name, s)
		}
		s = u.Unindexed()
	}
	mode := dedupe.ModeLease
	if env.DedupeMode == config.DedupeCheck {
		mode = dedupe.ModeCheck
	}
	if m, ok := s.(dedupe.Modal); ok {
		return m.InMode(mode), nil
	}
	if mode != dedupe.ModeLease {
		return s, fmt.Errorf("deliver %s: dedupe.mode %q asks for a store that takes it (dedupe.DynamoDB or dedupe.Memory), not %T", env.Destination.Name, mode, s)
	}
	return s, nil
}
