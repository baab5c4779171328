//go:build integration

package integration

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookfan/hookfan/infra/local/devstack"
	"github.com/hookfan/hookfan/infra/local/devstate"
	"github.com/hookfan/hookfan/infra/local/fakeprovider"
	"github.com/hookfan/hookfan/infra/tools/cost"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/message"
	"github.com/hookfan/hookfan/shared/reconcile"
	"github.com/hookfan/hookfan/shared/reconcilejob"
)

// TestBuiltReconcileFunctionUnderRIE runs the built reconcile function
// under the Lambda RIE with the environment its contract renders (what
// the stack deploys), on the emulator, against a Stripe-shaped API: a dry
// run finds the two events Hookfan never got and brings nothing in; the
// schedule's input ({"source"}) brings both in, marked reconciled, to the
// lane's queue and saves the watermark; another source's name is
// refused.
func TestBuiltReconcileFunctionUnderRIE(t *testing.T) {
	bin := lambdaBin(t)
	fake := &fakeprovider.Stripe{Key: reconcileStripeKey}
	api := httptest.NewServer(fake)
	t.Cleanup(api.Close)
	prefix := uniquePrefix(t)
	cfg, err := config.Parse(fmt.Appendf(nil, `{"sources": [{"name": "stripe", "verify": {"kind": "stripe", "secretName": "%[1]s/sources/stripe"},
	    "reconcile": {"every": "15m", "secretName": "%[1]s/reconcile/stripe", "apiUrl": %[2]q}}],
	  "destinations": [{"name": "orders", "url": "https://orders.example.com/hooks"}], "metrics": {"sink": "emf"}}`, prefix, api.URL))
	if err != nil {
		t.Fatal(err)
	}
	d := cfg.Destinations[0]
	secretValues := map[string][]string{prefix + "/sources/stripe": {stripeSecret}, prefix + "/reconcile/stripe": {reconcileStripeKey},
		devstate.DestinationSecretName(prefix, d): {"c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0"}}
	topo, err := devstack.Provision(t.Context(), clients, cfg, secretValues, prefix)
	if err != nil {
		t.Fatalf("provision: %v", err)
	}
	lane := topo.Lanes[0]
	for i := range 2 {
		fake.NewEvent("payment_intent.succeeded", time.Now().Add(-10*time.Minute), fmt.Appendf(nil, `{"n": %d}`, i))
	}

	env := reconcilejob.FunctionEnv(cfg, cfg.Sources[0], reconcilejob.Resources{Table: topo.TableName, TopicARN: topo.TopicARN,
		OrderedTopicARN: topo.OrderedTopicARN, PayloadBucket: topo.PayloadBucket, ArchiveBucket: topo.Archive.Bucket})
	var dry reconcile.Report
	fn := startFunction(t, bin, prefix+"-reconcile-stripe", "reconcile", time.Minute, env.Render(),
		reconcilejob.Input{Source: "stripe", DryRun: true}, &dry)
	if dry.Listed != 2 || dry.Missing != 2 || dry.BroughtIn != 0 || !dry.DryRun || !dry.Watermark.IsZero() {
		t.Fatalf("dry run %+v; want 2 listed and missing, none brought in, no watermark", dry)
	}

	var rep reconcile.Report
	if err := invoke(t.Context(), fn, map[string]string{"source": "stripe"}, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Listed != 2 || rep.Missing != 2 || rep.BroughtIn != 2 || rep.Stopped != "" || rep.Watermark.IsZero() {
		t.Fatalf("scheduled run %+v; want 2 brought in and a watermark", rep)
	}
	saved, err := (&reconcile.DynamoDBWatermarks{API: clients.DynamoDB, Table: topo.TableName}).Load(context.Background(), "stripe")
	if err != nil || !saved.Equal(rep.Watermark.Truncate(time.Millisecond)) { // kept in Unix milliseconds
		t.Errorf("the table's watermark %v (%v), the run's %v", saved, err, rep.Watermark)
	}
	// Both reached the lane's queue through the topic, marked reconciled.
	got := 0
	waitFor(t, 30*time.Second, "two reconciled messages in the lane's queue", func() bool {
		out, err := clients.SQS.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: &lane.QueueURL,
			MaxNumberOfMessages: 10, WaitTimeSeconds: 1, MessageAttributeNames: []string{"All"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.Messages {
			if a, ok := m.MessageAttributes[message.AttrReconciled]; !ok || a.StringValue == nil || *a.StringValue != "true" {
				t.Errorf("message %s: reconciled attribute %v", *m.MessageId, m.MessageAttributes[message.AttrReconciled])
			}
			got++
		}
		return got >= 2
	})
	// The run's summary line and its EMF line are what the cost model
	// prices a run's logs at (with the requestId Lambda's JSON format
	// adds, which the RIE's logger does not).
	// The function's output reaches us through a pipe after its answer:
	// wait for both lines (a fact), not for a fixed time.
	var emf, summary int
	scan := func() bool {
		emf, summary = 0, 0
		for line := range strings.SplitSeq(fn.Logs(), "\n") {
			switch {
			case strings.Contains(line, `"ReconcileMissing":2`):
				emf = len(line) + 1
			case strings.Contains(line, `"message":"reconcile","source":"stripe"`) && strings.Contains(line, `"dry_run":false`):
				summary = len(line) + 1
			}
		}
		return emf > 0 && summary > 0
	}
	for deadline := time.Now().Add(15 * time.Second); !scan() && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	const requestID = len(`,"requestId":"e5a51b29-00ff-4002-90e9-86c4d2acc8f6"`)
	if emf == 0 || summary == 0 {
		t.Errorf("no EMF line (%d) or summary line (%d) of the run in the function's output:\n%s", emf, summary, fn.Logs())
	} else if err := cost.ReconcileFigures.RunLogBytes.Covers(emf + summary + requestID); err != nil {
		t.Errorf("RunLogBytes: %v", err)
	}

	// Another source's name: a failed invocation (the RIE answers
	// Lambda's error document), nothing run.
	body, err := fn.Invoke(t.Context(), []byte(`{"source": "github"}`))
	if err != nil || !strings.Contains(string(body), `"errorMessage"`) || !strings.Contains(string(body), `this function reconciles \"stripe\"`) {
		t.Errorf("an invocation for github: %s (%v), want it refused", body, err)
	}
}
