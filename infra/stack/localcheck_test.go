package stack_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"

	"github.com/hookfan/hookfan/infra/stack"
	"github.com/hookfan/hookfan/shared/config"
)

// TestLocalConfigNeedsAcknowledgement: the local stack's own configuration
// (allowPrivateNetworks, http:// URLs) does not synthesize for a deploy
// unless the context says it may; the sample cdk.json does.
func TestLocalConfigNeedsAcknowledgement(t *testing.T) {
	dev, err := config.LoadFile(filepath.Join("..", "local", "dev.json"))
	if err != nil {
		t.Fatal(err)
	}
	newStack := func(cfg *config.Config, allow any) error {
		ctx := *flagsContext(t)
		if allow != nil {
			ctx[stack.AllowLocalKey] = allow
		}
		app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(t.TempDir()), Context: &ctx})
		_, err := stack.New(app, "Hookfan", &stack.Props{Config: cfg, Builder: builder})
		return err
	}
	err = newStack(dev, nil)
	for _, want := range []string{
		`destinations[0] ("everything") sets allowPrivateNetworks and posts over http (http://127.0.0.1:9000)`,
		`destinations[1] ("payments") sets allowPrivateNetworks and posts over http (http://127.0.0.1:9000)`,
		"-c hookfanAllowLocal=true",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("dev.json without acknowledgement: %v; want it refused, naming %s", err, want)
		}
	}
	if err != nil && strings.Contains(err.Error(), "/everything") {
		t.Errorf("the refusal shows a URL's path: %v", err)
	}
	if err := newStack(dev, "false"); err == nil {
		t.Error("dev.json with hookfanAllowLocal=false was accepted")
	}
	// -c on the command line gives a string; cdk.json a boolean. Its
	// metrics sink is the local stack's, refused for any deploy
	// (TestMetricsSinkCloudWatchIsRefused).
	dev.Metrics.Sink = ""
	for _, allow := range []any{"true", true} {
		if err := newStack(dev, allow); err != nil {
			t.Errorf("dev.json with hookfanAllowLocal=%v: %v", allow, err)
		}
	}
	sample, err := config.LoadCDKJSON(cdkJSON)
	if err != nil {
		t.Fatal(err)
	}
	if local := sample.LocalDestinations(); len(local) != 0 {
		t.Errorf("the sample cdk.json has local destinations: %v", local)
	}
}
