package ingest

import (
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/shared/config"
)

// TestServerErrorCodes: the 5xx codes a source can be answered with, which
// the stack's IngestFailed alarm watches: every 5xx of the answers table
// for a source using every feature, the replay codes only with replay
// protection, the payload store only in a deployment that has one (some
// source, not necessarily this one, takes bodies over one SNS message).
func TestServerErrorCodes(t *testing.T) {
	off := false
	src := func(kind string, maxBody int, replay *bool) config.Source {
		return config.Source{Name: "s", Verify: config.Verify{Kind: kind, SecretName: "x"}, MaxBodyBytes: maxBody,
			ReplayProtection: config.ReplayProtection{Enabled: replay}}
	}
	large := config.Source{Name: "large", Verify: config.Verify{Kind: "stripe", SecretName: "y"}, MaxBodyBytes: 1 << 20}
	var all []string
	for code, a := range answers {
		if a.status >= http.StatusInternalServerError {
			all = append(all, code)
		}
	}
	slices.Sort(all)
	tests := []struct {
		name string
		src  config.Source
		// beside are the deployment's other sources.
		beside []config.Source
		want   []string
	}{
		{"every feature", src("github", 1<<20, nil), nil, all},
		{"stripe", src("stripe", 0, nil), nil, []string{CodePublishFailed, CodeSecretStoreUnavailable}},
		{"github", src("github", 0, nil), nil, []string{CodePublishFailed, CodeReplayCheckUnavailable, CodeRequestInFlight, CodeSecretStoreUnavailable}},
		{"github without replay protection", src("github", 0, &off), nil, []string{CodePublishFailed, CodeSecretStoreUnavailable}},
		{"large bodies", src("stripe", 1<<20, nil), nil, []string{CodePayloadStoreFailed, CodePublishFailed, CodeSecretStoreUnavailable}},
		{"default limit beside large bodies", src("stripe", 0, nil), []config.Source{large}, []string{CodePayloadStoreFailed, CodePublishFailed, CodeSecretStoreUnavailable}},
		{"default limit beside default limits", src("stripe", 0, nil), []config.Source{src("github", 0, nil)}, []string{CodePublishFailed, CodeSecretStoreUnavailable}},
	}
	for _, tt := range tests {
		cfg := &config.Config{Sources: append([]config.Source{tt.src}, tt.beside...)}
		if diff := cmp.Diff(tt.want, ServerErrorCodes(cfg, tt.src)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}
