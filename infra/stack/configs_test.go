package stack_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hookfan/hookfan/shared/config"
)

// A synthesis costs about a second of jsii work, so the tests of lanes
// share their configurations: one holds the lanes each test checks, each
// group under its own names, and a test finds its lanes by name
// (laneIndex) and checks them as it did in a stack of their own. A test of
// the whole stack (its topics, its dashboard, its cost) checks what holds
// whatever the other lanes are. What changes the whole stack (the API, the
// alarm topic, the archive, egress, a cost switch) gets a configuration of
// its own, shared by the tests that need that switch.

// lanesConfig is the lanes of the tests that want no alarm topic, with the
// archive off (TestArchiveAndQueries checks that archive.days 0 builds
// none):
//   - TestOrderedLanes (email ""): orderedDests;
//   - TestBatchedLanes: batchedDests;
//   - TestClientAuthSecrets: clientAuthDests;
//   - TestShapedLane: shapedDests;
//   - TestTargetLanes: targetDests;
//   - TestPacedLane: pacedDests;
//   - TestLaneIndexFitsStandardParameter: laneIndexDests.
func lanesConfig(t *testing.T) *config.Config {
	t.Helper()
	var dests []string
	dests = append(dests, orderedDests...)
	for _, b := range batchedDests {
		dests = append(dests, b.spec)
	}
	dests = append(dests, clientAuthDests...)
	dests = append(dests, shapedDests...)
	dests = append(dests, targetDests()...)
	dests = append(dests, pacedDests...)
	dests = append(dests, laneIndexDests()...)
	return parseConfig(t, orderedSources, dests, `"archive": {"days": 0}`)
}

// alarmedLanesConfig is the lanes of the tests that want the alarm topic
// (an e-mail and two https endpoints, one kept in Secrets Manager), with
// api.detailedMetrics false:
//   - TestOrderedLanes (email "ops@example.com"): orderedDests;
//   - TestPausingLane: pausingDests;
//   - TestAlarmsReachIncidentToolsAndNameTheirView: every lane, one of
//     them (alarmsDests) with its own alarms.dlq;
//   - TestIngestConcurrencyWarning ("lanes can take the pool"): busyDests;
//   - TestStageServerErrorsAlarmWithoutDetailedMetrics (http): the API.
func alarmedLanesConfig(t *testing.T) *config.Config {
	t.Helper()
	var dests []string
	dests = append(dests, orderedDests...)
	dests = append(dests, pausingDests...)
	dests = append(dests, alarmsDests...)
	dests = append(dests, busyDests...)
	return parseConfig(t, orderedSources, dests, `
	  "alarms": {"email": "ops@example.com",
	    "https": ["https://events.pagerduty.com/integration/abc/enqueue", "https://api.opsgenie.com/v1/json/amazonsns?apiKey=k"],
	    "httpsSecrets": ["hookfan/alarms/incident-tool"]},
	  "api": {"detailedMetrics": false}`)
}

// parseConfig parses a configuration of sources (JSON objects, joined),
// the destinations dests (JSON objects) and the further top-level members
// top (JSON members, or "").
func parseConfig(t *testing.T, sources string, dests []string, top string) *config.Config {
	t.Helper()
	if top != "" {
		top = "," + top
	}
	data := fmt.Sprintf(`{"sources": [%s], "destinations": [%s]%s}`, sources, strings.Join(dests, ",\n"), top)
	cfg, err := config.Parse([]byte(data))
	if err != nil {
		t.Fatalf("shared test configuration: %v", err)
	}
	return cfg
}

// laneIndex is the index of the destination named name in cfg, and so of
// its lane in h.Lanes and h.LaneStacks (both in configuration order).
func laneIndex(t *testing.T, cfg *config.Config, name string) int {
	t.Helper()
	i := slices.IndexFunc(cfg.Destinations, func(d config.Destination) bool { return d.Name == name })
	if i < 0 {
		t.Fatalf("no destination %q in the configuration", name)
	}
	return i
}

// namesOf is the names of the destinations specs (JSON objects) describe.
func namesOf(t *testing.T, specs []string) []string {
	t.Helper()
	var names []string
	for _, s := range specs {
		var d struct{ Name string }
		if err := json.Unmarshal([]byte(s), &d); err != nil || d.Name == "" {
			t.Fatalf("destination %s: no name (%v)", s, err)
		}
		names = append(names, d.Name)
	}
	return names
}
