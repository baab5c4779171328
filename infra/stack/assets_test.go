package stack_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/infra/stack"
	"github.com/hookfan/hookfan/shared/config"
)

// assetConfig is three plain destinations, and, with more, the JSON of
// further destination objects and the destination dest-1 replaced.
func assetConfig(t *testing.T, dest1 string, more ...string) *config.Config {
	t.Helper()
	if dest1 == "" {
		dest1 = `{"name": "dest-1", "url": "https://d1.example.com/hooks"}`
	}
	dests := append([]string{
		`{"name": "dest-0", "url": "https://d0.example.com/hooks", "filter": {"sources": ["stripe"]}}`,
		dest1,
		`{"name": "dest-2", "url": "https://d2.example.com/hooks", "headers": [{"name": "X-Tenant", "value": "acme"}]}`,
	}, more...)
	cfg, err := config.Parse(fmt.Appendf(nil, `{
	  "sources": [
	    {"name": "stripe", "verify": {"kind": "stripe", "secretName": "hookfan/sources/stripe"}},
	    {"name": "github", "verify": {"kind": "github", "secretName": "hookfan/sources/github"}}
	  ],
	  "destinations": [%s]
	}`, strings.Join(dests, ",")))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// laneTemplates returns each lane's nested-stack template (JSON) and its
// function's Code property (the asset's bucket and key), by destination.
func laneTemplates(t *testing.T, h *stack.Hookfan) (templates, code map[string]string) {
	t.Helper()
	templates, code = map[string]string{}, map[string]string{}
	for i, l := range h.Lanes {
		name := l.Env.Destination.Name
		doc := awscdkTemplate(t, h.LaneStacks[i])
		raw, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		templates[name] = string(raw)
		_, res := templateOf(t, h.LaneStacks[i])
		_, fn := only(t, res, "AWS::Lambda::Function")
		c, err := json.Marshal(fn.Properties["Code"])
		if err != nil {
			t.Fatal(err)
		}
		code[name] = string(c)
	}
	return templates, code
}

// TestOneAssetServesEveryLane: nothing in a function's binary depends on
// the configuration, so adding a destination, or changing one
// destination's options (pause, headers, filter), leaves every other
// lane's function asset and nested-stack template as they were; and every
// lane runs the same deliver asset.
func TestOneAssetServesEveryLane(t *testing.T) {
	before := assetConfig(t, "")
	after := assetConfig(t,
		`{"name": "dest-1", "url": "https://d1.example.com/hooks", "pause": {"afterFailures": 10, "failureRate": 0.9, "probeEvery": "2m", "maxPause": "12h"},
		  "headers": [{"name": "Authorization", "secretName": "hookfan/destinations/dest-1/token"}],
		  "filter": {"sources": ["github"], "types": ["push"]}}`,
		`{"name": "dest-3", "url": "https://d3.example.com/hooks"}`)
	hb, _ := synth(t, before)
	ha, _ := synth(t, after)
	tb, cb := laneTemplates(t, hb)
	ta, ca := laneTemplates(t, ha)
	if len(ta) != 4 || len(tb) != 3 {
		t.Fatalf("%d lanes before and %d after, want 3 and 4", len(tb), len(ta))
	}
	for _, name := range []string{"dest-0", "dest-2"} {
		if diff := cmp.Diff(tb[name], ta[name]); diff != "" {
			t.Errorf("%s: nested-stack template changed by another lane's change (-before +after):\n%s", name, diff)
		}
	}
	if tb["dest-1"] == ta["dest-1"] {
		t.Error("dest-1's template did not change with its options: the comparison proves nothing")
	}
	for name, c := range ca {
		if c != cb["dest-0"] {
			t.Errorf("%s runs the deliver asset %s, want the one every lane ran before, %s", name, c, cb["dest-0"])
		}
	}
	for name, c := range cb {
		if c != cb["dest-0"] {
			t.Errorf("before: %s runs the deliver asset %s, dest-0 %s; want one asset", name, c, cb["dest-0"])
		}
	}
	ingestCode := func(h *stack.Hookfan) string {
		_, res := templateOf(t, h.Stack)
		fnID := *h.Stack.GetLogicalId(h.Ingest.Function.Node().DefaultChild().(awscdk.CfnElement))
		c, _ := json.Marshal(res[fnID].Properties["Code"])
		return string(c)
	}
	if b, a := ingestCode(hb), ingestCode(ha); b != a {
		t.Errorf("the ingest asset changed with the destinations: %s, then %s", b, a)
	}
}

// TestFunctionEnvironmentIsTheContract: the Environment.Variables of every
// function in the synthesized templates are exactly what its contract
// renders (delivery.Env, ingest.Env and reconcilejob.Env, which the functions read and the
// RIE test runs the built binaries with), for a configuration using every
// variable: a lane that pauses, large payloads, replay protection, the
// HTTP API, reconciled Stripe and GitHub sources (reconcileConfig).
func TestFunctionEnvironmentIsTheContract(t *testing.T) {
	cfg := reconcileConfig(t)
	h, _ := synth(t, cfg)
	check := func(name string, s awscdk.Stack, fn awscdk.CfnElement, rendered map[string]string) {
		t.Helper()
		_, res := templateOf(t, s)
		got := res[*s.GetLogicalId(fn)].Properties["Environment"].(map[string]any)["Variables"]
		// The tokens (names, URLs, ARNs of resources) resolved as the
		// template writes them.
		want := map[string]any{}
		for k, v := range rendered {
			want[k] = s.Resolve(jsii.String(v))
		}
		if diff := cmp.Diff(roundTrip(t, want), got); diff != "" {
			t.Errorf("%s: Environment.Variables differ from the contract's rendering (-contract +template):\n%s", name, diff)
		}
	}
	check("ingest", h.Stack, h.Ingest.Function.Node().DefaultChild().(awscdk.CfnElement), h.Ingest.Env.Render())
	if len(h.Reconcilers) != 2 {
		t.Fatalf("%d reconcilers, want stripe's and github's", len(h.Reconcilers))
	}
	for _, r := range h.Reconcilers {
		check("reconcile "+r.Source.Name, h.Stack, r.Function.Node().DefaultChild().(awscdk.CfnElement), r.Env.Render())
		if r.Env.MetricsSink != config.SinkEMF || r.Env.TableName == "" || (r.Env.Ingest != nil) != (r.Source.Name == "stripe") {
			t.Errorf("reconcile %s: contract %+v", r.Source.Name, r.Env)
		}
	}
	for i, l := range h.Lanes {
		if l.Env.Destination.Name != cfg.Destinations[i].Name || l.Env.RecordDays != 20 || l.Env.MetricsSink != config.SinkEMF {
			t.Errorf("lane %d: contract %+v, want destination %s, 20 record days, the emf sink", i, l.Env, cfg.Destinations[i].Name)
		}
		check(l.Env.Destination.Name, h.LaneStacks[i], l.Function.Node().DefaultChild().(awscdk.CfnElement), l.Env.Render())
	}
	if h.Ingest.Env.APIType != config.APITypeHTTP || h.Ingest.Env.ReplayTable == "" || h.Ingest.Env.PayloadBucket == "" {
		t.Errorf("ingest contract %+v, want the HTTP API, a replay table and a payload bucket", h.Ingest.Env)
	}
}

// roundTrip gives v the shape a template read from JSON has.
func roundTrip(t *testing.T, v any) any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
