package devstack

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/shared/config"
)

// TestEmulatorSubscriptionFilter: the emulator never gets a MessageBody
// policy (moto's body filtering is not SNS's); attribute policies are the
// stack's.
func TestEmulatorSubscriptionFilter(t *testing.T) {
	cfg, err := config.Parse([]byte(`{
	  "sources": [{"name": "stripe", "verify": {"kind": "stripe", "secretName": "s"}}],
	  "destinations": [
	    {"name": "prefix", "url": "https://a.example.com", "filter": {"body": {"customer": [{"prefix": "cus_"}]}}},
	    {"name": "types", "url": "https://a.example.com", "filter": {"types": ["invoice.*"]}},
	    {"name": "both", "url": "https://a.example.com", "filter": {"sources": ["stripe"], "body": {"customer": [{"prefix": "cus_"}]}}},
	    {"name": "all", "url": "https://a.example.com"}
	  ]
	}`))
	if err != nil {
		t.Fatal(err)
	}
	type got struct{ Policy, Scope string }
	want := map[string]got{
		"prefix": {"", ""},
		"types":  {`{"type":[{"prefix":"invoice."}]}`, config.ScopeAttributes},
		"both":   {`{"source":["stripe"]}`, config.ScopeAttributes},
		"all":    {"", ""},
	}
	for _, d := range cfg.Destinations {
		p, s := EmulatorSubscriptionFilter(cfg, d)
		if diff := cmp.Diff(want[d.Name], got{p, s}); diff != "" {
			t.Errorf("%s (-want +got):\n%s", d.Name, diff)
		}
	}
	// The stack itself gives the prefix filter to SNS.
	d, _ := cfg.Destination("prefix")
	if _, s := cfg.SubscriptionFilter(d); s != config.ScopeBody {
		t.Errorf("the stack's scope for a prefix body filter: %q, want %s", s, config.ScopeBody)
	}
}
