package stack_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hookfan/hookfan/infra/stack"
	"github.com/hookfan/hookfan/infra/stack/stackindex"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/metrics"
)

// pacedDests are TestPacedLane's lanes: one paced, one not.
var pacedDests = []string{
	`{"name": "slack", "url": "https://hooks.example.com/x", "rateLimit": {"perMinute": 90, "burst": 4, "adaptive": true}}`,
	`{"name": "unpaced", "url": "https://plain.example.com/x"}`,
}

// TestPacedLane: a paced lane's index carries its rateLimit as
// configured, which reads back as the same rate limit (ops lanes and ops
// pace go by it); an unpaced lane's carries none. The overview graphs the
// messages held back and the rate in force (searched, so every paced lane
// shows up). Its lanes are pacedDests, in lanesConfig.
func TestPacedLane(t *testing.T) {
	cfg := lanesConfig(t)
	h, _ := synth(t, cfg)
	values := map[string]string{}
	for _, name := range namesOf(t, pacedDests) {
		i := laneIndex(t, cfg, name)
		_, res := templateOf(t, h.LaneStacks[i])
		for _, p := range ofType(res, "AWS::SSM::Parameter") {
			values[fmt.Sprint(p.Properties["Name"])] = joined(p.Properties["Value"])
		}
		// A paced lane's copies start their queue age again: its backlog
		// shows in the age of the events it delivers (EventAgeAlarm).
		var ages []float64
		for _, a := range ofType(res, "AWS::CloudWatch::Alarm") {
			if a.Properties["MetricName"] == metrics.EventAge {
				ages = append(ages, a.Properties["Threshold"].(float64))
			}
		}
		_, paced := cfg.Destinations[i].Pace()
		want := cfg.Alarms.OldestMessageThreshold().Milliseconds()
		if paced && (len(ages) != 1 || ages[0] != float64(want)) || !paced && len(ages) != 0 {
			t.Errorf("%s: event-age alarms at %v ms; want one at %d ms on a paced lane, none otherwise", cfg.Destinations[i].Name, ages, want)
		}
	}
	_, parent := templateOf(t, h.Stack)
	_, db := only(t, parent, "AWS::CloudWatch::Dashboard")
	body := joined(db.Properties["DashboardBody"])
	for _, m := range []string{metrics.DeliveryPaced, metrics.LaneEffectiveRate} {
		if !strings.Contains(body, `MetricName=\"`+m+`\"`) {
			t.Errorf("the overview does not search %s", m)
		}
	}
	for _, name := range namesOf(t, pacedDests) {
		i := laneIndex(t, cfg, name)
		d := cfg.Destinations[i]
		var lane stackindex.Lane
		if err := json.Unmarshal([]byte(values[stack.LaneParameterName("Hookfan", d.Name)]), &lane); err != nil {
			t.Fatalf("%s: lane index: %v", d.Name, err)
		}
		want, paced := cfg.Destinations[i].Pace()
		got, readPaced := config.Destination{RateLimit: lane.RateLimit}.Pace()
		readPaced = readPaced && got.N > 0
		if readPaced != paced || (paced && got != want) {
			t.Errorf("%s: the index's rateLimit %+v reads as %+v (paced %v), want %+v (paced %v)", d.Name, lane.RateLimit, got, readPaced, want, paced)
		}
	}
}
