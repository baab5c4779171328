package stack_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/infra/stack"
	"github.com/hookfan/hookfan/shared/config"
)

// The longest value CloudFormation may put in place of a reference, by
// AWS's limits on the names: a queue's 80 characters, a function's and a
// role's 64 (CDK gives a role no path: "/"), a log group's and a secret's
// 512 (a secret's ARN adds "-" and six random characters). Regions,
// partitions and URL suffixes have no published limit: these are longer
// than any there is (ap-southeast-7, aws-us-gov, amazonaws.com.cn).
const (
	maxRegion, maxPartition, maxURLSuffix, account = 20, 16, 20, 12
	maxQueueName, maxFunctionName, maxRoleName     = 80, 64, 64
	maxLogGroupName, maxSecretName                 = 512, 512
)

// worstRef is the longest a Ref to a resource of the type resolves to.
var worstRef = map[string]int{
	"AWS::SQS::Queue":             len("https://sqs.") + maxRegion + 1 + maxURLSuffix + 1 + account + 1 + maxQueueName,
	"AWS::Lambda::Function":       maxFunctionName,
	"AWS::Logs::LogGroup":         maxLogGroupName,
	"AWS::SecretsManager::Secret": arnLength("secretsmanager", "secret:") + maxSecretName + len("-AbCdEf"),
}

// worstArn is the longest an Fn::GetAtt Arn of the type resolves to.
var worstArn = map[string]int{
	"AWS::SQS::Queue":       arnLength("sqs", "") + maxQueueName,
	"AWS::Lambda::Function": arnLength("lambda", "function:") + maxFunctionName,
	"AWS::IAM::Role":        len("arn:") + maxPartition + len(":iam::") + account + len(":role/") + maxRoleName,
}

func arnLength(service, resource string) int {
	return len("arn:") + maxPartition + 1 + len(service) + 1 + maxRegion + 1 + account + 1 + len(resource)
}

// worstLength is the longest a CloudFormation string value can be once its
// intrinsics are resolved; a value it cannot bound fails the test.
func worstLength(t *testing.T, res map[string]resource, v any) int {
	t.Helper()
	switch x := v.(type) {
	case string:
		return len(x)
	case map[string]any:
		if r, ok := x["Ref"].(string); ok {
			switch r {
			case "AWS::Region":
				return maxRegion
			case "AWS::AccountId":
				return account
			case "AWS::Partition":
				return maxPartition
			case "AWS::URLSuffix":
				return maxURLSuffix
			}
			if n, ok := worstRef[res[r].Type]; ok {
				return n
			}
		}
		if g, ok := x["Fn::GetAtt"].([]any); ok && len(g) == 2 && g[1] == "Arn" {
			if n, ok := worstArn[res[fmt.Sprint(g[0])].Type]; ok {
				return n
			}
		}
		if j, ok := x["Fn::Join"].([]any); ok && len(j) == 2 {
			n := 0
			for i, part := range asSlice(j[1]) {
				if i > 0 {
					n += len(fmt.Sprint(j[0]))
				}
				n += worstLength(t, res, part)
			}
			return n
		}
	}
	t.Fatalf("no bound for %v", v)
	return 0
}

// laneIndexCase is a lane of TestLaneIndexFitsStandardParameter: its
// destination's name and filter, and whether the filter stays in the
// lane's index.
type laneIndexCase struct {
	name, dest string
	filter     map[string]any
	inline     bool // the filter stays in the lane's index
}

func laneIndexCases() []laneIndexCase {
	var many []string
	for i := range 90 {
		many = append(many, fmt.Sprintf("customer.subscription.event_%03d", i)) // 31 characters, like Stripe's
	}
	return []laneIndexCase{
		{"a filter of two types", "billing", map[string]any{"sources": []string{"stripe"}, "types": []string{"payment_intent.*", "charge.refunded"}}, true},
		{"a filter of 90 types", "billing-90-types", map[string]any{"sources": []string{"stripe"}, "types": many}, false},
		{"90 excluded types", "billing-90-excluded", map[string]any{"excludeTypes": many}, false},
	}
}

// laneIndexDests are TestLaneIndexFitsStandardParameter's lanes.
func laneIndexDests() []string {
	var dests []string
	for _, tt := range laneIndexCases() {
		d, _ := json.Marshal(map[string]any{"name": tt.dest, "url": "https://billing.example.com/hooks", "filter": tt.filter})
		dests = append(dests, string(d))
	}
	return dests
}

// TestLaneIndexFitsStandardParameter: every configuration validation
// accepts and the stack synthesizes gets lane parameters SSM takes: a
// Standard parameter holds at most 4096 characters, and a lane's index is
// mostly names CloudFormation fills in at deploy time. A filter of 90
// Stripe-like types (about 3 KB, which the function's environment holds)
// left too little room for them; it goes to a parameter of its own, and
// the operator command reads it back unchanged. Its lanes are
// laneIndexDests, in lanesConfig.
func TestLaneIndexFitsStandardParameter(t *testing.T) {
	cfg := lanesConfig(t)
	h, _ := synth(t, cfg)
	for _, tt := range laneIndexCases() {
		t.Run(tt.name, func(t *testing.T) {
			i := laneIndex(t, cfg, tt.dest)
			_, res := templateOf(t, h.LaneStacks[i])
			values := map[string]string{}
			for id, p := range ofType(res, "AWS::SSM::Parameter") {
				n := worstLength(t, res, p.Properties["Value"])
				t.Logf("%s %v: at most %d characters once deployed", id, p.Properties["Name"], n)
				if n > 4096 || p.Properties["Tier"] != "Standard" {
					t.Errorf("%s %v: a %v parameter of up to %d characters once deployed; SSM's Standard tier takes 4096: the deploy can fail", id, p.Properties["Name"], p.Properties["Tier"], n)
				}
				values[fmt.Sprint(p.Properties["Name"])] = joined(p.Properties["Value"])
			}

			var lane struct { // stackindex.Lane's filter fields
				Filter          config.Filter `json:"filter"`
				FilterParameter string        `json:"filterParameter"`
			}
			if err := json.Unmarshal([]byte(values[stack.LaneParameterName("Hookfan", tt.dest)]), &lane); err != nil {
				t.Fatalf("lane index: %v", err)
			}
			got := lane.Filter
			if lane.FilterParameter != "" {
				if err := json.Unmarshal([]byte(values[lane.FilterParameter]), &got); err != nil {
					t.Fatalf("filter parameter %s: %v", lane.FilterParameter, err)
				}
			}
			if inline := lane.FilterParameter == ""; inline != tt.inline {
				t.Errorf("filter in the index: %v, want %v (filterParameter %q)", inline, tt.inline, lane.FilterParameter)
			}
			if diff := cmp.Diff(cfg.Destinations[i].Filter, got); diff != "" {
				t.Errorf("the filter as the operator reads it (-configured +read):\n%s", diff)
			}
		})
	}
}
