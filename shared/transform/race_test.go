//go:build race

package transform

// raceEnabled: the race detector's sync.Pool drops pooled values at
// random (regexp's matchers among them), so allocations are not those of
// a normal build.
const raceEnabled = true
