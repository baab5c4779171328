package delivery

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/hookfan/hookfan/infra/tools/cost"
	"github.com/hookfan/hookfan/shared/awsconfig/lambdaenv"
	"github.com/hookfan/hookfan/shared/message"
	"github.com/hookfan/hookfan/shared/metrics"
)

// TestCostLogFiguresHoldTheLines delivers one event as the deployed
// function does (Lambda's JSON log format with its requestId, the EMF sink,
// a Stripe event id, an SQS message id, a subscriber answering in 100 ms)
// and holds the cost model's DeliverLogBytes and DeliverEMFBytes to the
// lines written: never below them (the bill would be understated), and
// within a fifth above. A field added to the attempt's line fails here
// until the model prices it.
func TestCostLogFiguresHoldTheLines(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, func(string) reply { return reply{status: http.StatusOK, delay: 100 * time.Millisecond} })
	var logs, emf bytes.Buffer
	const requestID = "8f5ae0b4-1c2d-4e5f-9a8b-7c6d5e4f3a2b"
	hs := newHarness(t, sub.URL, secret, func(o *laneOptions) {
		o.Destination.Name = cost.Reference(1).Destinations[0].Name
		// lambdacontext's JSON handler adds the requestId to each line;
		// it writes to stdout, so the attribute is added here instead.
		o.Logger = lambdaenv.JSONLogger(&logs).With("requestId", requestID)
		o.Metrics = metrics.NewRecorder(metrics.NewEMF(&emf))
		o.Now = time.Now
	})
	rec := sqsRecord("evt_3QxJ8bLkdIwHu7ix0Zq1AbCd", 1)
	rec.MessageId = "2e1424d4-f796-459a-8184-9c92662be6da"
	rec.ReceiptHandle = "AQEBwJnKyrHigUMZj6rYigCgxlaS3SLy0a" + strings.Repeat("x", 300)
	received := time.Now().Add(-1500 * time.Millisecond)
	v := received.UTC().Format("2006-01-02T15:04:05.000Z07:00")
	rec.MessageAttributes[message.AttrReceivedAt] = events.SQSMessageAttribute{StringValue: &v, DataType: "String"}
	rec.Attributes["SentTimestamp"] = strconv.FormatInt(received.Add(40*time.Millisecond).UnixMilli(), 10)
	ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: requestID})
	if resp, err := hs.h.Handle(ctx, batch(rec)); err != nil || len(resp.BatchItemFailures) > 0 {
		t.Fatalf("delivery: %v %v", resp, err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(logs.String(), "\n"), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], `"outcome":"delivered"`) {
		t.Fatalf("want one delivered line, got %q", logs.String())
	}
	if strings.Count(emf.String(), "\n") != 1 {
		t.Fatalf("want one EMF line, got %q", emf.String())
	}
	for _, c := range []struct {
		name   string
		figure cost.Figure
		line   string
	}{
		{"DeliverLogBytes", cost.Assumed.DeliverLogBytes, lines[0]},
		{"DeliverEMFBytes", cost.Assumed.DeliverEMFBytes, emf.String()},
	} {
		t.Logf("%s: %d bytes written, the model says %v", c.name, len(c.line), c.figure.Value)
		if err := c.figure.Covers(len(c.line)); err != nil {
			t.Errorf("cost.Assumed.%s: %v (%s)", c.name, err, strings.TrimSpace(c.line))
		}
	}
}
