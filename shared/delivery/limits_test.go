package delivery

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"
	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/delivery/sender"
)

// capSQS enforces SQS's rule that a message stays hidden at most 12 h from
// its receive: it refuses a ChangeMessageVisibility past it with the error
// SQS sends (InvalidParameterValue), and records every call.
type capSQS struct {
	now      func() time.Time
	received time.Time // when SQS handed the message out
	mu       sync.Mutex
	asked    []int32
	accepted []int32
}

func (c *capSQS) ChangeMessageVisibility(_ context.Context, in *sqs.ChangeMessageVisibilityInput, _ ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.asked = append(c.asked, in.VisibilityTimeout)
	until := c.now().Add(time.Duration(in.VisibilityTimeout) * time.Second)
	if until.Sub(c.received) > config.MaxVisibility {
		return nil, &smithy.GenericAPIError{Code: "InvalidParameterValue", Message: "Total VisibilityTimeout for the message is beyond the limit [43200 seconds]"}
	}
	c.accepted = append(c.accepted, in.VisibilityTimeout)
	return &sqs.ChangeMessageVisibilityOutput{}, nil
}

func (c *capSQS) calls() (asked, accepted []int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]int32(nil), c.asked...), append([]int32(nil), c.accepted...)
}

// TestTwelveHourCap: a delay longer than SQS allows after the time already
// spent since the receive is cut to what fits, so the call is accepted and
// the subscriber is left alone for as long as SQS can; when SQS refuses
// anyway (the event source mapping held the message longer than the bound
// assumes), one more call asks for the largest value under the pessimistic
// bound; any other error is not retried.
func TestTwelveHourCap(t *testing.T) {
	// The harness's destination: timeout 2s → function timeout 12s,
	// visibility 72s; no batch window.
	margin := int32(config.VisibilityCapMargin / time.Second)
	tests := []struct {
		name         string
		retryAfter   string
		schedule     []config.Duration
		heldFor      time.Duration // between the receive and the invocation
		spent        time.Duration // between the invocation and the visibility call
		wantAsked    []int32
		wantAccepted []int32
	}{
		{
			name: "Retry-After of a day", retryAfter: "86400",
			wantAsked: []int32{43200 - margin}, wantAccepted: []int32{43200 - margin},
		},
		{
			name: "Retry-After of a day, late in the invocation", retryAfter: "86400", spent: 11 * time.Second,
			wantAsked: []int32{43200 - 11 - margin}, wantAccepted: []int32{43200 - 11 - margin},
		},
		{
			name: "a schedule delay at the longest the config allows", schedule: []config.Duration{config.Duration((config.Destination{TimeoutSeconds: 2}).MaxDelay())},
			spent:     11 * time.Second,
			wantAsked: []int32{43200 - 12 - margin}, wantAccepted: []int32{43200 - 12 - margin},
		},
		{
			name: "refused: held before the invocation, retried once under the pessimistic bound", retryAfter: "86400", heldFor: 90 * time.Second,
			wantAsked: []int32{43200 - margin, 43200 - 72 - margin}, wantAccepted: []int32{43200 - 72 - margin},
		},
		{
			name: "refused twice: no third call", retryAfter: "86400", heldFor: 200 * time.Second,
			wantAsked: []int32{43200 - margin, 43200 - 72 - margin},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			secret := newSecret(t)
			now := &clock{t: time.Now().Truncate(time.Second)}
			header := map[string]string{}
			if tt.retryAfter != "" {
				header["Retry-After"] = tt.retryAfter
			}
			sub := newSubscriber(t, secret, func(string) reply {
				now.Advance(tt.spent) // the attempt takes this long
				return reply{status: http.StatusServiceUnavailable, header: header}
			})
			queue := &capSQS{now: now.Now, received: now.Now().Add(-tt.heldFor)}
			schedule := tt.schedule
			if schedule == nil {
				// Long enough that the queue's retention lets a Retry-After
				// stretch the first delay to 12 h.
				schedule = []config.Duration{config.Duration(5 * time.Second), config.Duration(11 * time.Hour)}
			}
			jitter := 0.0
			hs := newHarness(t, sub.URL, secret, func(o *laneOptions) {
				o.SQS, o.Now = queue, now.Now
				o.Destination.Retry = config.Retry{Schedule: schedule, Jitter: &jitter}
			})
			resp, _ := hs.h.Handle(context.Background(), batch(sqsRecord("e1", 1)))
			if len(resp.BatchItemFailures) != 1 {
				t.Fatalf("failures %v, want the record", resp.BatchItemFailures)
			}
			asked, accepted := queue.calls()
			if diff := cmp.Diff(tt.wantAsked, asked); diff != "" {
				t.Errorf("ChangeMessageVisibility asked for (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantAccepted, accepted); diff != "" {
				t.Errorf("ChangeMessageVisibility accepted (-want +got):\n%s", diff)
			}
			warned := false
			for _, l := range hs.logs.lines(t) {
				if l["msg"] == LogMessage && l["outcome"] == "visibility_not_changed" {
					warned = true
				}
			}
			if warned != (tt.wantAccepted == nil) {
				t.Errorf("warning logged: %v, want %v", warned, tt.wantAccepted == nil)
			}
		})
	}
}

// TestVisibilityOtherErrorNotRetried: only SQS's refusal of the value is
// retried; any other error (a stale receipt handle, say) is logged once.
func TestVisibilityOtherErrorNotRetried(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, func(string) reply { return reply{status: 500} })
	hs := newHarness(t, sub.URL, secret)
	hs.sqs.err = &smithy.GenericAPIError{Code: "ReceiptHandleIsInvalid", Message: "expired"}
	hs.h.Handle(context.Background(), batch(sqsRecord("e1", 1)))
	if got := hs.sqs.visibility()["rh-e1"]; len(got) != 1 {
		t.Errorf("visibility calls %v, want exactly one", got)
	}
}

// slowStore wraps the memory store: the chosen call does its work and then
// takes delay more to answer, or does it after delay, as DynamoDB under
// throttling with the SDK's retries can. Either way it gives up when its
// context ends, as the SDK does.
type slowStore struct {
	*dedupe.Memory
	claimDelay  time.Duration // the claim lands, the answer comes this late
	finishDelay time.Duration // the outcome lands after this long
}

func (s *slowStore) Claim(ctx context.Context, in dedupe.ClaimInput) (dedupe.Lease, error) {
	l, err := s.Memory.Claim(ctx, in)
	if err := wait(ctx, s.claimDelay); err != nil {
		return dedupe.Lease{}, err
	}
	return l, err
}

func (s *slowStore) Finish(ctx context.Context, l dedupe.Lease, out dedupe.Outcome) error {
	if err := wait(ctx, s.finishDelay); err != nil {
		return err
	}
	return s.Memory.Finish(ctx, l, out)
}

func wait(ctx context.Context, d time.Duration) error {
	if d == 0 {
		return nil
	}
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestSlowRecordCalls: a claim or an outcome write that takes seconds never
// lets the lease end while the POST is in flight or before its outcome is
// written. Deliverer A's calls are slow; deliverer B, a second function
// instance, receives a copy of the message every 250 ms until the event is
// delivered. The subscriber answers after 1.9 s (the timeout is 2 s). Both
// run on the real clock: one POST, and never two in flight at once. On a
// loaded machine the 0.1 s between the answer and the timeout can run out:
// that POST is then a failed attempt of its own, recorded before the next
// claim, and the event is sent again after it, not beside it.
func TestSlowRecordCalls(t *testing.T) {
	tests := []struct {
		name  string
		store func(*dedupe.Memory) Store
	}{
		{"slow claim", func(m *dedupe.Memory) Store { return &slowStore{Memory: m, claimDelay: 4 * time.Second} }},
		{"slow finish", func(m *dedupe.Memory) Store { return &slowStore{Memory: m, finishDelay: 3500 * time.Millisecond} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			secret := newSecret(t)
			var (
				mu     sync.Mutex
				starts []time.Time
			)
			const answerIn = 1900 * time.Millisecond
			sub := newSubscriber(t, secret, func(string) reply {
				mu.Lock()
				starts = append(starts, time.Now())
				mu.Unlock()
				return reply{status: http.StatusOK, delay: answerIn}
			})
			mem := dedupe.NewMemory()
			a := newHarness(t, sub.URL, secret, func(o *laneOptions) { o.Store = tt.store(mem); o.Now = time.Now })
			b := newHarness(t, sub.URL, secret, func(o *laneOptions) { o.Store = mem; o.Now = time.Now })
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var wg sync.WaitGroup
			wg.Go(func() { a.h.Handle(ctx, batch(sqsRecord("e1", 1))) })
			time.Sleep(500 * time.Millisecond)
			deadline := time.Now().Add(20 * time.Second)
			for attempt := 2; time.Now().Before(deadline); attempt++ {
				b.h.Handle(ctx, batch(sqsRecord("e1", attempt)))
				if r, _, _ := mem.Get(ctx, dedupe.Key("orders", "e1")); r.Status == dedupe.StatusDelivered {
					break
				}
				time.Sleep(250 * time.Millisecond)
			}
			wg.Wait()
			n := sub.posts("e1")
			r, _, _ := mem.Get(ctx, dedupe.Key("orders", "e1"))
			if r.Status != dedupe.StatusDelivered {
				t.Errorf("record %s, want DELIVERED", r.Status)
			}
			mu.Lock()
			defer mu.Unlock()
			for i := 1; i < len(starts); i++ {
				if gap := starts[i].Sub(starts[i-1]); gap < answerIn {
					t.Errorf("POST %d arrived %s after POST %d, while it was still in flight (answered after %s)", i+1, gap, i, answerIn)
				}
			}
			switch {
			case n == 1:
			case n > 1 && r.Attempts == n:
				// A loaded machine: each POST was an attempt of its own.
				t.Logf("%d POSTs, one after the other, each a recorded attempt (history %+v)", n, r.History)
			default:
				t.Errorf("%d POSTs for %d recorded attempts, want 1 POST (or one attempt per POST, never two at once)", n, r.Attempts)
			}
		})
	}
}

// clockStore is a store whose claim takes `took` on the handler's clock
// and ignores its context, as a store without deadlines could.
type clockStore struct {
	*dedupe.Memory
	clock *clock
	took  time.Duration
}

func (s *clockStore) Claim(ctx context.Context, in dedupe.ClaimInput) (dedupe.Lease, error) {
	l, err := s.Memory.Claim(ctx, in)
	s.clock.Advance(s.took)
	return l, err
}

// TestClaimLeavesTooLittleLease: when the claim returns with less of the
// lease left than a POST and the outcome's write need, nothing is sent; the
// lease is released at once (so a copy need not wait for it) and the
// message is backed off like any failure of ours.
func TestClaimLeavesTooLittleLease(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	store := &clockStore{Memory: dedupe.NewMemory(), took: 8 * time.Second}
	hs := newHarness(t, sub.URL, secret, func(o *laneOptions) { o.Store = store })
	store.clock = hs.clock
	resp, _ := hs.h.Handle(context.Background(), batch(sqsRecord("e1", 1)))
	if len(resp.BatchItemFailures) != 1 {
		t.Fatalf("failures %v, want the record", resp.BatchItemFailures)
	}
	if n := sub.posts("e1"); n != 0 {
		t.Errorf("%d POSTs, want none", n)
	}
	if diff := cmp.Diff([]int32{5}, hs.sqs.visibility()["rh-e1"]); diff != "" {
		t.Errorf("visibility (-want +got):\n%s", diff)
	}
	r, _, _ := store.Get(context.Background(), dedupe.Key("orders", "e1"))
	if r.Status != dedupe.StatusFailed || r.LeaseToken != "" || r.LastError == "" {
		t.Errorf("record %s, token %q, error %q; want FAILED, released, with the reason", r.Status, r.LeaseToken, r.LastError)
	}
}

// slowTransform reshapes nothing and takes took on the harness's clock.
type slowTransform struct {
	clock *clock
	took  time.Duration
}

func (s slowTransform) Apply(_ context.Context, body []byte) ([]byte, error) {
	s.clock.Advance(s.took)
	return body, nil
}

// timeoutSender records the timeout of each delivery it is given.
type timeoutSender struct{ timeouts []time.Duration }

func (*timeoutSender) Prepare(context.Context) error { return nil }
func (s *timeoutSender) Send(_ context.Context, d sender.Delivery) sender.Result {
	s.timeouts = append(s.timeouts, d.Timeout)
	return sender.Result{Status: http.StatusOK}
}

// TestTransformTimeComesOutOfThePOSTs: the POST's deadline is fixed when
// the claim returns, so the time a transform takes comes out of the POST's
// timeout, and a transform that leaves less than MinSendTime gives the
// lease back unsent. On the code before, the POST got its whole timeout
// from the moment it started and could outlive its lease by the
// transform's time, when another instance could claim the event.
func TestTransformTimeComesOutOfThePOSTs(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	full := func() time.Duration {
		hs := newHarness(t, sub.URL, secret)
		s := &timeoutSender{}
		hs.h.sender = s
		hs.h.shape.transform = slowTransform{clock: hs.clock}
		if _, err := hs.h.Handle(context.Background(), batch(sqsRecord("e0", 1))); err != nil || len(s.timeouts) != 1 {
			t.Fatalf("a transform taking no time: %d sends (%v)", len(s.timeouts), err)
		}
		return s.timeouts[0]
	}()

	hs := newHarness(t, sub.URL, secret)
	s := &timeoutSender{}
	hs.h.sender = s
	hs.h.shape.transform = slowTransform{clock: hs.clock, took: 700 * time.Millisecond}
	if _, err := hs.h.Handle(context.Background(), batch(sqsRecord("e1", 1))); err != nil || len(s.timeouts) != 1 {
		t.Fatalf("a transform taking 700ms: %d sends (%v)", len(s.timeouts), err)
	}
	if got, want := s.timeouts[0], full-700*time.Millisecond; got != want {
		t.Errorf("POST timeout after a transform of 700ms: %s, want %s (the whole timeout %s less the transform's time)", got, want, full)
	}

	hs.h.shape.transform = slowTransform{clock: hs.clock, took: full - MinSendTime + time.Millisecond}
	resp, err := hs.h.Handle(context.Background(), batch(sqsRecord("e2", 1)))
	if err != nil || len(resp.BatchItemFailures) != 1 || len(s.timeouts) != 1 {
		t.Fatalf("a transform leaving less than MinSendTime: answered %v (%v), %d sends; want the message backed off unsent", failures(resp), err, len(s.timeouts)-1)
	}
	r, _, _ := hs.store.Get(context.Background(), dedupe.Key("orders", "e2"))
	if r.LeaseToken != "" || !strings.Contains(r.LastError, "too little of the lease is left for a POST") {
		t.Errorf("e2's record %+v; want its lease given back, the error saying why", r)
	}
}
