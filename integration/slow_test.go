//go:build integration

package integration

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/smithy-go/middleware"
	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/infra/local/devstack"
	"github.com/hookfan/hookfan/shared/dedupe"
)

// slowCalls delays every call of a client by d before it is sent: an
// emulator on a loaded machine.
func slowCalls(d time.Duration) func(*middleware.Stack) error {
	return func(stack *middleware.Stack) error {
		return stack.Finalize.Add(middleware.FinalizeMiddlewareFunc("slowEmulator",
			func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
				select {
				case <-time.After(d):
				case <-ctx.Done():
					return middleware.FinalizeOutput{}, middleware.Metadata{}, ctx.Err()
				}
				return next.HandleFinalize(ctx, in)
			}), middleware.Before)
	}
}

// TestSlowEmulator: every Secrets Manager and DynamoDB call takes 3 s, as
// on a loaded machine, longer than the 2 s AWS's secret fetches and claims
// are given. The local stack still accepts the event (no 503
// secret_store_unavailable) and delivers it once, at its first attempt:
// its calls to the emulator are given the local stack's lenient timeouts.
func TestSlowEmulator(t *testing.T) {
	t.Parallel()
	const delay = 3 * time.Second
	rc := newReceiver(t, nil)
	e := startEnv(t, []string{destJSON("slow", rc, "")}, map[string]*receiver{"slow": rc}, func(o *devstack.Options) {
		o.Clients.Secrets = secretsmanager.NewFromConfig(awsCfg, func(so *secretsmanager.Options) {
			so.APIOptions = append(so.APIOptions, slowCalls(delay))
		})
		o.Clients.DynamoDB = dynamodb.NewFromConfig(awsCfg, func(do *dynamodb.Options) {
			do.APIOptions = append(do.APIOptions, slowCalls(delay))
		})
	})
	ev := e.send("stripe", "stripe", "payment_intent.succeeded", "evt_slow_1", nil)
	waitFor(t, 30*time.Second, "the delivery", func() bool {
		r, _ := e.record("slow", ev.id)
		return r.Status == dedupe.StatusDelivered
	})
	e.settled()
	if diff := cmp.Diff([]string{ev.id}, rc.ids()); diff != "" {
		t.Errorf("POSTs (-want +got):\n%s", diff)
	}
	for _, d := range rc.deliveries() {
		if a := d.header.Get("hookfan-attempt"); a != "1" || d.status != http.StatusOK && d.status != http.StatusNoContent {
			t.Errorf("delivery at attempt %s answered %d; want the first attempt", a, d.status)
		}
	}
}
