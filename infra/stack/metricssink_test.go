package stack_test

import (
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"

	"github.com/hookfan/hookfan/infra/stack"
	"github.com/hookfan/hookfan/shared/config"
)

// TestMetricsSinkCloudWatchIsRefused: metrics.sink "cloudwatch" is the
// local stack's PutMetricData, in its own process; the deployed functions
// write EMF only, so a deploy naming it is refused before anything is
// built, naming the field, the value and the fix, even with the local
// configuration acknowledged; "emf" and no sink synthesize.
func TestMetricsSinkCloudWatchIsRefused(t *testing.T) {
	newStack := func(sink string, allowLocal bool) error {
		cfg := testConfig(t, 1, "")
		cfg.Metrics.Sink = sink
		ctx := *flagsContext(t)
		if allowLocal {
			ctx[stack.AllowLocalKey] = true
		}
		app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(t.TempDir()), Context: &ctx})
		_, err := stack.New(app, "Hookfan", &stack.Props{Config: cfg, Builder: builder})
		return err
	}
	for _, allow := range []bool{false, true} {
		err := newStack(config.SinkCloudWatch, allow)
		for _, want := range []string{`metrics.sink "cloudwatch"`, "local stack", `Remove metrics.sink, or set it to "emf"`} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("metrics.sink cloudwatch (%s=%v): %v; want it refused, naming %s", stack.AllowLocalKey, allow, err, want)
			}
		}
	}
	for _, sink := range []string{"", config.SinkEMF} {
		if err := newStack(sink, false); err != nil {
			t.Errorf("metrics.sink %q: %v", sink, err)
		}
	}
}
