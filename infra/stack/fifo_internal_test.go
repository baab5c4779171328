package stack

import (
	"fmt"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/hookfan/hookfan/shared/config"
)

// TestFIFOQuotaWarning: synthesis warns, naming the fix, once the ordered
// destinations pass SNS's subscriptions per FIFO topic, and not before;
// the fan-out topic's filter-policy count leaves ordered lanes out.
func TestFIFOQuotaWarning(t *testing.T) {
	for _, n := range []int{SNSSubscriptionsPerFIFOTopic, SNSSubscriptionsPerFIFOTopic + 1} {
		cfg := &config.Config{}
		for i := range n {
			cfg.Destinations = append(cfg.Destinations, config.Destination{Name: fmt.Sprintf("d%d", i),
				Ordering: &config.Ordering{Key: "body:id"}, Filter: config.Filter{Sources: []string{"stripe"}}})
		}
		cfg.Destinations = append(cfg.Destinations, config.Destination{Name: "standard", Filter: config.Filter{Sources: []string{"stripe"}}})
		app := awscdk.NewApp(nil)
		st := awscdk.NewStack(app, jsii.String("Quota"), nil)
		checkFIFOQuota(NewOrderedTopic(st, "OrderedTopic", cfg, nil), cfg)
		found := assertions.Annotations_FromStack(st).FindWarning(jsii.String("*"),
			assertions.Match_StringLikeRegexp(jsii.String("subscriptions per FIFO topic.*two stacks")))
		if want := n > SNSSubscriptionsPerFIFOTopic; (len(*found) > 0) != want {
			t.Errorf("%d ordered destinations: %d warnings, want one: %v", n, len(*found), want)
		}
		if got := standardFiltered(cfg); got != 1 {
			t.Errorf("%d ordered destinations: %d filter policies on the fan-out topic, want the standard lane's 1", n, got)
		}
	}
}
