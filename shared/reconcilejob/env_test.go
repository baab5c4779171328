package reconcilejob_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/ingest"
	"github.com/hookfan/hookfan/shared/reconcilejob"
)

// testConfig has a reconciled Stripe source, a reconciled GitHub source,
// a source without reconciliation, and destinations filtered every way
// that decides which of them a source's events may reach.
func testConfig(t *testing.T) *config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(`{
	  "sources": [
	    {"name": "stripe", "verify": {"kind": "stripe", "secretName": "hookfan/sources/stripe"},
	     "limits": {"rateLimit": 10, "burstLimit": 20},
	     "reconcile": {"every": "15m", "lookback": "72h", "secretName": "hookfan/reconcile/stripe"}},
	    {"name": "github", "verify": {"kind": "github", "secretName": "hookfan/sources/github"},
	     "reconcile": {"secretName": "hookfan/reconcile/github", "hook": {"owner": "acme", "repo": "app", "id": 42}}},
	    {"name": "shop", "verify": {"kind": "shopify", "secretName": "hookfan/sources/shop"}}
	  ],
	  "destinations": [
	    {"name": "everything", "url": "https://all.example.com/hooks"},
	    {"name": "payments", "url": "https://pay.example.com/hooks", "filter": {"sources": ["stripe"], "types": ["payment_intent.*"]}},
	    {"name": "code", "url": "https://code.example.com/hooks", "filter": {"sources": ["github"]}},
	    {"name": "big", "url": "https://big.example.com/hooks", "filter": {"sources": ["stripe", "shop"], "body": {"data": {"object": {"amount": [{"numeric": [">", 1000]}]}}}}}
	  ]
	}`))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func source(t *testing.T, cfg *config.Config, name string) config.Source {
	t.Helper()
	for _, s := range cfg.Sources {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no source %s", name)
	return config.Source{}
}

var resources = reconcilejob.Resources{Table: "records", TopicARN: "arn:aws:sns:us-east-1:123456789012:events", PayloadBucket: "payloads"}

// TestEnvRoundTrip renders each reconciled source's contract and reads it
// back as the function does: the same source (without its limits), the
// destinations its events may reach with their filters, and for Stripe
// ingest's publish path.
func TestEnvRoundTrip(t *testing.T) {
	cfg := testConfig(t)
	for _, tt := range []struct {
		source       string
		destinations []string
		publishes    bool
	}{
		{"stripe", []string{"everything", "payments", "big"}, true},
		{"github", []string{"everything", "code"}, false},
	} {
		t.Run(tt.source, func(t *testing.T) {
			want := reconcilejob.FunctionEnv(cfg, source(t, cfg, tt.source), resources)
			vars := want.Render()
			got, err := reconcilejob.ReadEnv(func(k string) string { return vars[k] })
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("read back (-rendered +read):\n%s", diff)
			}
			var names []string
			for _, d := range got.Destinations {
				names = append(names, d.Name)
			}
			if diff := cmp.Diff(tt.destinations, names); diff != "" {
				t.Errorf("destinations (-want +got):\n%s", diff)
			}
			if got.Source.Limits.RateLimit != 0 {
				t.Errorf("the source's limits travel: %v", got.Source.Limits)
			}
			if (got.Ingest != nil) != tt.publishes {
				t.Fatalf("ingest's contract: %v, want it %v", got.Ingest, tt.publishes)
			}
			if tt.publishes {
				if got.Ingest.TopicARN != resources.TopicARN || got.Ingest.PayloadBucket != resources.PayloadBucket || len(got.Ingest.Sources) != 1 || got.Ingest.Sources[0].Reconcile != nil {
					t.Errorf("ingest's contract: %+v", got.Ingest)
				}
				if _, ok := vars[ingest.EnvGOGC]; ok {
					t.Errorf("%s = %s: a run keeps Go's default GC target", ingest.EnvGOGC, vars[ingest.EnvGOGC])
				}
			} else if vars[ingest.EnvTopicARN] != "" {
				t.Errorf("a GitHub source's function gets the topic %q: it publishes nothing", vars[ingest.EnvTopicARN])
			}
			// The reconciler's configuration: the one source, and the
			// destinations by name and filter.
			c := got.Config()
			if len(c.Sources) != 1 || c.Sources[0].Name != tt.source || c.Sources[0].Reconcile == nil || len(c.Destinations) != len(tt.destinations) {
				t.Errorf("Config() = %+v", c)
			}
		})
	}
}

// TestReadEnvRefuses names the variable, the value and the fix of each
// problem, all at once.
func TestReadEnvRefuses(t *testing.T) {
	cfg := testConfig(t)
	good := reconcilejob.FunctionEnv(cfg, source(t, cfg, "stripe"), resources).Render()
	for _, tt := range []struct {
		name string
		set  map[string]string
		want []string
	}{
		{"nothing", map[string]string{reconcilejob.EnvSource: "", reconcilejob.EnvDestinations: "", reconcilejob.EnvTableName: ""},
			[]string{reconcilejob.EnvSource + " (the reconciled source, as JSON) is not set", reconcilejob.EnvDestinations, reconcilejob.EnvTableName + " (the delivery-record table) is not set"}},
		{"a source that does not parse", map[string]string{reconcilejob.EnvSource: `{"name": "stripe"`}, []string{reconcilejob.EnvSource}},
		{"a source without reconcile", map[string]string{reconcilejob.EnvSource: `{"name": "shop", "verify": {"kind": "shopify", "secretName": "s"}}`},
			[]string{`source "shop" has no reconcile block`}},
		{"destinations not an array", map[string]string{reconcilejob.EnvDestinations: `{"name": "a"}`}, []string{reconcilejob.EnvDestinations + ` = "{\"name\": \"a\"}": not a JSON array`}},
		{"an unknown field", map[string]string{reconcilejob.EnvDestinations: `[{"name": "a", "url": "https://x"}]`}, []string{"unknown field"}},
		{"an unnamed and a repeated destination", map[string]string{reconcilejob.EnvDestinations: `[{"filter": {}}, {"name": "a"}, {"name": "a"}]`},
			[]string{reconcilejob.EnvDestinations + "[0]: no name", reconcilejob.EnvDestinations + `[2]: destination "a" twice`}},
		{"a Stripe source without its topic", map[string]string{ingest.EnvTopicARN: ""}, []string{`source "stripe" publishes what it brings in`, ingest.EnvTopicARN}},
		{"a bad sink and log level", map[string]string{config.EnvMetricsSink: "statsd", config.EnvLogLevel: "LOUD"}, []string{`"statsd"`, "LOUD"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := reconcilejob.ReadEnv(func(k string) string {
				if v, ok := tt.set[k]; ok {
					return v
				}
				return good[k]
			})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestWatermarkKeyIsTheReconcilers: the stack grants the function the
// key the reconciler writes.
func TestWatermarkKeyIsTheReconcilers(t *testing.T) {
	if got := reconcilejob.WatermarkKey("stripe"); got != "reconcile:stripe" {
		t.Errorf("WatermarkKey = %q", got)
	}
}
