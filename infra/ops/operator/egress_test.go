package operator

import (
	"context"
	"strings"
	"testing"

	"github.com/hookfan/hookfan/infra/stack/stackindex"
	"github.com/hookfan/hookfan/shared/config"
)

// TestLanesShowEgress: ops lanes says below the table which lanes deliver
// from the static addresses and what the addresses are; nothing without
// them; the local stack says it emulates no VPC.
func TestLanesShowEgress(t *testing.T) {
	tests := []struct {
		name      string
		addresses []string
		note      string
		static    bool
		want      string
	}{
		{"none", nil, "", false, ""},
		{"addresses and a static lane", []string{"203.0.113.7", "198.51.100.9"}, "", true, "static egress addresses (lanes plain): 203.0.113.7, 198.51.100.9\n"},
		{"addresses, no lane yet", []string{"203.0.113.7"}, "", false, "static egress addresses (no lane yet): 203.0.113.7\n"},
		{"old index", nil, "", true, "static egress (lanes plain): stack Hookfan in eu-west-1 lists no addresses (deploy this version)\n"},
		{"local", nil, "the local stack emulates no VPC: every lane delivers from this machine's addresses", true,
			"static egress (lanes plain): the local stack emulates no VPC: every lane delivers from this machine's addresses\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op, out, _, _, _ := laneOperator(t)
			op.Resources.Where = "stack Hookfan in eu-west-1"
			op.Resources.EgressAddresses, op.Resources.EgressNote = tt.addresses, tt.note
			if tt.static {
				op.Resources.Lanes[1].Egress = config.EgressStatic
			}
			out.Reset()
			if _, err := op.Lanes(context.Background()); err != nil {
				t.Fatal(err)
			}
			_, after, _ := strings.Cut(out.String(), "does not pause\n")
			if after != tt.want {
				t.Errorf("below the table %q, want %q", after, tt.want)
			}
		})
	}
}

// TestDeployedEgress: the deployed stack's index carries the addresses and
// each lane's egress path to the operator.
func TestDeployedEgress(t *testing.T) {
	ssm := fakeSSM{
		stackindex.StackParameter("Hookfan"): jsonOf(t, stackindex.Stack{TableName: "t", DestinationsPath: stackindex.DestinationsPath("Hookfan"),
			EgressAddresses: []string{"203.0.113.7", "198.51.100.9"}}),
		stackindex.LaneParameter("Hookfan", "bank"):  jsonOf(t, stackindex.Lane{Destination: "bank", QueueURL: "q1", DLQURL: "d1", Egress: config.EgressStatic}),
		stackindex.LaneParameter("Hookfan", "plain"): jsonOf(t, stackindex.Lane{Destination: "plain", QueueURL: "q2", DLQURL: "d2", Egress: config.EgressPublic}),
	}
	res, err := Deployed{SSM: ssm, Stack: "Hookfan", Region: "eu-west-1"}.Resolve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(res.EgressAddresses, ","); got != "203.0.113.7,198.51.100.9" {
		t.Errorf("addresses %s", got)
	}
	if res.Lanes[0].Egress != config.EgressStatic || res.Lanes[1].Egress != config.EgressPublic {
		t.Errorf("lanes %+v", res.Lanes)
	}
}

// TestLaneShowsEgress: ops lane names a static lane's addresses.
func TestLaneShowsEgress(t *testing.T) {
	op, out, _, _, _ := laneOperator(t)
	op.Resources.EgressAddresses = []string{"203.0.113.7"}
	op.Resources.Lanes[1].Egress = config.EgressStatic
	out.Reset()
	if _, err := op.Lane(context.Background(), "plain"); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(out.String(), "  egress: static, from 203.0.113.7\n") {
		t.Errorf("lane output:\n%s", out)
	}
	out.Reset()
	if _, err := op.Lane(context.Background(), "d"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "egress") {
		t.Errorf("a public lane shows egress:\n%s", out)
	}
}
