//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookfan/hookfan/infra/local/devstack"
	"github.com/hookfan/hookfan/infra/local/devstate"
	"github.com/hookfan/hookfan/infra/rie"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/delivery"
	"github.com/hookfan/hookfan/shared/delivery/sigv4test"
	"github.com/hookfan/hookfan/shared/ingest"
	"github.com/hookfan/hookfan/shared/metrics"
)

// lambdaBin is the directory holding aws-lambda-rie and <function>/bootstrap
// for this machine: make integration builds it (make integration-bin) and
// names it in HOOKFAN_LAMBDA_BIN; without it the test runs that target into
// a directory of its own, so the same build serves `go test` alone.
func lambdaBin(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv("HOOKFAN_LAMBDA_BIN"); dir != "" {
		return dir
	}
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("find the module: %v", err)
	}
	dir := t.TempDir()
	build := exec.Command("make", "-s", "integration-bin", "BUILD_DIR="+dir)
	build.Dir = filepath.Dir(strings.TrimSpace(string(out)))
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("make integration-bin: %v\n%s", err, out)
	}
	return filepath.Join(dir, "integration")
}

// startFunction runs a built function under the RIE with the environment
// Lambda gives it and vars, its contract's rendering, on the emulator, and
// starts it with prime, an event that needs no AWS call. A start lost to
// the machine (rie.Function.Unreached) is retried on a fresh RIE. The
// function's EMF lines go to the emulator's CloudWatch through a
// rie.Forwarder, as CloudWatch Logs puts them in AWS; an invalid one, or
// a failed put, fails the test.
func startFunction(t *testing.T, bin, name, function string, timeout time.Duration, vars map[string]string, prime, answer any) *rie.Function {
	t.Helper()
	vars = maps.Clone(vars)
	vars["AWS_REGION"], vars["AWS_DEFAULT_REGION"] = awsCfg.Region, awsCfg.Region
	for attempt := 1; ; attempt++ {
		fwd := rie.NewForwarder(clients.CloudWatch)
		fn, err := rie.Start(t.Context(), filepath.Join(bin, "aws-lambda-rie"), filepath.Join(bin, function, "bootstrap"),
			rie.Env(name, os.Getenv("AWS_ENDPOINT_URL"), timeout, vars), fwd)
		if err != nil {
			t.Fatal(err)
		}
		err = invoke(t.Context(), fn, prime, answer)
		if err != nil && fn.Unreached() && attempt < 3 {
			t.Logf("%s could not reach the RIE's runtime API; again on a fresh RIE", name)
			fn.Stop()
			_ = fwd.Close()
			continue
		}
		t.Cleanup(func() {
			fn.Stop()
			if err := fwd.Close(); err != nil {
				t.Errorf("%s's metrics, forwarded to the emulator: %v", name, err)
			}
			if t.Failed() {
				t.Logf("%s under the RIE:\n%s", name, fn.Logs())
			}
		})
		if err != nil {
			t.Fatalf("%s: the first invocation: %v", name, err)
		}
		return fn
	}
}

// invoke sends one event to fn and decodes its answer into out.
func invoke(ctx context.Context, fn *rie.Function, event, out any) error {
	payload, err := json.Marshal(event)
	if err != nil {
		return err
	}
	body, err := fn.Invoke(ctx, payload)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("the function answered %s: %w", body, err)
	}
	return nil
}

// TestBuiltFunctionsUnderRIE delivers one event through the binaries the
// stack deploys: the built ingest and deliver bootstraps, each under the
// Lambda Runtime Interface Emulator with the environment its contract
// renders (the rendering the CDK stack writes into the template,
// TestFunctionEnvironmentIsTheContract in infra/stack), their AWS calls
// going to the emulator. The test plays API Gateway (the local gateway's
// proxy events, invoking ingest through the RIE's Invoke API) and the
// event source mapping (the local poller: receive from the lane's queue,
// invoke deliver with the batch, delete what the partial-batch answer does
// not name); the receiver verifies the Standard Webhooks signature and the
// SigV4 one the destination asks for (made with the credentials the RIE
// gives the function, as Lambda gives the role's), over the body its
// transform shaped.
func TestBuiltFunctionsUnderRIE(t *testing.T) {
	bin := lambdaBin(t)
	var rc *receiver
	var sigv4Err error
	rieCreds := rieCredentials()
	rc = newReceiver(t, func(n int, r *http.Request) int {
		if _, err := sigv4test.Verify(r, rc.deliveries()[n-1].body, rieCreds, "lambda", "eu-west-1", 15*time.Minute); err != nil {
			rc.mu.Lock()
			sigv4Err = err
			rc.mu.Unlock()
			return http.StatusForbidden
		}
		return http.StatusNoContent
	})
	prefix := uniquePrefix(t)
	start := time.Now().Add(-time.Minute)
	laneName := randomName("rie-") // its metrics' Destination, this test's alone
	cfg, err := config.Parse(fmt.Appendf(nil, `{"sources": [{"name": "stripe", "verify": {"kind": "stripe", "secretName": "%s/sources/stripe"}}],
	  "destinations": [%s], "metrics": {"sink": "emf"}}`, prefix, destJSON(laneName, rc,
		`"auth": {"sigv4": {"service": "lambda", "region": "eu-west-1"}}, "transform": "{id: .id, type, amount: .data.object.amount}"`)))
	if err != nil {
		t.Fatal(err)
	}
	d := cfg.Destinations[0]
	secretValues := map[string][]string{prefix + "/sources/stripe": {stripeSecret}, devstate.DestinationSecretName(prefix, d): rc.secrets}
	topo, err := devstack.Provision(t.Context(), clients, cfg, secretValues, prefix)
	if err != nil {
		t.Fatalf("provision: %v", err)
	}
	lane := topo.Lanes[0]

	// Each started with an event that needs no AWS call: a request for an
	// unknown source (404), an empty batch.
	// The API type is the default one, the HTTP API (its payload format
	// 2.0), as the default template deploys.
	var unknown events.APIGatewayV2HTTPResponse
	ingestFn := startFunction(t, bin, prefix+"-ingest", "ingest", devstack.IngestTimeout,
		ingest.FunctionEnv(cfg, ingest.Resources{TopicARN: topo.TopicARN, OrderedTopicARN: topo.OrderedTopicARN, PayloadBucket: topo.PayloadBucket, ArchiveBucket: topo.Archive.Bucket, ReplayTable: topo.TableName}).Render(),
		events.APIGatewayV2HTTPRequest{Version: "2.0", RouteKey: "POST /webhooks/{source}", RawPath: "/webhooks/unknown",
			PathParameters: map[string]string{"source": "unknown"}, Body: "{}",
			RequestContext: events.APIGatewayV2HTTPRequestContext{RouteKey: "POST /webhooks/{source}",
				HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: "/webhooks/unknown"}}}, &unknown)
	if unknown.StatusCode != 404 {
		t.Fatalf("ingest answered %d %s for an unknown source, want 404", unknown.StatusCode, unknown.Body)
	}
	var empty events.SQSEventResponse
	deliverFn := startFunction(t, bin, prefix+"-deliver-"+d.Name, "deliver", d.FunctionTimeout(),
		delivery.LaneEnv(cfg, d, delivery.LaneResources{Table: topo.TableName, QueueURL: lane.QueueURL, QueueARN: lane.QueueARN, SecretID: lane.SecretID, PayloadBucket: topo.PayloadBucket, ArchiveBucket: topo.Archive.Bucket}).Render(),
		events.SQSEvent{Records: []events.SQSMessage{}}, &empty)
	if len(empty.BatchItemFailures) != 0 {
		t.Fatalf("deliver failed %v of an empty batch", empty.BatchItemFailures)
	}

	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	if cfg.API.Kind() != config.APITypeHTTP {
		t.Fatalf("the default API type is %q; this test plays the HTTP API", cfg.API.Kind())
	}
	gateway := httptest.NewServer(devstack.HTTPGateway(func(ctx context.Context, req events.APIGatewayV2HTTPRequest) (resp events.APIGatewayV2HTTPResponse, err error) {
		return resp, invoke(ctx, ingestFn, req, &resp)
	}, []string{"stripe"}, devstack.IngestTimeout, log))
	t.Cleanup(gateway.Close)
	poller := &devstack.Poller{
		SQS: clients.SQS, QueueURL: lane.QueueURL, QueueARN: lane.QueueARN, Region: awsCfg.Region,
		BatchSize: d.ReceiveBatch(), Concurrency: 1, WaitTime: time.Second, FunctionTimeout: d.FunctionTimeout(), Log: log,
		Handler: func(ctx context.Context, ev events.SQSEvent) (resp events.SQSEventResponse, err error) {
			return resp, invoke(ctx, deliverFn, ev, &resp)
		},
	}
	ctx, stop := context.WithCancel(context.Background())
	polled := make(chan struct{})
	go func() { _ = poller.Run(ctx); close(polled) }()
	t.Cleanup(func() { stop(); <-polled }) // Run returns at once when already stopped

	e := &env{t: t, prefix: prefix, cfg: cfg, gateway: gateway}
	ev := e.send("stripe", "stripe", "payment_intent.succeeded", "evt_rie_1", nil)

	// Generous on a loaded machine: most of what the test has left.
	timeout := 3 * time.Minute
	if deadline, ok := t.Deadline(); ok {
		timeout = max(time.Until(deadline)*3/4, 30*time.Second)
	}
	store := dedupe.NewDynamoDB(clients.DynamoDB, topo.TableName)
	var rec dedupe.Record
	waitFor(t, timeout, "the delivery recorded as delivered", func() bool {
		r, ok, err := store.Get(context.Background(), dedupe.Key(d.Name, ev.id))
		if err != nil {
			t.Fatalf("read the record: %v", err)
		}
		rec = r
		return ok && r.Status == dedupe.StatusDelivered
	})
	got := rc.deliveries()
	if len(got) != 1 || !got[0].verified || got[0].header.Get("webhook-id") != ev.id || rc.accepted(ev.id) != 1 {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		t.Fatalf("receiver got %d requests (first verified %v, webhook-id %q, SigV4 %v), want one verified delivery of %s",
			len(got), len(got) > 0 && got[0].verified, firstID(got), sigv4Err, ev.id)
	}
	if want := `{"amount":4200,"id":"evt_rie_1","type":"payment_intent.succeeded"}`; string(got[0].body) != want {
		t.Errorf("the transformed body %s, want %s", got[0].body, want)
	}
	if rec.Attempts != 1 || rec.Source != "stripe" || rec.Type != "payment_intent.succeeded" {
		t.Errorf("record %+v, want one attempt of a stripe payment_intent.succeeded", rec)
	}
	// The poller deleted the delivered message: once it stops, the queue
	// holds nothing, visible or in flight.
	stop()
	<-polled
	out, err := clients.SQS.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: &lane.QueueURL,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages, sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
	if err != nil {
		t.Fatal(err)
	}
	if n, f := out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessages)], out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible)]; n != "0" || f != "0" {
		t.Errorf("the lane's queue holds %s messages and %s in flight, want none", n, f)
	}
	// The binaries write EMF only; forwarded as CloudWatch Logs would, the
	// delivery's metrics are in the emulator's CloudWatch: this lane's one
	// success and attempt, and ingest's acceptance.
	byLane := metrics.Dimension{Name: metrics.DimDestination, Value: d.Name}
	waitFor(t, 30*time.Second, "the lane's DeliverySucceeded in CloudWatch", func() bool {
		return metricStat(t, metrics.Namespace, metrics.DeliverySucceeded, cwtypes.StandardUnitCount, "Sum", start, byLane) == 1
	})
	if got := metricStat(t, metrics.Namespace, metrics.DeliveryAttempts, cwtypes.StandardUnitCount, "Sum", start, byLane); got != 1 {
		t.Errorf("DeliveryAttempts of the lane = %g, want 1", got)
	}
	if got := metricStat(t, metrics.Namespace, metrics.IngestAccepted, cwtypes.StandardUnitCount, "Sum", start, metrics.Dimension{Name: metrics.DimSource, Value: "stripe"}); got < 1 {
		t.Errorf("IngestAccepted of stripe = %g, want at least this test's 1", got)
	}
}

// rieCredentials are the credentials rie.Env gives a function, standing in
// for the role's that Lambda gives it.
func rieCredentials() aws.Credentials {
	var c aws.Credentials
	for _, kv := range rie.Env("x", "", time.Second, nil) {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "AWS_ACCESS_KEY_ID":
			c.AccessKeyID = v
		case "AWS_SECRET_ACCESS_KEY":
			c.SecretAccessKey = v
		case "AWS_SESSION_TOKEN":
			c.SessionToken = v
		}
	}
	return c
}

func firstID(got []got) string {
	if len(got) == 0 {
		return ""
	}
	return got[0].header.Get("webhook-id")
}
